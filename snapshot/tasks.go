package snapshot

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/stats"
)

// StatusMissing is the state of a planned trial with no attempt (no line
// in observations.jsonl); it stays in the denominator.
const StatusMissing = "missing"

// TaskSummary is one task's row of the per-task view (tpctl snapshot show
// --tasks, the report's task table, export's tasks table): its planned
// trials by state, its success rate, pass^k and the flags that point at a
// broken or unstable task. See docs/snapshot-format.md ("Per-task view").
type TaskSummary struct {
	Task       string `json:"task"`
	Planned    int    `json:"planned"`
	Scored     int    `json:"scored"`
	Success    int    `json:"success"`
	Failure    int    `json:"failure"`
	InfraError int    `json:"infra_error"`
	Unscored   int    `json:"unscored"`
	Missing    int    `json:"missing"`
	// SuccessRate is success/scored; nil when nothing was scored.
	SuccessRate *float64 `json:"success_rate"`
	// K is the round's k for PassHatK: the smallest planned repeats of a
	// task whose every planned repeat was scored; 0 when there is none.
	K int `json:"k"`
	// PassHatK is C(success, K)/C(scored, K) for a task with at least K
	// scored repeats (docs/statistics.md's rule), so its mean over those
	// tasks is the manifest's pass_hat_k[K]; nil for a task with fewer.
	PassHatK *float64 `json:"pass_hat_k"`
	// Flaky: some repeats succeed and some fail (0 < success < scored).
	Flaky bool `json:"flaky"`
	// AlwaysFail: scored at least once and never a success.
	AlwaysFail bool `json:"always_fail"`
	// InfraProne: at least half of its planned trials are infra_error.
	InfraProne bool `json:"infra_prone"`
	// LowCoverage: at least half of its planned trials are not scored
	// (unscored or infra_error), so its rate stands on few of them: what
	// a broken environment looks like (a Docker build that fails, a
	// verifier that never ran) whichever of the two statuses it gets.
	LowCoverage bool `json:"low_coverage"`
	// Attempts is every attempt of its trials, retries included, and
	// WithCost how many of them reported a cost (rows added with
	// AddObservation; 0 otherwise).
	Attempts int `json:"attempts"`
	WithCost int `json:"with_cost"`
	// CostUSD is the known cost of every attempt; null when none reported
	// one (never 0 for unknown).
	CostUSD *float64 `json:"cost_usd"`
	// DurationSec is the wall time of every phase of every attempt that
	// recorded one; null when none did.
	DurationSec *float64 `json:"duration_sec"`
	// Cost is the task's whole cost (Cost's members); not in the row's
	// JSON, whose members above are its summary.
	Cost Cost `json:"-"`
}

// RateText is the success rate with what it stands on: "100.0% of 1
// scored, 3 planned", "n/a (0 scored, 3 planned)". A rate is never shown
// without it.
func (t *TaskSummary) RateText() string {
	if t.SuccessRate == nil {
		return fmt.Sprintf("n/a (0 scored, %d planned)", t.Planned)
	}
	return fmt.Sprintf("%s of %d scored, %d planned", strconv.FormatFloat(*t.SuccessRate*100, 'f', 1, 64)+"%", t.Scored, t.Planned)
}

// Flags names the row's flags in a fixed order.
func (t *TaskSummary) Flags() []string {
	var f []string
	if t.Flaky {
		f = append(f, "flaky")
	}
	if t.AlwaysFail {
		f = append(f, "always_fail")
	}
	if t.InfraProne {
		f = append(f, "infra_prone")
	}
	if t.LowCoverage {
		f = append(f, "low_coverage")
	}
	return f
}

// TaskTable accumulates planned trials into per-task rows. Add every
// planned trial (missing ones with StatusMissing), in any order.
type TaskTable struct {
	rows  []TaskSummary
	index map[string]int
	cost  []costSum
}

// AddObservation counts one planned trial as Add does and sums the cost of
// its attempts (o nil for a missing trial).
func (tt *TaskTable) AddObservation(task, status string, o *Observation) error {
	if err := tt.Add(task, status); err != nil {
		return err
	}
	tt.cost[tt.index[task]].add(o)
	return nil
}

// Add counts one planned trial of task in state status (an observation
// status or StatusMissing); another state is an error.
func (tt *TaskTable) Add(task, status string) error {
	if status != StatusMissing && !ValidStatus(status) {
		return fmt.Errorf("task %q: status %q is not a trial state", task, status)
	}
	if tt.index == nil {
		tt.index = map[string]int{}
	}
	i, ok := tt.index[task]
	if !ok {
		i = len(tt.rows)
		tt.index[task] = i
		tt.rows = append(tt.rows, TaskSummary{Task: task})
		tt.cost = append(tt.cost, costSum{})
	}
	r := &tt.rows[i]
	switch status {
	case StatusSuccess:
		r.Success++
	case StatusFailure:
		r.Failure++
	case StatusInfraError:
		r.InfraError++
	case StatusUnscored:
		r.Unscored++
	default:
		r.Missing++
	}
	r.Planned++
	return nil
}

