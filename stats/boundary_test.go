package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The gate's two interval rules at the boundary of what they must refuse
// (issue 34): how often does a rule pass a round whose truth is exactly
// at its threshold? Nominal: 2.5%, the lower tail of a 95% interval.

// crashRule is the pass rate of min_success_rate set at the true
// population rate, when crashes hit hard tasks more.
type crashRule struct {
	tasks             int
	shape             shape
	rounds            int
	scoredPass        int // judged on the scored trials (unscored_trials: leave_out)
	worstPass         int // judged on the worst case (the default)
	bias, worstBias   float64
	notScoredFraction float64
}

// simulateCrashes runs rounds of g tasks × repeats; each trial crashes
// (is not scored) with probability 0.3·(1 − p) — a hard task times out
// more — as TestPassKCrashBias. The threshold is the population mean.
func simulateCrashes(seed uint64, g, repeats, rounds int, sh shape) crashRule {
	r := rand.New(rand.NewPCG(seed, uint64(g)))
	out := crashRule{tasks: g, shape: sh, rounds: rounds}
	truth := sh.mean()
	scored := make([]Cluster, g)
	worst := make([]Cluster, g)
	notScored := 0
	for range rounds {
		n, s := 0, 0
		for i := range g {
			p := betaDraw(r, sh.a, sh.b)
			crash := 0.3 * (1 - p)
			c := Cluster{}
			for range repeats {
				if r.Float64() < crash {
					continue
				}
				c.Trials++
				if r.Float64() < p {
					c.Sum++
				}
			}
			scored[i] = c
			worst[i] = Cluster{Trials: repeats, Sum: c.Sum}
			n += c.Trials
			s += c.Sum
			notScored += repeats - c.Trials
		}
		p, se, ok, _ := ClusteredMean(scored)
		if ok {
			if ci, _, null := ClusteredRateCI95(p, se, n, countClusters(scored)); null == nil && ci[0] >= truth {
				out.scoredPass++
			}
			out.bias += p - truth
		}
		wp, wse, _, _ := ClusteredMean(worst)
		if ci, _, null := ClusteredRateCI95(wp, wse, g*repeats, g); null == nil && ci[0] >= truth {
			out.worstPass++
		}
		out.worstBias += wp - truth
	}
	out.bias /= float64(rounds)
	out.worstBias /= float64(rounds)
	out.notScoredFraction = float64(notScored) / float64(rounds*g*repeats)
	return out
}

func countClusters(cs []Cluster) int {
	n := 0
	for _, c := range cs {
		if c.Trials > 0 {
			n++
		}
	}
	return n
}

// TestMinSuccessRateCrashes: with difficulty-linked crashes the rate over
// scored trials is biased up and the rule over it passes at the true
// threshold more often than 2.5%; judged on the worst case (what the gate
// does on a degraded round by default) it passes at most 2.5%.
func TestMinSuccessRateCrashes(t *testing.T) {
	const repeats, rounds = 4, 3000
	for _, g := range []int{10, 30, 100} {
		for i, sh := range tunedShapes {
			c := simulateCrashes(freshSeed+uint64(i), g, repeats, rounds, sh)
			sp, wp := float64(c.scoredPass)/rounds, float64(c.worstPass)/rounds
			where := fmt.Sprintf("G=%d × %d, %s", g, repeats, sh.name)
			t.Logf("%s: %.1f%% not scored; rate over scored %+.3f, worst case %+.3f; passes at the true rate: scored %.1f%%, worst case %.1f%%",
				where, 100*c.notScoredFraction, c.bias, c.worstBias, 100*sp, 100*wp)
			if wp > 0.025 {
				t.Errorf("%s: min_success_rate on the worst case passes at the true rate in %.3f of rounds, want ≤ 0.025", where, wp)
			}
		}
	}
}

// niCell is the non-inferiority rule at its boundary.
type niCell struct {
	tasks  int
	shape  shape
	rounds int
	passed int
}

// simulateBoundary runs pairs of rounds whose true difference is exactly
// −margin: the base's task probabilities p from the shape, the
// candidate's p·(1 − margin/μ) (μ the shape's mean), so the population
// mean difference is −margin and every task gets worse in proportion.
// The rule passes when the paired interval's lower bound is ≥ −margin.
// With crash, each trial of either round crashes with probability
// 0.3·(1 − its success probability), and the interval is over the trials
// scored in both (what baseline.allow_degraded: true judges).
func simulateBoundary(seed uint64, g, repeats, rounds int, sh shape, margin float64, crash bool) niCell {
	r := rand.New(rand.NewPCG(seed, uint64(g)*7+uint64(repeats)))
	out := niCell{tasks: g, shape: sh, rounds: rounds}
	scale := 1 - margin/sh.mean()
	diff := make([]Cluster, g)
	for range rounds {
		for i := range g {
			p := betaDraw(r, sh.a, sh.b)
			q := p * scale
			c := Cluster{}
			for range repeats {
				y, x := r.Float64() < q, r.Float64() < p
				if crash && (r.Float64() < 0.3*(1-q) || r.Float64() < 0.3*(1-p)) {
					continue
				}
				c.Trials++
				if y {
					c.Sum++
				}
				if x {
					c.Sum--
				}
			}
			diff[i] = c
		}
		delta, se, ok, _ := ClusteredMean(diff)
		if !ok {
			continue
		}
		n, tasks := 0, countClusters(diff)
		for _, c := range diff {
			n += c.Trials
		}
		ci, _, null := PairedCI95(delta, PairedSE(se, n), tasks)
		if null == nil && ci[0] >= -margin {
			out.passed++
		}
	}
	return out
}

// skewedShapes are the difficulty shapes of issue 34's boundary check:
// most tasks hard or most easy, a few the other way.
var skewedShapes = []shape{{"hard-skewed Beta(0.5, 2)", 0.5, 2}, {"easy-skewed Beta(2, 0.5)", 2, 0.5}, {"U-shaped Beta(0.5, 0.5)", 0.5, 0.5}, {"hard Beta(1, 3)", 1, 3}}

// TestNonInferiorityBoundary measures the non-inferiority rule when the
// candidate is worse by exactly the margin, at 10 skewed tasks (and 30
// for comparison). The t(G−1) interval assumes the task-level differences
// are close enough to normal; with 10 skewed tasks they are not quite,
// and the rule passes somewhat more often than the nominal 2.5%. The test
// holds the measured cost, stated in docs/statistics.md, to at most 4%.
func TestNonInferiorityBoundary(t *testing.T) {
	const repeats, rounds, margin = 4, 4000, 0.05
	for _, g := range []int{10, 30} {
		for i, sh := range skewedShapes {
			c := simulateBoundary(freshSeed+uint64(i), g, repeats, rounds, sh, margin, false)
			rate := float64(c.passed) / rounds
			cr := simulateBoundary(freshSeed+uint64(i), g, repeats, rounds, sh, margin, true)
			where := fmt.Sprintf("G=%d × %d, %s, margin %.2f", g, repeats, sh.name, margin)
			t.Logf("%s: passes a candidate worse by exactly the margin in %.2f%% of pairs (nominal 2.5%%); with difficulty-linked crashes, judged anyway (allow_degraded): %.2f%%",
				where, 100*rate, 100*float64(cr.passed)/rounds)
			if rate > 0.04 {
				t.Errorf("%s: the non-inferiority rule passes at the boundary in %.3f of pairs, want ≤ 0.04 (docs/statistics.md)", where, rate)
			}
		}
	}
}
