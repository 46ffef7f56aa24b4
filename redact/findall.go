package redact

import (
	"regexp"
	"strings"
)

// Go's regexp skips ahead to a literal prefix with a substring search,
// but a leading \b hides the prefix, so a pattern like \bsk-… runs its
// automaton over every byte of a megabyte payload that merely contains
// "task-". nb holds such a pattern without its \b; findFast checks the
// boundary itself and finds exactly the matches of the original.

// withoutLeadingBoundary returns re's expression without its leading \b,
// compiled, when what follows starts with a word character; else nil.
func withoutLeadingBoundary(re *regexp.Regexp) *regexp.Regexp {
	expr, ok := strings.CutPrefix(re.String(), `\b`)
	if !ok || expr == "" || !isWordByte(expr[0]) {
		return nil
	}
	nb, err := regexp.Compile(expr)
	if err != nil || nb.NumSubexp() != re.NumSubexp() {
		return nil
	}
	if p, _ := nb.LiteralPrefix(); p == "" {
		return nil // no prefix to skip to: nothing gained
	}
	return nb
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// findFast is findRegexp without running the automaton over every byte:
// it searches for the expression without its leading \b (which starts
// with a literal) and checks the boundary itself. The boundary is what
// escapedLead accepts: \b before a word character (the start of the text
// or a non-word byte before it; every match starts with a word
// character), or an escape such as \t or \x1b that ends right before it.
func (p *scanPattern) findFast(text string) [][2]int {
	var spans [][2]int
	for pos := 0; pos < len(text); {
		if p.run > 0 {
			// Every match starts at an occurrence of the literal prefix
			// followed by p.run token bytes: skip the others.
			i := strings.Index(text[pos:], p.lit)
			if i < 0 {
				break
			}
			at := pos + i
			if tokenRunAt(text, at+len(p.lit), p.run) {
				pos = at
			} else {
				pos = at + 1
				continue
			}
		}
		loc := p.nb.FindStringIndex(text[pos:])
		if loc == nil {
			break
		}
		start, end := pos+loc[0], pos+loc[1]
		if start > 0 && isWordByte(text[start-1]) && !escapeEndsAt(text, start) {
			pos = start + 1
			continue
		}
		if p.valid == nil || p.valid(text[start:end]) {
			spans = append(spans, [2]int{start, end})
		}
		pos = end
	}
	return spans
}

// tokenRunAt reports whether text[i:] starts with at least n bytes of
// [A-Za-z0-9_-].
func tokenRunAt(text string, i, n int) bool {
	if i+n > len(text) {
		return false
	}
	for _, c := range []byte(text[i : i+n]) {
		if c != '-' && !isWordByte(c) {
			return false
		}
	}
	return true
}

// escapeEndsAt reports whether text[:i] ends with one of escapedLead's
// escapes: a backslash and one of abfnrtv, \xHH or \uHHHH.
func escapeEndsAt(text string, i int) bool {
	if i >= 2 && text[i-2] == '\\' && strings.IndexByte("abfnrtv", text[i-1]) >= 0 {
		return true
	}
	if i >= 4 && text[i-4] == '\\' && text[i-3] == 'x' && isHex(text[i-2:i]) {
		return true
	}
	return i >= 6 && text[i-6] == '\\' && text[i-5] == 'u' && isHex(text[i-4:i])
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
