package inspect

import (
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// ValueToFloat turns a score value into a number by Inspect's own rule,
// value_to_float() with its defaults (src/inspect_ai/scorer/_metric.py at
// the validated commit; this is a reading of that code, not a copy):
//
//   - a number or a boolean is cast to float (true 1, false 0; NaN, the
//     value of Score.unscored, stays NaN);
//   - the string "C" is 1, "P" is 0.5, "I" and "N" are 0 (exact, before
//     any case folding);
//   - any other string is lowered: "yes" and "true" are 1, "no" and
//     "false" are 0, and a string Python's float() reads as a finite
//     number is that number (is_finite_number in _util/text.py);
//   - anything else (a list, a dict, null, other text) cannot be
//     converted: Inspect logs a warning and counts it as 0.0; tpctl
//     reports ok false instead, so it is never silently a failure.
func ValueToFloat(raw string) (f float64, ok bool) {
	d := jsonscan.NewBytes([]byte(raw), scanOptions)
	k, err := d.Next()
	if err != nil {
		return 0, false
	}
	n, err := build(d, k, &budget{left: 1 << 16})
	if err != nil {
		return 0, false
	}
	return valueToFloat(n)
}

func valueToFloat(n *node) (float64, bool) {
	switch {
	case n == nil:
		return 0, false
	case n.isNumber():
		f, _ := n.float()
		return f, true
	case n.kind == jsonscan.True:
		return 1, true
	case n.kind == jsonscan.False:
		return 0, true
	case n.isString():
		switch n.text {
		case "C":
			return 1, true
		case "P":
			return 0.5, true
		case "I", "N":
			return 0, true
		}
		low := pyLower(n.text)
		switch low {
		case "yes", "true":
			return 1, true
		case "no", "false":
			return 0, true
		}
		if f, ok := pyFloat(low); ok && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, true
		}
	}
	return 0, false
}

// pyLower is str.lower() for the purpose at hand: only its result against
// ASCII words and number syntax matters, and for those Go's Unicode
// lowering agrees.
func pyLower(s string) string { return strings.ToLower(s) }

// pyFloat reads s as Python's float(str) does for decimal syntax: white
// space around it is stripped, an optional sign, digits with single
// underscores between them, an optional fraction and exponent; "nan",
// "inf" and "infinity" in any case. Go's ParseFloat accepts more (hex
// floats, underscores only with a base prefix), so the grammar is checked
// here first.
func pyFloat(s string) (float64, bool) {
	s = asciiDigits(strings.TrimFunc(s, unicode.IsSpace))
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "nan":
		return math.NaN(), true
	case "inf", "infinity":
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	i := 0
	digits := func() bool { // digits with single underscores between them
		start := i
		for i < len(body) {
			c := body[i]
			if c >= '0' && c <= '9' {
				i++
				continue
			}
			if c == '_' && i > start && i+1 < len(body) && body[i+1] >= '0' && body[i+1] <= '9' && body[i-1] != '_' {
				i++
				continue
			}
			break
		}
		return i > start
	}
	intPart := digits()
	frac := false
	if i < len(body) && body[i] == '.' {
		i++
		frac = digits()
	}
	if !intPart && !frac {
		return 0, false
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		i++
		if i < len(body) && (body[i] == '+' || body[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	if i != len(body) {
		return 0, false
	}
	clean := strings.ReplaceAll(s, "_", "")
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // ±Inf for overflow, as Python; 0 for underflow
		}
		return 0, false
	}
	return f, true
}

// asciiDigits maps every Unicode decimal digit (category Nd) to its ASCII
// digit, as Python's float() reads "١٢" as 12. Nd digits come in runs of
// ten starting at zero, so a digit's value is its place in its run.
func asciiDigits(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 0x80 && unicode.IsDigit(r) {
			n := 0
			for unicode.IsDigit(r - rune(n) - 1) {
				n++
			}
			b.WriteByte(byte('0' + n%10))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
