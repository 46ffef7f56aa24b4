package redact

import (
	"html"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The gate judges decoded text (issue 26): a secret written with JSON or
// Go escapes (once, or twice as in tool arguments, which are JSON text
// inside a JSON string), with \u escapes of plain letters, as HTML
// character references, or in the JSON-pointer form of a member name
// (~1 for "/", ~0 for "~") is the same secret. The scanner therefore looks
// at the text as it is and at up to MaxDecodeDepth successively decoded
// views of it; masking maps a match in a view back to the bytes of the
// original text it came from, so the whole encoded form is replaced.

// MaxDecodeDepth bounds how many times the gate decodes a text: three
// levels of JSON inside JSON strings, and one more for an HTML page or a
// JSON pointer around them.
const MaxDecodeDepth = 4

// view is text derived from an original by decoding. start[i] and end[i]
// are the offsets in the original of the escape that byte i of text came
// from; both are nil when the view is the original itself.
type view struct {
	text       string
	start, end []int
}

// span maps the view's bytes [a, b) to the original's.
func (v *view) span(a, b int) (int, int) {
	if v.start == nil {
		return a, b
	}
	return v.start[a], v.end[b-1]
}

// decodable reports whether text holds anything decodeOnce would change:
// a backslash, an ampersand or a tilde.
func decodable(text string) bool {
	// Three vectorised byte searches beat ContainsAny's byte-at-a-time
	// loop: every outgoing string passes here.
	return strings.IndexByte(text, '\\') >= 0 || strings.IndexByte(text, '&') >= 0 || strings.IndexByte(text, '~') >= 0
}

// decodeOnce undoes one level of escaping everywhere in text: the escapes
// of JSON and Go strings (\" \\ \/ \' \b \f \n \r \t \a \v \xHH \uHHHH,
// surrogate pairs included, and \UHHHHHHHH), HTML character references
// (&amp; &#39; &#x2b; …) and JSON-pointer escapes (~0 ~1). Anything else is
// copied as it is. With mapped set it also returns, for each output byte,
// the span of the input it came from. ok is false when nothing changed.
func decodeOnce(text string, mapped bool) (out string, start, end []int, ok bool) {
	var b strings.Builder
	b.Grow(len(text))
	emit := func(s string, from, to int) {
		b.WriteString(s)
		if mapped {
			for range len(s) {
				start = append(start, from)
				end = append(end, to)
			}
		}
	}
	changed := false
	lit := 0 // start of the pending run of literal bytes
	flush := func(i int) {
		if lit < i {
			b.WriteString(text[lit:i])
			if mapped {
				for j := lit; j < i; j++ {
					start = append(start, j)
					end = append(end, j+1)
				}
			}
		}
	}
	var next specials
	for i := 0; i < len(text); {
		// Only \, & and ~ start an escape (decodeAt): jump to the next.
		if i = next.from(text, i); i >= len(text) {
			break
		}
		s, n := decodeAt(text, i)
		if n == 0 {
			i++
			continue
		}
		flush(i)
		emit(s, i, i+n)
		changed = true
		i += n
		lit = i
	}
	if !changed {
		return text, nil, nil, false
	}
	flush(len(text))
	return b.String(), start, end, true
}

// specials finds the bytes that may start an escape by a vectorised
// search for each, remembering where each one is next.
type specials struct {
	at   [3]int // next index of \, & and ~, or len(text) when none
	init bool
}

// from returns the index of the first \, & or ~ in text at or after i
// (i never decreases between calls), or len(text).
func (sp *specials) from(text string, i int) int {
	first := len(text)
	for k, c := range [3]byte{'\\', '&', '~'} {
		if !sp.init || sp.at[k] < i {
			if j := strings.IndexByte(text[i:], c); j >= 0 {
				sp.at[k] = i + j
			} else {
				sp.at[k] = len(text)
			}
		}
		first = min(first, sp.at[k])
	}
	sp.init = true
	return first
}

// decodeAt decodes the escape starting at text[i], returning its value
// and length, or n == 0 when none starts there.
func decodeAt(text string, i int) (string, int) {
	switch text[i] {
	case '\\':
		if i+1 >= len(text) {
			return "", 0
		}
		switch c := text[i+1]; c {
		case '"', '\\', '/', '\'':
			return text[i+1 : i+2], 2
		case 'b':
			return "\b", 2
		case 'f':
			return "\f", 2
		case 'n':
			return "\n", 2
		case 'r':
			return "\r", 2
		case 't':
			return "\t", 2
		case 'a':
			return "\a", 2
		case 'v':
			return "\v", 2
		case 'x':
			if v, ok := hexAt(text, i+2, 2); ok {
				return string([]byte{byte(v)}), 4
			}
		case 'u':
			v, ok := hexAt(text, i+2, 4)
			if !ok {
				return "", 0
			}
			r := rune(v)
			if utf16.IsSurrogate(r) {
				if i+12 <= len(text) && text[i+6] == '\\' && text[i+7] == 'u' {
					if v2, ok := hexAt(text, i+8, 4); ok {
						if pr := utf16.DecodeRune(r, rune(v2)); pr != utf8.RuneError {
							return string(pr), 12
						}
					}
				}
				return "\uFFFD", 6
			}
			return string(r), 6
		case 'U':
			if v, ok := hexAt(text, i+2, 8); ok && utf8.ValidRune(rune(v)) {
				return string(rune(v)), 10
			}
		}
	case '&':
		// A character reference: & then up to 32 letters, digits or #,
		// then ;. html.UnescapeString knows every name.
		j := i + 1
		for j < len(text) && j-i <= 33 && isRefByte(text[j]) {
			j++
		}
		if j > i+1 && j < len(text) && text[j] == ';' {
			ref := text[i : j+1]
			if u := html.UnescapeString(ref); u != ref {
				return u, len(ref)
			}
		}
	case '~':
		if i+1 < len(text) {
			switch text[i+1] {
			case '0':
				return "~", 2
			case '1':
				return "/", 2
			}
		}
	}
	return "", 0
}

func isRefByte(c byte) bool {
	return c == '#' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// hexAt parses n hex digits at text[i:].
func hexAt(text string, i, n int) (uint32, bool) {
	if i+n > len(text) {
		return 0, false
	}
	var v uint32
	for _, c := range []byte(text[i : i+n]) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint32(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// decodedViews returns the successive decodings of text (not text
// itself), at most MaxDecodeDepth, stopping when nothing changes. With
// mapped set, each view maps its bytes to text's.
func decodedViews(text string, mapped bool) []view {
	var views []view
	cur := view{text: text}
	for range MaxDecodeDepth {
		if !decodable(cur.text) {
			break
		}
		out, st, en, ok := decodeOnce(cur.text, mapped)
		if !ok {
			break
		}
		next := view{text: out}
		if mapped {
			next.start, next.end = st, en
			if cur.start != nil {
				for i := range st {
					next.start[i] = cur.start[st[i]]
					next.end[i] = cur.end[en[i]-1]
				}
			}
		}
		views = append(views, next)
		cur = next
	}
	return views
}

// The folded forms of an echo: a server that prints a token over two
// lines, continues it on an indented line, or splits it by a tab prints
// its parts, which together are the token. The joined view removes every
// fold: a maximal run of blanks (space, tab, CR, LF) that holds at least
// one tab or line break. A run of spaces alone is kept, so words stay
// apart.

// isBlank is a byte of a fold run.
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// hasLineBreak reports whether text holds a fold: a CR, an LF or a tab
// (by vectorised byte searches, as decodable).
func hasLineBreak(text string) bool {
	return strings.IndexByte(text, '\n') >= 0 || strings.IndexByte(text, '\r') >= 0 || strings.IndexByte(text, '\t') >= 0
}

// blankRun returns the end of the run of blanks starting at text[i] and
// whether it is a fold (holds a tab, CR or LF).
func blankRun(text string, i int) (end int, fold bool) {
	for end = i; end < len(text) && isBlank(text[end]); end++ {
		fold = fold || text[end] != ' '
	}
	return end, fold
}

// blankRunBack returns the start of the run of blanks ending at text[i]
// (inclusive) and whether it is a fold.
func blankRunBack(text string, i int) (start int, fold bool) {
	for start = i; start >= 0 && isBlank(text[start]); start-- {
		fold = fold || text[start] != ' '
	}
	return start + 1, fold
}

// joined is v without its folds, mapped to v's original. ok is false when
// v has none.
func joined(v view) (view, bool) {
	if !hasLineBreak(v.text) {
		return view{}, false
	}
	var b strings.Builder
	var st, en []int
	for i := 0; i < len(v.text); {
		if isBlank(v.text[i]) {
			if end, fold := blankRun(v.text, i); fold {
				i = end
				continue
			}
		}
		b.WriteByte(v.text[i])
		s, e := v.span(i, i+1)
		st, en = append(st, s), append(en, e)
		i++
	}
	return view{text: b.String(), start: st, end: en}, true
}

// joinedText is text without its folds; ok is false when it has none.
func joinedText(text string) (string, bool) {
	if !hasLineBreak(text) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(text))
	// Copy up to the next fold in one piece: the blanks before it are
	// spaces only (kept), and the whole run around it is removed. The
	// next LF, tab and CR are found by vectorised searches, each kept
	// until passed.
	next := [3]int{-1, -1, -1}
	for i := 0; i < len(text); {
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
		if at == len(text) {
			b.WriteString(text[i:])
			break
		}
		// The run starts at or after i: the one before ended at i.
		a, _ := blankRunBack(text, at)
		end, _ := blankRun(text, at)
		b.WriteString(text[i:a])
		i = end
	}
	return b.String(), true
}
