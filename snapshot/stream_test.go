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
