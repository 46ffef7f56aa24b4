package snapshot

import "github.com/tuneplane/tpctl/stats"

// RateBounds are the worst and best case of a round's success rate over
// every planned trial (Manski bounds): the rate if every planned trial
// that was not scored — infra_error, unscored or missing — had failed,
// and if every one had succeeded. The rate over scored trials lies
// between them; how far apart they are is what the missing outcomes can
// move it. They are computed from the counts when read, never stored, so
// snapshot.json and round IDs are unchanged (docs/statistics.md,
// "Bounds that admit what is missing").
type RateBounds struct {
	// WorstCase is success / planned; BestCase (success + not scored) /
	// planned. Rounded with stats.Round12.
	WorstCase float64 `json:"worst_case"`
	BestCase  float64 `json:"best_case"`
	// NotScored counts the planned trials with no success or failure
	// verdict, and Planned the planned trials.
	NotScored int `json:"not_scored"`
	Planned   int `json:"planned"`
}

// BoundsOf is the RateBounds of counts; nil when nothing is planned.
func BoundsOf(c Counts) *RateBounds {
	if c.Expected <= 0 {
		return nil
	}
	notScored := c.Expected - c.Scored()
	e := float64(c.Expected)
	return &RateBounds{
		WorstCase: stats.Round12(float64(c.Success) / e),
		BestCase:  stats.Round12(float64(c.Success+notScored) / e),
		NotScored: notScored,
		Planned:   c.Expected,
	}
}

// SuccessRateBounds is BoundsOf the manifest's counts: the worst and best
// case of the success rate, computed when read (not in snapshot.json).
func (m *Manifest) SuccessRateBounds() *RateBounds { return BoundsOf(m.Counts) }

// WorstCaseTasks is tasks with every planned trial that is not scored
// counted as a failure: StatisticsOfTasks of it gives the task-clustered
// interval of the worst-case rate, which a gate judges a degraded round's
// min_success_rate on.
func WorstCaseTasks(tasks []TaskCounts) []TaskCounts {
	out := make([]TaskCounts, len(tasks))
	for i, t := range tasks {
		out[i] = TaskCounts{Task: t.Task, Planned: t.Planned, Seen: t.Planned, Success: t.Success, Failure: t.Planned - t.Success}
	}
	return out
}
