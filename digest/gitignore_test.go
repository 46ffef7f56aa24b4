package digest

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIgnoreMatchesPathspec compares the Go translation with the answers
// of Python's pathspec (the library Harbor filters with), recorded by
// testdata/gen_pathspec_cases.py for many patterns and paths.
func TestIgnoreMatchesPathspec(t *testing.T) {
	b, err := os.ReadFile("testdata/pathspec_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		Cases []struct {
			Lines   []string        `json:"lines"`
			Error   string          `json:"error"`
			Matches map[string]bool `json:"matches"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	if len(data.Cases) < 50 {
		t.Fatalf("only %d cases in testdata/pathspec_cases.json", len(data.Cases))
	}
	for _, c := range data.Cases {
		spec, err := compileIgnore("t", c.Lines)
		if c.Error != "" {
			if err == nil {
				t.Errorf("%q: compiled, but pathspec raises %s", c.Lines, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.Lines, err)
			continue
		}
		got := map[string]bool{}
		for p := range c.Matches {
			got[p] = spec.ignored(p)
		}
		if diff := cmp.Diff(c.Matches, got); diff != "" {
			t.Errorf("%q mismatch with pathspec (-pathspec +tpctl):\n%s", c.Lines, diff)
		}
	}
}

func TestPySplitLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\n\nb", []string{"a", "", "b"}},
		{"a\r\nb\rc\vd\fe\x1cf\x1dg\x1eh\u0085i\u2028j\u2029k", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}},
		{"a\r\n\r\n", []string{"a", ""}},
		{"a\x1fb", []string{"a\x1fb"}}, // unit separator is white space, not a line break
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, pySplitLines(tt.in)); diff != "" {
			t.Errorf("pySplitLines(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestTranslatePatternStrip(t *testing.T) {
	// Python's str.strip() removes \x1f; Go's unicode.IsSpace does not.
	spec, err := compileIgnore("t", []string{"\x1ffoo\x1f \t"})
	if err != nil {
		t.Fatal(err)
	}
	if !spec.ignored("foo") || !spec.ignored("a/foo") {
		t.Error("pattern with Python white space around it does not match foo")
	}
}

func FuzzIgnorePattern(f *testing.F) {
	for _, s := range append(append([]string{}, HarborDefaultIgnores...), "f[!a-]o", "**/x/**", "!a\\", "[", "a/**/b/") {
		f.Add(s, "a/b/c")
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		spec, err := compileIgnore("fuzz", []string{pattern})
		if err != nil {
			return
		}
		spec.ignored(path) // must not panic
	})
}
