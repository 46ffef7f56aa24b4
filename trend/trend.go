// Package trend lays rounds of one protocol side by side: each round's
// success rate with its Wilson and task-clustered 95% intervals, coverage
// and label; for each adjacent pair, and for each round against the best,
// the paired difference and its interval when the pair is comparable;
// and the tasks that lost successes. Rounds whose protocols differ are
// refused, never put on one line. HTML renders the page; the
// command's text and JSON views are cmd/tpctl's (docs/trend.md).
package trend

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/stats"
)

// Format is the version of the JSON result.
const Format = "tpctl-trend/1"

// Orders of the rounds.
const (
	// OrderGiven keeps the order of the arguments.
	OrderGiven = "given"
	// OrderCheckpoint sorts by checkpoint ref, numbers in it compared as
	// numbers (step-900 before step-1000); ties keep the given order.
	OrderCheckpoint = "checkpoint"
)

// Pair kinds.
const (
	PairAdjacent = "adjacent"
	PairVsBest   = "vs_best"
)

// Result is the trend over the rounds.
type Result struct {
	Format   string            `json:"format"`
	Order    string            `json:"order"`
	Protocol snapshot.Protocol `json:"protocol"`
	// OutcomeRules are the rules every round was judged by.
	OutcomeRules string  `json:"outcome_rules"`
	Rounds       []Point `json:"rounds"`
	// Best is the index in Rounds of the round with the highest success
	// rate (the first of equals); -1 when no round has one.
	Best  int    `json:"best"`
	Pairs []Pair `json:"pairs"`
	// Tasks is the task × round table, tasks in canonical order.
	Tasks []TaskRow `json:"tasks"`
	// Dataset is the rounds' planned samples beside the dataset's size,
	// when every round's plan records both and they agree (an Inspect
	// or lm-eval cohort): a limited run is never read as the full dataset.
	Dataset *DatasetScope `json:"dataset,omitempty"`
}

// DatasetScope is which part of the dataset the rates stand on
// (snapshot.DatasetScope).
type DatasetScope = snapshot.DatasetScope

// Point is one round.
type Point struct {
	Dir                      string              `json:"dir"`
	RoundID                  string              `json:"round_id"`
	Name                     string              `json:"name"`
	Checkpoint               snapshot.Checkpoint `json:"checkpoint"`
	Label                    string              `json:"label"`
	Counts                   snapshot.Counts     `json:"counts"`
	SuccessRate              *float64            `json:"success_rate"`
	SuccessRateCI95          *[2]float64         `json:"success_rate_ci95"`
	SuccessRateCI95Clustered *[2]float64         `json:"success_rate_ci95_clustered"`
	Coverage                 *float64            `json:"coverage"`
	CoverageCI95             *[2]float64         `json:"coverage_ci95"`
	// SuccessRateBounds are the worst and best case of the success rate
	// over every planned trial (Manski bounds), the numbers snapshot show
	// gives for the round (snapshot.RateBounds); nil when nothing is
	// planned. On a degraded round the rate over scored trials may lie
	// anywhere between them as far as the data can tell.
	SuccessRateBounds *snapshot.RateBounds `json:"success_rate_bounds"`
	// Cost is what every attempt of the round cost, with its coverage
	// (snapshot.Cost; unknown is null, never 0).
	Cost snapshot.Cost `json:"cost"`
	// USDPerSuccess is the known spend of every attempt over the round's
	// successes; null when no cost is known or nothing succeeded. Read it
	// with Cost.WithCost: it stands on the attempts that reported a cost.
	USDPerSuccess *float64 `json:"usd_per_success"`
}

// Pair compares round To against round From (delta = To − From).
type Pair struct {
	Kind string `json:"kind"`
	From int    `json:"from"`
	To   int    `json:"to"`
	// Comparable is false when either round is degraded or the rounds ran
	// different task content; Reason then says which.
	Comparable bool   `json:"comparable"`
	Reason     string `json:"reason"`
	// Paired is compare's paired difference; nil unless comparable.
	Paired *compare.Paired `json:"paired"`
	// Regressed are the tasks with fewer successes in To among trials
	// scored in both rounds (given even when not comparable).
	Regressed []round.TaskChange `json:"regressed"`
	// Family is the interval of a vs_best pair that accounts for the best
	// having been chosen on the same data; nil for adjacent pairs and
	// when the pair is not comparable.
	Family *Family `json:"family,omitempty"`
}

// FamilyMethod names how vs-best intervals are corrected: Bonferroni over
// every pair of the rounds (docs/trend.md, "Intervals against the best").
const FamilyMethod = "bonferroni_all_pairs"

