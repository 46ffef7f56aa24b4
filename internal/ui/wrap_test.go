package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"short", 80, "short"},
		{"a long line of words here", 0, "a long line of words here"},
		{"  a long line of words here", 12, "  a long\n    line of\n    words\n    here"},
		{"comparable: same digest rules, outcome rules", 20, "comparable: same\n  digest rules,\n  outcome rules"},
		{"x\nshort\ny", 3, "x\nsho\nrt\ny"},
		// Lines break at spaces only: a path or a hyphenated name stays
		// whole when it fits a line, and is cut only when it cannot.
		{"wrote key 0123456789 in a-b-folder-name.key", 12, "wrote key\n  0123456789\n  in\n  a-b-folder\n  -name.key"},
		{"report saved to out/a-job-name.json; check it", 24, "report saved to\n  out/a-job-name.json;\n  check it"},
		{"  lead  two  spaces kept here", 14, "  lead  two\n    spaces\n    kept here"},
		{"abcd abcdefghij-xyz", 10, "abcd\n  abcdefgh\n  ij-xyz"},
	}
	for _, tt := range tests {
		got := Wrap(tt.in, tt.width, nil)
		if got != tt.want {
			t.Errorf("Wrap(%q, %d) =\n%q\nwant\n%q", tt.in, tt.width, got, tt.want)
		}
		for _, l := range strings.Split(got, "\n") {
			if tt.width > 0 && ansi.StringWidth(l) > tt.width {
				t.Errorf("Wrap(%q, %d): line %q too wide", tt.in, tt.width, l)
			}
		}
	}
}

func TestCloseStyles(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\ntext", "plain\ntext"},
		{"\x1b[2mhint\n\x1b[0m", "\x1b[2mhint\x1b[0m\n\x1b[2m\x1b[0m"},
		{"\x1b[1mbold\x1b[0m\nnext", "\x1b[1mbold\x1b[0m\nnext"},
		{"\x1b[1;31mtwo\n  lines\x1b[0m", "\x1b[1;31mtwo\x1b[0m\n  \x1b[1;31mlines\x1b[0m"},
	}
	for _, tt := range tests {
		if got := CloseStyles(tt.in); got != tt.want {
			t.Errorf("CloseStyles(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWrapAndColumnsMaskFirst: the mask a caller passes runs before a fold
// or a cut, so a secret is never printed in two halves (the gate in front
// of the output only recognises it whole).
func TestWrapAndColumnsMaskFirst(t *testing.T) {
	secret := "hunter2-hunter2-hunter2-hunter2"
	mask := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }
	for _, tc := range []struct {
		name string
		got  func(mask func(string) string) string
	}{
		{"wrap", func(m func(string) string) string { return Wrap("token: "+secret+" and more words", 20, m) }},
		{"columns", func(m func(string) string) string {
			var b strings.Builder
			_ = Columns(&b, 30, Table{Rows: [][]string{{"id", "detail " + secret}}, Elide: []bool{false, true}, MinElided: 4, Mask: m})
			return b.String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.got(nil); !strings.Contains(got, secret[:8]) {
				t.Fatalf("without a mask the cut text should show a part of the secret (the test would prove nothing): %q", got)
			}
			got := tc.got(mask)
			if strings.Contains(got, secret[:8]) {
				t.Errorf("a part of the secret was printed: %q", got)
			}
		})
	}
}
