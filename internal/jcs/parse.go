package jcs

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// canonicalizer is a single-pass recursive-descent JSON parser that writes
// the canonical form as it goes. It is several times faster than walking
// encoding/json tokens, which matters because plans of 100,000 trials and
// every round-ID preimage go through it.
type canonicalizer struct {
	in  []byte
	pos int
	out []byte
	// spans is a stack shared by nested objects, to avoid an allocation
	// per object; scratch is reused when members must be reordered.
	spans   []span
	scratch []byte
	// lazy: the output so far equals in[:olen] and has not been written
	// (Canonical); the first difference materializes it into out.
	lazy bool
	olen int
	tmp  []byte
}

// emit appends p to the output; in lazy mode it only checks that p is
// what the input holds at the same place.
func (c *canonicalizer) emit(p ...byte) {
	if c.lazy {
		if c.olen+len(p) <= len(c.in) && bytes.Equal(c.in[c.olen:c.olen+len(p)], p) {
			c.olen += len(p)
			return
		}
		c.materialize()
	}
	c.out = append(c.out, p...)
}

// emitString appends s as a canonical JSON string.
func (c *canonicalizer) emitString(s []byte) {
	if !c.lazy {
		c.out = appendString(c.out, s)
		return
	}
	c.tmp = appendString(c.tmp[:0], s)
	c.emit(c.tmp...)
}

// materialize leaves lazy mode: the output written so far is copied out
// of the input.
func (c *canonicalizer) materialize() {
	if !c.lazy {
		return
	}
	c.out = append(make([]byte, 0, len(c.in)), c.in[:c.olen]...)
	c.lazy = false
}

// size is the length of the output so far.
func (c *canonicalizer) size() int {
	if c.lazy {
		return c.olen
	}
	return len(c.out)
}

type span struct {
	key        []byte // decoded key (UTF-8)
	start, end int    // the member's canonical text in out, key included
}

func (c *canonicalizer) errf(format string, args ...any) error {
	return fmt.Errorf("jcs: at offset %d: %s", c.pos, fmt.Sprintf(format, args...))
}

func (c *canonicalizer) ws() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canonicalizer) value(depth int) error {
	if depth > MaxDepth {
		return c.errf("nesting deeper than %d", MaxDepth)
	}
	c.ws()
	if c.pos >= len(c.in) {
		return errors.New("jcs: unexpected end of JSON input")
	}
	switch ch := c.in[c.pos]; {
	case ch == '{':
		return c.object(depth)
	case ch == '[':
		return c.array(depth)
	case ch == '"':
		s, err := c.str()
		if err != nil {
			return err
		}
		c.emitString(s)
		return nil
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return c.number()
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	default:
		return c.errf("unexpected character %q", ch)
	}
}

func (c *canonicalizer) literal(lit string) error {
	if !bytes.HasPrefix(c.in[c.pos:], []byte(lit)) {
		return c.errf("invalid literal")
	}
	c.pos += len(lit)
	c.emit([]byte(lit)...)
	return nil
}

func (c *canonicalizer) array(depth int) error {
	c.pos++ // [
	c.emit('[')
	c.ws()
	if c.pos < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		c.emit(']')
		return nil
	}
	for {
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.ws()
		if c.pos >= len(c.in) {
			return errors.New("jcs: unexpected end of JSON input in array")
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			c.emit(',')
		case ']':
			c.pos++
			c.emit(']')
			return nil
		default:
			return c.errf("expected ',' or ']' in array")
		}
	}
}

func (c *canonicalizer) object(depth int) error {
	c.pos++ // {
	c.ws()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		c.emit('{', '}')
		return nil
	}
	base := c.size()
	c.emit('{')
	mark := len(c.spans)
	defer func() { c.spans = c.spans[:mark] }()
	for {
		c.ws()
		if c.pos >= len(c.in) || c.in[c.pos] != '"' {
			return c.errf("expected a string member name")
		}
		key, err := c.str()
		if err != nil {
			return err
		}
		c.ws()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return c.errf("expected ':' after member name")
		}
		c.pos++
		if len(c.spans) > mark {
			c.emit(',')
		}
		start := c.size()
		c.emitString(key)
		c.emit(':')
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.spans = append(c.spans, span{key: key, start: start, end: c.size()})
		c.ws()
		if c.pos >= len(c.in) {
			return errors.New("jcs: unexpected end of JSON input in object")
		}
		if c.in[c.pos] == ',' {
			c.pos++
			continue
		}
		if c.in[c.pos] != '}' {
			return c.errf("expected ',' or '}' in object")
		}
		c.pos++
		break
	}
	members := c.spans[mark:]
	byName := func(a, b span) int { return compareUTF16(a.key, b.key) }
	sorted := slices.IsSortedFunc(members, byName)
	if !sorted {
		slices.SortStableFunc(members, byName)
	}
	for i := 1; i < len(members); i++ {
		if bytes.Equal(members[i].key, members[i-1].key) {
			return fmt.Errorf("jcs: duplicate member %q", members[i].key)
		}
	}
	if sorted {
		// Written in order already, with separators: nothing to move.
		c.emit('}')
		return nil
	}
	// Re-emit the members in sorted order over the region they occupy
	// (the input had them in another order, so it is not canonical).
	c.materialize()
	c.scratch = append(c.scratch[:0], c.out[base:]...)
	region := c.scratch
	c.out = append(c.out[:base], '{')
	for i, m := range members {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, region[m.start-base:m.end-base]...)
	}
	c.out = append(c.out, '}')
	return nil
}

