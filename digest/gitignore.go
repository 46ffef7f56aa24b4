package digest

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// This file reproduces how Harbor filters task files: a list of
// gitignore-style lines compiled by Python's pathspec library with its
// "gitwildmatch" pattern (pathspec 0.11/0.12), where every path is matched
// against every pattern and the last matching pattern decides (a "!"
// pattern re-includes). That is not git's own algorithm: a "!" line can
// re-include a file below an ignored folder, and patterns are matched
// against file paths only. What matters here is giving the same answer as
// Harbor, so each pattern is translated to a regular expression the way
// pathspec does it. Constructs whose meaning differs between pathspec
// versions, or between Python's and Go's regular expressions, are refused
// with *PatternError rather than guessed.

// PatternError is an ignore pattern tpctl cannot evaluate exactly as
// Harbor would.
type PatternError struct {
	File    string // the .gitignore path, or "" for built-in patterns
	Line    int    // 1-based line number
	Pattern string
	Reason  string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("%s:%d: ignore pattern %q: %s", e.File, e.Line, e.Pattern, e.Reason)
}

// ignorePattern is one compiled non-blank, non-comment line.
type ignorePattern struct {
	re      *regexp.Regexp
	include bool // true: matching paths are ignored; false: "!" re-includes
}

// ignoreSpec is an ordered list of patterns; the last match wins.
type ignoreSpec []ignorePattern

// ignored reports whether the slash path rel is matched (ignored).
func (s ignoreSpec) ignored(rel string) bool {
	matched := false
	for _, p := range s {
		if p.re.MatchString(rel) {
			matched = p.include
		}
	}
	return matched
}

// compileIgnore compiles lines as pathspec's PathSpec.from_lines
// ("gitwildmatch", lines) does.
func compileIgnore(file string, lines []string) (ignoreSpec, error) {
	var spec ignoreSpec
	for i, line := range lines {
		re, include, err := translatePattern(line)
		if err != nil {
			return nil, &PatternError{File: file, Line: i + 1, Pattern: line, Reason: err.Error()}
		}
		if re == "" {
			continue
		}
		c, err := regexp.Compile(re)
		if err != nil {
			return nil, &PatternError{File: file, Line: i + 1, Pattern: line, Reason: "not a valid pattern: " + err.Error()}
		}
		spec = append(spec, ignorePattern{re: c, include: include})
	}
	return spec, nil
}

// pyStrip trims what Python's str.strip() trims: Unicode white space plus
// the ASCII file, group, record and unit separators, which Python counts
// as white space and Go does not.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

// pyLineBreak reports the characters Python's str.splitlines() splits on.
func pyLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// pySplitLines splits s as Python's str.splitlines() does ("\r\n" is one
// break; a final break does not start an empty line).
func pySplitLines(s string) []string {
	var lines []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if !pyLineBreak(rs[i]) {
			continue
		}
		lines = append(lines, string(rs[start:i]))
		if rs[i] == '\r' && i+1 < len(rs) && rs[i+1] == '\n' {
			i++
		}
		start = i + 1
	}
	if start < len(rs) {
		lines = append(lines, string(rs[start:]))
	}
	return lines
}

