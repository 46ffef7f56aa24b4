package jsonscan

import (
	"errors"
	"io"
	"strings"
)

// Part names what the scanner was reading, or expecting, where the input
// went wrong.
type Part uint8

// Parts of the grammar a Fault can lie in.
const (
	PartValue       Part = iota + 1 // the beginning of a value
	PartKey                         // a member name (or '}' right after '{')
	PartColon                       // the ':' after a member name
	PartObjectComma                 // ',' or '}' after a member
	PartArrayComma                  // ',' or ']' after an element
	PartLiteral                     // true, false, null; NaN, Infinity with NonFinite (Fault.Literal says which)
	PartNumber                      // the digit after a '-'
	PartFraction                    // the digit after a decimal point
	PartExponent                    // the digits of an exponent
	PartString                      // a string's text: a control character, or no closing quote
	PartEscape                      // the character after a backslash
	PartUnicode                     // the four hex digits of a \u escape
)

// Fault locates malformed input exactly. A SyntaxError's offset is
// encoding/json's, the start of the value that failed; a walker that words
// its own messages needs the byte that broke the grammar and what was
// expected there.
type Fault struct {
	// Offset is the byte that does not fit, or where the input ended.
	Offset int64
	// EOF says the input ended too soon; there is no offending byte.
	EOF  bool
	Part Part
	// Literal is the literal being read, for PartLiteral.
	Literal string
}

// Fault explains err, which the last Next returned: a *SyntaxError, or
// io.ErrUnexpectedEOF (io.EOF) for input that ends too soon. ok is false
// for any other error (a limit, a duplicate key, a failed read). It costs a
// few scans of the failed token, so it is for the error path only.
func (d *Decoder) Fault(err error) (f Fault, ok bool) {
	var se *SyntaxError
	eof := errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
	if !eof && !errors.As(err, &se) {
		return Fault{}, false
	}
	at := d.scanned + int64(d.scanp)
	if d.scanp >= len(d.buf) { // the input ended between tokens
		return Fault{Offset: at, EOF: true, Part: d.Expected()}, true
	}
	inToken := d.valueAllowed() ||
		(d.state == tokenObjectStart || d.state == tokenObjectKey) && d.buf[d.scanp] == '"'
	if !inToken { // the byte at scanp cannot come next
		return Fault{Offset: at, Part: d.Expected()}, true
	}
	// The token that starts at scanp failed; scanned on its own, it fails
	// the same way, and a prefix of it fails only once it holds the byte
	// that broke it.
	rest := d.buf[d.scanp:]
	fails := func(data []byte) *SyntaxError {
		var se *SyntaxError
		_, err := NewBytes(data, Options{NonFinite: d.opts.NonFinite}).Next()
		errors.As(err, &se)
		return se
	}
	if eof {
		// Where it ended, any byte that cannot continue the token (NUL
		// can continue none) says what the token still needed.
		se = fails(append(rest[:len(rest):len(rest)], 0))
		f = Fault{Offset: d.scanned + int64(len(d.buf)), EOF: true}
	} else {
		lo, hi := 1, len(rest) // the shortest failing prefix is in [lo, hi]
		for lo < hi {
			if mid := lo + (hi-lo)/2; fails(rest[:mid]) != nil {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		se = fails(rest[:lo])
		f = Fault{Offset: at + int64(lo) - 1}
	}
	if se == nil { // cannot happen: the whole token failed
		return Fault{Offset: at, EOF: eof, Part: PartValue}, true
	}
	f.Part, f.Literal = partOf(se.Msg)
	return f, true
}

// Expected is what the decoder looks for next, between tokens: PartValue,
// PartKey, PartColon, PartObjectComma or PartArrayComma. After Next failed
// it is where the failure was (commas and colons before the bad token are
// already consumed); Fault also says where inside a token.
func (d *Decoder) Expected() Part {
	switch d.state {
	case tokenArrayComma:
		return PartArrayComma
	case tokenObjectStart, tokenObjectKey:
		return PartKey
	case tokenObjectColon:
		return PartColon
	case tokenObjectComma:
		return PartObjectComma
	}
	return PartValue
}

// partOf reads the part from the context of a message the scanner wrote
// for a token that failed on its own.
func partOf(msg string) (Part, string) {
	switch {
	case strings.HasSuffix(msg, "after decimal point in numeric literal"):
		return PartFraction, ""
	case strings.HasSuffix(msg, "in exponent of numeric literal"):
		return PartExponent, ""
	case strings.HasSuffix(msg, "in numeric literal"):
		return PartNumber, ""
	case strings.HasSuffix(msg, "in string literal"):
		return PartString, ""
	case strings.HasSuffix(msg, "in string escape code"):
		return PartEscape, ""
	case strings.HasSuffix(msg, "in \\u hexadecimal character escape"):
		return PartUnicode, ""
	}
	if _, lit, ok := strings.Cut(msg, " in literal "); ok {
		lit, _, _ = strings.Cut(lit, " ")
		return PartLiteral, lit
	}
	return PartValue, ""
}

// StartKind is the kind of the value whose first byte is c, before it is
// scanned (Invalid when no value starts with c). With NonFinite, 'N' and
// 'I' start numbers.
func StartKind(c byte, opts Options) Kind {
	switch {
	case c == '{':
		return BeginObject
	case c == '[':
		return BeginArray
	case c == '"':
		return String
	case c == '-' || c >= '0' && c <= '9':
		return Number
	case c == 't':
		return True
	case c == 'f':
		return False
	case c == 'n':
		return Null
	case opts.NonFinite && (c == 'N' || c == 'I'):
		return Number
	}
	return Invalid
}
