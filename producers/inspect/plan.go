package inspect

import (
	"errors"
	"fmt"
	"github.com/tuneplane/tpctl/internal/ui/digits"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/snapshot"
)

// Planned is one planned (sample, epoch) of a log.
type Planned struct {
	ID    SampleID
	Epoch int
}

// Key identifies the pair ("n:1#2").
func (p Planned) Key() string { return p.ID.Key() + "#" + strconv.Itoa(p.Epoch) }

// The sources of a planned set.
const (
	// PlanFromSampleIDs: eval.dataset.sample_ids × eval.config.epochs.
	PlanFromSampleIDs = "sample_ids"
	// PlanFromSamples: a log that does not list its sample ids (Inspect
	// before the field) is planned as the samples it holds, with a
	// warning: samples Inspect never wrote cannot be counted missing.
	PlanFromSamples = "samples_in_log"
)

// Plan is the planned set of one log.
type Plan struct {
	// Trials are the planned (sample, epoch) pairs, sample by sample in
	// the log's order, epochs ascending within a sample.
	Trials []Planned
	// SampleIDs are the planned samples, once each, in the log's order.
	SampleIDs []SampleID
	Epochs    int
	// DatasetSize is eval.dataset.samples, the size of the whole dataset
	// (-1 when the log does not say); a run over fewer samples is a
	// limited run and every rate says so ("3 of 2,376 samples of the
	// dataset").
	DatasetSize int64
	Source      string
	Warnings    []string
}

// Limited reports whether the run planned fewer samples than the dataset
// holds.
func (p *Plan) Limited() bool {
	return p.DatasetSize >= 0 && int64(len(p.SampleIDs)) < p.DatasetSize
}

// DatasetScope is the planned samples against the dataset, as the plan's
// settings.dataset records them (snapshot.DatasetScope); nil when the log
// does not record the dataset's size.
func (p *Plan) DatasetScope() *snapshot.DatasetScope {
	if p.DatasetSize < 0 {
		return nil
	}
	return &snapshot.DatasetScope{PlannedSamples: int64(len(p.SampleIDs)), Samples: p.DatasetSize}
}

// Scope words the planned samples against the dataset as every view does
// (snapshot.DatasetScope.String): "3 of 2,376 samples of the dataset", or
// "all 10 samples of the dataset"; or "10 samples (the log does not
// record the dataset's size)".
func (p *Plan) Scope() string {
	if d := p.DatasetScope(); d != nil {
		return d.String()
	}
	n := int64(len(p.SampleIDs))
	return thousands(n) + " " + plural(n, "sample") + " (the log does not record the dataset's size)"
}

