package jcs

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// When the scanner refuses the input, fail names the problem as jcs
// always has (digest shows the message to users), from the scanner's own
// account of it (Decoder.Fault: the byte that broke the grammar and what
// was expected there). What RFC 8785 adds to JSON is checked here: lone
// surrogate escapes (surrogateError), leading zeros and MaxDepth
// (canonical.go).

func (c *canonicalizer) errAt(off int, format string, args ...any) error {
	return fmt.Errorf("jcs: at offset %d: %s", off, fmt.Sprintf(format, args...))
}

func isDigit(ch byte) bool { return ch >= '0' && ch <= '9' }

// inToken reports whether p lies inside a string, number or literal
// rather than between tokens.
func inToken(p jsonscan.Part) bool {
	switch p {
	case jsonscan.PartValue, jsonscan.PartKey, jsonscan.PartColon,
		jsonscan.PartObjectComma, jsonscan.PartArrayComma:
		return false
	}
	return true
}

// failedAt is where the token Next could not read begins, or the end of
// the input when it ended before one did.
func (c *canonicalizer) failedAt(err error) int {
	if f, ok := c.sc.Fault(err); ok && f.EOF && !inToken(f.Part) {
		return len(c.in)
	}
	// After an error in a token the scanner stays at its first byte.
	return int(c.sc.InputOffset())
}

// fail explains err, which the last Next returned.
func (c *canonicalizer) fail(err error) error {
	f, ok := c.sc.Fault(err)
	if !ok { // a decoder over bytes, without limits, fails no other way
		return c.errAt(c.off(), "invalid JSON: %v", err)
	}
	off := int(f.Offset)
	start := int(c.sc.InputOffset()) // the failed token's first byte
	switch f.Part {
	case jsonscan.PartValue:
		if f.EOF {
			return errors.New("jcs: unexpected end of JSON input")
		}
		return c.errAt(off, "unexpected character %q", c.in[off])
	case jsonscan.PartKey:
		return c.errAt(off, "expected a string member name")
	case jsonscan.PartColon:
		return c.errAt(off, "expected ':' after member name")
	case jsonscan.PartObjectComma:
		if f.EOF {
			return errors.New("jcs: unexpected end of JSON input in object")
		}
		return c.errAt(off, "expected ',' or '}' in object")
	case jsonscan.PartArrayComma:
		if f.EOF {
			return errors.New("jcs: unexpected end of JSON input in array")
		}
		return c.errAt(off, "expected ',' or ']' in array")
	case jsonscan.PartLiteral:
		return c.errAt(start, "invalid literal")
	case jsonscan.PartNumber, jsonscan.PartFraction, jsonscan.PartExponent:
		return c.errAt(off, "invalid number")
	}
	// A string: a lone surrogate before the break is named first, as jcs
	// reads strings from left to right.
	if err := c.surrogateError(start, off); err != nil {
		return err
	}
	switch {
	case f.Part == jsonscan.PartUnicode:
		// The escape's hex digits begin after its 'u'; fewer than four
		// bytes left is the end of the input.
		hex := off
		for hex > start && isHex(c.in[hex-1]) {
			hex--
		}
		if hex+4 > len(c.in) {
			return errors.New("jcs: unexpected end of JSON input in \\u escape")
		}
		return c.errAt(hex, "invalid \\u escape")
	case f.EOF:
		return errors.New("jcs: unexpected end of JSON input in string")
	case f.Part == jsonscan.PartEscape:
		return c.errAt(off+1, "invalid escape '\\%c'", c.in[off])
	}
	return c.errAt(off, "control character in string")
}

// surrogateError finds what I-JSON (which RFC 8785 requires) refuses in
// the string whose opening quote is at q, before end (its closing quote,
// or where the scanner found it broken): a lone surrogate escape, or a
// pair that makes no character. The scanner decodes those as U+FFFD. It
// has checked the grammar before end, so only \u escapes are read here.
func (c *canonicalizer) surrogateError(q, end int) error {
	in := c.in
	for i := q + 1; i+1 < end; {
		if in[i] != '\\' {
			i++
			continue
		}
		if in[i+1] != 'u' {
			i += 2
			continue
		}
		if i+6 > end { // the scanner's fault is in these digits
			return nil
		}
		r := hex4(in[i+2 : i+6])
		i += 6
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r >= 0xDC00 || i+1 >= len(in) || in[i] != '\\' || in[i+1] != 'u' {
			return c.errAt(i, "lone surrogate in string")
		}
		if i+6 > end {
			return nil
		}
		r2 := hex4(in[i+2 : i+6])
		i += 6
		if utf16.DecodeRune(r, r2) == utf8.RuneError {
			return c.errAt(i, "invalid surrogate pair in string")
		}
	}
	return nil
}

func isHex(h byte) bool {
	return isDigit(h) || 'a' <= h|0x20 && h|0x20 <= 'f'
}

// hex4 is the value of four hex digits the scanner has checked.
func hex4(b []byte) rune {
	var r rune
	for _, h := range b {
		if isDigit(h) {
			h -= '0'
		} else {
			h = (h | 0x20) - 'a' + 10
		}
		r = r<<4 | rune(h)
	}
	return r
}