// Family is a vs-best pair's simultaneous 95% interval: it holds together
// with the interval of every other pair of rounds, so choosing the best
// after seeing the rates does not make it claim more than 95%.
type Family struct {
	Method string `json:"method"`
	// Comparisons is k(k−1)/2 for the k rounds with a success rate.
	Comparisons int `json:"comparisons"`
	// CriticalT is the t quantile used in place of t₀.₉₇₅ (nil with CI95).
	CriticalT *float64 `json:"critical_t"`
	// CI95 is delta ± CriticalT·se, clipped to [−1, 1]; nil with
	// NullReason below five tasks.
	CI95       *[2]float64       `json:"ci95"`
	NullReason *stats.NullReason `json:"null_reason,omitempty"`
}

// TaskRow is one task's successes in each round.
type TaskRow struct {
	Task   string     `json:"task"`
	Rounds []TaskCell `json:"rounds"`
}

// TaskCell is one task in one round.
type TaskCell struct {
	Planned int `json:"planned"`
	Scored  int `json:"scored"`
	Success int `json:"success"`
}

// ProtocolError refuses rounds whose protocols differ.
type ProtocolError struct {
	First, Other string // snapshot folders
	Differences  []round.Difference
}

func (e *ProtocolError) Error() string {
	var parts []string
	for _, d := range e.Differences {
		parts = append(parts, d.String())
	}
	return fmt.Sprintf("%q and %q have different protocols (%s); a trend across protocols would draw different experiments on one line — trend rounds of one protocol",
		e.First, e.Other, strings.Join(parts, "; "))
}

// Run loads and verifies every round (in parallel) and computes the trend.
func Run(ctx context.Context, dirs []string, order string) (*Result, error) {
	if order != OrderGiven && order != OrderCheckpoint {
		return nil, fmt.Errorf("order %q is not %q or %q", order, OrderGiven, OrderCheckpoint)
	}
	rounds := make([]*round.Round, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(dirs)) {
		wg.Go(func() {
			for i := range next {
				rounds[i], errs[i] = round.Load(ctx, dirs[i])
			}
		})
	}
	for i := range dirs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return Of(rounds, order)
}

// Of computes the trend over loaded rounds.
func Of(rounds []*round.Round, order string) (*Result, error) {
	if len(rounds) == 0 {
		return nil, fmt.Errorf("no rounds")
	}
	for _, r := range rounds[1:] {
		if d := round.ProtocolDifferences(rounds[0].Manifest, r.Manifest); len(d) > 0 {
			return nil, &ProtocolError{First: rounds[0].Dir, Other: r.Dir, Differences: d}
		}
	}
	rounds = slices.Clone(rounds)
	if order == OrderCheckpoint {
		slices.SortStableFunc(rounds, func(a, b *round.Round) int {
			return naturalCompare(a.Manifest.Checkpoint.Ref, b.Manifest.Checkpoint.Ref)
		})
	}
	m0 := rounds[0].Manifest
	res := &Result{Format: Format, Order: order, Protocol: m0.Protocol, OutcomeRules: m0.OutcomeRules, Best: -1, Pairs: []Pair{}, Tasks: []TaskRow{}}
	for i, r := range rounds {
		s := r.Summarize(nil)
		m := r.Manifest
		res.Rounds = append(res.Rounds, Point{Dir: r.Dir, RoundID: m.RoundID, Name: m.Name, Checkpoint: m.Checkpoint, Label: s.Label,
			Counts: s.Counts, SuccessRate: s.SuccessRate, SuccessRateCI95: s.SuccessRateCI95, SuccessRateCI95Clustered: s.SuccessRateCI95Clustered,
			Coverage: s.Coverage, CoverageCI95: s.CoverageCI95, SuccessRateBounds: s.SuccessRateBounds, Cost: r.Cost, USDPerSuccess: perSuccess(r.Cost.USDAllAttempts, s.Counts.Success)})
		if s.SuccessRate != nil && (res.Best < 0 || *s.SuccessRate > *res.Rounds[res.Best].SuccessRate) {
			res.Best = i
		}
	}
	if r0 := rounds[0]; r0.Dataset != nil {
		res.Dataset = r0.Dataset
		for _, r := range rounds[1:] {
			if r.Dataset == nil || *r.Dataset != *r0.Dataset {
				res.Dataset = nil
				break
			}
		}
	}
	rated := 0
	for _, p := range res.Rounds {
		if p.SuccessRate != nil {
			rated++
		}
	}
	pair := func(kind string, from, to int) {
		p := round.Pair(rounds[from], rounds[to], nil)
		out := Pair{Kind: kind, From: from, To: to, Regressed: p.Regressed}
		switch {
		case len(p.Differences) > 0:
			out.Reason = "protocols differ" // refused above; kept for safety
		case len(p.ChecksumDiffers) > 0:
			out.Reason = fmt.Sprintf("%d trial(s) ran different Harbor task content (task_checksum differs), e.g. %s", len(p.ChecksumDiffers), p.ChecksumDiffers[0])
		case res.Rounds[from].Label != snapshot.LabelClean || res.Rounds[to].Label != snapshot.LabelClean:
			var which []string
			for _, i := range []int{from, to} {
				if res.Rounds[i].Label != snapshot.LabelClean {
					c := res.Rounds[i].Counts
					which = append(which, fmt.Sprintf("round %d (%s) is degraded: %d of %d planned trials not scored", i+1, res.Rounds[i].Checkpoint.Ref, c.Expected-c.Scored(), c.Expected))
				}
			}
			out.Reason = strings.Join(which, "; ")
		default:
			out.Comparable, out.Paired = true, p.Paired
			if kind == PairVsBest && p.Paired != nil {
				out.Family = familyOf(p.Paired, rated)
			}
		}
		res.Pairs = append(res.Pairs, out)
	}
	for i := 1; i < len(rounds); i++ {
		pair(PairAdjacent, i-1, i)
	}
	if res.Best >= 0 {
		for i := range rounds {
			if i != res.Best {
				pair(PairVsBest, res.Best, i)
			}
		}
	}
	res.Tasks = taskTable(rounds)
	return res, nil
}