func plural(n int64, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// thousands writes n with comma separators (2,376).
func thousands(n int64) string { return digits.Group(n) }

// PlanError is a planned set that cannot be drafted from a log.
type PlanError struct {
	Log string
	Err error
}

func (e *PlanError) Error() string { return e.Log + ": " + e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

// PlannedSet drafts the log's planned set. From eval.dataset.sample_ids
// × eval.config.epochs when the log lists its ids; otherwise from present
// (the (sample, epoch) pairs the log holds), with a warning. A sample id
// listed twice is refused (the plan would count it twice).
func PlannedSet(name string, h *Header, present []Planned) (*Plan, error) {
	p := &Plan{Epochs: h.Epochs, DatasetSize: h.Dataset.Samples}
	if h.Dataset.HasSampleIDs {
		p.Source = PlanFromSampleIDs
		seen := map[string]bool{}
		for _, id := range h.Dataset.SampleIDs {
			if seen[id.Key()] {
				return nil, &PlanError{Log: name, Err: fmt.Errorf("eval.dataset.sample_ids lists sample %s twice", id)}
			}
			seen[id.Key()] = true
			p.SampleIDs = append(p.SampleIDs, id)
			for e := 1; e <= h.Epochs; e++ {
				p.Trials = append(p.Trials, Planned{ID: id, Epoch: e})
			}
		}
		return p, nil
	}
	p.Source = PlanFromSamples
	if len(present) == 0 {
		return nil, &PlanError{Log: name, Err: errors.New("the log lists no planned sample ids (eval.dataset.sample_ids) and holds no samples: nothing to plan")}
	}
	trials := slices.Clone(present)
	sort.SliceStable(trials, func(i, j int) bool {
		a, b := trials[i], trials[j]
		if a.ID.Key() != b.ID.Key() {
			return lessID(a.ID, b.ID)
		}
		return a.Epoch < b.Epoch
	})
	trials = slices.CompactFunc(trials, func(a, b Planned) bool { return a.Key() == b.Key() })
	p.Trials = trials
	seen := map[string]bool{}
	maxEpoch := 1
	for _, t := range trials {
		if !seen[t.ID.Key()] {
			seen[t.ID.Key()] = true
			p.SampleIDs = append(p.SampleIDs, t.ID)
		}
		maxEpoch = max(maxEpoch, t.Epoch)
	}
	p.Epochs = max(h.Epochs, maxEpoch)
	p.Warnings = append(p.Warnings, fmt.Sprintf(
		"the log does not list its planned sample ids (eval.dataset.sample_ids, written by Inspect since late 2024): the plan is the %d (sample, epoch) pairs the log holds, so a sample Inspect never wrote cannot be counted as missing",
		len(trials)))
	return p, nil
}

// lessID orders ids: integers numerically before strings, strings by text.
func lessID(a, b SampleID) bool {
	if a.Number != b.Number {
		return a.Number
	}
	if a.Number {
		ai, _ := strconv.ParseInt(a.Text, 10, 64)
		bi, _ := strconv.ParseInt(b.Text, 10, 64)
		return ai < bi
	}
	return a.Text < b.Text
}

// ScorerError is a primary scorer that cannot be chosen: several scorers
// and no name, or a name the log does not have.
type ScorerError struct {
	Log    string
	Name   string   // the name asked for, "" when none
	Scorer []string // the log's scorers
}

func (e *ScorerError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("%s: the log has %d scorers (%s): choose the primary one with --scorer NAME",
			e.Log, len(e.Scorer), strings.Join(e.Scorer, ", "))
	}
	if len(e.Scorer) == 0 {
		return fmt.Sprintf("%s: no scorer named %q: the log names no scorer", e.Log, e.Name)
	}
	return fmt.Sprintf("%s: no scorer named %q: the log's scorers are %s", e.Log, e.Name, strings.Join(e.Scorer, ", "))
}

// ScorerNames lists the log's scorers: eval.scorers, or in logs older
// than that field the names of results.scores (a scorer may report
// several scores, e.g. a dict value; their scorer field names it), or
// failing both the score names found in samples (samples, may be nil).
func ScorerNames(h *Header, samples []string) []string {
	var out []string
	add := func(n string) {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range h.Scorers {
		add(n)
	}
	if len(out) == 0 && h.Results != nil {
		for _, s := range h.Results.Scores {
			if s.Scorer != "" {
				add(s.Scorer)
			} else {
				add(s.Name)
			}
		}
	}
	if len(out) == 0 {
		for _, n := range samples {
			add(n)
		}
	}
	return out
}

// PrimaryScorer chooses the scorer whose score decides each sample: the
// only one, or the one named (--scorer NAME). A log that names no scorer
// at all (run without scoring) has none: "" and no error, and every
// sample is then unscored (score_missing).
func PrimaryScorer(name string, scorers []string, want string) (string, error) {
	if want != "" {
		if slices.Contains(scorers, want) {
			return want, nil
		}
		return "", &ScorerError{Log: name, Name: want, Scorer: scorers}
	}
	switch len(scorers) {
	case 0:
		return "", nil
	case 1:
		return scorers[0], nil
	}
	return "", &ScorerError{Log: name, Scorer: scorers}
}
