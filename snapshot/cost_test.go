package snapshot

import (
	"encoding/json"
	"testing"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

func attempt(cost *float64, in, cache, out *int64, exec *float64) AttemptOutcome {
	a := AttemptOutcome{Status: StatusFailure, Reason: "reward_failure"}
	if cost != nil || in != nil || cache != nil || out != nil {
		a.Usage = &Usage{InputTokens: in, CacheTokens: cache, OutputTokens: out, CostUSD: cost}
	}
	if exec != nil {
		a.Timing = &Timing{AgentExecution: exec, Verifier: f64(1)}
	}
	return a
}

func TestCostOf(t *testing.T) {
	retried := &Observation{TrialID: "a#1", Task: "a", Repeat: 1, AttemptOutcomes: []AttemptOutcome{
		attempt(f64(0.5), i64(100), i64(40), i64(10), f64(2)), // retried: Harbor leaves it out
		attempt(f64(1.25), i64(200), nil, i64(20), f64(3)),
	}}
	unknown := &Observation{TrialID: "b#1", Task: "b", Repeat: 1, AttemptOutcomes: []AttemptOutcome{attempt(nil, nil, nil, nil, nil)}}
	known := &Observation{TrialID: "c#1", Task: "c", Repeat: 1, AttemptOutcomes: []AttemptOutcome{attempt(f64(0.1), i64(5), nil, nil, f64(0.5))}}
	tests := []struct {
		name                      string
		obs                       []*Observation
		attempts, withCost, final int
		all, fin                  *float64
		in, cache, out            *int64
		text, finalText, harbor   string
		execSec                   *float64
		execN                     int
		wantJSONHasNullUSD        bool
	}{
		{name: "nothing", obs: []*Observation{nil}, text: "none (no attempt)", finalText: "none (no deciding attempt)", wantJSONHasNullUSD: true},
		{name: "unknown never 0", obs: []*Observation{unknown, nil}, attempts: 1, final: 1,
			text: "unknown (the attempt reported no cost)", finalText: "unknown (the deciding attempt reported no cost)", wantJSONHasNullUSD: true},
		{name: "retries and unknown", obs: []*Observation{retried, unknown, known}, attempts: 4, withCost: 3, final: 3,
			all: f64(1.85), fin: f64(1.35), in: i64(305), cache: i64(40), out: i64(30),
			text: "$1.85 known for 3 of 4 attempts", finalText: "$1.35 known for 2 of 3 deciding attempts",
			harbor:  "$1.35: it leaves out 1 retried attempt ($0.5 known) and it adds 1 attempt of unknown cost as $0",
			execSec: f64(5.5), execN: 3},
		{name: "all known", obs: []*Observation{known}, attempts: 1, withCost: 1, final: 1, all: f64(0.1), fin: f64(0.1), in: i64(5),
			text: "$0.1 known for the one attempt", finalText: "$0.1 known for the one deciding attempt", harbor: "$0.1, the same: no attempt was retried and every cost is known",
			execSec: f64(0.5), execN: 1},
	}
	eqF := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	eqI := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := CostOf(tc.obs)
			var s CostSum
			for _, o := range tc.obs {
				s.Add(o)
			}
			if sc := s.Cost(); sc.Text() != c.Text() || sc.Attempts != c.Attempts {
				t.Errorf("CostSum %+v differs from CostOf %+v", sc, c)
			}
			if c.Attempts != tc.attempts || c.WithCost != tc.withCost || c.FinalAttempts != tc.final || !eqF(c.USDAllAttempts, tc.all) || !eqF(c.USDFinalAttempts, tc.fin) {
				t.Errorf("cost %+v", c)
			}
			if !eqI(c.InputTokens, tc.in) || !eqI(c.CacheTokens, tc.cache) || !eqI(c.OutputTokens, tc.out) {
				t.Errorf("tokens %v %v %v", c.InputTokens, c.CacheTokens, c.OutputTokens)
			}
			if !eqF(c.Phases.AgentExecution.Seconds, tc.execSec) || c.Phases.AgentExecution.Attempts != tc.execN {
				t.Errorf("agent execution %+v", c.Phases.AgentExecution)
			}
			if c.Text() != tc.text || c.FinalText() != tc.finalText || c.HarborText() != tc.harbor {
				t.Errorf("texts %q / %q / %q", c.Text(), c.FinalText(), c.HarborText())
			}
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"attempts", "with_cost", "usd_all_attempts", "usd_final_attempts", "input_tokens", "output_tokens", "cache_tokens"} {
				if _, ok := m[k]; !ok {
					t.Errorf("JSON lacks %s: %s", k, b)
				}
			}
			if tc.wantJSONHasNullUSD && (m["usd_all_attempts"] != nil || m["usd_final_attempts"] != nil) {
				t.Errorf("unknown cost is not null: %s", b)
			}
		})
	}
}

func TestTaskTableCost(t *testing.T) {
	var tt TaskTable
	cheap := &Observation{AttemptOutcomes: []AttemptOutcome{attempt(f64(0.1), nil, nil, nil, f64(1))}}
	dear := &Observation{AttemptOutcomes: []AttemptOutcome{attempt(f64(2), nil, nil, nil, f64(10))}}
	for _, tr := range []struct {
		task, status string
		o            *Observation
	}{{"a", StatusFailure, cheap}, {"b", StatusSuccess, dear}, {"c", StatusUnscored, nil}, {"c", StatusMissing, nil}} {
		if err := tt.AddObservation(tr.task, tr.status, tr.o); err != nil {
			t.Fatal(err)
		}
	}
	rows := tt.Rows()
	if err := SortTasks(rows, "cost"); err != nil {
		t.Fatal(err)
	}
	if rows[0].Task != "b" || rows[1].Task != "a" || rows[2].Task != "c" || rows[2].CostUSD != nil || rows[2].WithCost != 0 {
		t.Errorf("by cost: %+v", rows)
	}
	if *rows[0].CostUSD != 2 || rows[0].WithCost != 1 || rows[0].Attempts != 1 || *rows[0].DurationSec != 11 {
		t.Errorf("row b: %+v", rows[0])
	}
	if err := SortTasks(rows, "duration"); err != nil || rows[0].Task != "b" {
		t.Errorf("by duration: %+v", rows)
	}
	if rows[2].RateText() != "n/a (0 scored, 2 planned)" || rows[0].RateText() != "100.0% of 1 scored, 1 planned" {
		t.Errorf("rate texts %q %q", rows[2].RateText(), rows[0].RateText())
	}
}
