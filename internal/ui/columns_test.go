package ui

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tuneplane/tpctl/internal/ui/termsafe"
)

func TestColumns(t *testing.T) {
	tab := Table{
		Header: []string{"STATUS", "TRIAL", "REASON"},
		Rows: [][]string{
			{"ok", "task-with-a-rather-long-name#0", "scored"},
			{"\x1b[1mfail\x1b[0m", "t#1", "a long free-text reason that goes on"},
		},
		Elide: []bool{false, true, true},
	}
	tests := []struct {
		width int
		want  string
	}{
		{0, "" +
			"STATUS  TRIAL                           REASON\n" +
			"ok      task-with-a-rather-long-name#0  scored\n" +
			"\x1b[1mfail\x1b[0m    t#1                             a long free-text reason that goes on\n"},
		{50, "" +
			"STATUS  TRIAL                 REASON\n" +
			"ok      task-with-a-rather-…  scored\n" +
			"\x1b[1mfail\x1b[0m    t#1                   a long free-text re…\n"},
		{20, "" +
			"ok\n" +
			"  TRIAL   task-with…\n" +
			"  REASON  scored\n" +
			"\n" +
			"\x1b[1mfail\x1b[0m\n" +
			"  TRIAL   t#1\n" +
			"  REASON  a long fr…\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := Columns(&buf, tt.width, tab); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tt.want {
			t.Errorf("width %d:\n%s\nwant\n%s", tt.width, buf.String(), tt.want)
		}
		if tt.width > 0 {
			for _, l := range strings.Split(buf.String(), "\n") {
				if ansi.StringWidth(l) > tt.width {
					t.Errorf("width %d: line of %d cells: %q", tt.width, ansi.StringWidth(l), l)
				}
			}
		}
	}
}

// FuzzColumnsWidth: whatever printable the cells, no line is wider than the
// width.
func FuzzColumnsWidth(f *testing.F) {
	f.Add("a", "bbbbbbbbbbbbbbbbbbbbbbbbbb", "日本語のテキスト", 20)
	f.Fuzz(func(t *testing.T, a, b, c string, width int) {
		width = 1 + abs(width)%120
		for _, s := range []string{a, b, c} {
			if termsafe.Contains(s) || strings.ContainsAny(s, "\t") {
				return // cells are printable (callers pass them through Cell)
			}
		}
		var buf bytes.Buffer
		_ = Columns(&buf, width, Table{Header: []string{"A", "B", "C"}, Rows: [][]string{{a, b, c}}, Elide: []bool{true, true, true}})
		for _, l := range strings.Split(buf.String(), "\n") {
			if ansi.StringWidth(l) > width {
				t.Errorf("width %d: line of %d cells: %q", width, ansi.StringWidth(l), l)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestColumnsElideStart: a column marked ElideStart keeps its end, where
// two checkpoints of one run differ, and is cut to the same width.
func TestColumnsElideStart(t *testing.T) {
	tab := Table{
		Header:     []string{"#", "CHECKPOINT", "RATE"},
		Rows:       [][]string{{"1", "hf://acme/a-long-model-name@step-1000", "25.0%"}, {"2", "hf://acme/a-long-model-name@step-20000", "75.0%"}},
		Elide:      []bool{false, true},
		ElideStart: []bool{false, true},
	}
	var b bytes.Buffer
	if err := Columns(&b, 30, tab); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"#  CHECKPOINT            RATE\n" +
		"1  …odel-name@step-1000  25.0%\n" +
		"2  …del-name@step-20000  75.0%\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
