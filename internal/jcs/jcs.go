// Package jcs implements the JSON Canonicalization Scheme of RFC 8785:
// object members sorted by UTF-16 code units, no insignificant white
// space, ECMAScript number formatting and minimal string escaping. Every
// hash tpctl computes over JSON is taken over this form, so that the same
// data hashes the same on any machine and in any language.
package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds nesting so hostile input cannot exhaust the stack.
const MaxDepth = 256

// Transform returns the canonical form of one JSON text. Duplicate member
// names, invalid UTF-8, NaN/Infinity, nesting past MaxDepth and trailing
// data are errors.
func Transform(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("jcs: input is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := canonValue(dec, &buf, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("jcs: data after the JSON value at offset %d", dec.InputOffset())
	}
	return buf.Bytes(), nil
}

// Marshal encodes v with encoding/json and returns its canonical form.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Transform(b)
}

func canonValue(dec *json.Decoder, buf *bytes.Buffer, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("jcs: nesting deeper than %d at offset %d", MaxDepth, dec.InputOffset())
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return errors.New("jcs: unexpected end of JSON input")
		}
		return fmt.Errorf("jcs: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return canonObject(dec, buf, depth)
		case '[':
			buf.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := canonValue(dec, buf, depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("jcs: %w", err)
			}
			buf.WriteByte(']')
			return nil
		}
		return fmt.Errorf("jcs: unexpected %q", t)
	case string:
		writeString(buf, t)
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("jcs: bad number %q: %w", t, err)
		}
		s, err := FormatNumber(f)
		if err != nil {
			return fmt.Errorf("jcs: number %q: %w", t, err)
		}
		buf.WriteString(s)
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	}
	return nil
}

type member struct {
	key   string
	units []uint16
	value []byte
}

func canonObject(dec *json.Decoder, buf *bytes.Buffer, depth int) error {
	var members []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("jcs: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("jcs: object key is not a string at offset %d", dec.InputOffset())
		}
		if seen[key] {
			return fmt.Errorf("jcs: duplicate member %q at offset %d", key, dec.InputOffset())
		}
		seen[key] = true
		var vb bytes.Buffer
		if err := canonValue(dec, &vb, depth+1); err != nil {
			return err
		}
		members = append(members, member{key: key, units: utf16.Encode([]rune(key)), value: vb.Bytes()})
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("jcs: %w", err)
	}
	sort.Slice(members, func(i, j int) bool { return lessUnits(members[i].units, members[j].units) })
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, m.key)
		buf.WriteByte(':')
		buf.Write(m.value)
	}
	buf.WriteByte('}')
	return nil
}

func lessUnits(a, b []uint16) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

func writeString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(buf, `\u%04x`, r)
			} else {
				buf.WriteRune(r)
			}
		}
	}
	buf.WriteByte('"')
}

// FormatNumber formats f as ECMAScript's Number.prototype.toString does,
// which RFC 8785 requires. NaN and infinities have no JSON form.
func FormatNumber(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", errors.New("NaN and Infinity are not valid JSON numbers")
	}
	if f == 0 {
		return "0", nil
	}
	if f < 0 {
		s, err := FormatNumber(-f)
		return "-" + s, err
	}
	// Shortest round-trip digits and decimal exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	n := x + 1 // value = 0.digits × 10^n
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k), nil
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:], nil
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits, nil
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	ex := n - 1
	if ex < 0 {
		ex = -ex
	}
	if k == 1 {
		return digits + "e" + sign + strconv.Itoa(ex), nil
	}
	return digits[:1] + "." + digits[1:] + "e" + sign + strconv.Itoa(ex), nil
}
