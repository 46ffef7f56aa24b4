package jsonscan

import (
	"errors"
	"strings"
)

// Context is what a Decoder was looking for at its position: what a
// located error message says was expected when Next failed there.
type Context uint8

// Decoder contexts.
const (
	// InValue: a value (the top level, an array element, a member value).
	InValue Context = iota
	// InKey: an object key (or the '}' of an empty object).
	InKey
	// AfterKey: the ':' after an object key.
	AfterKey
	// AfterMember: the ',' or '}' after an object member.
	AfterMember
	// AfterElement: the ',' or ']' after an array element.
	AfterElement
)

// Context reports what the decoder is looking for next. After Next
// failed it is where the failure was: commas and colons before the bad
// token are already consumed.
func (d *Decoder) Context() Context {
	switch d.state {
	case tokenObjectStart, tokenObjectKey:
		return InKey
	case tokenObjectColon:
		return AfterKey
	case tokenObjectComma:
		return AfterMember
	case tokenArrayComma:
		return AfterElement
	}
	return InValue
}

// TokenStart is the offset where the last token returned by Next began.
func (d *Decoder) TokenStart(k Kind) int64 {
	switch k {
	case BeginObject, BeginArray, EndObject, EndArray:
		return d.InputOffset() - 1
	}
	return d.scanned + int64(d.vstart)
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

// Flaw says which part of a string, number or literal token is wrong.
type Flaw uint8

// Token flaws, in encoding/json's terms.
const (
	// FlawNone: the token is valid.
	FlawNone Flaw = iota
	// FlawString: a control character (or the end of input) inside a string.
	FlawString
	// FlawEscape: a backslash followed by something no escape starts with.
	FlawEscape
	// FlawHexEscape: a \u escape without four hex digits.
	FlawHexEscape
	// FlawNumber: a number without digits after its sign, or a NaN or
	// Infinity misspelt.
	FlawNumber
	// FlawFraction: no digit after a decimal point.
	FlawFraction
	// FlawExponent: no digit in an exponent.
	FlawExponent
	// FlawLiteral: true, false or null misspelt.
	FlawLiteral
)

// Locate finds what makes the string, number or literal token starting at
// data[start] invalid and the offset of the offending byte (len(data) when
// the input ends inside the token). It runs this scanner itself on growing
// prefixes of the token, so it reports exactly what Next refused; it is
// meant for error messages, never for the hot path (it copies the token's
// rest of the input and scans it a logarithmic number of times).
func Locate(data []byte, start int64, opts Options) (int64, Flaw) {
	// A NUL after the input is invalid in every token, so a token that
	// runs into the end of the input fails at len(data) with the context
	// it was in.
	rest := make([]byte, len(data)-int(start)+1)
	copy(rest, data[start:])
	failsAt := func(n int) (bool, string) {
		opts := opts
		opts.MaxDepth, opts.DuplicateKeys = 0, false
		_, err := NewBytes(rest[:n], opts).Next()
		var se *SyntaxError
		if errors.As(err, &se) {
			return true, se.Msg
		}
		return false, ""
	}
	bad, msg := failsAt(len(rest))
	if !bad {
		return start, FlawNone
	}
	// The least prefix length that fails ends with the offending byte.
	lo, hi := 1, len(rest)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if b, _ := failsAt(mid); b {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	off := start + int64(lo-1)
	switch {
	case strings.HasSuffix(msg, " in string literal"):
		return off, FlawString
	case strings.HasSuffix(msg, " in string escape code"):
		return off, FlawEscape
	case strings.HasSuffix(msg, ` in \u hexadecimal character escape`):
		return off, FlawHexEscape
	case strings.HasSuffix(msg, " after decimal point in numeric literal"):
		return off, FlawFraction
	case strings.HasSuffix(msg, " in exponent of numeric literal"):
		return off, FlawExponent
	case strings.HasSuffix(msg, " in numeric literal"),
		strings.HasSuffix(msg, " in literal NaN"), strings.HasSuffix(msg, " in literal Infinity"):
		return off, FlawNumber
	}
	return off, FlawLiteral
}
