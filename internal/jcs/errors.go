package jcs

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// When the scanner refuses the input, these name the problem as jcs
// always has (digest shows the message to users): they look at the bytes
// from where the value, separator or key that failed begins, and apply the
// rule RFC 8785 input breaks there. They run only on the way out with an
// error, except stringError, which also finds lone surrogates in strings
// with escapes.

func (c *canonicalizer) errAt(off int, format string, args ...any) error {
	return fmt.Errorf("jcs: at offset %d: %s", off, fmt.Sprintf(format, args...))
}

// skipWS returns the offset of the first byte at or after i that is not
// white space.
func (c *canonicalizer) skipWS(i int) int {
	for i < len(c.in) {
		switch c.in[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func isDigit(ch byte) bool { return ch >= '0' && ch <= '9' }

// valueError explains a value, expected at p (white space allowed), that
// the scanner refused.
func (c *canonicalizer) valueError(p int) error {
	q := c.skipWS(p)
	if q >= len(c.in) {
		return errors.New("jcs: unexpected end of JSON input")
	}
	switch ch := c.in[q]; {
	case ch == '"':
		return c.orAt(q, c.stringError(q))
	case ch == '-' || isDigit(ch):
		return c.orAt(q, c.numberError(q))
	case ch == 't' || ch == 'f' || ch == 'n':
		return c.errAt(q, "invalid literal")
	default:
		return c.errAt(q, "unexpected character %q", ch)
	}
}

// orAt is err, or for nil (which the scanner and these rules disagreeing
// would give) a plain refusal at off.
func (c *canonicalizer) orAt(off int, err error) error {
	if err == nil {
		return c.errAt(off, "invalid JSON")
	}
	return err
}

// afterElementError explains what follows an array element ending at end.
func (c *canonicalizer) afterElementError(end int) error {
	q := c.skipWS(end)
	switch {
	case q >= len(c.in):
		return errors.New("jcs: unexpected end of JSON input in array")
	case c.in[q] == ',':
		return c.valueError(q + 1)
	}
	return c.errAt(q, "expected ',' or ']' in array")
}

// keyError explains a member name expected at q.
func (c *canonicalizer) keyError(q int) error {
	if q >= len(c.in) || c.in[q] != '"' {
		return c.errAt(q, "expected a string member name")
	}
	return c.orAt(q, c.stringError(q))
}

// memberValueError explains the ':' and value after a member name ending
// at end; tooDeep says the value would nest past MaxDepth.
func (c *canonicalizer) memberValueError(end int, tooDeep bool) error {
	q := c.skipWS(end)
	if q >= len(c.in) || c.in[q] != ':' {
		return c.errAt(q, "expected ':' after member name")
	}
	if tooDeep {
		return c.errAt(q+1, "nesting deeper than %d", MaxDepth)
	}
	return c.valueError(q + 1)
}

// afterMemberError explains what follows a member value ending at end.
func (c *canonicalizer) afterMemberError(end int) error {
	q := c.skipWS(end)
	switch {
	case q >= len(c.in):
		return errors.New("jcs: unexpected end of JSON input in object")
	case c.in[q] == ',':
		return c.keyError(c.skipWS(q + 1))
	}
	return c.errAt(q, "expected ',' or '}' in object")
}

// stringError returns what is wrong with the string whose opening quote is
// at q, or nil. Lone surrogate escapes are errors (I-JSON, which RFC 8785
// requires).
func (c *canonicalizer) stringError(q int) error {
	in := c.in
	for i := q + 1; i < len(in); {
		switch ch := in[i]; {
		case ch == '"':
			return nil
		case ch < 0x20:
			return c.errAt(i, "control character in string")
		case ch != '\\':
			i++
			continue
		}
		if i+1 >= len(in) {
			break
		}
		esc := in[i+1]
		i += 2
		switch esc {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			r, err := c.hex4(&i)
			if err != nil {
				return err
			}
			if !utf16.IsSurrogate(r) {
				break
			}
			if r >= 0xDC00 || i+1 >= len(in) || in[i] != '\\' || in[i+1] != 'u' {
				return c.errAt(i, "lone surrogate in string")
			}
			i += 2
			r2, err := c.hex4(&i)
			if err != nil {
				return err
			}
			if utf16.DecodeRune(r, r2) == utf8.RuneError {
				return c.errAt(i, "invalid surrogate pair in string")
			}
		default:
			return c.errAt(i, "invalid escape '\\%c'", esc)
		}
	}
	return errors.New("jcs: unexpected end of JSON input in string")
}

// hex4 reads the four hex digits of a \u escape at *i.
func (c *canonicalizer) hex4(i *int) (rune, error) {
	if *i+4 > len(c.in) {
		return 0, errors.New("jcs: unexpected end of JSON input in \\u escape")
	}
	var r rune
	for _, h := range c.in[*i : *i+4] {
		switch {
		case '0' <= h && h <= '9':
			h -= '0'
		case 'a' <= h && h <= 'f':
			h -= 'a' - 10
		case 'A' <= h && h <= 'F':
			h -= 'A' - 10
		default:
			return 0, c.errAt(*i, "invalid \\u escape")
		}
		r = r<<4 | rune(h)
	}
	*i += 4
	return r, nil
}

// numberError returns what is wrong with the number starting at q, or
// nil.
func (c *canonicalizer) numberError(q int) error {
	in, i := c.in, q
	digits := func() int {
		n := 0
		for i < len(in) && isDigit(in[i]) {
			i++
			n++
		}
		return n
	}
	if in[i] == '-' {
		i++
	}
	intStart := i
	if n := digits(); n == 0 || n > 1 && in[intStart] == '0' {
		return c.errAt(i, "invalid number")
	}
	if i < len(in) && in[i] == '.' {
		i++
		if digits() == 0 {
			return c.errAt(i, "invalid number")
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if digits() == 0 {
			return c.errAt(i, "invalid number")
		}
	}
	return nil
}
