package power_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/power"
	"github.com/tuneplane/tpctl/round"
)

// pilotRates are the pilot's 12 tasks' success shares over 4 repeats.
var pilotRates = []int{4, 4, 4, 3, 3, 3, 2, 2, 1, 1, 0, 4}

func build(t *testing.T, dir string, trials map[string]string) *round.Round {
	t.Helper()
	if _, err := comparetest.Build(dir, comparetest.Spec{Trials: trials}); err != nil {
		t.Fatal(err)
	}
	r, err := round.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func pilot(t *testing.T) *round.Round {
	trials := map[string]string{}
	for i, s := range pilotRates {
		for r := range 4 {
			st := "failure"
			if r < s {
				st = "success"
			}
			trials[fmt.Sprintf("t%02d#%d", i, r)] = st
		}
	}
	return build(t, filepath.Join(t.TempDir(), "pilot"), trials)
}

func policy(t *testing.T, s string) *gate.Policy {
	t.Helper()
	p, err := gate.ParsePolicy("p.yaml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPowerAgreesWithGate is issue 34's check: the power plan claims at
// its recommended design is the pass rate of tpctl gate (gate.Run, on
// snapshots written to disk and verified) over rounds of that design
// drawn independently here — by this test's own sampler and seed, not
// power.Draw — from the same pilot tasks.
func TestPowerAgreesWithGate(t *testing.T) {
	ctx := context.Background()
	p := policy(t, "min_success_rate: 0.45\n")
	res, err := power.Plan(ctx, p, power.Options{PolicyFile: "p.yaml", Tasks: []int{3, 10, 20, 40}, Repeats: []int{1, 2, 4}, Simulations: 400, Seed: 7}, pilot(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Recommended
	if rec == nil {
		t.Fatalf("no design reaches 0.8: %+v", res.Designs)
	}
	t.Logf("recommended %d tasks × %d repeats, power %.3f", rec.Tasks, rec.Repeats, rec.Power)
	const rounds = 150
	r := rand.New(rand.NewPCG(424242, 1))
	dir := t.TempDir()
	passed := 0
	for k := range rounds {
		trials := map[string]string{}
		for i := range rec.Tasks {
			s := pilotRates[r.IntN(len(pilotRates))]
			for rep := range rec.Repeats {
				st := "failure"
				if r.IntN(4) < s {
					st = "success"
				}
				trials[fmt.Sprintf("task-%03d#%d", i, rep)] = st
			}
		}
		d := filepath.Join(dir, fmt.Sprint(k))
		if _, err := comparetest.Build(d, comparetest.Spec{Trials: trials}); err != nil {
			t.Fatal(err)
		}
		v, err := gate.Run(ctx, p, gate.Options{Candidate: d, PolicyFile: "p.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		if v.Pass {
			passed++
		}
	}
	got := float64(passed) / rounds
	// Both are estimates: the plan's from 400 rounds, this from 150.
	se := math.Sqrt(rec.Power*(1-rec.Power)/rounds + rec.Power*(1-rec.Power)/400)
	t.Logf("gate passes %d of %d rounds (%.3f); claimed %.3f ± %.3f", passed, rounds, got, rec.Power, se)
	if math.Abs(got-rec.Power) > 3*se+0.01 {
		t.Errorf("the gate passes %.3f of rounds of the recommended design, the plan claims %.3f (3 SE = %.3f)", got, rec.Power, 3*se)
	}
}

// TestPowerDesigns: under 5 tasks an interval rule has power 0 and says
// why; more repeats of few tasks do not reach the target; the result is
// the same for the same seed; a baseline rule gives the paired plan.
func TestPowerDesigns(t *testing.T) {
	ctx := context.Background()
	pl := pilot(t)
	p := policy(t, "min_success_rate: 0.45\n")
	opts := power.Options{PolicyFile: "p.yaml", Tasks: []int{3, 5, 40}, Repeats: []int{1, 8}, Simulations: 200, Seed: 3}
	a, err := power.Plan(ctx, p, opts, pl, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := power.Plan(ctx, p, opts, pl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.Designs) != fmt.Sprint(b.Designs) {
		t.Errorf("not deterministic:\n%v\n%v", a.Designs, b.Designs)
	}
	for _, d := range a.Designs {
		if d.Tasks == 3 && (d.Power != 0 || !strings.Contains(d.Reason, "3 tasks; a task-clustered interval needs at least 5") || !strings.Contains(d.Reason, "min_success_rate cannot pass")) {
			t.Errorf("3 tasks: %+v", d)
		}
	}
	var five *power.RepeatLimit
	for i := range a.RepeatLimits {
		if a.RepeatLimits[i].Tasks == 5 {
			five = &a.RepeatLimits[i]
		}
	}
	if five == nil || five.Reaches {
		t.Errorf("5 tasks: repeat limit %+v, want one that does not reach the target", five)
	}
	base := build(t, filepath.Join(t.TempDir(), "base"), func() map[string]string {
		m := map[string]string{}
		for i, s := range pilotRates {
			for r := range 4 {
				st := "failure"
				if r < max(s-1, 0) {
					st = "success"
				}
				m[fmt.Sprintf("t%02d#%d", i, r)] = st
			}
		}
		return m
	}())
	np := policy(t, "baseline: {non_inferiority_margin: 0.05}\n")
	res, err := power.Plan(ctx, np, power.Options{PolicyFile: "p.yaml", Tasks: []int{10, 40}, Repeats: []int{2}, Simulations: 100, Seed: 1}, pl, base)
	if err != nil {
		t.Fatal(err)
	}
	if res.Paired == nil || res.Paired.MDE80 <= 0 || res.Paired.Detectable != math.Round((-0.05+res.Paired.MDE80)*1e12)/1e12 || res.Paired.PilotDelta <= 0 {
		t.Errorf("paired plan %+v", res.Paired)
	}
	if _, err := power.Plan(ctx, np, power.Options{PolicyFile: "p.yaml"}, pl, nil); err == nil {
		t.Errorf("a baseline rule without a baseline was accepted")
	}
}
