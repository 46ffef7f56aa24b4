package redact

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestRules(t *testing.T) {
	dir := t.TempDir()
	yamlFile := writeFile(t, dir, "rules.yaml", `rules:
  - name: host
    pattern: '[a-z0-9-]+\.corp\.example\.com'
    replacement: '[REDACTED:host]'
  - pattern: 'user=(\w+)'
    replacement: 'user=<$1>'
  - pattern: '\[REDACTED:host\]'
    replacement: '[HOST]'
`)
	jsonFile := writeFile(t, dir, "rules.json", `{"rules": [{"pattern": "\\d{3}-\\d{4}", "replacement": "[PHONE]"}]}`)
	ctx := context.Background()
	r, err := Open(ctx, "rules:"+yamlFile)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := r.Redact(ctx, "ssh build-7.corp.example.com user=alice")
	if got != "ssh [HOST] user=<alice>" {
		t.Errorf("yaml rules: %q", got)
	}
	r, err = Open(ctx, "rules:"+jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Redact(ctx, "call 555-1234"); got != "call [PHONE]" {
		t.Errorf("json rules: %q", got)
	}
}

func TestRulesErrors(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"bad regex", "rules:\n  - pattern: 'a('\n    replacement: x\n", `line 2 /rules/0/pattern: invalid regular expression (Go RE2 syntax)`},
		{"lookahead", "rules:\n  - pattern: 'a(?=b)'\n    replacement: x\n", `line 2 /rules/0/pattern: invalid regular expression`},
		{"missing replacement", "rules:\n  - pattern: a\n", `line 2 /rules/0/replacement: missing`},
		{"missing pattern", "rules:\n  - replacement: a\n", `/rules/0/pattern: missing`},
		{"unknown key", "rules:\n  - pattern: a\n    replacment: b\n", `line 3 /rules/0/replacment: unknown key`},
		{"null value", "rules:\n  - pattern: a\n    replacement: null\n", `/rules/0/replacement: must be a string`},
		{"empty list", "rules: []\n", `/rules: is empty`},
		{"no rules key", "patterns: []\n", `line 1 /patterns: unknown key`},
		{"not a mapping", "- a\n", `must be a mapping`},
		{"empty file", "", `is empty`},
		{"bad yaml", "rules: [\n", `not valid YAML or JSON`},
		{"rule not mapping", "rules:\n  - just a string\n", `line 2 /rules/0: must be a mapping`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "r.yaml", tt.content)
			_, err := Open(context.Background(), "rules:"+p)
			var re *RulesError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *RulesError", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), filepath.Base(p)) {
				t.Errorf("error %q does not contain %q and the file name", err, tt.want)
			}
		})
	}
}
