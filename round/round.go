// Package round reads verified snapshots for the commands that look at
// many rounds (export, trend, gate), each through snapshot.OpenTrials, so
// what they read is what was verified: Walk hands every planned trial
// with its observation to a visitor in canonical order; a Round keeps each trial's
// status in memory and computes counts, rates and intervals over any
// subset of its tasks, and the paired difference between two rounds, by
// the same code as the snapshot and compare packages.
package round

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tuneplane/tpctl/snapshot"
)

// SnapshotError means a folder cannot be used: it is not a snapshot,
// fails verification, or changed while it was read. Commands treat it as
// unusable input.
type SnapshotError struct {
	Dir      string
	Problems []snapshot.Problem
	Err      error
}

// maxProblemsShown keeps the error readable; snapshot verify lists all.
const maxProblemsShown = 10

func (e *SnapshotError) Error() string {
	if len(e.Problems) == 0 {
		return fmt.Sprintf("cannot use the snapshot %q: %v", e.Dir, e.Err)
	}
	var b strings.Builder
	if snapshot.OnlyReadErrors(e.Problems) {
		fmt.Fprintf(&b, "the snapshot %q could not be read: an I/O error, not a sign the snapshot was modified (%d problem(s)):", e.Dir, len(e.Problems))
	} else {
		fmt.Fprintf(&b, "the snapshot %q failed verification with %d problem(s); it may have been modified after it was written:", e.Dir, len(e.Problems))
	}
	for i, p := range e.Problems {
		if i == maxProblemsShown {
			fmt.Fprintf(&b, "\n  … and %d more (tpctl snapshot verify lists all)", len(e.Problems)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s: %s: %s", p.File, p.Code, p.Message)
	}
	return b.String()
}

func (e *SnapshotError) Unwrap() error { return e.Err }

// ErrUnverified is wrapped by a SnapshotError for a snapshot with
// verification problems.
var ErrUnverified = errors.New("snapshot failed verification")

// TrialState is one planned trial with its observation, nil when the
// trial has no attempt (missing).
type TrialState = snapshot.PlannedTrial

// Walk verifies dir with snapshot.OpenTrials, handing every planned trial
// to the Visit begin returns as it is read: nothing it sees is verified
// until Walk returns without an error, and begin may be called a second
// time, to start over (snapshot.OpenTrials). An error is a
// *SnapshotError, or the Visit's own.
func Walk(dir string, begin func(m *snapshot.Manifest, manifestJSON []byte) (snapshot.Visit, error)) (*snapshot.Snapshot, error) {
	var own error // begin's or the Visit's: not the snapshot's fault
	s, err := snapshot.OpenTrials(dir, func(m *snapshot.Manifest, raw []byte) (snapshot.Visit, error) {
		visit, err := begin(m, raw)
		if err != nil {
			own = err
			return nil, err
		}
		return func(t TrialState) error {
			if err := visit(t); err != nil {
				own = err
				return err
			}
			return nil
		}, nil
	})
	switch {
	case err == nil:
		return s, nil
	case own != nil && errors.Is(err, own):
		return nil, err
	}
	var ve *snapshot.VerifyError
	if errors.As(err, &ve) {
		return nil, &SnapshotError{Dir: dir, Problems: ve.Problems, Err: ErrUnverified}
	}
	return nil, &SnapshotError{Dir: dir, Err: err}
}

// StatusMissing is the state of a planned trial with no attempt.
const StatusMissing = "missing"

// Trial is what a Round keeps of one planned trial.
type Trial struct {
	Task   string
	Repeat int
	// Status is an observation status or StatusMissing.
	Status string
	// TaskChecksum is Harbor's task checksum from the evidence, if any.
	TaskChecksum *string
}

// ID is the trial ID, <task>#<repeat>.
func (t Trial) ID() string { return snapshot.TrialID(t.Task, t.Repeat) }

// Round is a verified snapshot with every planned trial's status.
type Round struct {
	Dir      string
	Manifest *snapshot.Manifest
	// Trials are in canonical order; consecutive trials of one task share
	// one Task string.
	Trials []Trial
	// Cost is what every attempt of the round cost, with its coverage
	// (snapshot.Cost).
	Cost snapshot.Cost
	// Dataset is which part of the dataset the round's rates stand on,
	// when its plan records it (settings.dataset: Inspect and lm-eval
	// rounds); nil otherwise.
	Dataset *snapshot.DatasetScope
	// taskCost is each task's, for CostOf.
	taskCost map[string]*snapshot.CostSum
}

// CostOf is what the attempts of the tasks for which skip is false cost
// (every task when skip is nil), summed in canonical task order.
func (r *Round) CostOf(skip func(task string) bool) snapshot.Cost {
	if skip == nil {
		return r.Cost
	}
	var sum snapshot.CostSum
	for _, task := range r.Tasks() {
		if c := r.taskCost[task]; c != nil && !skip(task) {
			sum.Merge(c)
		}
	}
	return sum.Cost()
}

// Load verifies dir with snapshot.OpenTrials and keeps every trial's
// status from the bytes it verified.
func Load(ctx context.Context, dir string) (*Round, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var trials []Trial
	var cost snapshot.CostSum
	var taskCost map[string]*snapshot.CostSum
	n := 0
	s, err := Walk(dir, func(m *snapshot.Manifest, _ []byte) (snapshot.Visit, error) {
		trials, n, cost, taskCost = make([]Trial, 0, m.Counts.Expected), 0, snapshot.CostSum{}, map[string]*snapshot.CostSum{}
		return func(t TrialState) error {
			cost.Add(t.Observation)
			tc := taskCost[t.Task]
			if tc == nil {
				tc = &snapshot.CostSum{}
				taskCost[t.Task] = tc
			}
			tc.Add(t.Observation)
			if n++; n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			tr := Trial{Task: t.Task, Repeat: t.Repeat, Status: StatusMissing}
			if o := t.Observation; o != nil {
				tr.Status, tr.TaskChecksum = o.Status, o.Evidence.TaskChecksum
			}
			trials = append(trials, tr)
			return nil
		}, nil
	})
	if err != nil {
		return nil, err
	}
	r := &Round{Dir: dir, Manifest: s.Manifest(), Trials: trials, Cost: cost.Cost(), taskCost: taskCost}
	r.Dataset = s.Plan().DatasetScope()
	return r, nil
}

// Tasks returns the round's task names in canonical order.
func (r *Round) Tasks() []string {
	var out []string
	for i, t := range r.Trials {
		if i == 0 || t.Task != r.Trials[i-1].Task {
			out = append(out, t.Task)
		}
	}
	return out
}
