// Package producers is the seam between tpctl's model and the programs
// whose output it imports (issue 31). A producer is a reader of its native
// output, a drafter of its planned set, a versioned outcome table, a
// converter of its transcripts into tpctl's trajectory protocol, and the
// protocol evidence it can offer. Each producer is one wing under
// producers/ (producers/harbor for Harbor); the model packages (outcome,
// attempt, transcript, snapshot, importer, round, …) never import a wing
// (TestLayers), and the registry of producers is built explicitly in
// cmd/tpctl (producers.go there), one line per producer.
//
// docs/layout.md, "Adding a producer", names the files a new one touches.
package producers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/attempt"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/transcript"
)

// Producer is one producer's wing, as the model uses it. Its methods must
// be safe to call from several goroutines (the importer reads attempts in
// parallel).
type Producer interface {
	// Format is the producer's name as plan.source.format writes it
	// ("harbor"); internal/formats lists its validated revisions.
	Format() string
	// Name is the producer as a person calls it in a message ("Harbor").
	Name() string
	// Outcomes is the producer's versioned outcome table: the rows
	// `tpctl explain outcomes` prints, and the version every snapshot it
	// judged records as outcome_rules.
	Outcomes() outcome.Table
	// Detect reports whether root holds the producer's output (`tpctl
	// plan init --root` picks the producer that finds some).
	Detect(root string) bool
	// Draft drafts the import plan of the planned set under root.
	Draft(ctx context.Context, root string, opts DraftOptions) (*Draft, error)
	// ReadAttempt reads and judges one attempt. loc is the attempt's
	// locator: the plan's attempts[].dir, a slash-separated path
	// relative to the root (for Harbor, the trial folder). Files are
	// read only through files. A record that is missing or unreadable is
	// an attempt judged so (outcome.ReasonResultMissing,
	// outcome.ReasonResultInvalid), never an error.
	ReadAttempt(files Files, loc string) attempt.Attempt
	// Transcript lists the parts of the attempt's trajectory body under
	// root (absolute paths, each resolved without following a symlink),
	// in order, with notes about it. No parts and no error: the attempt
	// has no transcript. An error is a transcript that cannot be read,
	// skipped with the error as its reason.
	Transcript(root, loc string) (parts []transcript.Part, notes []Note, err error)
	// CheckJob compares the plan with what the producer's own files say
	// it planned, when root holds such a declaration; nil, nil when it
	// does not.
	CheckJob(root string, plan PlannedSet) (*JobCheck, error)
}

// Streaming is implemented by a producer whose ReadAttempt keeps nothing
// once it returns (Harbor: one small record per attempt), so an import of
// its plans holds a few MiB whatever their size. A producer that indexes
// a whole log and keeps it for the attempts to come (Inspect, lm-eval)
// does not implement it.
type Streaming interface {
	StreamsAttempts() bool
}

// Files is an import's root as a producer reads it.
type Files interface {
	// ReadFile reads rel (slash-separated, relative to the root; every
	// component is checked at the moment of the read and a symlink
	// anywhere is refused) up to max bytes. The bytes are the caller's
	// only until its next ReadFile. A missing file's error satisfies
	// errors.Is(err, fs.ErrNotExist) or is a *safefs.PathError with
	// CodeMissing. Transient faults (a descriptor limit) are retried by
	// the importer, and one it cannot get past fails the import whatever
	// the producer makes of the error.
	ReadFile(rel string, max int64) ([]byte, error)
}

// Note is a warning about one attempt's transcript.
type Note struct {
	Code    string
	Message string
}

// DraftOptions narrow a draft to one plan.
type DraftOptions struct {
	// Agent and Model pick one (agent, model) pair of a run with several.
	Agent, Model string
	// Split is the plan's split ("" leaves a placeholder).
	Split string
	// Task and Log pick one run of a folder holding several (Inspect: one
	// log per task × model); Scorer names the primary scorer of a run
	// with several. A producer without such choices ignores them.
	Task, Log, Scorer string
	// Metric and Filter pick the metric and filter an lm-eval task is
	// judged by, when it has several.
	Metric, Filter string
}

// Draft is a drafted import plan and what plan init says about it.
type Draft struct {
	Plan *planfile.Plan
	// Skipped are folders or files under the root the draft left out.
	Skipped []Skip
	// Warnings are things a person must check by hand.
	Warnings []string
	// Notes say what was filled in from the producer's files and how.
	Notes []string
	// Summary is plan init's closing line ("drafted …").
	Summary string
	// Proposed are the protocol digests the draft proposed from the
	// producer's own files: marked as proposed, never as certified.
	Proposed []Proposal
	// Unknown are the settings the producer's files do not record, which
	// plan check would warn about (settings_incomplete): plan init says
	// how to set each.
	Unknown []Unknown
}

// Unknown is one setting a draft could not know.
type Unknown struct {
	// Category is the settings category it belongs to
	// (planfile.SettingsCategories).
	Category string
	// Pointer and Example are a plan set that records it.
	Pointer, Example string
}

