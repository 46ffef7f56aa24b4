package trend_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/stats"
	"github.com/tuneplane/tpctl/trend"
)

// rounds builds n rounds of 6 tasks × 2 repeats where round i has i+2
// successes per... task-level pattern, at checkpoints step-<(n-i)*500>.
func build(t *testing.T, name string, spec comparetest.Spec) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if _, err := comparetest.Build(dir, spec); err != nil {
		t.Fatal(err)
	}
	return dir
}

func trials(successes int) map[string]string {
	m := map[string]string{}
	for i := range 12 {
		st := "failure"
		if i < successes {
			st = "success"
		}
		m[fmt.Sprintf("task-%02d#%d", i/2, i%2)] = st
	}
	return m
}

func TestTrend(t *testing.T) {
	// Given out of checkpoint order: step-900, step-100, step-1000.
	dirs := []string{
		build(t, "c", comparetest.Spec{Checkpoint: "hf://m@step-900", Trials: trials(8)}),
		build(t, "a", comparetest.Spec{Checkpoint: "hf://m@step-100", Trials: trials(4)}),
		build(t, "b", comparetest.Spec{Checkpoint: "hf://m@step-1000", Trials: trials(6)}),
	}
	res, err := trend.Run(context.Background(), dirs, trend.OrderGiven)
	if err != nil {
		t.Fatal(err)
	}
	var rates []string
	for _, p := range res.Rounds {
		rates = append(rates, fmt.Sprintf("%s=%.4f", p.Checkpoint.Ref, *p.SuccessRate))
	}
	if got := strings.Join(rates, " "); got != "hf://m@step-900=0.6667 hf://m@step-100=0.3333 hf://m@step-1000=0.5000" {
		t.Errorf("given order: %s", got)
	}
	res, err = trend.Run(context.Background(), dirs, trend.OrderCheckpoint)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, p := range res.Rounds {
		refs = append(refs, p.Checkpoint.Ref)
	}
	if got := strings.Join(refs, " "); got != "hf://m@step-100 hf://m@step-900 hf://m@step-1000" {
		t.Errorf("checkpoint order: %s", got)
	}
	if res.Best != 1 {
		t.Errorf("best = %d, want 1 (step-900)", res.Best)
	}
	// Adjacent: 100→900 (+4 successes of 12), 900→1000 (−2); vs best: 900→100, 900→1000.
	want := []string{"adjacent 0→1 +0.3333", "adjacent 1→2 -0.1667", "vs_best 1→0 -0.3333", "vs_best 1→2 -0.1667"}
	if len(res.Pairs) != len(want) {
		t.Fatalf("pairs = %+v", res.Pairs)
	}
	for i, p := range res.Pairs {
		if !p.Comparable || p.Paired == nil {
			t.Fatalf("pair %d not comparable: %+v", i, p)
		}
		if got := fmt.Sprintf("%s %d→%d %+.4f", p.Kind, p.From, p.To, p.Paired.Delta); got != want[i] {
			t.Errorf("pair %d = %s, want %s", i, got, want[i])
		}
	}
	// 900 → 1000 lost task-03's successes (trials 6 and 7).
	if r := res.Pairs[1].Regressed; len(r) != 1 || r[0].Task != "task-03" || r[0].BaseSuccess != 2 || r[0].CandSuccess != 0 {
		t.Errorf("regressed = %+v", r)
	}
	if c := res.Tasks[3].Rounds; c[1].Success != 2 || c[2].Success != 0 || c[2].Scored != 2 {
		t.Errorf("task table row = %+v", res.Tasks[3])
	}
}

func TestTrendRefusesOtherProtocol(t *testing.T) {
	dirs := []string{
		build(t, "a", comparetest.Spec{Trials: trials(4)}),
		build(t, "b", comparetest.Spec{Trials: trials(4), Verifier: "7"}),
	}
	_, err := trend.Run(context.Background(), dirs, trend.OrderGiven)
	var pe *trend.ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "verifier_digest differs") {
		t.Fatalf("err = %v", err)
	}
}

func TestTrendDegradedPairNotComparable(t *testing.T) {
	deg := trials(4)
	deg["task-05#1"] = "missing"
	dirs := []string{build(t, "a", comparetest.Spec{Trials: trials(4)}), build(t, "b", comparetest.Spec{Trials: deg})}
	res, err := trend.Run(context.Background(), dirs, trend.OrderGiven)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pairs[0]
	if p.Comparable || p.Paired != nil || !strings.Contains(p.Reason, "round 2 (") || !strings.Contains(p.Reason, "1 of 12 planned trials not scored") {
		t.Errorf("pair = %+v", p)
	}
}

// TestTrendBounds: a round with trials not scored carries the worst and
// best case of its success rate (Manski bounds), the numbers snapshot
// show gives for it, in the result and on the page; a clean round's
// bounds are its rate over every planned trial, and the page says
// nothing of them.
func TestTrendBounds(t *testing.T) {
	deg := trials(6)
	deg["task-05#1"] = "missing"
	deg["task-04#0"] = "infra_error"
	deg["task-00#0"] = "unscored"
	dirs := []string{build(t, "a", comparetest.Spec{Checkpoint: "hf://m@step-1", Trials: trials(4)}), build(t, "b", comparetest.Spec{Checkpoint: "hf://m@step-2", Trials: deg})}
	res, err := trend.Run(context.Background(), dirs, trend.OrderGiven)
	if err != nil {
		t.Fatal(err)
	}
	for i, dir := range dirs {
		r, err := round.Load(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		want, got := r.Manifest.SuccessRateBounds(), res.Rounds[i].SuccessRateBounds
		if want == nil || got == nil || *got != *want {
			t.Errorf("round %d: bounds %+v, want snapshot show's %+v", i+1, got, want)
		}
	}
	// Round 2: 5 successes of 12 planned, 3 not scored → 5/12 and 8/12.
	if b := res.Rounds[1].SuccessRateBounds; b == nil || b.NotScored != 3 || b.Planned != 12 || b.WorstCase != stats.Round12(5.0/12) || b.BestCase != stats.Round12(8.0/12) {
		t.Errorf("round 2 bounds = %+v", b)
	}
	page, err := trend.HTML(res)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "worst–best case"); n != 1 {
		t.Errorf("page names worst–best case %d times, want once (round 2 only)", n)
	}
	if !strings.Contains(string(page), "worst–best case 41.7–66.7% (3 of 12 planned trials not scored)") {
		t.Errorf("page lacks round 2's bounds")
	}
}
