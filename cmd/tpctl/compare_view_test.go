package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/internal/golden"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/snapshot"
)

// compareRounds builds two synthetic rounds and compares them, with the
// folders named base and cand as the goldens show them.
func compareRounds(t *testing.T, base, cand comparetest.Spec) *compare.Result {
	t.Helper()
	dirs := [2]string{filepath.Join(t.TempDir(), "base"), filepath.Join(t.TempDir(), "cand")}
	for i, s := range []comparetest.Spec{base, cand} {
		if _, err := comparetest.Build(dirs[i], s); err != nil {
			t.Fatal(err)
		}
	}
	r, err := compare.Rounds(context.Background(), dirs[0], dirs[1])
	if err != nil {
		t.Fatal(err)
	}
	r.Base.Dir, r.Candidate.Dir = "base", "cand"
	return r
}

func statuses(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// The comparable pair of compare's tests: a#1 and b#0 go failure →
// success, b#1 success → failure.
var (
	viewBase = statuses("a#0", "success", "a#1", "failure", "b#0", "failure", "b#1", "success", "c#0", "success", "c#1", "failure")
	viewCand = statuses("a#0", "success", "a#1", "success", "b#0", "success", "b#1", "failure", "c#0", "success", "c#1", "failure")
)

func comparableResult(t *testing.T) *compare.Result {
	return compareRounds(t, comparetest.Spec{Trials: viewBase},
		comparetest.Spec{Trials: viewCand, Checkpoint: "hf://acme/coder-7b@89abcdef0123456789abcdef0123456789abcdef"})
}

func notComparableResult(t *testing.T) *compare.Result {
	return compareRounds(t,
		comparetest.Spec{Trials: statuses("a#0", "success", "a#1", "failure", "b#0", "unscored", "d#0", "missing")},
		comparetest.Spec{Trials: statuses("a#1", "success", "b#0", "success", "c#0", "failure", "d#0", "success")})
}

func renderCompare(t *testing.T, r *compare.Result, limit, width int) []byte {
	t.Helper()
	s, _, _, _ := ui.Test()
	var out bytes.Buffer
	if err := writeCompare(&out, r, compareView{Styles: s.Styles(), Limit: limit, Width: width}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestCompareViewGolden(t *testing.T) {
	golden.Check(t, *update, renderCompare(t, comparableResult(t), 0, 0), "compare-comparable.txt")
	golden.Check(t, *update, renderCompare(t, notComparableResult(t), 2, 0), "compare-not-comparable.txt")
}

// TestCompareViewFitsWidth: at 80 columns (and narrower) no line is
// wider than the width, and every trial ID and verdict is still there.
func TestCompareViewFitsWidth(t *testing.T) {
	for _, r := range []*compare.Result{comparableResult(t), notComparableResult(t)} {
		r.Base.Dir = "rounds/" + strings.Repeat("a-very-long-folder-name/", 4) + "base"
		for _, width := range []int{80, 60, 40} {
			out := string(renderCompare(t, r, 0, width))
			for _, l := range strings.Split(out, "\n") {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("width %d: line of %d cells: %q", width, w, l)
				}
			}
			for _, id := range append(append([]string{}, r.Transitions.FailureToSuccess...), r.Transitions.SuccessToFailure...) {
				if !strings.Contains(out, "  "+id+"\n") {
					t.Errorf("width %d: trial %s not listed", width, id)
				}
			}
			if !strings.Contains(out, "comparable:") {
				t.Errorf("width %d: no verdict:\n%s", width, out)
			}
		}
	}
}

// TestCompareViewColourKeepsLayout: styles add escape codes but never
// move a column, and NO_COLOR output has none.
func TestCompareViewColourKeepsLayout(t *testing.T) {
	r := compareRounds(t, comparetest.Spec{Trials: viewBase}, comparetest.Spec{Trials: viewCand, Dataset: "9"})
	plain := renderCompare(t, r, 0, 0)
	if bytes.Contains(plain, []byte("\x1b[")) {
		t.Error("plain output contains escape codes")
	}
	s, _, _, _ := ui.Test()
	s.SetColorEnabled(true)
	var coloured bytes.Buffer
	if err := writeCompare(&coloured, r, compareView{Styles: s.Styles()}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(coloured.Bytes(), []byte("\x1b[")) {
		t.Fatal("colour output has no escape codes")
	}
	stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAll(coloured.Bytes(), nil)
	if diff := cmp.Diff(string(plain), string(stripped)); diff != "" {
		t.Errorf("layout differs with colour (-plain +coloured):\n%s", diff)
	}
}

// TestCompareViewEscapesControlCharacters: plan-supplied text (name,
// checkpoint, trial IDs) is shown with its control characters escaped,
// so a plan cannot send terminal escape sequences to whoever reads it.
func TestCompareViewEscapesControlCharacters(t *testing.T) {
	const esc = "\x1b]0;pwned\x07\x1b[2J"
	side := compare.Side{
		Dir: "round\x1b[31m", Name: "name" + esc, Label: "clean",
		Checkpoint: snapshot.Checkpoint{Ref: "hf://a/b" + esc + "@0123", ServedAs: "m\r\n"},
		Protocol:   snapshot.Protocol{Split: "held\u0085out"},
	}
	r := &compare.Result{
		Reasons:   []compare.Reason{{Code: compare.ReasonCohortDiffers, Message: "trial" + esc}},
		Base:      side,
		Candidate: side,
		Transitions: compare.Transitions{
			FailureToSuccess: []string{"a" + esc + "#0"},
			SuccessToFailure: []string{"b\t#0"},
			NotComparable:    []string{"c\x00#0"},
			NotComparableDetail: []compare.NotComparableTrial{
				{TrialID: "c\x00#0", Base: "missing", Candidate: "success"},
			},
		},
	}
	out := string(renderCompare(t, r, 0, 0))
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if i := strings.IndexFunc(line, unicode.IsControl); i >= 0 {
			t.Errorf("control character %q in line %q", line[i], line)
		}
	}
	for _, want := range []string{
		`name\x1b]0;pwned\a\x1b[2J`, `hf://a/b\x1b]0;pwned\a\x1b[2J@0123`, `m\r\n`, `held\u0085out`,
		`round\x1b[31m`, "  a\\x1b]0;pwned\\a\\x1b[2J#0\n", "  b\\t#0\n", "  c\\x00#0  base missing",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestCompareDocsTextExample keeps the text example of docs/compare.md
// equal to the comparable golden, so the page never shows output tpctl no
// longer prints.
func TestCompareDocsTextExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Text output")
	if !ok {
		t.Fatal(`docs/compare.md has no "## Text output" section`)
	}
	_, rest, ok = strings.Cut(rest, "```text\n")
	if !ok {
		t.Fatal("docs/compare.md: no ```text block under Text output")
	}
	example, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("docs/compare.md: unterminated ```text block")
	}
	want, err := os.ReadFile(filepath.Join("testdata", "golden", "compare-comparable.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), example); diff != "" {
		t.Errorf("docs/compare.md text example differs from testdata/golden/compare-comparable.txt (-golden +doc):\n%s", diff)
	}
}
