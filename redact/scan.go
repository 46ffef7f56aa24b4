package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"
)

// MinSecretLen is the shortest secret value the scanner looks for:
// shorter values would match ordinary text (TUNEPLANE_JOB_TOKEN=tok would
// garble every "token" printed). A shorter job token is not treated as a
// secret; tpctl says so (ShortSecrets).
const MinSecretLen = 8

// Secret is one secret tpctl knows from elsewhere than the environment
// (the config file's job-token): Name is how the gate reports it
// ("config:job-token"), never the value.
type Secret struct {
	Name, Value string
}

// ShortSecrets names the job tokens (TUNEPLANE_JOB_TOKEN in environ, and
// the known secrets) that are set but shorter than MinSecretLen,
// which the gate therefore does not look for; tpctl prints a note for
// each. Other short values of secret-looking variables are common and
// harmless (AUTH_MODE=on) and are not named.
func ShortSecrets(environ []string, known ...Secret) []string {
	var out []string
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok && name == "TUNEPLANE_JOB_TOKEN" && value != "" && len(value) < MinSecretLen {
			out = append(out, name)
		}
	}
	for _, x := range known {
		if x.Value != "" && len(x.Value) < MinSecretLen {
			out = append(out, x.Name)
		}
	}
	return out
}

// Scrub replaces every occurrence of the secret value in text with
// [REDACTED], unless the value is shorter than MinSecretLen: a value that
// short would garble ordinary words (a job token "t" would turn "http"
// into "h[REDACTED][REDACTED]p"), and the gate does not look for it either
// (ShortSecrets, whose note says so).
func Scrub(text, secret string) string {
	if len(secret) < MinSecretLen {
		return text
	}
	return strings.ReplaceAll(text, secret, "[REDACTED]")
}

// secretNameParts mark an environment variable as holding a secret.
var secretNameParts = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL", "AUTH"}

// notSecretNames hold paths, sockets or a commit author, not credentials,
// despite their names. The author variables matter since the gate covers
// every outgoing string: CI sets them, and a name or address in a plan or
// a message must not refuse an import or be masked.
var notSecretNames = map[string]bool{"SSH_AUTH_SOCK": true, "XAUTHORITY": true,
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true}

// Hit is how often one detector matched. It never holds the match.
type Hit struct {
	Detector string // "env:NAME" for a known value, "pattern:<kind>" for a credential pattern
	Count    int
}

// Scanner looks for secrets known to this process and for high-confidence
// credential patterns in text that is about to leave the machine.
type Scanner struct {
	values   []envValue
	patterns []scanPattern
}

// envValue is one known secret and the forms it takes in outgoing text:
// the raw value, and the escaped forms it has inside a JSON string (tool
// arguments are exported as JSON text, and tool output is often JSON), so
// a password holding a quote or a backslash cannot pass as "ab\"cd".
type envValue struct {
	detector string // "env:NAME", or "config:KEY" for a secret from the config file (Secret)
	forms    []string
}

type scanPattern struct {
	kind  string
	re    *regexp.Regexp
	nb    *regexp.Regexp // re without its leading \b, when that is faster (findAll)
	lit   string         // nb's literal prefix, when d.tokenRun is set
	run   int            // d.tokenRun, when nb is set
	d     *detector
	valid func(string) bool
	lead  bool // group 1 is a lead (an escape) before the credential, not part of it
}

// escapedLead replaces a pattern's leading \b in the scanner: the gate
// sees text after terminal escaping (internal/termsafe), where a tab or
// ESC before a key becomes \t or \x1b, and the letter that ends the
// escape would hide the word boundary: "\tsk-proj-…" must still match.
const escapedLead = `(\b|\\(?:[abfnrtv]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}))`

// find returns the spans of the valid credentials the pattern matches in
// text, leads excluded.
func (p *scanPattern) find(text string) [][2]int {
	if p.nb != nil {
		return p.findFast(text)
	}
	return p.findRegexp(text)
}

// findRegexp is find by the pattern's own expression, lead group and all.
func (p *scanPattern) findRegexp(text string) [][2]int {
	var spans [][2]int
	for _, m := range p.re.FindAllStringSubmatchIndex(text, -1) {
		start := m[0]
		if p.lead {
			start = m[3]
		}
		if p.valid == nil || p.valid(text[start:m[1]]) {
			spans = append(spans, [2]int{start, m[1]})
		}
	}
	return spans
}

