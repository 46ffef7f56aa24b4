package snapshot

import "unicode/utf8"

// obsWalker is a cursor over canonical plan bytes, for planhead.go's
// walk of the trials: it reads only the plain form (strings without
// escapes, integers) and declines the rest to encoding/json. Observation
// lines are decoded on jsonscan (obsdecode.go); this goes once the plan
// is streamed.
type obsWalker struct {
	b []byte
	i int
}

func (w *obsWalker) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\r', '\n':
			w.i++
		default:
			return
		}
	}
}

// byte consumes c after optional whitespace.
func (w *obsWalker) byte(c byte) bool {
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == c {
		w.i++
		return true
	}
	return false
}

// untracked is the member index of a key whose duplicates do not matter.
const untracked = -1

// object walks {"key": value, …}, calling member for each key; member
// returns false to give up. seen guards against duplicates (at most 64
// members, indexed by member's return value; untracked ones are not).
func (w *obsWalker) object(member func(key []byte) (int, bool)) bool {
	if !w.byte('{') {
		return false
	}
	if w.byte('}') {
		return true
	}
	var seen uint64
	for {
		w.ws()
		key, ok := w.rawString()
		if !ok || !w.byte(':') {
			return false
		}
		idx, ok := member(key)
		if !ok {
			return false
		}
		if idx != untracked {
			if seen&(1<<idx) != 0 {
				return false
			}
			seen |= 1 << idx
		}
		if w.byte(',') {
			continue
		}
		return w.byte('}')
	}
}

// rawString returns the bytes of a string without escapes or control
// characters, in valid UTF-8; the cursor is at its opening quote.
func (w *obsWalker) rawString() ([]byte, bool) {
	if w.i >= len(w.b) || w.b[w.i] != '"' {
		return nil, false
	}
	start := w.i + 1
	ascii := true
	for j := start; j < len(w.b); j++ {
		c := w.b[j]
		switch {
		case c == '"':
			s := w.b[start:j]
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			w.i = j + 1
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

func (w *obsWalker) str(dst *string) bool {
	w.ws()
	s, ok := w.rawString()
	if ok {
		*dst = string(s)
	}
	return ok
}

// integer reads -?(0|[1-9][0-9]*) of at most 18 digits.
func (w *obsWalker) integer(dst *int) bool {
	w.ws()
	j, neg := w.i, false
	if j < len(w.b) && w.b[j] == '-' {
		neg, j = true, j+1
	}
	start := j
	n := 0
	for j < len(w.b) && w.b[j] >= '0' && w.b[j] <= '9' {
		n = n*10 + int(w.b[j]-'0')
		j++
	}
	digits := j - start
	if digits == 0 || digits > 18 || digits > 1 && w.b[start] == '0' {
		return false
	}
	if j < len(w.b) {
		switch w.b[j] {
		case '.', 'e', 'E':
			return false
		}
	}
	if neg {
		n = -n
	}
	*dst, w.i = n, j
	return true
}
