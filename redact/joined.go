package redact

import (
	"strings"
	"unsafe"
)

// The line-joined view (joinedText) of a text with line breaks is a copy
// that the scanner would search again in full, for a secret folded over
// two lines. Almost always it holds nothing: joinedClean proves that
// cheaply, by looking only at the bytes around each removed line break.
// A match in the joined view either lies within one line, and so is in
// the text itself, or spans a removed break, and so lies within maxSpan-1
// bytes of it on both sides.

// maxLit is the length of the longest prefilter literal.
var maxLit int

func init() {
	for _, d := range detectors {
		for _, p := range d.pre {
			maxLit = max(maxLit, len(p))
		}
	}
}

// maxWindowSide bounds the bytes joinedClean collects on each side of a
// line break; a longer secret takes the full joined view.
const maxWindowSide = 128

// joinedClean reports whether the line-joined view of text is certain to
// hold no match of any detector of s, given that text itself has none:
// mask is candidates(text) and matched is whether s.count found anything
// in text. When it returns false the joined view must be searched.
func (s *Scanner) joinedClean(text string, mask uint32, matched bool) bool {
	if matched || mask != 0 {
		return false
	}
	litSide := maxLit - 1
	side := litSide
	for _, v := range s.values {
		for _, f := range v.forms {
			side = max(side, len(f)-1)
		}
	}
	if side > maxWindowSide {
		return false
	}
	var buf [2 * maxWindowSide]byte
	budget := len(text) // past this much window work the copy is cheaper
	// Tool output has a line break or a tab every few dozen bytes:
	// windows that close cost more than searching the joined view (a copy
	// and one pass), so it is searched at once. The folds are counted by
	// vectorised searches; the factor weighs a window's byte against a
	// byte of the joined search.
	folds := strings.Count(text, "\n") + strings.Count(text, "\t") + strings.Count(text, "\r")
	if folds*4*side > budget {
		return false
	}
	// The next LF, tab and CR at or after a place, each found by a
	// vectorised search and kept until passed (IndexAny goes byte by byte).
	next := [3]int{-1, -1, -1}
	nextFold := func(i int) int {
		at := len(text)
		for k, c := range [3]byte{'\n', '\t', '\r'} {
			if next[k] < i {
				next[k] = len(text)
				if j := strings.IndexByte(text[i:], c); j >= 0 {
					next[k] = i + j
				}
			}
			at = min(at, next[k])
		}
		return at
	}
	for i := 0; i < len(text); {
		at := nextFold(i)
		if at == len(text) {
			break
		}
		// A fold [a, b): the whole run of blanks around the line break
		// or tab (decode.go), removed from the joined view.
		a, _ := blankRunBack(text, at)
		b, _ := blankRun(text, at)
		i = b
		if a == 0 || b == len(text) {
			continue // nothing is joined across a leading or trailing fold
		}
		// The joined view's bytes around the join point: up to side
		// bytes before it and after it, other folds skipped.
		from := side
		for j := a - 1; j >= 0 && from > 0; {
			if isBlank(text[j]) {
				k, fold := blankRunBack(text, j)
				if !fold {
					for ; j >= k && from > 0; j-- {
						from--
						buf[from] = text[j]
					}
				}
				j = k - 1
				continue
			}
			from--
			buf[from] = text[j]
			j--
		}
		to := side
		for j := b; j < len(text) && to < 2*side; {
			if isBlank(text[j]) {
				k, fold := blankRun(text, j)
				if !fold {
					for ; j < k && to < 2*side; j++ {
						buf[to] = text[j]
						to++
					}
				}
				j = k
				continue
			}
			buf[to] = text[j]
			to++
			j++
		}
		if budget -= to - from; budget < 0 {
			return false
		}
		// Only searched, never kept: no copy.
		win := unsafe.String(&buf[from], to-from)
		// The prefilter's literals are shorter than the values' forms.
		lit := unsafe.String(&buf[max(from, side-litSide)], min(to, side+litSide)-max(from, side-litSide))
		if candidates(lit) != 0 {
			return false
		}
		for _, v := range s.values {
			for _, f := range v.forms {
				if strings.Contains(win, f) {
					return false
				}
			}
		}
	}
	return true
}
