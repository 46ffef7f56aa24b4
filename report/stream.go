package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/transcript"
)

// LoadError is a snapshot that could not be read for a page: the error is
// LoadRound's for the same folder (a *snapshot.VerifyError, a folder that
// is not a snapshot, an unreadable file).
type LoadError struct {
	Dir string
	Err error
}

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Written says what WriteRoundSnapshot wrote.
type Written struct {
	RoundID string
	Trials  int
}

// WriteRoundSnapshot verifies the snapshot at dir and writes the page of
// its round, as WriteRound does for a loaded round (the same bytes), in
// one streamed read (snapshot.OpenTrials): no observation is kept, only
// the page's compact data, so memory does not grow with the observations.
// Nothing is written to w unless the whole snapshot verified. signature
// is the attestation line, "" for none.
func WriteRoundSnapshot(w io.Writer, dir, signature string) (*Written, error) {
	var a *roundAcc
	var stats *Statistics
	var m *snapshot.Manifest
	s, err := snapshot.OpenTrials(dir, func(man *snapshot.Manifest, raw []byte) (snapshot.Visit, error) {
		if man.Counts.Expected > MaxTrials {
			return nil, tooMany(man.RoundID, man.Counts.Expected)
		}
		// Called again when the snapshot is re-read: start afresh.
		m, stats, a = man, DecodeStatistics(raw), newRoundAcc("round", man.RoundID)
		return func(t snapshot.PlannedTrial) error { return a.add(t.Task, t.Repeat, t.Observation) }, nil
	})
	if err != nil {
		return nil, &LoadError{dir, err}
	}
	defer s.Close()
	m = s.Manifest()
	for tr, err := range s.Trajectories() {
		if err != nil {
			return nil, &LoadError{dir, err}
		}
		var t transcript.Trajectory
		if err := json.Unmarshal(tr.Data, &t); err != nil {
			return nil, &LoadError{dir, fmt.Errorf("%s: %s is not a trajectory: %w", dir, tr.Name, err)}
		}
		if err := a.addBody(&Trajectory{File: tr.Name, Trajectory: t}); err != nil {
			return nil, err
		}
	}
	v := pageView{Title: "Round " + m.Name}
	v.addAcc("Round", m, stats, signature, s.Plan().DatasetScope(), a)
	if err := v.write(w); err != nil {
		return nil, err
	}
	return &Written{RoundID: m.RoundID, Trials: len(a.data.task)}, nil
}

func tooMany(roundID string, n int) error {
	return fmt.Errorf("round %s plans %d trials; an HTML report holds at most %d (tpctl snapshot show DIR --trials --output json lists them all)",
		roundID, n, MaxTrials)
}
