package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/internal/ui"
)

var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// TestStyledOutputAligned: on a terminal, styles add colour and nothing
// else. Stripped of its escape sequences, the coloured output must be
// byte-identical to the plain one; padding computed on styled text (%-13s,
// tabwriter) counted the escapes as width and shifted every column.
func TestStyledOutputAligned(t *testing.T) {
	example, _ := filepath.Abs("../../testdata/example")
	snap := filepath.Join(t.TempDir(), "snap")
	if code := runArgs(t, "import", "--plan", filepath.Join(example, "import-plan.json"), "--root", example, "--out", snap); code != 0 {
		t.Fatalf("import exited %d", code)
	}
	for _, args := range [][]string{
		{"formats"},
		{"explain", "outcomes"},
		{"snapshot", "show", snap},
		{"plan", "check", filepath.Join(example, "import-plan.json"), "--root", example},
	} {
		t.Run(strings.Join(args[:min(2, len(args))], " "), func(t *testing.T) {
			plain := runOut(t, false, args)
			styled := runOut(t, true, args)
			if !ansiEscape.MatchString(styled) {
				t.Fatalf("no escape sequences with colour on:\n%s", styled)
			}
			if diff := cmp.Diff(plain, ansiEscape.ReplaceAllString(styled, "")); diff != "" {
				t.Errorf("styled output differs from plain beyond colour (-plain +styled):\n%s", diff)
			}
		})
	}
}

func runOut(t *testing.T, color bool, args []string) string {
	t.Helper()
	s, _, out, errOut := ui.Test()
	s.SetTTY(color, false)
	s.SetColorEnabled(color)
	if code := runWith(context.Background(), s, args); code != 0 {
		t.Fatalf("tpctl %s exited %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out.String()
}

// TestStylesClosedAtLineEnd: with colour forced, no line of any output
// ends with a style still open (issue 27 item 8). "\e[2mhint…\n\e[0m"
// dims the next line too in a pager, a CI log or after grep, which sees
// one line at a time. Summaries, tables, findings, comparisons, views,
// errors with hints and usage errors are all run.
func TestStylesClosedAtLineEnd(t *testing.T) {
	example, _ := filepath.Abs("../../testdata/example")
	dir := t.TempDir()
	snap, snap2 := filepath.Join(dir, "r1"), filepath.Join(dir, "r2")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"colour\": \"blue\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(example, "import-plan.json")
	cases := [][]string{
		{"import", "--plan", plan, "--root", example, "--out", snap},
		{"import", "--plan", filepath.Join(example, "import-plan-round-2.json"), "--root", example, "--out", snap2},
		{"import", "--plan", plan, "--root", example, "--out", snap}, // exists: error with hint
		{"snapshot", "show", snap},
		{"snapshot", "show", snap, "--trials"},
		{"snapshot", "verify", snap},
		{"snapshot", "verfy", snap},
		{"plan", "check", plan, "--root", example},
		{"plan", "check", bad},
		{"compare", snap, snap2},
		{"compare", snap, snap},
		{"explain", "outcomes"},
		{"formats"},
		{"trend", snap, snap2},
		{"upload", snap, "--dry-run"},
		{"upload", filepath.Join(dir, "nowhere")},
		{"report", snap, "--out", filepath.Join(dir, "r.html")},
		{"improt", "--plan", plan},
		{"version"},
	}
	seenEscape := false
	// Unlimited width, and a narrow terminal where long styled lines
	// are folded.
	for _, width := range []int{0, 48} {
		for _, args := range cases {
			s, _, out, errOut := ui.Test()
			s.SetWidth(width)
			code := runWith(context.Background(), s, append(args, "--color", "always"))
			for name, text := range map[string]string{"stdout": out.String(), "stderr": errOut.String()} {
				seenEscape = seenEscape || ansiEscape.MatchString(text)
				for i, line := range strings.Split(text, "\n") {
					if open := openStyle(line); open != "" {
						t.Errorf("tpctl %s (width %d, exit %d): %s line %d ends inside %q: %q", strings.Join(args, " "), width, code, name, i+1, open, line)
					}
				}
			}
		}
	}
	if !seenEscape {
		t.Fatal("--color always produced no escape sequence at all: the check would pass vacuously")
	}
}

// openStyle returns the SGR escapes still in force at the end of line,
// "" when every style was reset.
func openStyle(line string) string {
	open := ""
	for _, m := range ansiEscape.FindAllString(line, -1) {
		if m == "\x1b[0m" || m == "\x1b[m" {
			open = ""
		} else {
			open += m
		}
	}
	return open
}
