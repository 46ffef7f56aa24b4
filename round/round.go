// Package round reads verified snapshots for the commands that look at
// many rounds (export, trend, gate), each through snapshot.OpenStreamed,
// so what they read is what was verified: a Source streams every planned
// trial with its observation in canonical order; a Round keeps each trial's
// status in memory and computes counts, rates and intervals over any
// subset of its tasks, and the paired difference between two rounds, by
// the same code as the snapshot and compare packages.
package round

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
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
	fmt.Fprintf(&b, "the snapshot %q failed verification with %d problem(s); it may have been modified after it was written:", e.Dir, len(e.Problems))
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

// Source is a verified snapshot whose trials can be streamed: it is read
// once, through snapshot.OpenStreamed, and what it hands out are the bytes
// that were hashed and verified. Close it when done.
type Source struct {
	Dir      string
	Manifest *snapshot.Manifest
	// SHA256 is the hex SHA-256 of snapshot.json's bytes.
	SHA256 string
	// Trajectories holds the trial IDs that have a trajectory file.
	Trajectories map[string]bool
	snap         *snapshot.Snapshot
}

// TrialState is one planned trial with its observation, nil when the
// trial has no attempt (missing).
type TrialState = snapshot.PlannedTrial

// Open verifies dir whole (as tpctl snapshot verify does) before it
// returns, keeping what it read, and reads the trajectory index. An error
// is a *SnapshotError.
func Open(dir string) (*Source, error) {
	s, err := open(dir, snapshot.OpenStreamed)
	if err != nil {
		return nil, err
	}
	m := s.Manifest()
	sum := sha256.Sum256(s.ManifestJSON())
	src := &Source{Dir: dir, Manifest: m, SHA256: hex.EncodeToString(sum[:]), Trajectories: map[string]bool{}, snap: s}
	for tr, err := range s.Trajectories() {
		if err == nil {
			var id struct {
				TrialID string `json:"trial_id"`
			}
			if err = json.Unmarshal(tr.Data, &id); err == nil {
				src.Trajectories[id.TrialID] = true
				continue
			}
			err = fmt.Errorf("%s: %w", tr.Name, err)
		}
		s.Close()
		return nil, &SnapshotError{Dir: dir, Err: err}
	}
	return src, nil
}

// open opens dir with openFn and words its errors as SnapshotErrors.
func open(dir string, openFn func(string) (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	s, err := openFn(dir)
	if err != nil {
		var ve *snapshot.VerifyError
		if errors.As(err, &ve) {
			return nil, &SnapshotError{Dir: dir, Problems: ve.Problems, Err: ErrUnverified}
		}
		return nil, &SnapshotError{Dir: dir, Err: err}
	}
	return s, nil
}

// Trials is every planned trial in canonical order with its observation
// (nil for a missing trial), from the verified bytes, one at a time. An
// error is a *SnapshotError.
func (s *Source) Trials() iter.Seq2[TrialState, error] {
	return func(yield func(TrialState, error) bool) {
		for t, err := range s.snap.Trials() {
			if err != nil {
				yield(t, &SnapshotError{Dir: s.Dir, Err: err})
				return
			}
			if !yield(t, nil) {
				return
			}
		}
	}
}

// Close removes what Open kept (temporary files).
func (s *Source) Close() error { return s.snap.Close() }

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
}

// Load verifies dir with snapshot.OpenStreamed and reads every trial's
// status from the bytes it verified.
func Load(ctx context.Context, dir string) (*Round, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := open(dir, snapshot.OpenStreamed)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	r := &Round{Dir: dir, Manifest: s.Manifest(), Trials: make([]Trial, 0, s.Manifest().Counts.Expected)}
	n := 0
	for t, err := range s.Trials() {
		if err != nil {
			return nil, &SnapshotError{Dir: dir, Err: err}
		}
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		tr := Trial{Task: t.Task, Repeat: t.Repeat, Status: StatusMissing}
		if o := t.Observation; o != nil {
			tr.Status, tr.TaskChecksum = o.Status, o.Evidence.TaskChecksum
		}
		r.Trials = append(r.Trials, tr)
	}
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
