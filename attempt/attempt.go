// Package attempt is the one neutral attempt the model speaks (issue 31):
// what a producer read and judged of one attempt at a planned trial, in
// words that name no producer. A producer's wing (producers/harbor, …)
// fills it from its native output; the importer turns it into the
// snapshot's observation, never reading a native file itself
// (docs/layout.md, "Adding a producer").
package attempt

import (
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/snapshot"
)

// Attempt is one attempt as its producer read it.
type Attempt struct {
	// Outcome is the producer's verdict by its own versioned table. Its
	// Detail is what the snapshot keeps (masked and cut by the importer):
	// a producer leaves it empty where it would only repeat the reason.
	Outcome outcome.Outcome
	// Record is the native record the attempt was judged from, relative
	// to the import's root ("<dir>/result.json" for Harbor), for messages.
	Record string
	// Task is the task the record itself names ("" when it names none);
	// the plan decides identity, and a difference is only warned about.
	Task string
	// Agent is the agent and model the record names, nil when none.
	Agent *snapshot.Agent
	// Scores are the record's scores by name, in the record's order;
	// Outcome.Reward is the one the table looked at.
	Scores []Score
	// Error is the error or exception the record carries, nil when none.
	Error *Error
	// Limits names the limits the attempt hit (a producer's own words,
	// e.g. Inspect's "token"), in the record's order.
	Limits []string
	// Timing and Usage are the record's phase durations and the agent's
	// counts, nil when it has none.
	Timing *snapshot.Timing
	Usage  *snapshot.Usage
	// Evidence is the protocol evidence the record offers: the digest of
	// the record's bytes and what the producer checked of its own values.
	Evidence snapshot.Evidence
	// Identity lists the record's values saved as they are (agent, model,
	// exception class, evidence strings), in the order they are checked:
	// one carrying a known secret refuses the import, naming Field.
	Identity []Field
	// Warnings are evidence values dropped for their form, in words.
	Warnings []string
	// UnknownFields counts the record's fields the producer did not know
	// (newer output than the validated revisions).
	UnknownFields int
	// Verifier is the verifier's own words about the attempt (its failed
	// tests, the last lines of its output), nil when it left none; the
	// importer masks its text by the secret gate and bounds it.
	Verifier *snapshot.VerifierOutput
}

// Score is one named score of an attempt.
type Score struct {
	Name string
	// Value is the score as a number, nil when it is not a finite one.
	Value *float64
	// Raw is the score as the record wrote it.
	Raw string
}

// Error is an attempt's error or exception.
type Error struct {
	// Class is the error's class as the producer names it (Harbor's
	// exception_type, Python's type name).
	Class   string
	Message string
}

// Field is one identity value of a record, named by its path in the
// record (e.g. "agent_info.model_info.name").
type Field struct {
	Name, Value string
}