// translatePattern follows GitWildMatchPattern.pattern_to_regex. It
// returns "" for blank lines, comments and the lone "/".
func translatePattern(line string) (re string, include bool, err error) {
	if strings.HasSuffix(line, `\ `) {
		// pathspec 0.12 keeps an escaped trailing space, 0.11 strips it.
		return "", false, fmt.Errorf(`a trailing escaped space ("\ ") is read differently by pathspec versions; remove it`)
	}
	p := pyStrip(line)
	if p == "" || strings.HasPrefix(p, "#") || p == "/" {
		return "", false, nil
	}
	include = true
	if strings.HasPrefix(p, "!") {
		include = false
		p = p[1:]
	}
	segs := strings.Split(p, "/")
	isDir := segs[len(segs)-1] == ""
	// Collapse runs of "**" segments.
	for i := len(segs) - 1; i > 0; i-- {
		if segs[i-1] == "**" && segs[i] == "**" {
			segs = append(segs[:i], segs[i+1:]...)
		}
	}
	override := ""
	if len(segs) == 2 && segs[0] == "**" && segs[1] == "" {
		// "**/" matches everything except files directly in the root.
		override = `^.+(?P<ps_d>/).*` + pyEnd
	}
	switch {
	case segs[0] == "":
		segs = segs[1:] // anchored to the root
	case len(segs) == 1 || (len(segs) == 2 && segs[1] == ""):
		if segs[0] != "**" {
			segs = append([]string{"**"}, segs...) // matches at any depth
		}
	}
	if len(segs) == 0 {
		return "", false, fmt.Errorf("not a valid pattern (nothing left to match)")
	}
	if segs[len(segs)-1] == "" && len(segs) > 1 {
		segs[len(segs)-1] = "**"
	}
	if override != "" {
		return override, include, nil
	}
	var b strings.Builder
	b.WriteString("^")
	needSlash := false
	end := len(segs) - 1
	for i, seg := range segs {
		switch {
		case seg == "**":
			switch {
			case i == 0 && i == end:
				b.WriteString(`[^/]+(?:(?P<ps_d>/).*)?`)
			case i == 0:
				b.WriteString(`(?:.+/)?`)
				needSlash = false
			case i == end:
				if isDir {
					b.WriteString(`(?P<ps_d>/).*`)
				} else {
					b.WriteString(`/.*`)
				}
			default:
				b.WriteString(`(?:/.+)?`)
				needSlash = true
			}
		case seg == "*":
			if needSlash {
				b.WriteString("/")
			}
			b.WriteString(`[^/]+`)
			if i == end {
				b.WriteString(`(?:(?P<ps_d>/).*)?`)
			}
			needSlash = true
		default:
			if needSlash {
				b.WriteString("/")
			}
			g, err := translateGlob(seg)
			if err != nil {
				return "", false, err
			}
			b.WriteString(g)
			if i == end {
				b.WriteString(`(?:(?P<ps_d>/).*)?`)
			}
			needSlash = true
		}
	}
	b.WriteString(pyEnd)
	return b.String(), include, nil
}

// pyEnd is Python's "$" in re.match: the end of the text, or just before
// a final newline.
const pyEnd = `\n?\z`

// translateGlob follows GitWildMatchPattern._translate_segment_glob for
// one path segment.
func translateGlob(pat string) (string, error) {
	rs := []rune(pat)
	var b strings.Builder
	escape := false
	for i := 0; i < len(rs); {
		c := rs[i]
		i++
		switch {
		case escape:
			escape = false
			b.WriteString(regexp.QuoteMeta(string(c)))
		case c == '\\':
			escape = true
		case c == '*':
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
		case c == '[':
			j := i
			if j < len(rs) && rs[j] == '!' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				b.WriteString(`\[`)
				continue
			}
			j++ // one past the closing bracket
			cls, err := translateClass(rs[i:j])
			if err != nil {
				return "", err
			}
			b.WriteString(cls)
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if escape {
		return "", fmt.Errorf("ends with a backslash that escapes nothing")
	}
	return b.String(), nil
}

// translateClass turns the body of a bracket expression (everything after
// "[" up to and including "]") into a Go character class with the meaning
// Python's re gives pathspec's output: "!" first negates, "^" first is a
// literal, "a-z" is a range, and every other character is literal, so
// "[[:alpha:]]" is the set "[:alph" followed by "]", as in pathspec (not a
// POSIX class as in git). The
// body is never empty: pathspec treats "[]" and "[!]" as literals.
func translateClass(body []rune) (string, error) {
	var b strings.Builder
	b.WriteString("[")
	i := 0
	if body[0] == '!' {
		b.WriteString("^")
		i++
	}
	// A leading "^" is literal (pathspec escapes it); the loop below
	// escapes every ASCII punctuation character, so it stays literal.
	inner := body[i : len(body)-1]
	for k, r := range inner {
		switch {
		case r == '\\':
			// pathspec doubles backslashes, so they are literal in Python;
			// keep them literal here.
			b.WriteString(`\\`)
		case r == '-' && k > 0 && k < len(inner)-1:
			b.WriteRune('-') // a range between its neighbours
		case r < 0x80 && !unicode.IsLetter(r) && !unicode.IsDigit(r):
			b.WriteString(`\`)
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("]")
	return b.String(), nil
}
