package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/golden"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/report/reporttest"
	"github.com/tuneplane/tpctl/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func plain() ui.Styles {
	s, _, _, _ := ui.Test()
	return s.Styles()
}

func TestWriteTrialTable(t *testing.T) {
	r := reporttest.SmallRound(t, t.TempDir())
	for _, tc := range []struct {
		name   string
		filter report.Filter
	}{
		{"all", report.Filter{}},
		{"failure", report.Filter{Statuses: []string{"failure"}}},
		{"missing", report.Filter{Statuses: []string{"missing"}}},
		{"reason", report.Filter{Reason: "infra_exception"}},
		{"task", report.Filter{Task: "harbor/task-00"}},
		{"none", report.Filter{Task: "no-such-task"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := writeTrialTable(&out, 0, nil, r, tc.filter, plain()); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, *update, out.Bytes(), "snapshot-trials-"+tc.name+".txt")
		})
	}
}

func TestWriteTrialLines(t *testing.T) {
	r := reporttest.SmallRound(t, t.TempDir())
	var out bytes.Buffer
	if err := writeTrialLines(&out, r, report.Filter{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(r.Trials) {
		t.Fatalf("%d lines for %d planned trials", len(lines), len(r.Trials))
	}
	for i, l := range lines {
		var got report.TrialLine
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if got.TrialID != r.Trials[i].ID || got.Status != r.Trials[i].Status {
			t.Errorf("line %d is %s %s, want %s %s", i+1, got.TrialID, got.Status, r.Trials[i].ID, r.Trials[i].Status)
		}
		if got.Status == report.StatusMissing && (got.Reason != nil || got.TrialAttempt != nil || len(got.AttemptOutcomes) != 0) {
			t.Errorf("missing trial %s has outcome data: %s", got.TrialID, l)
		}
	}
	golden.Check(t, *update, out.Bytes(), "snapshot-trials.jsonl")
}

func TestWriteTrial(t *testing.T) {
	r := reporttest.SmallRound(t, t.TempDir())
	for _, tc := range []struct{ name, id string }{
		{"retries-and-bodies", "harbor/task-00#3"},
		{"no-body", "harbor/task-00#1"},
		{"missing", "harbor/task-01#1"},
		{"shared-verifier", "harbor/task-02#0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := writeTrial(&out, 0, nil, r, tc.id, plain()); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, *update, out.Bytes(), "snapshot-trial-"+tc.name+".txt")
		})
	}
	if err := writeTrial(&bytes.Buffer{}, 0, nil, r, "nope#0", plain()); !errors.Is(err, report.ErrNoTrial) {
		t.Errorf("unknown trial: %v, want ErrNoTrial", err)
	}
}

// Terminal escapes in snapshot text are shown as escapes, never sent to
// the terminal; newlines in a message stay readable lines.
func TestWriteTrialEscapesControlCharacters(t *testing.T) {
	r := reporttest.Write(t, filepath.Join(t.TempDir(), "r"), []reporttest.Trial{
		{Task: "evil\x1b]0;pwned\x07", Repeat: 0, Statuses: []string{"success"}},
	}, []reporttest.Body{{TrialID: "evil\x1b]0;pwned\x07#0", Messages: []transcript.Message{
		{Role: "tool", Content: "line one\nline two \x1b[31mred\x1b[0m", CallID: reporttest.Ptr("c\x1b")},
	}}})
	var table, detail bytes.Buffer
	if err := writeTrialTable(&table, 0, nil, r, report.Filter{}, plain()); err != nil {
		t.Fatal(err)
	}
	if err := writeTrial(&detail, 0, nil, r, r.Trials[0].ID, plain()); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"table": table.String(), "detail": detail.String()} {
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s output carries raw control characters:\n%q", name, out)
		}
		if !strings.Contains(out, `evil\x1b]0;pwned\a#0`) {
			t.Errorf("%s output does not show the escaped trial ID:\n%s", name, out)
		}
	}
	if !strings.Contains(detail.String(), "    line one\n    line two \\x1b[31mred\\x1b[0m\n") {
		t.Errorf("message lines not kept readable:\n%s", detail.String())
	}
}
