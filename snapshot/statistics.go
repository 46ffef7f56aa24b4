package snapshot

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/tuneplane/tpctl/stats"
)

// Reasons a task is left out of pass@k and pass^k (one per task, the
// first that applies in this order).
const (
	LeftOutRepeatMissing    = "repeat_missing"     // a planned repeat has no attempt
	LeftOutRepeatInfraError = "repeat_infra_error" // a repeat is infra_error
	LeftOutRepeatUnscored   = "repeat_unscored"    // a repeat is unscored
)

// Statistics are the numbers for repeated trials (docs/statistics.md):
// trials of one task are not independent, so beside the Wilson interval
// (right when every task runs once) the snapshot carries a task-clustered
// standard error and pass@k / pass^k.
type Statistics struct {
	// Clusters is the number of tasks with at least one scored trial.
	Clusters int `json:"clusters"`
	// SuccessRateSEClustered is the CR1 task-clustered standard error of
	// the success rate; nil when fewer than two tasks are scored.
	SuccessRateSEClustered *float64 `json:"success_rate_se_clustered"`
	// SuccessRateCI95Clustered is success_rate ± 1.96·se, clipped to
	// [0, 1]; nil with the SE.
	SuccessRateCI95Clustered *[2]float64 `json:"success_rate_ci95_clustered"`
	// PassAtK and PassHatK are keyed by k ("1", "2", …), for k from 1 to
	// the smallest number of repeats of a counted task; empty when no
	// task is counted.
	PassAtK    KValues    `json:"pass_at_k"`
	PassHatK   KValues    `json:"pass_hat_k"`
	PassKTasks PassKTasks `json:"pass_k_tasks"`
}

// PassKTasks says which tasks pass@k and pass^k average over: those whose
// planned repeats are all scored.
type PassKTasks struct {
	Counted        int            `json:"counted"`
	LeftOut        int            `json:"left_out"`
	LeftOutReasons map[string]int `json:"left_out_reasons"`
}

// KValues maps k, written in decimal, to a value. It encodes with the
// keys in numeric order ("2" before "10"); an empty map is {}, a nil one
// null (so a manifest that says null is not mistaken for {}).
type KValues map[string]float64

// MarshalJSON writes the members in numeric order of their keys; keys
// that are not numbers (only a tampered file has them) come last.
func (m KValues) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		switch {
		case errA == nil && errB == nil && x != y:
			return x - y
		case (errA == nil) != (errB == nil):
			if errA == nil {
				return -1
			}
			return 1
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(m[k])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}

// K returns the value for k and whether there is one.
func (m KValues) K(k int) (float64, bool) {
	v, ok := m[strconv.Itoa(k)]
	return v, ok
}

// MaxK is the largest k with a value (0 when empty).
func (m KValues) MaxK() int {
	k := 0
	for k < len(m) {
		if _, ok := m.K(k + 1); !ok {
			break
		}
		k++
	}
	return k
}

// taskTally is what the statistics need of one task: its planned repeats
// and the status counts of the ones with an observation.
type taskTally struct {
	task                             string
	planned                          int
	seen, success, failure, infraErr int
}

// statisticsOf computes the statistics from per-task tallies, in the
// canonical task order.
func statisticsOf(tasks []taskTally) *Statistics {
	var acc statsAcc
	for _, t := range tasks {
		acc.task(t)
	}
	return acc.result()
}

// statsAcc folds tasks into the statistics one at a time, keeping only
// sums and a count per (scored, successes): a streamed import of a
// million tasks holds no list of them. Verify takes the same code.
type statsAcc struct {
	clusters stats.ClusterSums
	nClust   int
	counted  stats.TaskCounts
	tasks    int
	leftOut  map[string]int
}

func (a *statsAcc) task(t taskTally) {
	if a.counted == nil {
		a.counted, a.leftOut = stats.TaskCounts{}, map[string]int{}
	}
	a.tasks++
	scored := t.success + t.failure
	if scored > 0 {
		a.clusters.Add(stats.Cluster{Trials: scored, Sum: t.success})
		a.nClust++
	}
	switch {
	case t.seen < t.planned:
		a.leftOut[LeftOutRepeatMissing]++
	case t.infraErr > 0:
		a.leftOut[LeftOutRepeatInfraError]++
	case scored < t.planned:
		a.leftOut[LeftOutRepeatUnscored]++
	default:
		a.counted.Add(stats.Task{N: scored, C: t.success})
	}
}

func (a *statsAcc) result() *Statistics {
	st := &Statistics{
		PassAtK:    KValues{},
		PassHatK:   KValues{},
		PassKTasks: PassKTasks{LeftOutReasons: map[string]int{}},
	}
	for k, n := range a.leftOut {
		st.PassKTasks.LeftOutReasons[k] = n
	}
	counted := a.counted.Total()
	st.Clusters = a.nClust
	st.PassKTasks.Counted = counted
	st.PassKTasks.LeftOut = a.tasks - counted
	if mean, se, _, ok := a.clusters.Result(); ok {
		lo, hi := stats.Interval95(mean, se)
		se = stats.Round12(se)
		st.SuccessRateSEClustered = &se
		st.SuccessRateCI95Clustered = &[2]float64{stats.Round12(max(0, lo)), stats.Round12(min(1, hi))}
	}
	for k := 1; ; k++ {
		at, hat, ok := a.counted.PassK(k)
		if !ok {
			break
		}
		key := strconv.Itoa(k)
		st.PassAtK[key], st.PassHatK[key] = stats.Round12(at), stats.Round12(hat)
	}
	return st
}