// NewScanner collects, from environ ("NAME=value" entries as from
// os.Environ), the exact values of TUNEPLANE_JOB_TOKEN and of every
// variable whose upper-cased name contains KEY, SECRET, TOKEN, PASSWORD,
// CREDENTIAL or AUTH, when at least MinSecretLen long. SSH_AUTH_SOCK and
// XAUTHORITY (files) and GIT_AUTHOR_NAME, _EMAIL and _DATE (a commit's
// author) are skipped. The known secrets (the config file's job-token)
// are looked for too. Every check of the Scanner judges decoded text
// (decode.go).
//
// The Scanner is the registry of the secrets of one tpctl invocation:
// cmd/tpctl builds it once, from the environment, the config file and the
// flags, and passes it to every printer, writer, uploader and signer. No
// other package reads the process environment for secrets
// (TestNoEnvironmentOutsideCmd), so nil environ means none.
func NewScanner(environ []string, known ...Secret) *Scanner {
	s := &Scanner{}
	seen := map[string]bool{}
	sorted := append([]string(nil), environ...)
	sort.Strings(sorted) // same detector name for a shared value, whatever the order
	for _, kv := range sorted {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < MinSecretLen || seen[value] || notSecretNames[strings.ToUpper(name)] {
			continue
		}
		if name != "TUNEPLANE_JOB_TOKEN" && !secretName(name) {
			continue
		}
		seen[value] = true
		s.values = append(s.values, envValue{"env:" + name, secretForms(value)})
	}
	for _, x := range known {
		if len(x.Value) >= MinSecretLen && !seen[x.Value] {
			seen[x.Value] = true
			s.values = append(s.values, envValue{x.Name, secretForms(x.Value)})
		}
	}
	for _, d := range detectors {
		if d.noScan {
			continue
		}
		re := d.re
		if d.scanOnly != "" {
			re = regexp.MustCompile(d.scanOnly)
		}
		nb := withoutLeadingBoundary(re)
		src, lead := strings.CutPrefix(re.String(), `\b`)
		if lead {
			re = regexp.MustCompile(escapedLead + src)
		}
		p := scanPattern{kind: d.kind, re: re, nb: nb, d: d, valid: d.valid, lead: lead}
		if nb != nil && d.tokenRun > 0 {
			p.lit, _ = nb.LiteralPrefix()
			p.run = d.tokenRun
		}
		s.patterns = append(s.patterns, p)
	}
	return s
}

// secretForms returns value and its distinct escaped forms inside a JSON
// string (as Go writes it with and without HTML escaping, and as Python's
// json.dumps writes it: non-ASCII as \uXXXX) and as text of an HTML page
// (html/template writes ' as &#39; and + as &#43;: tpctl report's page
// must not carry "o&#39;brien" past the scan). A value with nothing to
// escape has one form.
func secretForms(value string) []string {
	forms := []string{value}
	add := func(f string) {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, html := range []bool{false, true} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(value) == nil {
			js := b.String() // "…"\n
			add(js[1 : len(js)-2])
		}
	}
	add(asciiJSON(value))
	add(pythonASCII(value))
	var b strings.Builder
	if htmlText.Execute(&b, value) == nil {
		add(b.String())
	}
	return forms
}

