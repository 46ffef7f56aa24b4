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
// two checkpoints of one run differ, and is cut to the same width; a
// Right column lines its numbers up on the right.
func TestColumnsElideStart(t *testing.T) {
	tab := Table{
		Header:     []string{"#", "CHECKPOINT", "RATE"},
		Rows:       [][]string{{"1", "hf://acme/a-long-model-name@step-1000", "5.0%"}, {"2", "hf://acme/a-long-model-name@step-20000", "75.0%"}},
		Elide:      []bool{false, true},
		ElideStart: []bool{false, true},
		Right:      []bool{false, false, true},
	}
	var b bytes.Buffer
	if err := Columns(&b, 30, tab); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"#  CHECKPOINT             RATE\n" +
		"1  …odel-name@step-1000   5.0%\n" +
		"2  …del-name@step-20000  75.0%\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestColumnsWrapLast: a WrapLast column is folded, never cut, in the
// room the others leave, its lines (and those after a line feed) under
// it; too little room stacks the rows with the value below its name.
func TestColumnsWrapLast(t *testing.T) {
	tab := Table{
		Header: []string{"CHECK", "STATUS", "REASON"},
		Rows: [][]string{
			{"recipe", "pass", "recipe \"sft\" is in the catalog"},
			{"hardware", "fail", "2 hardware mismatches with the cluster\n- /resources/gpus: 9 GPUs asked, 8 on a node"},
		},
		WrapLast: true,
	}
	tests := []struct {
		width int
		want  string
	}{
		{0, "" +
			"CHECK     STATUS  REASON\n" +
			"recipe    pass    recipe \"sft\" is in the catalog\n" +
			"hardware  fail    2 hardware mismatches with the cluster\n" +
			"                  - /resources/gpus: 9 GPUs asked, 8 on a node\n"},
		{50, "" +
			"CHECK     STATUS  REASON\n" +
			"recipe    pass    recipe \"sft\" is in the catalog\n" +
			"hardware  fail    2 hardware mismatches with the\n" +
			"                    cluster\n" +
			"                  - /resources/gpus: 9 GPUs asked,\n" +
			"                    8 on a node\n"},
		{30, "" +
			"recipe\n" +
			"  STATUS  pass\n" +
			"  REASON\n" +
			"    recipe \"sft\" is in the\n" +
			"      catalog\n" +
			"\n" +
			"hardware\n" +
			"  STATUS  fail\n" +
			"  REASON\n" +
			"    2 hardware mismatches with\n" +
			"      the cluster\n" +
			"    - /resources/gpus: 9 GPUs\n" +
			"      asked, 8 on a node\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := Columns(&b, tt.width, tab); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("width %d: got\n%s\nwant\n%s", tt.width, b.String(), tt.want)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if tt.width > 0 && ansi.StringWidth(l) > tt.width {
				t.Errorf("width %d: line %q too wide", tt.width, l)
			}
		}
		for _, word := range []string{"catalog", "cluster", "node"} {
			if !strings.Contains(b.String(), word) {
				t.Errorf("width %d: %q was cut", tt.width, word)
			}
		}
	}
}

// TestColumnsDrop: a table too wide leaves out its Drop columns in order,
// the fewest that keep every cell whole, before it cuts cells or stacks.
func TestColumnsDrop(t *testing.T) {
	tab := Table{
		Header: []string{"STATUS", "TRIAL", "EXCEPTION", "BODY", "DETAIL"},
		Rows: [][]string{
			{"failure", "task-a#0", "AgentTimeoutError", "-", "exception AgentTimeoutError: timed out"},
		},
		Elide: []bool{false, false, true, false, true},
		Drop:  []int{4, 3, 2},
	}
	tests := []struct {
		width   int
		want    string
		dropped []string
	}{
		{0, "STATUS   TRIAL     EXCEPTION          BODY  DETAIL\nfailure  task-a#0  AgentTimeoutError  -     exception AgentTimeoutError: timed out\n", nil},
		{60, "STATUS   TRIAL     EXCEPTION          BODY\nfailure  task-a#0  AgentTimeoutError  -\n", []string{"DETAIL"}},
		{50, "STATUS   TRIAL     EXCEPTION          BODY\nfailure  task-a#0  AgentTimeoutError  -\n", []string{"DETAIL"}},
		{36, "STATUS   TRIAL     EXCEPTION\nfailure  task-a#0  AgentTimeoutError\n", []string{"DETAIL", "BODY"}},
		{26, "STATUS   TRIAL\nfailure  task-a#0\n", []string{"DETAIL", "BODY", "EXCEPTION"}},
		{16, "failure\n  TRIAL      ta…\n  EXCEPTION  Ag…\n  BODY       -\n  DETAIL     ex…\n", nil},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := Columns(&b, tc.width, tab); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("width %d:\n%s\nwant\n%s", tc.width, b.String(), tc.want)
		}
		if _, dropped := tab.Fit(tc.width); strings.Join(dropped, ",") != strings.Join(tc.dropped, ",") {
			t.Errorf("width %d: dropped %v, want %v", tc.width, dropped, tc.dropped)
		}
	}
}