// Skip is one thing a draft left out, and why.
type Skip struct {
	Dir    string
	Reason string
}

// Proposal is one protocol value a draft proposed.
type Proposal struct {
	// Pointer is the plan field (JSON pointer, e.g.
	// "/protocol/dataset_digest").
	Pointer string
	Value   string
	// Rule names how it was derived (docs/digest-rules.md).
	Rule string
}

// PlannedSet is the plan an import compares with the producer's own
// declaration.
type PlannedSet struct {
	// Sample is up to 64 of the plan's attempt locators whose folders
	// exist, to find the producer's run they belong to.
	Sample []string
	// Trials is the number of planned trials.
	Trials int
	// Tasks yields the plan's tasks; nil yields none.
	Tasks PlannedTasks
	// Settings are the plan's settings (lm-eval: the metric and filter
	// the plan judges by).
	Settings map[string]any
}

// PlannedTasks calls fn with each of the plan's tasks in canonical order
// until fn returns false. It reads the plan again, streamed, each time it
// is called: an import keeps no state per task (at a million trials that
// was most of its memory), so only a producer that compares every task
// with its own declaration pays for them, and only then. The error is the
// plan's, unreadable the second time.
type PlannedTasks func(fn func(PlannedTask) bool) error

// PlannedTask is one task of the plan.
type PlannedTask struct {
	Name string
	// Trials is the number of its planned trials.
	Trials int
	// Dirs are up to MaxTaskDirs of its attempt locators, for a producer
	// to name the task as its own files do.
	Dirs []string
}

// TaskList is the PlannedTasks of a list held in memory (tests, small
// plans).
func TaskList(tasks ...PlannedTask) PlannedTasks {
	return func(fn func(PlannedTask) bool) error {
		for _, t := range tasks {
			if !fn(t) {
				break
			}
		}
		return nil
	}
}

// MaxTaskDirs bounds PlannedTask.Dirs.
const MaxTaskDirs = 4

// JobCheck is what the producer's own declaration of a run says about a
// plan.
type JobCheck struct {
	// Facts are the producer's own figures, shown beside tpctl's
	// (Harbor: *plandraft.JobFacts, the import's "harbor_job").
	Facts any
	// Differs, when not empty, says how the plan differs from the
	// planned set the run declared (warning plan_differs_from_job).
	Differs string
	// Warnings are the producer's own warnings about its figures (Inspect:
	// producer_counts_differ, a header whose counts its log's body does
	// not bear out). They stay warnings under --strict.
	Warnings []Note
}

// Registry is the producers tpctl knows, in the order they were added:
// detection tries them in that order.
type Registry struct {
	list []Producer
}

// NewRegistry returns a registry of ps. Two producers of one format are a
// programming error.
func NewRegistry(ps ...Producer) (*Registry, error) {
	r := &Registry{}
	for _, p := range ps {
		if p == nil || p.Format() == "" {
			return nil, errors.New("producers: a producer without a format")
		}
		if r.Lookup(p.Format()) != nil {
			return nil, fmt.Errorf("producers: format %q registered twice", p.Format())
		}
		r.list = append(r.list, p)
	}
	return r, nil
}

// All returns the producers in registration order.
func (r *Registry) All() []Producer { return slices.Clone(r.list) }

// Formats returns the formats of the producers in registration order.
func (r *Registry) Formats() []string {
	if r == nil {
		return nil
	}
	out := make([]string, len(r.list))
	for i, p := range r.list {
		out[i] = p.Format()
	}
	return out
}

// Lookup returns the producer of format, or nil.
func (r *Registry) Lookup(format string) Producer {
	if r == nil {
		return nil
	}
	for _, p := range r.list {
		if p.Format() == format {
			return p
		}
	}
	return nil
}

// UnknownFormatError is a format no registered producer reads.
type UnknownFormatError struct {
	Format string
	Known  []string
}

func (e *UnknownFormatError) Error() string {
	return fmt.Sprintf("no producer reads source format %q (tpctl reads %s)", e.Format, strings.Join(e.Known, ", "))
}

// For returns the producer of format, or an *UnknownFormatError.
func (r *Registry) For(format string) (Producer, error) {
	if r == nil {
		return nil, errors.New("no producers were given to read source format " + fmt.Sprintf("%q", format))
	}
	if p := r.Lookup(format); p != nil {
		return p, nil
	}
	return nil, &UnknownFormatError{Format: format, Known: r.Formats()}
}

// Detect returns the producers whose output is under root, in
// registration order.
func (r *Registry) Detect(root string) []Producer {
	var out []Producer
	for _, p := range r.list {
		if p.Detect(root) {
			out = append(out, p)
		}
	}
	return out
}

// Reasons returns every reason code of every producer's table once, in
// registration and table order.
func (r *Registry) Reasons() []string {
	var out []string
	for _, p := range r.list {
		for _, c := range p.Outcomes().Reasons() {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}
