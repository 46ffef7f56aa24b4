// Package jcs implements the JSON Canonicalization Scheme of RFC 8785:
// object members sorted by UTF-16 code units, no insignificant white
// space, ECMAScript number formatting and minimal string escaping. Every
// hash tpctl computes over JSON is taken over this form, so that the same
// data hashes the same on any machine and in any language.
package jcs

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// MaxDepth bounds nesting so hostile input cannot exhaust the stack.
const MaxDepth = 256

// Transform returns the canonical form of one JSON text. Duplicate member
// names, invalid UTF-8, NaN/Infinity, nesting past MaxDepth and trailing
// data are errors.
func Transform(data []byte) ([]byte, error) {
	c, err := canonicalize(data, false)
	if err != nil {
		return nil, err
	}
	return c.out, nil
}

// Canonical is Transform that returns data itself, without a copy, when
// data is already in canonical form (the common case for a plan tpctl
// normalized, 12 MB at 100,000 trials); otherwise it returns a new
// buffer. Callers must not modify data while they use the result.
func Canonical(data []byte) ([]byte, error) {
	c, err := canonicalize(data, true)
	if err != nil {
		return nil, err
	}
	if c.lazy {
		return data[:c.olen:c.olen], nil
	}
	return c.out, nil
}

// canonicalize runs the canonicalizer over the whole of data. lazy defers
// the output buffer until the first byte that differs from data.
func canonicalize(data []byte, lazy bool) (*canonicalizer, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("jcs: input is not valid UTF-8")
	}
	c := &canonicalizer{in: data, lazy: lazy, sc: jsonscan.NewBytes(data, jsonscan.Options{})}
	if !lazy {
		c.out = make([]byte, 0, len(data))
	}
	if err := c.run(); err != nil {
		return nil, err
	}
	return c, nil
}

// Marshal encodes v with encoding/json and returns its canonical form.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Transform(b)
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
	// An integer below 2^53 in magnitude is its decimal digits (ECMAScript
	// writes integers below 10^21 so); rewards and counts mostly are.
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10), nil
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