// compareUTF16 orders member names by their UTF-16 code units (RFC 8785
// §3.2.3). For names without supplementary characters UTF-8 byte order is
// the same, so only those pay for a conversion.
func compareUTF16(a, b []byte) int {
	if !hasSupplementary(a) && !hasSupplementary(b) {
		return bytes.Compare(a, b)
	}
	ua, ub := utf16.Encode([]rune(string(a))), utf16.Encode([]rune(string(b)))
	return slices.Compare(ua, ub)
}

func hasSupplementary(s []byte) bool {
	for _, ch := range s {
		if ch >= 0xF0 {
			return true
		}
	}
	return false
}

// str parses a JSON string at c.pos and returns its decoded UTF-8 bytes.
// Lone surrogate escapes are errors (I-JSON, which RFC 8785 requires).
func (c *canonicalizer) str() ([]byte, error) {
	c.pos++ // opening quote
	start := c.pos
	// Fast path: no escapes.
	for c.pos < len(c.in) {
		ch := c.in[c.pos]
		if ch == '"' {
			s := c.in[start:c.pos]
			c.pos++
			return s, nil
		}
		if ch == '\\' {
			break
		}
		if ch < 0x20 {
			return nil, c.errf("control character in string")
		}
		c.pos++
	}
	buf := slices.Clone(c.in[start:c.pos])
	for c.pos < len(c.in) {
		ch := c.in[c.pos]
		switch {
		case ch == '"':
			c.pos++
			return buf, nil
		case ch < 0x20:
			return nil, c.errf("control character in string")
		case ch != '\\':
			buf = append(buf, ch)
			c.pos++
			continue
		}
		if c.pos+1 >= len(c.in) {
			break
		}
		esc := c.in[c.pos+1]
		c.pos += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := c.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || c.pos+1 >= len(c.in) || c.in[c.pos] != '\\' || c.in[c.pos+1] != 'u' {
					return nil, c.errf("lone surrogate in string")
				}
				c.pos += 2
				r2, err := c.hex4()
				if err != nil {
					return nil, err
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return nil, c.errf("invalid surrogate pair in string")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return nil, c.errf("invalid escape '\\%c'", esc)
		}
	}
	return nil, errors.New("jcs: unexpected end of JSON input in string")
}

func (c *canonicalizer) hex4() (rune, error) {
	if c.pos+4 > len(c.in) {
		return 0, errors.New("jcs: unexpected end of JSON input in \\u escape")
	}
	v, err := strconv.ParseUint(string(c.in[c.pos:c.pos+4]), 16, 32)
	if err != nil {
		return 0, c.errf("invalid \\u escape")
	}
	c.pos += 4
	return rune(v), nil
}

// number validates the JSON number grammar and writes the ECMAScript form.
func (c *canonicalizer) number() error {
	start := c.pos
	if c.in[c.pos] == '-' {
		c.pos++
	}
	digits := func() int {
		n := 0
		for c.pos < len(c.in) && c.in[c.pos] >= '0' && c.in[c.pos] <= '9' {
			c.pos++
			n++
		}
		return n
	}
	intStart := c.pos
	n := digits()
	if n == 0 || (n > 1 && c.in[intStart] == '0') {
		return c.errf("invalid number")
	}
	simple := true
	if c.pos < len(c.in) && c.in[c.pos] == '.' {
		c.pos++
		simple = false
		if digits() == 0 {
			return c.errf("invalid number")
		}
	}
	if c.pos < len(c.in) && (c.in[c.pos] == 'e' || c.in[c.pos] == 'E') {
		c.pos++
		simple = false
		if c.pos < len(c.in) && (c.in[c.pos] == '+' || c.in[c.pos] == '-') {
			c.pos++
		}
		if digits() == 0 {
			return c.errf("invalid number")
		}
	}
	lit := c.in[start:c.pos]
	// Integers of up to 15 digits are already in canonical form (but -0).
	if simple && n <= 15 {
		if string(lit) == "-0" {
			c.emit('0')
		} else {
			c.emit(lit...)
		}
		return nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return c.errf("number %s is out of range", lit)
	}
	s, err := FormatNumber(f)
	if err != nil {
		return c.errf("%v", err)
	}
	c.emit([]byte(s)...)
	return nil
}

// appendString writes s (valid UTF-8) as a canonical JSON string.
func appendString(out, s []byte) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 0x20 && ch != '"' && ch != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch ch {
		case '"':
			out = append(out, '\\', '"')
		case '\\':
			out = append(out, '\\', '\\')
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, fmt.Sprintf(`\u%04x`, ch)...)
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// AppendStringBytes is AppendString for a byte slice, without converting
// it to a string first.
func AppendStringBytes(dst, s []byte) []byte {
	if !utf8.Valid(s) {
		return AppendString(dst, string(s))
	}
	return appendString(dst, s)
}

// AppendString appends s as a canonical JSON string, for callers that
// build canonical objects by hand. Invalid UTF-8 is replaced by U+FFFD, as
// encoding/json does.
func AppendString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return appendString(dst, []byte(s))
}
