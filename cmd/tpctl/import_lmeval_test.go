package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPeekPlan reads the producer and, for lm-eval, the trial count of a
// plan streamed, in any member order, and gives up on anything else.
func TestPeekPlan(t *testing.T) {
	tests := []struct {
		name, plan string
		format     string
		trials     int
	}{
		{"lm-eval, source first", `{"name":"x","source":{"format":"lm-eval","revision":"0.4.13"},"trials":[{"task":"a"},{"task":"b"},{"task":"c"}]}`, "lm-eval", 3},
		{"lm-eval, trials first", `{"trials":[{"task":"a"},{"task":"b"}],"settings":{"k":[1,2]},"source":{"format":"lm-eval"}}`, "lm-eval", 2},
		{"lm-eval, no trials", `{"source":{"format":"lm-eval"},"trials":[]}`, "lm-eval", 0},
		{"harbor stops at the source", `{"source":{"format":"harbor"},"trials":[{"task":"a"}` + "\x00garbage", "harbor", -1},
		{"not an object", `[1,2]`, "", -1},
		{"trials not an array", `{"trials":{"a":1},"source":{"format":"lm-eval"}}`, "", -1},
		{"cut short", `{"source":{"format":"lm-eval"},"trials":[{"task":"a"},`, "", -1},
		{"no source", `{"trials":[{"task":"a"}]}`, "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "plan.json")
			if err := os.WriteFile(p, []byte(tc.plan), 0o644); err != nil {
				t.Fatal(err)
			}
			format, trials := peekPlan(p)
			if format != tc.format || trials != tc.trials {
				t.Errorf("peekPlan = %q, %d; want %q, %d", format, trials, tc.format, tc.trials)
			}
		})
	}
	if f, n := peekPlan(filepath.Join(t.TempDir(), "missing.json")); f != "" || n != -1 {
		t.Errorf("missing plan: %q, %d", f, n)
	}
}

// TestStreamsAttempts: the import's heap limit is for producers that keep
// nothing of an attempt (Harbor), not for those that hold a whole log.
func TestStreamsAttempts(t *testing.T) {
	a := &app{}
	for _, tc := range []struct {
		plan string
		want bool
	}{
		{`{"source":{"format":"harbor"},"trials":[]}`, true},
		{`{"source":{"format":"inspect"},"trials":[]}`, false},
		{`{"source":{"format":"lm-eval"},"trials":[]}`, false},
		{`{"source":{"format":"nope"},"trials":[]}`, false},
		{`not json`, false},
	} {
		p := filepath.Join(t.TempDir(), "plan.json")
		if err := os.WriteFile(p, []byte(tc.plan), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := streamsAttempts(a.producers(), p); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.plan, got, tc.want)
		}
	}
}
