// Package snapshot defines tpctl's saved evaluation round: the manifest
// (snapshot.json), the normalized plan (plan.json), one observation per
// trial with attempts (observations.jsonl) and optional trajectories. It
// computes counts, rates and protocol digests, derives the round ID, writes
// the folder atomically and verifies a saved one byte for byte. Open is the
// one way to read a saved snapshot: it verifies as it reads and hands out
// only the bytes it hashed.
//
// The exact contents of every file and of the round-ID preimage are
// documented in docs/snapshot-format.md.
package snapshot

import (
	"cmp"
	"encoding/json"
	"github.com/tuneplane/tpctl/internal/ui/digits"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// Version strings recorded in every snapshot.
const (
	// Format is what tpctl writes: FormatV2 with the small-sample
	// statistics of docs/statistics.md (t(G−1) intervals, null below
	// stats.MinTasks tasks, pass@k per k over tasks with k scored repeats)
	// and each attempt's optional explanation (detail, timing, usage, agent).
	Format = "tpctl-snapshot/3"
	// FormatV2 snapshots (the normal-approximation statistics, no
	// explanations) and FormatV1 ones (no statistics) stay readable,
	// verifiable and comparable; verify recomputes each with its own rules.
	FormatV2    = "tpctl-snapshot/2"
	FormatV1    = "tpctl-snapshot/1"
	RoundFormat = "tpctl-round/1"
	DigestRules = "tpctl-digest/1"
)

// File names inside a snapshot folder.
const (
	ManifestFile     = safefs.SnapshotManifest
	PlanFile         = "plan.json"
	ObservationsFile = "observations.jsonl"
	TrajectoriesDir  = "trajectories"
)

// Statuses of an observation (see the outcome package for the rules).
const (
	StatusSuccess    = "success"
	StatusFailure    = "failure"
	StatusInfraError = "infra_error"
	StatusUnscored   = "unscored"
)

// Labels of a round.
const (
	LabelClean    = "clean"
	LabelDegraded = "degraded"
)

// Manifest is snapshot.json: the SPEC §11 contract.
type Manifest struct {
	Format          string      `json:"format"`
	RoundID         string      `json:"round_id"`
	Name            string      `json:"name"`
	Source          Source      `json:"source"`
	Protocol        Protocol    `json:"protocol"`
	Checkpoint      Checkpoint  `json:"checkpoint"`
	OutcomeRules    string      `json:"outcome_rules"`
	Counts          Counts      `json:"counts"`
	SuccessRate     *float64    `json:"success_rate"`
	SuccessRateCI95 *[2]float64 `json:"success_rate_ci95"`
	Coverage        *float64    `json:"coverage"`
	CoverageCI95    *[2]float64 `json:"coverage_ci95"`
	// Statistics is present from FormatV2 on (its members depend on the
	// format); nil in a FormatV1 snapshot.
	Statistics     *Statistics       `json:"statistics,omitempty"`
	Label          string            `json:"label"`
	ExceptionTypes map[string]int    `json:"exception_types"`
	SharedVerifier int               `json:"shared_verifier"`
	Trajectories   TrajectoryInfo    `json:"trajectories"`
	Files          map[string]string `json:"files"`
}

// Source is the native format the round was imported from.
type Source struct {
	Format         string `json:"format"`
	Revision       string `json:"revision"`
	FormatVerified bool   `json:"format_verified"`
}

// Protocol is the evidence two rounds must share to be compared.
type Protocol struct {
	DigestRules    string `json:"digest_rules"`
	DatasetDigest  string `json:"dataset_digest"`
	CohortDigest   string `json:"cohort_digest"`
	VerifierDigest string `json:"verifier_digest"`
	SettingsDigest string `json:"settings_digest"`
	Split          string `json:"split"`
}

// Checkpoint is recorded beside, not inside, the protocol digests so that
// different models can be compared on one protocol. ServedAs is only a
// routing name: it proves nothing about the weights that were loaded.
type Checkpoint struct {
	Ref      string `json:"ref"`
	ServedAs string `json:"served_as"`
}

// Counts are over the whole plan: Expected is the number of planned trials.
type Counts struct {
	Expected   int `json:"expected"`
	Success    int `json:"success"`
	Failure    int `json:"failure"`
	InfraError int `json:"infra_error"`
	Unscored   int `json:"unscored"`
	Missing    int `json:"missing"`
}

// Scored is the number of trials with a success or failure verdict.
func (c Counts) Scored() int { return c.Success + c.Failure }

// TrajectoryFiles returns the names of the manifest's trajectory files
// (trajectories/NNNN.json), sorted, which is the order they were written.
func (m *Manifest) TrajectoryFiles() []string {
	var names []string
	for name := range m.Files {
		if strings.HasPrefix(name, TrajectoriesDir+"/") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// TrajectoryInfo summarises the transcripts in the snapshot.
type TrajectoryInfo struct {
	Count     int      `json:"count"`
	Truncated int      `json:"truncated"`
	Redactors []string `json:"redactors"`
}

// Observation is one line of observations.jsonl: the current (highest
// retry) result of one planned trial that has at least one attempt.
type Observation struct {
	TrialID       string   `json:"trial_id"`
	Task          string   `json:"task"`
	Repeat        int      `json:"repeat"`
	TrialAttempt  int      `json:"trial_attempt"`
	Attempts      int      `json:"attempts"`
	Status        string   `json:"status"`
	Reason        string   `json:"reason"`
	Reward        *float64 `json:"reward"`
	ExceptionType *string  `json:"exception_type"`
	Trainable     bool     `json:"trainable"`
	Evidence      Evidence `json:"evidence"`
	// AttemptOutcomes holds every attempt, ascending by retry, so the round
	// ID can be recomputed from the snapshot alone.
	AttemptOutcomes []AttemptOutcome `json:"attempt_outcomes"`
}

// Evidence binds an observation to the file it was judged from.
type Evidence struct {
	ResultSHA256            *string `json:"result_sha256"`
	TaskChecksum            *string `json:"task_checksum"`
	VerifierEnvironmentMode *string `json:"verifier_environment_mode"`
}

// AttemptOutcome is the normalized outcome of one attempt: what the round
// ID covers for it.
type AttemptOutcome struct {
	Retry         int      `json:"retry"`
	Status        string   `json:"status"`
	Reason        string   `json:"reason"`
	Reward        *float64 `json:"reward"`
	ExceptionType *string  `json:"exception_type"`
	ResultSHA256  *string  `json:"result_sha256"`
	// The members below (FormatV3 on) explain the verdict; they are not in
	// the round ID, and are absent when unknown.

	// Detail is the judge's explanation in one line (outcome.Detail: the
	// exception's first line, the parse error of an unreadable result, the
	// deciding step), masked by the outgoing-text gate, at most
	// MaxDetailLen bytes.
	Detail string `json:"detail,omitempty"`
	// Timing is the phase durations result.json recorded.
	Timing *Timing `json:"timing,omitempty"`
	// Usage is the agent's token and cost counts.
	Usage *Usage `json:"usage,omitempty"`
	// Agent is the agent and model that ran the attempt.
	Agent *Agent `json:"agent,omitempty"`
	// Verifier is what the verifier itself said about the attempt, from
	// the files it wrote (docs/snapshot-format.md): absent when it wrote
	// nothing tpctl reads.
	Verifier *VerifierOutput `json:"verifier,omitempty"`
}

// VerifierOutput is the verifier's own words about an attempt: the failed
// tests of its CTRF report with their messages, else the last lines of its
// standard output, else its reward file; masked by the outgoing-text gate
// and at most MaxVerifierText bytes.
type VerifierOutput struct {
	// Source is the file it was read from, relative to the attempt's
	// folder ("verifier/ctrf.json", "verifier/test-stdout.txt",
	// "verifier/reward.json").
	Source string `json:"source"`
	// Text is what it says, its lines kept.
	Text string `json:"text"`
}

// MaxVerifierText bounds a VerifierOutput's text (bytes of UTF-8).
const MaxVerifierText = 2048

// MaxDetailLen bounds an attempt's detail (bytes of UTF-8).
const MaxDetailLen = 400

// Timing is an attempt's phase durations in seconds (millisecond
// precision); null for a phase that did not start or finish.
type Timing struct {
	EnvironmentSetup *float64 `json:"environment_setup_sec"`
	AgentSetup       *float64 `json:"agent_setup_sec"`
	AgentExecution   *float64 `json:"agent_execution_sec"`
	Verifier         *float64 `json:"verifier_sec"`
}

// Usage is an attempt's token and cost counts as the agent reported them
// (input includes cache); null when not reported.
type Usage struct {
	InputTokens  *int64   `json:"input_tokens"`
	CacheTokens  *int64   `json:"cache_tokens"`
	OutputTokens *int64   `json:"output_tokens"`
	CostUSD      *float64 `json:"cost_usd"`
}

// Agent names the agent and model of an attempt (Harbor's agent_info).
type Agent struct {
	Name  string  `json:"name"`
	Model *string `json:"model"`
}

// HasExplanation reports whether a carries any FormatV3 member.
func (a *AttemptOutcome) HasExplanation() bool {
	return a.Detail != "" || a.Timing != nil || a.Usage != nil || a.Agent != nil || a.Verifier != nil
}

// PlanSummary is what the snapshot reads from the normalized plan
// (plan.json). The field names are those of the import-plan format.
type PlanSummary struct {
	Name   string `json:"name"`
	Split  string `json:"split"`
	Source struct {
		Format   string `json:"format"`
		Revision string `json:"revision"`
	} `json:"source"`
	Trainable  bool       `json:"trainable"`
	Checkpoint Checkpoint `json:"checkpoint"`
	Protocol   struct {
		DatasetDigest     string `json:"dataset_digest"`
		VerifierDigest    string `json:"verifier_digest"`
		EnvironmentDigest string `json:"environment_digest"`
		HarnessDigest     string `json:"harness_digest"`
	} `json:"protocol"`
	Settings json.RawMessage `json:"settings"`
	Trials   []struct {
		Task   string `json:"task"`
		Repeat int    `json:"repeat"`
	} `json:"trials"`
}

// DatasetScope is which part of the dataset a round's rates stand on: the
// items the run planned beside the size of the whole they were drawn
// from, as a producer that knows both records them in the plan's
// settings.dataset (Inspect: the planned samples of eval.dataset.samples;
// lm-eval: the planned documents of n-samples.original). Item and Whole
// are the producer's nouns ("document", "split"), empty for the default
// "sample" of the "dataset"; read them through Noun and Of.
type DatasetScope struct {
	PlannedSamples int64  `json:"planned_samples"`
	Samples        int64  `json:"samples"`
	Item           string `json:"item,omitempty"`
	Whole          string `json:"whole,omitempty"`
}

// DatasetScope reads the plan's settings.dataset, the one place every
// producer records which part of its dataset a run planned; nil when the
// plan does not record both counts, as a Harbor plan does not. A noun
// that is not a short lower-case word or two is left out (the default
// stands), so a plan cannot write control text into every view.
func (p *PlanSummary) DatasetScope() *DatasetScope {
	var s struct {
		Dataset *struct {
			Planned *int64 `json:"planned_samples"`
			Samples *int64 `json:"samples"`
			Item    string `json:"item"`
			Whole   string `json:"whole"`
		} `json:"dataset"`
	}
	if p == nil || len(p.Settings) == 0 || json.Unmarshal(p.Settings, &s) != nil || s.Dataset == nil ||
		s.Dataset.Planned == nil || s.Dataset.Samples == nil || *s.Dataset.Planned < 0 || *s.Dataset.Samples < 0 {
		return nil
	}
	d := &DatasetScope{PlannedSamples: *s.Dataset.Planned, Samples: *s.Dataset.Samples}
	if scopeNoun(s.Dataset.Item) {
		d.Item = s.Dataset.Item
	}
	if scopeNoun(s.Dataset.Whole) {
		d.Whole = s.Dataset.Whole
	}
	return d
}

// scopeNoun reports whether s may name a dataset scope's item or whole:
// 1 to 32 bytes of lower-case ASCII letters, spaces and hyphens.
func scopeNoun(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || c == ' ' || c == '-') {
			return false
		}
	}
	return true
}

// Noun is what the run planned, singular: the producer's item or "sample".
func (d *DatasetScope) Noun() string {
	if d.Item != "" {
		return d.Item
	}
	return "sample"
}

// Of is what the planned items were drawn from: the producer's whole or
// "dataset".
func (d *DatasetScope) Of() string {
	if d.Whole != "" {
		return d.Whole
	}
	return "dataset"
}

// String words the scope so a limited run is never read as the whole:
// "3 of 2,376 samples of the dataset", "10 of 2,376 documents of the
// split", "all 10 samples of the dataset"; "" for a nil scope. Every view
// that shows a rate says it this way (docs/outcomes.md).
func (d *DatasetScope) String() string {
	if d == nil {
		return ""
	}
	noun := func(n int64) string {
		if n == 1 {
			return d.Noun()
		}
		return d.Noun() + "s"
	}
	if d.PlannedSamples < d.Samples {
		return digits.Group(d.PlannedSamples) + " of " + digits.Group(d.Samples) + " " + noun(d.Samples) + " of the " + d.Of()
	}
	return "all " + digits.Group(d.PlannedSamples) + " " + noun(d.PlannedSamples) + " of the " + d.Of()
}

// TrialIDs returns the plan's trial IDs in canonical (task, repeat) order.
func (p *PlanSummary) TrialIDs() []string {
	type key struct {
		task   string
		repeat int
	}
	keys := make([]key, len(p.Trials))
	for i, t := range p.Trials {
		keys[i] = key{t.Task, t.Repeat}
	}
	slices.SortFunc(keys, func(a, b key) int { return CompareTrials(a.task, a.repeat, b.task, b.repeat) })
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = TrialID(k.task, k.repeat)
	}
	return ids
}

// TrialID is the stable identity of a planned trial.
func TrialID(task string, repeat int) string { return task + "#" + strconv.Itoa(repeat) }

// CompareTrials orders observations canonically: by task, then repeat.
func CompareTrials(aTask string, aRepeat int, bTask string, bRepeat int) int {
	return cmp.Or(strings.Compare(aTask, bTask), cmp.Compare(aRepeat, bRepeat))
}

// heldOutSplits never yield trainable observations, whatever the plan says.
var heldOutSplits = map[string]bool{"heldout": true, "held-out": true, "held_out": true, "test": true}

// IsTrainable applies SPEC §1: only success/failure observations of a plan
// marked trainable, and never on a held-out split.
func IsTrainable(planTrainable bool, split, status string) bool {
	if !planTrainable || heldOutSplits[strings.ToLower(split)] {
		return false
	}
	return status == StatusSuccess || status == StatusFailure
}

// ValidStatus reports whether s is one of the four statuses.
func ValidStatus(s string) bool {
	switch s {
	case StatusSuccess, StatusFailure, StatusInfraError, StatusUnscored:
		return true
	}
	return false
}