// familyOf is the family interval of a vs-best paired difference among
// the pairs of k rated rounds.
func familyOf(p *compare.Paired, k int) *Family {
	f := &Family{Method: FamilyMethod, Comparisons: stats.PairwiseComparisons(k)}
	se := 0.0
	if p.SEClustered != nil {
		se = *p.SEClustered
	}
	f.CI95, f.NullReason = stats.FamilyCI95(p.Delta, stats.PairedSE(se, p.Trials), p.Tasks, f.Comparisons)
	if f.CI95 != nil {
		t := stats.Round12(stats.FamilyT(p.Tasks, f.Comparisons))
		f.CriticalT = &t
	}
	return f
}

// perSuccess is usd / successes, nil without a known cost or a success.
func perSuccess(usd *float64, successes int) *float64 {
	if usd == nil || successes == 0 {
		return nil
	}
	v := stats.Round12(*usd / float64(successes))
	return &v
}

// taskTable is the task × round table; the rounds share one plan.
func taskTable(rounds []*round.Round) []TaskRow {
	var rows []TaskRow
	for j, r := range rounds {
		row := -1
		for i, t := range r.Trials {
			if i == 0 || t.Task != r.Trials[i-1].Task {
				row++
				if j == 0 {
					rows = append(rows, TaskRow{Task: t.Task, Rounds: make([]TaskCell, len(rounds))})
				}
			}
			c := &rows[row].Rounds[j]
			c.Planned++
			switch t.Status {
			case snapshot.StatusSuccess:
				c.Success++
				c.Scored++
			case snapshot.StatusFailure:
				c.Scored++
			}
		}
	}
	return rows
}

// naturalCompare orders strings with runs of digits compared as numbers.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			x, y := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := len(x) - len(y); c != 0 {
				return c
			}
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// pct formats a fraction as a percentage with one decimal.
func pct(x *float64) string {
	if x == nil {
		return "—"
	}
	return strconv.FormatFloat(100**x, 'f', 1, 64) + "%"
}

func interval(ci *[2]float64) string {
	if ci == nil {
		return "—"
	}
	return "[" + pct(&ci[0]) + ", " + pct(&ci[1]) + "]"
}

// signedPct is a difference of rates in percentage points, as compare
// says it.
func signedPct(x float64) string {
	s := strconv.FormatFloat(100*x, 'f', 1, 64) + " pp"
	if x >= 0 {
		return "+" + s
	}
	return "−" + strings.TrimPrefix(s, "-")
}

func pairedInterval(p *compare.Paired) string {
	if p.CI95 == nil {
		if p.NullReason != nil {
			return "— (" + p.NullReason.Message + ")"
		}
		return "— (too few tasks)"
	}
	return "[" + signedPct(p.CI95[0]) + ", " + signedPct(p.CI95[1]) + "]"
}

func familyInterval(f *Family) string {
	if f.CI95 == nil {
		if f.NullReason != nil {
			return "— (" + f.NullReason.Message + ")"
		}
		return "— (too few tasks)"
	}
	return "[" + signedPct(f.CI95[0]) + ", " + signedPct(f.CI95[1]) + "]"
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