// Rows returns one row per task in canonical (byte) order of the task.
func (tt *TaskTable) Rows() []TaskSummary {
	rows := slices.Clone(tt.rows)
	for i := range rows {
		c := tt.cost[i].cost()
		rows[i].Cost = c
		rows[i].Attempts, rows[i].WithCost, rows[i].CostUSD = c.Attempts, c.WithCost, c.USDAllAttempts
		rows[i].DurationSec = c.Phases.Seconds()
	}
	slices.SortFunc(rows, func(a, b TaskSummary) int { return strings.Compare(a.Task, b.Task) })
	k := 0
	for i := range rows {
		r := &rows[i]
		r.Scored = r.Success + r.Failure
		if r.Scored > 0 {
			v := stats.Round12(float64(r.Success) / float64(r.Scored))
			r.SuccessRate = &v
		}
		r.Flaky = r.Success > 0 && r.Success < r.Scored
		r.AlwaysFail = r.Scored > 0 && r.Success == 0
		r.InfraProne = r.InfraError > 0 && 2*r.InfraError >= r.Planned
		r.LowCoverage = LowCoverage(r.Planned, r.InfraError+r.Unscored)
		if r.Scored > 0 && r.Scored == r.Planned && (k == 0 || r.Planned < k) {
			k = r.Planned
		}
	}
	for i := range rows {
		r := &rows[i]
		r.K = k
		if k > 0 && r.Scored >= k {
			v := stats.Round12(stats.PassHatK(r.Scored, r.Success, k))
			r.PassHatK = &v
		}
	}
	return rows
}

// LowCoverage is the low_coverage rule: of planned trials, notScored
// (unscored plus infra_error) are at least half.
func LowCoverage(planned, notScored int) bool {
	return notScored > 0 && 2*notScored >= planned
}

// TaskSortKeys are the keys SortTasks accepts.
var TaskSortKeys = []string{"rate", "task", "planned", "scored", "success", "failure", "infra_error", "unscored", "missing", "pass_hat_k", "cost", "duration"}

// SortTasks orders rows by key, worst first: ascending for rate,
// pass_hat_k and success (a task with no value first), descending for the
// other counts, descending for cost and duration (a task with no known
// value last), by name for task; ties by task name.
func SortTasks(rows []TaskSummary, key string) error {
	var by func(a, b *TaskSummary) int
	nilFirst := func(x, y *float64) int {
		switch {
		case x == nil && y == nil:
			return 0
		case x == nil:
			return -1
		case y == nil:
			return 1
		}
		return cmp.Compare(*x, *y)
	}
	// descNilLast orders a before b when a is larger; no value last.
	descNilLast := func(a, b *float64) int {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return 1
		case b == nil:
			return -1
		}
		return cmp.Compare(*b, *a)
	}
	desc := func(f func(*TaskSummary) int) func(a, b *TaskSummary) int {
		return func(a, b *TaskSummary) int { return cmp.Compare(f(b), f(a)) }
	}
	switch key {
	case "rate":
		by = func(a, b *TaskSummary) int { return nilFirst(a.SuccessRate, b.SuccessRate) }
	case "pass_hat_k":
		by = func(a, b *TaskSummary) int { return nilFirst(a.PassHatK, b.PassHatK) }
	case "task":
		by = func(a, b *TaskSummary) int { return 0 }
	case "success":
		by = func(a, b *TaskSummary) int { return cmp.Compare(a.Success, b.Success) }
	case "planned":
		by = desc(func(t *TaskSummary) int { return t.Planned })
	case "scored":
		by = desc(func(t *TaskSummary) int { return t.Scored })
	case "failure":
		by = desc(func(t *TaskSummary) int { return t.Failure })
	case "infra_error":
		by = desc(func(t *TaskSummary) int { return t.InfraError })
	case "unscored":
		by = desc(func(t *TaskSummary) int { return t.Unscored })
	case "missing":
		by = desc(func(t *TaskSummary) int { return t.Missing })
	case "cost": // dearest first, unknown last
		by = func(a, b *TaskSummary) int { return descNilLast(a.CostUSD, b.CostUSD) }
	case "duration": // slowest first, unknown last
		by = func(a, b *TaskSummary) int { return descNilLast(a.DurationSec, b.DurationSec) }
	default:
		return fmt.Errorf("sort key %q is not one of %s", key, strings.Join(TaskSortKeys, ", "))
	}
	slices.SortStableFunc(rows, func(a, b TaskSummary) int {
		return cmp.Or(by(&a, &b), strings.Compare(a.Task, b.Task))
	})
	return nil
}
