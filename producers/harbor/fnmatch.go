package harbor

import (
	"regexp"
	"strings"
	"sync"
)

// IsPattern reports whether s holds a character Python's fnmatch treats
// as special ("*", "?" or "["), so it is a pattern rather than a name.
func IsPattern(s string) bool { return strings.ContainsAny(s, "*?[") }

// FnMatch reports whether name matches the shell-style pattern as
// Python's fnmatch.fnmatch does on POSIX, Harbor's task filter: "*" any
// run of characters ("/" included), "?" one character, "[seq]" and
// "[!seq]" a character class, anything else itself; case-sensitive.
func FnMatch(name, pattern string) bool {
	if !IsPattern(pattern) {
		return name == pattern
	}
	re, err := fnmatchRegexp(pattern)
	if err != nil {
		return name == pattern
	}
	return re.MatchString(name)
}

var fnmatchCache sync.Map // pattern → *regexp.Regexp

// fnmatchRegexp is fnmatch.translate: the pattern as an anchored regular
// expression.
func fnmatchRegexp(pat string) (*regexp.Regexp, error) {
	if re, ok := fnmatchCache.Load(pat); ok {
		return re.(*regexp.Regexp), nil
	}
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := i + 1
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
				// No closing bracket: a literal "[", as fnmatch has it.
				b.WriteString(`\[`)
				continue
			}
			class := rs[i+1 : j]
			i = j
			neg := len(class) > 0 && class[0] == '!'
			if neg {
				class = class[1:]
			}
			b.WriteByte('[')
			if neg {
				b.WriteByte('^')
			}
			for k, r := range class {
				switch {
				case r == '-' && k > 0 && k < len(class)-1:
					b.WriteRune('-')
				case r == '\\' || r == '[' || r == ']' || r == '^' || r == '-':
					b.WriteByte('\\')
					b.WriteRune(r)
				default:
					b.WriteRune(r)
				}
			}
			b.WriteByte(']')
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	fnmatchCache.Store(pat, re)
	return re, nil
}
