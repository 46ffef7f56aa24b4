package report

import (
	"errors"

	"github.com/tuneplane/tpctl/snapshot"
)

// ErrNoTrial is wrapped by the error for a trial ID the plan does not
// have.
var ErrNoTrial = errors.New("no such trial")

// TrialLine is one line of snapshot show --trials --output json: the
// observation's members (null for a missing trial) and the files of the
// trial's exported bodies.
type TrialLine struct {
	TrialID       string   `json:"trial_id"`
	Task          string   `json:"task"`
	Repeat        int      `json:"repeat"`
	Status        string   `json:"status"`
	Reason        *string  `json:"reason"`
	Reward        *float64 `json:"reward"`
	ExceptionType *string  `json:"exception_type"`
	// Detail is the current attempt's detail (tpctl-snapshot/3), else null.
	Detail          *string                   `json:"detail"`
	TrialAttempt    *int                      `json:"trial_attempt"`
	Attempts        int                       `json:"attempts"`
	Trainable       bool                      `json:"trainable"`
	Evidence        *snapshot.Evidence        `json:"evidence"`
	AttemptOutcomes []snapshot.AttemptOutcome `json:"attempt_outcomes"`
	Trajectories    []string                  `json:"trajectories"`
}

// Line is the trial's line of snapshot show --trials --output json.
func (r *Round) Line(t *Trial) TrialLine {
	l := TrialLine{TrialID: t.ID, Task: t.Task, Repeat: t.Repeat, Status: t.Status,
		AttemptOutcomes: []snapshot.AttemptOutcome{}, Trajectories: []string{}}
	if o := t.Observation; o != nil {
		l.Reason, l.Reward, l.ExceptionType = &o.Reason, o.Reward, o.ExceptionType
		l.TrialAttempt, l.Attempts, l.Trainable = &o.TrialAttempt, o.Attempts, o.Trainable
		l.Evidence, l.AttemptOutcomes = &o.Evidence, o.AttemptOutcomes
		if n := len(o.AttemptOutcomes); n > 0 && o.AttemptOutcomes[n-1].Detail != "" {
			l.Detail = &o.AttemptOutcomes[n-1].Detail
		}
	}
	for _, tj := range r.TrajectoriesOf(t.ID) {
		l.Trajectories = append(l.Trajectories, tj.File)
	}
	return l
}

// TrialDetail is snapshot show --trial ID --output json: the trial's line
// and its exported bodies in full.
type TrialDetail struct {
	TrialLine
	Bodies []Trajectory `json:"bodies"`
}

// Detail returns one trial and its bodies, or an *UnknownValueError
// (wrapping ErrNoTrial) with the closest trial IDs.
func (r *Round) Detail(id string) (*TrialDetail, error) {
	t := r.Trial(id)
	if t == nil {
		ids := make([]string, len(r.Trials))
		for i := range r.Trials {
			ids[i] = r.Trials[i].ID
		}
		return nil, &UnknownValueError{"trial", id, "the plan of round " + r.Manifest.RoundID, Closest(id, ids)}
	}
	d := &TrialDetail{TrialLine: r.Line(t), Bodies: []Trajectory{}}
	for _, tj := range r.TrajectoriesOf(id) {
		d.Bodies = append(d.Bodies, *tj)
	}
	return d, nil
}

// Glyph is the status's symbol in the page and on a terminal
// (✓ ✗ ⚠ ? ∅).
func Glyph(status string) string { return glyphs[status] }

// TaskRows is the per-task view of the round (snapshot.TaskTable, with
// each task's cost and time), sorted by key (snapshot.TaskSortKeys).
func (r *Round) TaskRows(key string) ([]snapshot.TaskSummary, error) {
	var tt snapshot.TaskTable
	for i := range r.Trials {
		if err := tt.AddObservation(r.Trials[i].Task, r.Trials[i].Status, r.Trials[i].Observation); err != nil {
			return nil, err
		}
	}
	rows := tt.Rows()
	return rows, snapshot.SortTasks(rows, key)
}