// pythonASCII is value as Python's ascii() (and repr() of bytes) writes
// it inside its quotes: printable ASCII as it is, a backslash doubled,
// \t \n \r, other characters below U+0100 as \xNN (U+00E9 is \xe9, a
// code point, where Go's \xe9 is a byte, so the decoded views never show
// it), then \uNNNN and \UNNNNNNNN. A password with Latin-1 letters in a
// Python traceback looks so.
func pythonASCII(value string) string {
	var b strings.Builder
	for _, r := range value {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

// htmlText escapes a value as html/template does in HTML text and quoted
// attributes, the contexts tpctl report puts snapshot values in.
var htmlText = template.Must(template.New("text").Parse("{{.}}"))

// asciiJSON is the inside of value as a JSON string with every non-ASCII
// character escaped (Python's json.dumps default, ensure_ascii).
func asciiJSON(value string) string {
	var b strings.Builder
	for _, r := range value {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x80 && r < 0x10000):
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x10000:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func secretName(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range secretNameParts {
		if strings.Contains(up, p) {
			return true
		}
	}
	return false
}

// Detectors lists the detector names the scanner uses (never the values).
func (s *Scanner) Detectors() []string {
	var out []string
	for _, v := range s.values {
		out = append(out, v.detector)
	}
	for _, p := range s.patterns {
		out = append(out, "pattern:"+p.kind)
	}
	return out
}

// Scan returns one Hit per detector that matched text, in detector order.
// field names the text for callers that report it; Scan itself ignores it.
func (s *Scanner) Scan(field, text string) []Hit {
	_ = field
	return s.scan(text, candidates(text))
}

// scan is Scan with the prefilter result for text already known. It
// looks at text and at its decoded views (decode.go); a detector's count
// is the most it matched in any one of them.
func (s *Scanner) scan(text string, mask uint32) []Hit {
	// On the stack for the usual few detectors: Scan runs for every
	// string an export or import writes.
	var buf [32]int
	n := len(s.values) + len(s.patterns)
	counts := buf[:min(n, len(buf))]
	if n > len(buf) {
		counts = make([]int, n)
	}
	matched := s.count(text, mask, counts)
	last, lastMask := text, mask
	if decodable(text) {
		for _, v := range decodedViews(text, false) {
			lastMask = candidates(v.text)
			matched = s.count(v.text, lastMask, counts)
			last = v.text
		}
	}
	// A secret folded by a line break: the most decoded view holds the
	// text's own line breaks and those its escapes stood for. Its joined
	// view is searched unless it surely holds nothing (joined.go).
	if hasLineBreak(last) && !s.joinedClean(last, lastMask, matched) {
		j, _ := joinedText(last)
		s.count(j, candidates(j), counts)
	}
	return s.hits(counts)
}

// hits names each detector counted in counts (values first, then
// patterns, in the scanner's order) with its count.
func (s *Scanner) hits(counts []int) []Hit {
	var hits []Hit
	for i, n := range counts {
		if n == 0 {
			continue
		}
		if i < len(s.values) {
			hits = append(hits, Hit{Detector: s.values[i].detector, Count: n})
		} else {
			hits = append(hits, Hit{Detector: "pattern:" + s.patterns[i-len(s.values)].kind, Count: n})
		}
	}
	return hits
}

// count raises counts (values first, then patterns) to the matches of
// each detector in text, and reports whether any detector matched.
func (s *Scanner) count(text string, mask uint32, counts []int) (matched bool) {
	for i, v := range s.values {
		n := 0
		for _, f := range v.forms {
			n += strings.Count(text, f)
		}
		counts[i] = max(counts[i], n)
		matched = matched || n > 0
	}
	for j, p := range s.patterns {
		if mask&p.d.bit == 0 {
			continue
		}
		if n := len(p.find(text)); n > 0 {
			counts[len(s.values)+j] = max(counts[len(s.values)+j], n)
			matched = true
		}
	}
	return matched
}

// SecretFoundError reports a secret found after redaction. Its message
// names where and which detector, never the matching bytes.
type SecretFoundError struct {
	Where    string // file and field, e.g. `"…/agent/trajectory.json" message 12 content`
	Detector string
	Count    int
}

func (e *SecretFoundError) Error() string {
	return fmt.Sprintf("secret scan: %s: %d match(es) of %s remain after redaction; nothing was written — "+
		"add a redactor that removes it (e.g. --redactor builtin:secrets or a rules: file) and run again",
		e.Where, e.Count, e.Detector)
}

// With returns a Scanner that also looks for the given secrets (the token
// an upload sends, known only once its credentials are read); s is not
// changed. A nil s gives the credential patterns and known.
func (s *Scanner) With(known ...Secret) *Scanner {
	if s == nil {
		return NewScanner(nil, known...)
	}
	out := &Scanner{values: slices.Clone(s.values), patterns: s.patterns}
	for _, x := range known {
		if len(x.Value) < MinSecretLen || slices.ContainsFunc(out.values, func(v envValue) bool { return v.forms[0] == x.Value }) {
			continue
		}
		out.values = append(out.values, envValue{x.Name, secretForms(x.Value)})
	}
	return out
}
