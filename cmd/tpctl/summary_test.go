package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/internal/ui"
)

// TestSnapshotShowStatistics pins the statistics rows of snapshot show:
// pass@k per k with left-out tasks and their reasons, the clustered
// interval or why there is none, and older formats: tpctl-snapshot/2
// (recorded in snapshot/testdata/v2) shows its own statistics, and
// tpctl-snapshot/1 has none.
func TestSnapshotShowStatistics(t *testing.T) {
	tests := []struct {
		name   string
		trials map[string]string
		dir    string // a recorded snapshot instead of trials
		v1     bool
		want   []string
		absent []string
	}{
		{
			// a 1 of 2, b 2 of 2, c 1 of 1 scored, d 0 of 1: p = 4/6, residuals
			// −1/3, 2/3, 1/3, −2/3, se² = 4/3 · (10/9) / 36, se = 0.203.
			name: "left out",
			trials: map[string]string{"a#0": "success", "a#1": "failure", "b#0": "success", "b#1": "success",
				"c#0": "success", "c#1": "missing", "d#0": "failure", "d#1": "infra_error"},
			want: []string{
				"\n  clustered   SE 20.3 pp, 95% CI n/a: 4 tasks; a task-clustered interval needs at least 5 (more repeats of the same tasks do not help)\n",
				"\npass@k        k=1 62.5% · k=2 100.0% (each k over the tasks with at least k scored repeats)\n",
				"\npass^k        k=1 62.5% · k=2 50.0% (all k succeed)\n",
				"\n  left out    k=2 2 tasks (repeat_infra_error 1 · repeat_missing 1)\n",
			},
		},
		{
			// shares ½, 1, ½, 0, ½ over 10 trials: se² = 5/4 · 2/100, so se =
			// 0.158 and n_eff = 0.25/se² = 10; Wilson at t(4) = 2.776 on n = 10:
			// 0.5 ± 0.330.
			name: "five tasks",
			trials: map[string]string{"a#0": "success", "a#1": "failure", "b#0": "success", "b#1": "success",
				"c#0": "success", "c#1": "failure", "d#0": "failure", "d#1": "failure", "e#0": "success", "e#1": "failure"},
			want: []string{
				"\n  clustered   SE 15.8 pp, 95% CI 17.0–83.0% (Wilson on 10.0 effective trials, t with 4 df; trials clustered by task, 5 tasks)\n",
			},
			absent: []string{"left out"},
		},
		{
			name:   "one task, nothing counted at k=2",
			trials: map[string]string{"a#0": "success", "a#1": "unscored"},
			want: []string{
				"\n  clustered   95% CI n/a: 1 task; a task-clustered interval needs at least 5 (more repeats of the same tasks do not help)\n",
				"\npass@k        k=1 100.0% (each k over the tasks with at least k scored repeats)\n",
			},
			absent: []string{"left out"},
		},
		{
			name:   "nothing scored",
			trials: map[string]string{"a#0": "unscored", "b#0": "infra_error"},
			want:   []string{"\npass@k        n/a (no task has a scored repeat)\n"},
			absent: []string{"pass^k"},
		},
		{
			name: "format 2",
			dir:  filepath.Join("..", "..", "snapshot", "testdata", "v2", "left-out"),
			want: []string{
				"\n  clustered   SE 17.1 pp, 95% CI 29.0–96.0% (normal, trials clustered by task, 5 tasks)\n",
				"\npass@k        k=1 83.3% · k=2 100.0% (over 2 tasks with every repeat scored)\n",
				"\n  left out    4 tasks: repeat_infra_error 1 · repeat_missing 2 · repeat_unscored 1\n",
			},
		},
		{
			name:   "format 1",
			trials: map[string]string{"a#0": "success", "b#0": "failure"},
			v1:     true,
			want:   []string{"\nstatistics    none (a tpctl-snapshot/1 snapshot; import again for pass@k and task-clustered errors)\n"},
			absent: []string{"\n  clustered", "\npass@k"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir
			if dir == "" {
				dir = filepath.Join(t.TempDir(), "s")
				if _, err := comparetest.Build(dir, comparetest.Spec{Trials: tt.trials}); err != nil {
					t.Fatal(err)
				}
			}
			if tt.v1 {
				if err := comparetest.ToFormatV1(dir); err != nil {
					t.Fatal(err)
				}
			}
			for _, cmd := range [][]string{{"snapshot", "show", dir}, {"snapshot", "verify", dir}} {
				s, _, out, errOut := ui.Test()
				if code := runWith(context.Background(), s, cmd); code != 0 {
					t.Fatalf("%v exited %d: %s", cmd, code, errOut)
				}
				if cmd[1] != "show" {
					continue
				}
				for _, w := range tt.want {
					if !strings.Contains(out.String(), w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
				for _, a := range tt.absent {
					if strings.Contains(out.String(), a) {
						t.Errorf("output has %q:\n%s", a, out)
					}
				}
			}
		})
	}
}
