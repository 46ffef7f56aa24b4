package jcs

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// canonicalizer walks the tokens of tpctl's JSON scanner and writes the
// canonical form as it goes. The scanner owns the grammar; what RFC 8785
// adds (no lone surrogate, integers without leading zeros, nesting
// bounded by MaxDepth) is checked here, and errors are worded as jcs has
// always worded them (errors.go), since digest reports them to users.
type canonicalizer struct {
	in  []byte
	sc  *jsonscan.Decoder
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
		if c.olen+len(p) <= len(c.in) && same(c.in[c.olen:c.olen+len(p)], p) {
			c.olen += len(p)
			return
		}
		c.materialize()
	}
	c.out = append(c.out, p...)
}

// same is bytes.Equal, quicker for what emit compares: a token that is
// the very input bytes (input already canonical) or one separator.
func same(a, b []byte) bool {
	switch {
	case len(a) != len(b):
		return false
	case len(a) == 0 || &a[0] == &b[0]:
		return true
	case len(a) == 1:
		return a[0] == b[0]
	}
	return bytes.Equal(a, b)
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

// off is the input offset just past the last token.
func (c *canonicalizer) off() int { return int(c.sc.InputOffset()) }

// run canonicalizes the one JSON text of the input.
func (c *canonicalizer) run() error {
	k, err := c.sc.Next()
	if err != nil {
		return c.fail(err)
	}
	if err := c.write(k, 0); err != nil {
		return err
	}
	if end, more := c.sc.Rest(); more {
		return fmt.Errorf("jcs: data after the JSON value at offset %d", end)
	}
	return nil
}

// write writes the value whose first token k was just read, at depth.
func (c *canonicalizer) write(k jsonscan.Kind, depth int) error {
	switch k {
	case jsonscan.BeginObject:
		return c.object(depth)
	case jsonscan.BeginArray:
		return c.array(depth)
	case jsonscan.String:
		s, quoted, err := c.text()
		if err != nil {
			return err
		}
		c.emitText(s, quoted)
		return nil
	case jsonscan.Number:
		return c.number()
	}
	c.emit(c.sc.Raw()...) // true, false, null
	return nil
}

// text is the decoded text of the string token just read and, when it
// has no escape, the token itself (quotes included), which stays valid and
// is already canonical.
func (c *canonicalizer) text() (text, quoted []byte, err error) {
	raw := c.sc.Raw()
	body := raw[1 : len(raw)-1]
	if c.sc.Verbatim() || bytes.IndexByte(body, '\\') < 0 {
		return body, raw, nil
	}
	// The scanner decodes a lone surrogate as U+FFFD; I-JSON refuses it.
	if err := c.surrogateError(c.off()-len(raw), c.off()-1); err != nil {
		return nil, nil, err
	}
	return c.sc.Text(), nil, nil
}

// emitText writes a string from text.
func (c *canonicalizer) emitText(text, quoted []byte) {
	if quoted != nil {
		c.emit(quoted...)
		return
	}
	c.emitString(text)
}

func (c *canonicalizer) array(depth int) error {
	c.emit('[')
	k, err := c.sc.Next()
	if depth+1 > MaxDepth && (err != nil || k != jsonscan.EndArray) {
		// No element fits: only an empty array is left.
		at := c.failedAt(err)
		if err == nil {
			at = int(c.sc.Start())
		}
		return c.errAt(at, "nesting deeper than %d", MaxDepth)
	}
	if err != nil {
		return c.fail(err)
	}
	for k != jsonscan.EndArray {
		if err := c.write(k, depth+1); err != nil {
			return err
		}
		if k, err = c.sc.Next(); err != nil {
			return c.fail(err)
		}
		if k != jsonscan.EndArray {
			c.emit(',')
		}
	}
	c.emit(']')
	return nil
}

func (c *canonicalizer) object(depth int) error {
	k, err := c.sc.Next()
	if err != nil {
		return c.fail(err)
	}
	if k == jsonscan.EndObject {
		c.emit('{', '}')
		return nil
	}
	base := c.size()
	c.emit('{')
	mark := len(c.spans)
	defer func() { c.spans = c.spans[:mark] }()
	for {
		key, quoted, err := c.text()
		if err != nil {
			return err
		}
		if quoted == nil {
			key = bytes.Clone(key) // Text is reused by the next token
		}
		afterKey := c.off()
		if len(c.spans) > mark {
			c.emit(',')
		}
		start := c.size()
		c.emitText(key, quoted)
		c.emit(':')
		k, err = c.sc.Next()
		if depth+1 > MaxDepth && (err == nil || c.sc.Expected() != jsonscan.PartColon) {
			// The ':' was read: the value, whatever it is, is one level
			// too deep. Only white space lies between the name and ':'.
			colon := afterKey + bytes.IndexByte(c.in[afterKey:], ':')
			return c.errAt(colon+1, "nesting deeper than %d", MaxDepth)
		}
		if err != nil {
			return c.fail(err)
		}
		if err := c.write(k, depth+1); err != nil {
			return err
		}
		c.spans = append(c.spans, span{key: key, start: start, end: c.size()})
		if k, err = c.sc.Next(); err != nil {
			return c.fail(err)
		}
		if k == jsonscan.EndObject {
			break
		}
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

// number writes the number token just read in its ECMAScript form.
func (c *canonicalizer) number() error {
	lit := c.sc.Raw()
	digits := lit
	if digits[0] == '-' {
		digits = digits[1:]
	}
	// The scanner reads 01 as two numbers; RFC 8785 input refuses it.
	if end := c.off(); digits[0] == '0' && end < len(c.in) && isDigit(c.in[end]) {
		for end < len(c.in) && isDigit(c.in[end]) {
			end++
		}
		return c.errAt(end, "invalid number")
	}
	n := len(digits)
	if i := bytes.IndexAny(digits, ".eE"); i >= 0 {
		n = i
	}
	// Integers of up to 15 digits are already in canonical form (but -0).
	if n == len(digits) && n <= 15 {
		if string(lit) == "-0" {
			c.emit('0')
		} else {
			c.emit(lit...)
		}
		return nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return c.errAt(c.off(), "number %s is out of range", lit)
	}
	s, err := FormatNumber(f)
	if err != nil {
		return c.errAt(c.off(), "%v", err)
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
	// Printable ASCII without quote or backslash, the common case (IDs,
	// digests, statuses), is written as it is.
	if PlainLen(s) < len(s) {
		return appendStringSlow(dst, s)
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendStringSlow(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return appendString(dst, []byte(s))
}
