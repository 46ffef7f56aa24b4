package gate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/snapshot"
)

// TestJudgeMaxCost: max_cost_usd judges the known spend of every attempt;
// known spend over the cap fails whatever is unknown, most of it unknown
// is not enough evidence, and quarantined tasks' spend is left out.
func TestJudgeMaxCost(t *testing.T) {
	// Each attempt of task-NN costs $1 unless known(task, repeat) is false.
	priced := func(known func(task string, rep int) bool) comparetest.Spec {
		return comparetest.Spec{Explain: func(task string, rep int, a *snapshot.AttemptOutcome) {
			if known(task, rep) {
				one := 1.0
				a.Usage = &snapshot.Usage{CostUSD: &one}
			}
		}}
	}
	all := grid(t, "all", 5, 2, func(i, r int) string { return verdict(true) }, priced(func(string, int) bool { return true }))
	most := grid(t, "most", 5, 2, func(i, r int) string { return verdict(true) }, priced(func(task string, r int) bool { return task != "task-00" || r == 0 }))
	few := grid(t, "few", 5, 2, func(i, r int) string { return verdict(true) }, priced(func(task string, r int) bool { return task == "task-00" }))
	none := grid(t, "none", 5, 2, func(i, r int) string { return verdict(true) }, comparetest.Spec{})
	for _, tc := range []struct {
		name, policy string
		cand         *round.Round
		outcome, msg string
	}{
		{"under the cap", "max_cost_usd: 10\n", all, gate.OutcomePass, "max_cost_usd $10.00: spent $10.00 known for all 10 attempts ≤ $10.00"},
		{"over the cap", "max_cost_usd: 9.5\n", all, gate.OutcomeFail, "spent $10.00 known for all 10 attempts > $9.50"},
		{"some unknown", "max_cost_usd: 10\n", most, gate.OutcomePass, "spent $9.00 known for 9 of 10 attempts ≤ $10.00 (the 1 attempt of unknown cost is not counted)"},
		{"most unknown", "max_cost_usd: 10\n", few, gate.OutcomeNoEvidence, "not enough evidence — spend $2.00 known for 2 of 10 attempts; with most of it unknown"},
		{"most unknown, already over", "max_cost_usd: 1\n", few, gate.OutcomeFail, "spent $2.00 known for 2 of 10 attempts > $1.00"},
		{"nothing known", "max_cost_usd: 10\n", none, gate.OutcomeNoEvidence, "unknown (none of 10 attempts reported a cost)"},
		{"quarantine", "max_cost_usd: 8\nquarantine: [task-00]\n", all, gate.OutcomePass, "spent $8.00 known for all 8 attempts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := gate.Judge(policy(t, tc.policy), "policy.yaml", tc.cand, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := ruleOf(v, gate.RuleMaxCost)
			if r == nil || r.Outcome != tc.outcome || !strings.Contains(r.Message, tc.msg) {
				t.Fatalf("rule = %+v, want %s with %q", r, tc.outcome, tc.msg)
			}
			if v.Pass != (tc.outcome == gate.OutcomePass) {
				t.Errorf("pass = %v with the rule %s", v.Pass, r.Outcome)
			}
		})
	}
	for _, bad := range []string{"max_cost_usd: -1\n", "max_cost_usd: '5'\n", "max_cost_usd: .inf\n"} {
		var pe *gate.PolicyError
		if _, err := gate.ParsePolicy("p.yaml", []byte(bad)); !errors.As(err, &pe) || !strings.Contains(err.Error(), "must be a number of US dollars") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}
