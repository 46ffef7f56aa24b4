package snapshot

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanTrialRefuses: a streamed writer takes planned trials only in
// strictly increasing canonical order, and refuses task names whose trial
// IDs would not sort per task (a byte up to '#'), so its cohort digest is
// always the one Create computes.
func TestPlanTrialRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keys  []trialKey
		wants string
	}{
		{"repeat twice", []trialKey{{"a", 0}, {"a", 0}}, "out of canonical"},
		{"backwards", []trialKey{{"b", 0}, {"a", 0}}, "out of canonical"},
		{"hash in task", []trialKey{{"a#b", 0}}, "up to '#'"},
		{"space in task", []trialKey{{"a b", 0}}, "up to '#'"},
		{"not UTF-8", []trialKey{{"a\xff", 0}}, "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := CreateStreamed(filepath.Join(t.TempDir(), "snap"), Options{OutcomeRules: "r"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			if err := w.PlanTrial("a", 0); err == nil {
				t.Error("PlanTrial before WritePlan succeeded")
			}
			if err := w.WritePlan(PlanSummary{}, nil, func(w io.Writer) error { _, err := io.WriteString(w, "{}"); return err }); err != nil {
				t.Fatal(err)
			}
			var last error
			for _, k := range tc.keys {
				if last = w.PlanTrial(k.Task, k.Repeat); last != nil {
					break
				}
			}
			if last == nil || !strings.Contains(last.Error(), tc.wants) {
				t.Errorf("err = %v; want one saying %q", last, tc.wants)
			}
		})
	}
}

// TestBeginPlanUnfinished: a streamed writer takes planned trials from
// BeginPlan on, while plan.json is still being written, but nothing seals
// or commits a snapshot whose plan.json is not finished, or was
// abandoned.
func TestBeginPlanUnfinished(t *testing.T) {
	for _, finish := range []bool{true, false} {
		w, err := CreateStreamed(filepath.Join(t.TempDir(), "snap"), Options{OutcomeRules: "r"})
		if err != nil {
			t.Fatal(err)
		}
		pw, err := w.BeginPlan(PlanSummary{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.PlanTrial("a", 0); err != nil {
			t.Errorf("PlanTrial while plan.json is written: %v", err)
		}
		if _, err := io.WriteString(pw, "{}"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.RoundID(); err == nil || !strings.Contains(err.Error(), "not finished") {
			t.Errorf("RoundID before the plan's Close: err = %v; want not finished", err)
		}
		if finish {
			if err := pw.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := w.RoundID(); err != nil {
				t.Errorf("RoundID after the plan's Close: %v", err)
			}
			w.Abort()
			continue
		}
		pw.Abort()
		if _, err := io.WriteString(pw, "x"); err == nil {
			t.Error("Write after Abort succeeded")
		}
		if err := pw.Close(); err == nil {
			t.Error("Close after Abort succeeded")
		}
		if _, err := w.Commit(); err == nil {
			t.Error("Commit with an abandoned plan.json succeeded")
		}
	}
}
