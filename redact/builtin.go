package redact

import (
	"context"
	"regexp"
	"strings"
	"sync"
)

// detector is one credential pattern. Each has cheap literal prefilters
// (any must occur, case-folded when fold is set) so that long texts with
// no candidate skip the regular expression entirely.
type detector struct {
	kind     string
	re       *regexp.Regexp
	pre      []string // literal substrings, at least one must occur
	fold     bool     // prefilters compare ASCII case-insensitively
	keep     string   // replacement prefix group: "${1}" keeps the context
	valid    func(string) bool
	scanOnly string // a different (stricter) expression for the scanner
	noScan   bool   // too loose for the post-redaction scan
	// tokenRun: every match has at least this many bytes of
	// [A-Za-z0-9_-] right after the expression's literal prefix, so the
	// scanner skips a prefix without them (the "sk-" of "task-00001")
	// without starting the automaton (findFast).
	tokenRun int
	bit      uint32 // this detector in a candidates mask
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// detectors run in this order: whole blocks first (a private key or JWT
// may contain text other patterns would partly match), then prefixes that
// are more specific before those they extend (sk-ant- before sk-).
var detectors = []*detector{
	{kind: "private_key", re: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY-----|[\s\S]*)`),
		pre: []string{"PRIVATE KEY-----"}, scanOnly: `-----BEGIN[ A-Z0-9]*PRIVATE KEY-----`},
	// The body of a private key without its armour lines (a PEM block
	// cut from the front, as a tool result often is): a base64 run whose
	// first bytes are the header of a PKCS#8, PKCS#1 or SEC1 DER key or of
	// an OpenSSH private key (keybody.go checks the structure; length
	// alone proves nothing). The run continues over line breaks of full
	// PEM lines.
	{kind: "private_key_body", re: regexp.MustCompile(`\b(?:M[A-Za-z0-9+/]{2}CAQ[AE]|MI[GH][A-Za-z0-9+/]AgE[AB]|MII[A-Za-z0-9+/]{3}IBA|b3BlbnNzaC1rZXktdjEA)[A-Za-z0-9+/]*(?:\r?\n[A-Za-z0-9+/]{60,})*(?:\r?\n[A-Za-z0-9+/]+)?={0,2}`),
		pre: []string{"CAQ", "AgE", "IBA", "b3BlbnNzaC1rZXktdjEA"}, valid: isKeyBody},
	{kind: "jwt", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*`), pre: []string{"eyJ"}},
	{kind: "anthropic_key", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`), pre: []string{"sk-ant-"}, tokenRun: 20},
	{kind: "openai_key", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), pre: []string{"sk-"},
		// The optional infixes are themselves of the class: 20 is a floor.
		tokenRun: 20,
		// Real keys are random; a long hyphenated slug without a digit
		// (sk-learn-compatible-estimator) is not one. Anthropic keys have
		// their own detector (it runs first when redacting; the scanner
		// must not count them twice).
		valid: func(m string) bool { return hasDigit(m) && !strings.HasPrefix(m, "sk-ant-") }},
	{kind: "github_token", re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`),
		pre: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{kind: "aws_access_key_id", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`), pre: []string{"AKIA", "ASIA", "ABIA", "ACCA"}},
	{kind: "aws_secret_key", re: regexp.MustCompile(`(?i)(aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}\b`),
		pre: []string{"secret"}, fold: true, keep: "${1}"},
	{kind: "google_api_key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), pre: []string{"AIza"}},
	{kind: "slack_token", re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), pre: []string{"xox"}},
	{kind: "huggingface_token", re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), pre: []string{"hf_"}},
	{kind: "bearer_token", re: regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{16,}=*`),
		pre: []string{"bearer"}, fold: true, keep: "${1}",
		// "Bearer YOUR_TOKEN_HERE" in documentation is common; redacting it is
		// harmless, aborting an import over it is not.
		noScan: true},
}

func (d *detector) candidate(s string) bool {
	for _, p := range d.pre {
		if d.fold {
			if containsFoldASCII(s, p) {
				return true
			}
		} else if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// containsFoldASCII reports whether s contains sub (lowercase ASCII)
// ignoring ASCII case, without copying s or allocating: the scanner calls
// it for every outgoing string.
func containsFoldASCII(s, sub string) bool {
	lo, up := sub[0], sub[0]-'a'+'A'
	for i := 0; i+len(sub) <= len(s); i++ {
		if c := s[i]; (c == lo || c == up) && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// redact replaces d's matches in s; s is known to be a candidate.
func (d *detector) redact(s string) string {
	repl := d.keep + "[REDACTED:" + d.kind + "]"
	if d.valid == nil {
		return d.re.ReplaceAllString(s, repl)
	}
	return d.re.ReplaceAllStringFunc(s, func(m string) string {
		if !d.valid(m) {
			return m
		}
		return d.re.ReplaceAllString(m, repl)
	})
}

type secrets struct{}

var _ Redactor = secrets{}

// Secrets returns the builtin:secrets redactor: API keys of common
// providers (OpenAI, Anthropic, GitHub, AWS, Google, Slack, Hugging Face),
// bearer tokens, JWTs and PEM private-key blocks become
// [REDACTED:<kind>]. A private-key block without its END line is redacted
// to the end of the text.
func Secrets() Redactor { return secrets{} }

func (secrets) Name() string { return "builtin:secrets" }
func (secrets) Close() error { return nil }

func (secrets) Redact(ctx context.Context, s string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s, _ = redactSecrets(s)
	// What the scan would find once the text is decoded or its folds
	// joined (a key header split by a line break, an escaped token) is
	// redacted too: the scan fires only on what a redactor missed, never
	// on builtin:secrets' own output (FuzzRedactThenScan).
	if decodable(s) || hasLineBreak(s) {
		s = patternsOnly().Mask(s)
	}
	return s, nil
}

// patternsOnly is the scanner of the credential patterns alone (no
// secret values: those are the invocation's, passed explicitly), made
// once: it holds only compiled expressions.
var patternsOnly = sync.OnceValue(func() *Scanner { return NewScanner(nil) })

// redactSecrets applies every detector to s and returns the result with
// its prefilter result (candidates of the returned text).
func redactSecrets(s string) (string, uint32) {
	mask := candidates(s)
	for _, d := range detectors {
		if mask&d.bit == 0 {
			continue
		}
		if r := d.redact(s); r != s {
			// The replacement may remove (or, in principle, add) later
			// detectors' literals: look again.
			s, mask = r, candidates(r)
		}
	}
	return s, mask
}
