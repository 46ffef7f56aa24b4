// Package wing is Harbor's producer (producers.Producer): Harbor's job
// folders read, drafted, judged and converted through the seam. It is the
// top of Harbor's wing: package harbor (producers/harbor) decodes
// Harbor's files, judges a trial by Harbor's outcome table and converts
// ATIF into trajectories; plandraft drafts a job's planned set from the
// job's own declaration and imports harbor, so the type that offers both
// stands above them, here (a Producer in package harbor would import
// plandraft, which imports harbor: a cycle).
package wing

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tuneplane/tpctl/attempt"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor"
	"github.com/tuneplane/tpctl/producers/harbor/plandraft"
	"github.com/tuneplane/tpctl/transcript"
)

// Producer is Harbor's producer. The zero value is ready to use.
type Producer struct{}

// New returns Harbor's producer, for the registry in cmd/tpctl.
func New() Producer { return Producer{} }

var _ producers.Producer = Producer{}

// Format is "harbor".
func (Producer) Format() string { return harbor.Format }

// Name is "Harbor".
func (Producer) Name() string { return "Harbor" }

// Outcomes is Harbor's outcome table, tpctl-outcomes/2.
func (Producer) Outcomes() outcome.Table { return harbor.OutcomeTable() }

// Detect reports whether root holds a Harbor job or trial folders.
func (Producer) Detect(root string) bool { return plandraft.Detect(root) }

// ReadAttempt reads and judges one trial folder's result.json.
func (Producer) ReadAttempt(files producers.Files, loc string) attempt.Attempt {
	return harbor.ReadAttempt(files, loc)
}

// Transcript lists one trial folder's ATIF trajectory parts.
func (Producer) Transcript(root, loc string) ([]transcript.Part, []producers.Note, error) {
	return harbor.TranscriptParts(root, loc)
}

// Draft drafts every trial the job planned (plandraft.FromJob). Its
// errors are plandraft's (*plandraft.PairsError, *RevisionsError,
// *SettingsError, …), which cmd/tpctl words as hints.
func (Producer) Draft(_ context.Context, root string, opts producers.DraftOptions) (*producers.Draft, error) {
	d, err := plandraft.FromJob(root, plandraft.Options{Agent: opts.Agent, Model: opts.Model, Split: opts.Split})
	if err != nil {
		return nil, err
	}
	out := &producers.Draft{Plan: d.Plan, Warnings: d.Warnings, Notes: d.Notes}
	for _, s := range d.Skipped {
		out.Skipped = append(out.Skipped, producers.Skip{Dir: s.Dir, Reason: s.Reason})
	}
	if d.Declared {
		out.Summary = fmt.Sprintf("drafted %s for %s from the job's declaration: %d finished, %d interrupted (counted unscored), %d never started (counted missing)",
			plural(len(d.Plan.Trials), "planned trial"), d.Pair.String(), d.Counts.Finished, d.Counts.Interrupted, d.Counts.NeverStarted)
	} else {
		out.Summary = fmt.Sprintf("drafted %s", plural(len(d.Plan.Trials), "trial"))
	}
	if dg := d.Plan.Protocol.DatasetDigest; d.DatasetProposed {
		out.Proposed = append(out.Proposed, producers.Proposal{Pointer: "/protocol/dataset_digest", Value: dg, Rule: plandraft.DatasetRule})
	}
	for _, pr := range d.Proposed {
		out.Proposed = append(out.Proposed, producers.Proposal{Pointer: pr.Pointer, Value: pr.Value, Rule: pr.Rule})
	}
	for _, u := range d.Unknown {
		out.Unknown = append(out.Unknown, producers.Unknown{Category: u.Category, Pointer: u.Pointer, Example: u.Example})
	}
	return out, nil
}

// StreamsAttempts: a Harbor attempt is read from its own small files and
// nothing of it is kept (producers.Streaming).
func (Producer) StreamsAttempts() bool { return true }

// CheckJob compares the plan with what the Harbor job planned for the
// plan's (agent, model) pairs, when the root holds the job's declaration.
func (Producer) CheckJob(root string, plan producers.PlannedSet) (*producers.JobCheck, error) {
	facts, err := plandraft.ReadJobFacts(root, plan.Sample)
	if err != nil || facts == nil {
		return nil, err
	}
	differs, err := facts.Differs(root, plan.Trials, func(fn func(string, int, []string) bool) error {
		if plan.Tasks == nil {
			return nil
		}
		return plan.Tasks(func(t producers.PlannedTask) bool { return fn(t.Name, t.Trials, t.Dirs) })
	})
	if err != nil {
		return nil, err
	}
	return &producers.JobCheck{Facts: facts, Differs: differs}, nil
}

// plural is "1 trial", "2 trials", "1,000 trials": the words of
// internal/ui's Plural, which a wing cannot import (it draws terminal
// output; TestLayers).
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s + " " + noun + "s"
}
