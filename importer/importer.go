// Package importer turns a producer's output (a Harbor job folder, …),
// listed by an import plan, into a saved snapshot: it re-validates the
// plan, reads and judges every attempt through the plan's producer
// (producers.Producer, chosen by source.format from the registry it is
// given; it never imports a wing) with the same path safety as plan
// check, and writes observations in canonical order, reading in parallel
// with a bounded pool.
package importer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/attempt"
	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
)

// Options configure one import.
type Options struct {
	// Producers are the producers tpctl reads; the plan's source.format
	// picks the one that reads and judges its attempts.
	Producers *producers.Registry
	PlanPath  string
	Root      string
	Out       string
	// AllowUnverifiedFormat accepts a Harbor revision tpctl was not
	// validated against; the snapshot then records format_verified false.
	AllowUnverifiedFormat bool
	// Workers bounds parallel reads (default: 4 × GOMAXPROCS, at most 32).
	Workers int
	// Transcripts, when non-nil, adds redacted trajectories (SPEC §3).
	Transcripts *TranscriptOptions
	// Progress, when set, is told after each trial is judged and when
	// the snapshot is being saved.
	Progress func(Progress)
	// Scanner is the invocation's registry of secrets (built once in
	// cmd/tpctl from the environment and the config file): the gate of
	// every identity field and payload the import writes. nil: the
	// credential patterns only (this package never reads the process
	// environment).
	Scanner *redact.Scanner
	// Strict makes plan_differs_from_job an error: the import stops and
	// writes nothing.
	Strict bool
	// WarningsPerCode, when above 0, keeps only the first that many
	// warnings of each code in Result.Warnings and counts the rest in
	// Result.More: a terminal shows a few of each, and a job missing tens
	// of thousands of folders then costs no memory for them. 0 keeps all.
	WarningsPerCode int
	// Visitor, when set, is called as the import starts judging and
	// returns the Visit that is handed every planned trial in canonical
	// order as the import saves it: the observation as written to
	// observations.jsonl (nil for a trial with no attempt), the same one
	// snapshot.OpenTrials hands a Visit over the saved snapshot, so a
	// summary of the round needs no second read. The observation is the
	// Visit's during the call only (unlike OpenTrials', it is reused for
	// the next trial: copy what is kept). Trajectory is always false:
	// trajectories are chosen after the last observation. A
	// streamed import that falls back to the loaded path calls Visitor
	// again: start over. What the Visit sees is provisional until Import
	// returns without an error; an error from it ends the import, and
	// nothing is saved.
	Visitor func() snapshot.Visit

	// requireFolders is set by Import (the CLI's import): a plan none of
	// whose folders exists is refused. The eval runner's ImportPlan keeps
	// counting such trials unscored, since its own runs made the folders.
	requireFolders bool
}

// Warning is a non-fatal observation about the import, for the summary.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Result describes a saved snapshot.
type Result struct {
	Dir      string             `json:"path"`
	Manifest *snapshot.Manifest `json:"-"`
	Warnings []Warning          `json:"warnings"`
	// Skipped lists trajectories that were not exported, with reasons.
	Skipped []Warning `json:"skipped_trajectories"`
	// Job is what the producer's own files say about the run (for Harbor,
	// a *plandraft.JobFacts: planned trials, Harbor's counts); nil when
	// --root holds no declaration for the plan.
	Job any `json:"harbor_job,omitempty"`
	// Dataset is which part of the dataset the round's rates stand on, as
	// the plan's settings.dataset records it (snapshot.DatasetScope); nil
	// when it does not.
	Dataset *snapshot.DatasetScope `json:"dataset,omitempty"`
	// More counts, by code, the warnings Options.WarningsPerCode left out.
	More map[string]int `json:"-"`
}

// NoFoldersError is a --root under which not one of the plan's attempt
// folders exists: almost always the wrong --root.
type NoFoldersError struct {
	Root     string
	Attempts int
	Example  string
}

func (e *NoFoldersError) Error() string {
	return fmt.Sprintf("none of the plan's %d attempt folders exists under --root %q (e.g. %q)", e.Attempts, e.Root, e.Example)
}

// PlanDiffersError is plan_differs_from_job under Options.Strict.
type PlanDiffersError struct{ Message string }

func (e *PlanDiffersError) Error() string { return e.Message }

// maxJobSample bounds the attempt folders read to find the job a plan's
// trials belong to.
const maxJobSample = 64

// scanner is Scanner, or the credential patterns alone when it is nil.
func (o Options) scanner() *redact.Scanner {
	if o.Scanner == nil {
		return redact.NewScanner(nil)
	}
	return o.Scanner
}

// PlanInvalidError means the plan has error findings; nothing was written.
type PlanInvalidError struct {
	Report *planfile.Report
}

func (e *PlanInvalidError) Error() string {
	n := 0
	for _, f := range e.Report.Findings {
		if f.Severity == planfile.SeverityError {
			n++
		}
	}
	return fmt.Sprintf("plan %q is invalid (%d errors); nothing was imported", e.Report.Plan, n)
}

// PlanUnreadableError means the plan file could not be read at all.
type PlanUnreadableError struct{ Err error }

func (e *PlanUnreadableError) Error() string { return e.Err.Error() }
func (e *PlanUnreadableError) Unwrap() error { return e.Err }

// attemptJob is one attempt to read and judge.
type attemptJob struct {
	tw      *trialWork
	retry   int
	dir     string
	outcome snapshot.AttemptOutcome
	ev      snapshot.Evidence
	unknown int
	// invalid is the parse error of a result_invalid attempt: the SPEC
	// promises it to the user, and observations carry only the code.
	invalid string
	// taskName is the record's own task name, compared with the plan's.
	taskName string
	// record is the attempt's native record, relative to the root.
	record string
	// secret is an identity field of the record carrying a known secret.
	secret error
	// evidenceWarnings are evidence values dropped for their form.
	evidenceWarnings []string
	// readFailed says the read of result.json failed (a streamed import
	// then asks plan check's folder rules why).
	readFailed bool
	// fault is a read that failed for a reason not about the file
	// (*ReadError, or the cancellation that stopped its retries): it
	// fails the import.
	fault error
	// masked is the verifier file (relative to the root) in whose words
	// the secret gate masked something; "" when none.
	masked string
}

// maxInvalidWarnings bounds the result_invalid warnings kept with their
// parse error, so a job of 100,000 broken files cannot grow memory; the
// rest are counted in one last warning.
const maxInvalidWarnings = 1000

// Import validates the plan, judges every attempt and writes the snapshot
// to opts.Out, which must not exist. Nothing is visible at opts.Out unless
// the whole snapshot was written.
//
// A plan Scan vouches for is streamed: its trials are read from the file
// and from the saved plan.json one at a time, so memory does not grow
// with the plan. Any other plan, and any import that fails, takes the
// loaded path (planfile.Load), which decides the report, the findings and
// the error; the snapshot is the same either way (docs/plan-format.md).
func Import(ctx context.Context, opts Options) (*Result, error) {
	opts.requireFolders = true
	if err := safefs.MustNotExist(opts.Out); err != nil {
		return nil, err
	}
	var prior []safefs.Leftover
	if opts.Transcripts == nil {
		res, left, err, ok := importStreamed(ctx, opts)
		if ok {
			return res, err
		}
		prior = left
	}
	return importLoaded(ctx, opts, prior)
}

// importLoaded is the loaded path: the whole plan in memory, as
// planfile.Load reports it.
func importLoaded(ctx context.Context, opts Options, prior []safefs.Leftover) (*Result, error) {
	plan, rep, err := planfile.Load(opts.PlanPath, planfile.Options{Context: ctx, Root: opts.Root, AllowUnverifiedFormat: opts.AllowUnverifiedFormat,
		Scanner: opts.scanner()})
	if err != nil {
		return nil, &PlanUnreadableError{Err: err}
	}
	if plan == nil || planfile.HasErrors(rep.Findings) {
		return nil, &PlanInvalidError{Report: rep}
	}
	return importPlan(ctx, plan, rep, opts, prior)
}

// ImportPlan is Import for a plan already loaded and checked by the caller
// (the eval runner builds its resolved plan in memory).
func ImportPlan(ctx context.Context, plan *planfile.Plan, opts Options) (*Result, error) {
	if err := safefs.MustNotExist(opts.Out); err != nil {
		return nil, err
	}
	fs := planfile.Check(plan, planfile.Options{Root: opts.Root, AllowUnverifiedFormat: opts.AllowUnverifiedFormat})
	rep := &planfile.Report{Plan: opts.PlanPath, Trials: len(plan.Trials), Findings: fs, Valid: !planfile.HasErrors(fs)}
	if !rep.Valid {
		return nil, &PlanInvalidError{Report: rep}
	}
	return importPlan(ctx, plan, rep, opts, nil)
}

// errDecline stops a streamed import that met something only the loaded
// path reports exactly.
var errDecline = errors.New("the streamed import declined")

// importStreamed imports a plan planfile.Scan vouches for. ok is false
// when it declined, before or during the run, or failed in a way the
// loaded path must decide: nothing is left at opts.Out, and left holds
// the stale temporary folders its writer found, for the loaded path's
// warnings. Cancellation is final (ok true).
func importStreamed(ctx context.Context, opts Options) (res *Result, left []safefs.Leftover, err error, ok bool) {
	if fi, err := os.Stat(opts.Root); err != nil || !fi.IsDir() {
		return nil, nil, nil, false // root_invalid
	}
	scanner := opts.scanner()
	sp, ok := planfile.Scan(opts.PlanPath, planfile.Options{Context: ctx, Root: opts.Root, AllowUnverifiedFormat: opts.AllowUnverifiedFormat, Scanner: scanner})
	if !ok {
		return nil, nil, nil, false
	}
	defer sp.Close()
	// A plan out of canonical order is sorted in scratch files beside the
	// snapshot, on the disk the user chose for it.
	sp.SortIn(filepath.Dir(filepath.Clean(opts.Out)))
	head := sp.Head()
	if checkPlanIdentity(scanner, head) != nil {
		return nil, nil, nil, false
	}
	settings, err := sp.CanonicalSettings()
	if err != nil {
		return nil, nil, nil, false
	}
	prod, err := opts.Producers.For(head.Source.Format)
	if err != nil {
		return nil, nil, nil, false
	}
	verified := formats.Validated(head.Source.Format, head.Source.Revision)
	w, err := snapshot.CreateStreamed(opts.Out, snapshot.Options{FormatVerified: verified, OutcomeRules: prod.Outcomes().Version, Scanner: scanner})
	if err != nil {
		return nil, nil, nil, false
	}
	res, err = func() (*Result, error) {
		pw, err := w.BeginPlan(planSummary(head), settings)
		if err != nil {
			return nil, err
		}
		run := newRun(opts, prod, head, verified, scanner, w)
		run.total = sp.Trials()
		run.found = sp.Findings()
		run.dirs = planfile.NewDirChecker(opts.Root)
		// The trials are judged as plan.json is written: the plan file's
		// second read hands each trial, with its index in the file, the
		// moment its canonical bytes are made (in canonical order, sorted
		// on the way if need be), so no pass over the plan stands alone
		// before the first result.json is read.
		source := func(each func(planfile.Trial, int) error) error {
			if err := sp.WriteCanonical(pw, each); err != nil {
				pw.Abort()
				return err
			}
			return pw.Close()
		}
		// The job check reads the trials again, from the saved plan.json
		// (plannedTasks), when the producer compares them with its own
		// declaration.
		run.again = func(each func(planfile.Trial) error) error {
			f, err := w.OpenPlan()
			if err != nil {
				return err
			}
			defer f.Close()
			return planfile.ReadCanonicalTrials(f, each)
		}
		return run.judge(ctx, source)
	}()
	if err == nil {
		return res, nil, nil, true
	}
	w.Abort()
	if ctx.Err() != nil {
		return nil, nil, ctx.Err(), true
	}
	return nil, w.Leftovers(), nil, false
}

// planSummary is what the snapshot's manifest takes from the plan.
func planSummary(p *planfile.Plan) snapshot.PlanSummary {
	var s snapshot.PlanSummary
	s.Name, s.Split, s.Trainable = p.Name, p.Split, p.Trainable
	s.Source.Format, s.Source.Revision = p.Source.Format, p.Source.Revision
	s.Checkpoint = snapshot.Checkpoint{Ref: p.Checkpoint.Ref, ServedAs: p.Checkpoint.ServedAs}
	s.Protocol.DatasetDigest, s.Protocol.VerifierDigest = p.Protocol.DatasetDigest, p.Protocol.VerifierDigest
	s.Protocol.EnvironmentDigest, s.Protocol.HarnessDigest = p.Protocol.EnvironmentDigest, p.Protocol.HarnessDigest
	return s
}

func importPlan(ctx context.Context, plan *planfile.Plan, rep *planfile.Report, opts Options, prior []safefs.Leftover) (res *Result, err error) {
	scanner := opts.scanner()
	if err := checkPlanIdentity(scanner, plan); err != nil {
		return nil, err
	}
	planJSON, err := plan.NormalizedJSON()
	if err != nil {
		return nil, fmt.Errorf("failed to normalize the plan: %w", err)
	}
	prod, err := opts.Producers.For(plan.Source.Format)
	if err != nil {
		return nil, err
	}
	verified := formats.Validated(plan.Source.Format, plan.Source.Revision)
	w, err := snapshot.Create(opts.Out, planJSON, snapshot.Options{FormatVerified: verified, OutcomeRules: prod.Outcomes().Version, Scanner: scanner})
	if err != nil {
		return nil, err
	}
	planJSON = nil
	defer func() {
		if err != nil {
			w.Abort()
		}
	}()
	run := newRun(opts, prod, plan, verified, scanner, w)
	run.prior = prior
	run.found = rep.Findings

	trials := slices.Clone(plan.Trials)
	slices.SortFunc(trials, func(a, b planfile.Trial) int {
		return snapshot.CompareTrials(a.Task, a.Repeat, b.Task, b.Repeat)
	})
	run.total = len(trials)
	if opts.Transcripts != nil {
		if run.tr, err = newTranscriber(ctx, *opts.Transcripts, prod, opts.Root, scanner); err != nil {
			return nil, err
		}
		defer run.tr.close()
		run.trials = trials
	}
	run.again = func(each func(planfile.Trial) error) error {
		for _, t := range trials {
			t.Attempts = sortedAttempts(t)
			if err := each(t); err != nil {
				return err
			}
		}
		return nil
	}
	// Index: the plan's findings are already known (rep), so no finding
	// is built from a trial's place in the file.
	source := func(each func(planfile.Trial, int) error) error {
		return run.again(func(t planfile.Trial) error { return each(t, -1) })
	}
	return run.judge(ctx, source)
}

// importRun is one import's judging and its warnings.
type importRun struct {
	opts     Options
	prod     producers.Producer
	plan     *planfile.Plan // the plan's fields; its trials are not used
	verified bool
	scanner  *redact.Scanner
	w        *snapshot.Writer
	tr       *transcriber
	trials   []planfile.Trial // for the transcripts, canonical order
	total    int

	prior []safefs.Leftover
	// found are the plan's findings; a streamed import keeps those of the
	// folders it could not read (dirs) apart, compactly, in pointer order.
	found   []planfile.Finding
	dirs    *planfile.DirChecker
	missing []missingDir
	// missingDropped counts the missing folders left out of missing by
	// Options.WarningsPerCode.
	missingDropped int

	// attempts counts the plan's attempts; present those whose folder
	// exists (counted until the sample is full); sample is up to
	// maxJobSample existing folders, to find the producer's run they
	// belong to. again yields the plan's trials again, for the job
	// check's tasks (plannedTasks): nothing per task is held.
	attempts, present int
	sample            []string
	firstDir          string
	again             func(each func(planfile.Trial) error) error
	// visit is Options.Visitor's Visit for this pass over the trials;
	// visited is the observation handed to it, reused.
	visit   snapshot.Visit
	visited snapshot.Observation
	// recordName is the base name of the attempts' native records
	// ("result.json"), for the summary warnings.
	recordName string

	later                                                     []Warning // per-attempt warnings, in canonical order
	unknown, invalid, mismatched, badEvidence, maskedVerifier int
	done                                                      int
}

func newRun(opts Options, prod producers.Producer, plan *planfile.Plan, verified bool, scanner *redact.Scanner, w *snapshot.Writer) *importRun {
	return &importRun{opts: opts, prod: prod, plan: plan, verified: verified, scanner: scanner, w: w}
}

// windowTrials bounds the trials in flight between the reader of the
// plan and the writer of observations, per worker.
const windowTrials = 64

// judge reads and judges the trials source yields (canonical order,
// attempts by ascending retry, each with its index in the plan file) and
// finishes the snapshot. Workers keep reading while observations are
// written, in order, by this goroutine; at most windowTrials × workers
// trials are held.
func (r *importRun) judge(ctx context.Context, source func(each func(t planfile.Trial, index int) error) error) (*Result, error) {
	if r.opts.Visitor != nil {
		r.visit = r.opts.Visitor()
	}
	workers := r.opts.Workers
	if workers <= 0 {
		workers = min(4*runtime.GOMAXPROCS(0), 32)
	}
	// Each worker holds one descriptor while it reads; the rest of the
	// process (the snapshot being written, transcripts, the runtime,
	// standard streams) needs its own, so the workers stay below the
	// process's limit (a read that still hits it is retried, readFault).
	workers = max(1, min(workers, fdLimit()-reservedFDs))
	root, err := safefs.OpenRoot(r.opts.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	window := make(chan *trialWork, windowTrials*workers)
	jobs := make(chan *attemptJob, 4*workers)
	var wg sync.WaitGroup
	var srcErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(window)
		defer close(jobs)
		srcErr = source(func(t planfile.Trial, index int) error {
			// Err is polled as well as Done watched: a context may report
			// cancellation before it closes Done.
			if err := parent.Err(); err != nil {
				return err
			}
			tw := newTrialWork(t, index)
			select {
			case window <- tw:
			case <-ctx.Done():
				return ctx.Err()
			}
			for i := range tw.jobs {
				select {
				case jobs <- &tw.jobs[i]:
				case <-ctx.Done():
					// Unread attempts are never judged: the consumer sees
					// the cancellation and writes nothing from them.
					for range tw.jobs[i:] {
						tw.wg.Done()
					}
					return ctx.Err()
				}
			}
			return nil
		})
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			files := &attemptFiles{ctx: ctx, root: root, buf: &buf}
			for j := range jobs {
				judgeAttempt(r.prod, j, files, r.scanner)
				j.tw.wg.Done()
			}
		}()
	}
	for tw := range window {
		tw.wg.Wait()
		// A cancelled run holds unjudged attempts: report the
		// cancellation, never an observation built from them.
		if err = parent.Err(); err != nil {
			break
		}
		if err = ctx.Err(); err != nil {
			break
		}
		if err = r.emit(tw); err != nil {
			break
		}
		tw.recycle()
	}
	cancel()
	for range window {
	}
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	if srcErr != nil {
		return nil, srcErr
	}
	return r.finish(parent)
}

// trialWork is one trial in flight: its attempts are judged by the
// workers, and wg is done when all are.
type trialWork struct {
	t planfile.Trial
	// index is the trial's index in the plan file, for a finding's
	// pointer (checkDir).
	index int
	jobs  []attemptJob
	wg    sync.WaitGroup
}

// trialWorks are the trialWorks emitted, for the next trials: one with
// its attempts per trial was a quarter of an import's allocated bytes.
var trialWorks = sync.Pool{New: func() any { return new(trialWork) }}

// maxPooledAttempts bounds the attempts of a trialWork kept for reuse, so
// a rare trial of many retries does not stay pinned.
const maxPooledAttempts = 16

// newTrialWork is the work of trial t, at index in the plan file, its
// attempts not yet judged.
func newTrialWork(t planfile.Trial, index int) *trialWork {
	tw := trialWorks.Get().(*trialWork)
	tw.t, tw.index = t, index
	if cap(tw.jobs) < len(t.Attempts) {
		tw.jobs = make([]attemptJob, len(t.Attempts))
	}
	tw.jobs = tw.jobs[:len(t.Attempts)]
	for i, a := range t.Attempts {
		tw.jobs[i] = attemptJob{retry: a.Retry, dir: a.Dir, tw: tw}
	}
	tw.wg.Add(len(t.Attempts))
	return tw
}

// recycle gives tw back once its observation was written: its wg is done,
// so no worker holds one of its jobs, and nothing written points into it.
// A trialWork of a run that stopped is left to the garbage collector.
func (tw *trialWork) recycle() {
	clear(tw.jobs) // nothing of this trial stays reachable from the pool
	tw.t, tw.index, tw.jobs = planfile.Trial{}, 0, tw.jobs[:0]
	if cap(tw.jobs) > maxPooledAttempts {
		tw.jobs = nil
	}
	trialWorks.Put(tw)
}

// emit writes one judged trial's observation and collects its warnings.
func (r *importRun) emit(tw *trialWork) error {
	t, jobs := tw.t, tw.jobs
	if err := r.w.PlanTrial(t.Task, t.Repeat); err != nil {
		return err
	}
	index := tw.index
	if len(jobs) > 0 {
		for k := range jobs {
			if err := jobs[k].fault; err != nil {
				return fmt.Errorf("trial %s retry %d: %w", t.ID(), jobs[k].retry, err)
			}
		}
		for k := range jobs {
			job := &jobs[k]
			if job.readFailed && r.dirs != nil {
				if err := r.checkDir(job, index, k); err != nil {
					return err
				}
			}
		}
		for k := range jobs {
			r.attempts++
			if len(r.sample) < maxJobSample {
				// A file locator ("path#fragment") is present when its file is.
				rel, _ := planfile.LocatorPath(jobs[k].dir)
				if _, err := os.Lstat(filepath.Join(r.opts.Root, filepath.FromSlash(rel))); err == nil {
					r.present++
					r.sample = append(r.sample, jobs[k].dir)
				} else if r.firstDir == "" {
					r.firstDir = jobs[k].dir
				}
			}
		}
		obs := observation(t, jobs)
		for k := range jobs {
			job := &jobs[k]
			if job.secret != nil {
				var ie *redact.IdentityError
				if errors.As(job.secret, &ie) {
					ie.Where = fmt.Sprintf("trial %s retry %d %s", t.ID(), job.retry, job.record)
				}
				return job.secret
			}
			if job.masked != "" {
				if r.maskedVerifier++; r.maskedVerifier <= maxInvalidWarnings {
					r.later = append(r.later, Warning{"verifier_output_masked",
						fmt.Sprintf("trial %s retry %d: %s holds a known secret or credential; it was masked in the snapshot, and the import went on", t.ID(), job.retry, job.masked)})
				}
			}
			for _, msg := range job.evidenceWarnings {
				if r.badEvidence++; r.badEvidence <= maxInvalidWarnings {
					r.later = append(r.later, Warning{"evidence_invalid",
						fmt.Sprintf("trial %s retry %d: %s: %s", t.ID(), job.retry, job.record, msg)})
				}
			}
			r.unknown += job.unknown
			if r.recordName == "" && job.record != "" {
				r.recordName = path.Base(job.record)
			}
			// Identity comes from the plan only, but a result that
			// names another task usually means a wrong dir.
			if job.taskName != "" && job.taskName != t.Task {
				if r.mismatched++; r.mismatched <= maxInvalidWarnings {
					r.later = append(r.later, Warning{"task_mismatch",
						fmt.Sprintf("trial %s retry %d: %s names task %q, the plan says %q; the plan decides, so check that dir", t.ID(), job.retry, job.record, job.taskName, t.Task)})
				}
			}
			if job.invalid == "" {
				continue
			}
			if r.invalid++; r.invalid <= maxInvalidWarnings {
				r.later = append(r.later, Warning{outcome.ReasonResultInvalid,
					fmt.Sprintf("trial %s retry %d is unscored: %s", t.ID(), job.retry, job.invalid)})
			}
		}
		if err := r.w.Add(&obs); err != nil {
			return fmt.Errorf("trial %s: %w", t.ID(), err)
		}
		if r.visit != nil {
			// One observation reused: obs itself would move to the heap
			// for every trial, a Visit or none.
			r.visited = obs
			if err := r.visit(snapshot.PlannedTrial{Task: t.Task, Repeat: t.Repeat, Observation: &r.visited}); err != nil {
				return err
			}
		}
	} else if r.visit != nil {
		if err := r.visit(snapshot.PlannedTrial{Task: t.Task, Repeat: t.Repeat}); err != nil {
			return err
		}
	}
	r.done++
	r.progress(Progress{Phase: PhaseJudging, Done: r.done, Total: r.total})
	return nil
}

// Progress is one report of how far an import is.
type Progress struct {
	// Phase is PhaseJudging or PhaseSaving.
	Phase string
	// Done trials of Total are judged (PhaseJudging).
	Done, Total int
}

// The phases of an import Progress reports.
const (
	PhaseJudging = "judging trials"
	PhaseSaving  = "saving snapshot"
)

func (r *importRun) progress(p Progress) {
	if r.opts.Progress != nil {
		r.opts.Progress(p)
	}
}

// checkDir runs plan check's folder rules on an attempt of a streamed
// import whose read failed: a dir_missing is the warning Load would have
// given (at the trial's index in the file, index, and the attempt's, k,
// which Scan made sure is in ascending retry order); any error finding
// means Load would have refused the plan, so the import declines and the
// loaded path reports it.
func (r *importRun) checkDir(job *attemptJob, index, k int) error {
	f, bad := r.dirs.Check(job.dir)
	if !bad {
		return nil
	}
	if f.Severity == planfile.SeverityError || f.Code != planfile.CodeDirMissing {
		return errDecline
	}
	r.missing = append(r.missing, missingDir{trial: int32(index), attempt: int32(k), message: f.Message})
	if n := r.opts.WarningsPerCode; n > 0 && len(r.missing) >= 2*n+64 {
		// Only the first n in pointer order can be shown.
		r.missing = r.firstMissing(n)
	}
	return nil
}

// firstMissing sorts the missing folders in pointer order and keeps the
// first n, counting the rest as dropped.
func (r *importRun) firstMissing(n int) []missingDir {
	slices.SortFunc(r.missing, func(a, b missingDir) int {
		return cmp.Or(cmp.Compare(a.trial, b.trial), cmp.Compare(a.attempt, b.attempt))
	})
	if len(r.missing) <= n {
		return r.missing
	}
	r.missingDropped += len(r.missing) - n
	return slices.Clip(r.missing[:n])
}

// missingDir is a dir_missing finding of a streamed import: its pointer
// is /trials/<trial>/attempts/<attempt>/dir. A million-trial job can
// have tens of thousands; each costs about a third of a Finding.
type missingDir struct {
	trial, attempt int32
	message        string
}

func (m missingDir) finding() planfile.Finding {
	return planfile.Finding{Severity: planfile.SeverityWarning, Code: planfile.CodeDirMissing, Message: m.message,
		Pointer: "/trials/" + strconv.Itoa(int(m.trial)) + "/attempts/" + strconv.Itoa(int(m.attempt)) + "/dir"}
}

// findingWarnings appends the warnings of the plan's findings in Load's
// order: the streamed import's missing folders, put in pointer order
// (they come in canonical order, which is the file's only for a plan in
// order), are merged into the sorted plan findings one at a time.
func (r *importRun) findingWarnings(ws []Warning) []Warning {
	r.missing = r.firstMissing(len(r.missing))
	add := func(f planfile.Finding) {
		if f.Severity != planfile.SeverityError && f.Code != "revision_unverified" {
			ws = append(ws, Warning{f.Code, f.Pointer + ": " + f.Message})
		}
	}
	i := 0
	for _, m := range r.missing {
		f := m.finding()
		for ; i < len(r.found) && planfile.CompareFindings(r.found[i], f) <= 0; i++ {
			add(r.found[i])
		}
		add(f)
	}
	for _, f := range r.found[i:] {
		add(f)
	}
	r.missing = nil
	return ws
}

// finish adds the summary warnings, exports transcripts and commits.
func (r *importRun) finish(ctx context.Context) (*Result, error) {
	if r.opts.requireFolders && r.attempts > 0 && r.present == 0 {
		return nil, &NoFoldersError{Root: r.opts.Root, Attempts: r.attempts, Example: r.firstDir}
	}
	n := len(r.prior) + len(r.w.Leftovers()) + 1 + len(r.found) + len(r.missing) + len(r.later) + 7
	res := &Result{Dir: r.opts.Out, Warnings: make([]Warning, 0, n), Skipped: []Warning{}}
	if settings, err := json.Marshal(r.plan.Settings); err == nil {
		res.Dataset = (&snapshot.PlanSummary{Settings: settings}).DatasetScope()
	}
	if ws, err := r.jobCheck(res); err != nil {
		return nil, err
	} else {
		res.Warnings = append(res.Warnings, ws...)
	}
	for _, l := range append(slices.Clone(r.prior), r.w.Leftovers()...) {
		res.Warnings = append(res.Warnings, Warning{"stale_temp", l.Message()})
	}
	if !r.verified {
		res.Warnings = append(res.Warnings, Warning{"revision_unverified",
			fmt.Sprintf("%s revision %s is not a validated format; the snapshot records format_verified: false", r.prod.Name(), r.plan.Source.Revision)})
	}
	res.Warnings = r.findingWarnings(res.Warnings)
	res.Warnings = append(res.Warnings, r.later...)
	if r.mismatched > maxInvalidWarnings {
		res.Warnings = append(res.Warnings, Warning{"task_mismatch",
			fmt.Sprintf("%d more attempts' %s name a task other than the plan's", r.mismatched-maxInvalidWarnings, r.recordName)})
	}
	if r.maskedVerifier > maxInvalidWarnings {
		res.Warnings = append(res.Warnings, Warning{"verifier_output_masked",
			fmt.Sprintf("%d more attempts' verifier output held a known secret or credential, masked in the snapshot", r.maskedVerifier-maxInvalidWarnings)})
	}
	if r.badEvidence > maxInvalidWarnings {
		res.Warnings = append(res.Warnings, Warning{"evidence_invalid",
			fmt.Sprintf("%d more evidence values of the wrong form were recorded as null", r.badEvidence-maxInvalidWarnings)})
	}
	if r.invalid > maxInvalidWarnings {
		res.Warnings = append(res.Warnings, Warning{outcome.ReasonResultInvalid,
			fmt.Sprintf("%d more attempts are unscored because their %s could not be read (reason result_invalid in observations.jsonl)", r.invalid-maxInvalidWarnings, r.recordName)})
	}
	if r.unknown > 0 {
		res.Warnings = append(res.Warnings, Warning{"unknown_fields",
			fmt.Sprintf("%d fields unknown to this tpctl were ignored in %s files (newer %s output)", r.unknown, r.recordName, r.prod.Name())})
	}
	r.progress(Progress{Phase: PhaseSaving})
	if r.tr != nil {
		skipped, err := r.tr.export(ctx, r.trials, r.w)
		if err != nil {
			return nil, err
		}
		res.Skipped = skipped
	}
	m, err := r.w.Commit()
	if err != nil {
		return nil, err
	}
	if m.SharedVerifier > 0 {
		res.Warnings = append(res.Warnings, Warning{"shared_verifier",
			fmt.Sprintf("%d trials ran the verifier in the agent's own container (verifier_environment_mode \"shared\"): an agent could have written its own reward", m.SharedVerifier)})
	}
	res.Manifest = m
	if n := r.opts.WarningsPerCode; n > 0 {
		res.Warnings, res.More = firstOfEach(res.Warnings, n)
		if r.missingDropped > 0 {
			res.More[planfile.CodeDirMissing] += r.missingDropped
		}
	}
	return res, nil
}

// firstOfEach keeps the first n warnings of each code, in order, and
// counts the others by code.
func firstOfEach(ws []Warning, n int) ([]Warning, map[string]int) {
	seen := map[string]int{}
	more := map[string]int{}
	kept := ws[:0]
	for _, w := range ws {
		if seen[w.Code]++; seen[w.Code] <= n {
			kept = append(kept, w)
		} else {
			more[w.Code]++
		}
	}
	return kept, more
}

// sortedAttempts returns a copy of t's attempts by ascending retry, the
// order observations and trajectory selection use; the plan is not
// modified.
func sortedAttempts(t planfile.Trial) []planfile.Attempt {
	atts := slices.Clone(t.Attempts)
	slices.SortFunc(atts, func(a, b planfile.Attempt) int { return cmp.Compare(a.Retry, b.Retry) })
	return atts
}

// maxKeptBuffer is the largest read buffer a worker keeps for the next
// file: records are a few KiB, and an occasional large one (up to the
// producer's cap) must not stay pinned once per worker.
const maxKeptBuffer = 1 << 20

// attemptFiles is the root as a worker's producer reads it, one attempt
// at a time (producers.Files; judgeAttempt resets it for each): every
// read goes through safefs.Root, which refuses a symlink in any component
// at the moment of the read, into the worker's buffer, retried on
// transient faults (readWithRetry).
type attemptFiles struct {
	ctx  context.Context
	root *safefs.Root
	buf  *[]byte
	// fault is a read that failed for a reason not about the file
	// (*ReadError, or the cancellation that stopped its retries).
	fault error
	// failed lists the reads that failed for a reason about the file.
	failed []string
}

func (f *attemptFiles) ReadFile(rel string, max int64) ([]byte, error) {
	data, err := readWithRetry(f.ctx, rel, func() ([]byte, error) { return f.root.ReadFile(rel, *f.buf, max) })
	if cap(data) <= maxKeptBuffer && cap(data) > cap(*f.buf) {
		*f.buf = data[:0]
	}
	if err != nil {
		// readWithRetry returns its *ReadError as it is (a type check,
		// not errors.As, whose target would be allocated for every
		// missing file).
		if _, fault := err.(*ReadError); fault || f.ctx.Err() != nil {
			f.fault = err
		} else {
			f.failed = append(f.failed, rel)
		}
	}
	return data, err
}

// judgeAttempt reads and judges one attempt through its producer, and
// checks the identity values it would save against the secret gate.
// files is the worker's, reused for each of its attempts.
func judgeAttempt(prod producers.Producer, j *attemptJob, files *attemptFiles, scanner *redact.Scanner) {
	files.fault, files.failed = nil, files.failed[:0]
	a := prod.ReadAttempt(files, j.dir)
	if files.fault != nil {
		j.fault = files.fault
		return
	}
	// Only the record's own read counts: a producer also reads files an
	// attempt may well lack (the verifier's output).
	j.readFailed = slices.Contains(files.failed, a.Record) || (a.Record == "" && len(files.failed) > 0)
	j.record = a.Record
	o := a.Outcome
	j.outcome = snapshot.AttemptOutcome{
		Retry:         j.retry,
		Status:        string(o.Status),
		Reason:        o.Reason,
		Reward:        o.Reward,
		ExceptionType: o.ExceptionType,
		ResultSHA256:  a.Evidence.ResultSHA256,
		Timing:        a.Timing,
		Usage:         a.Usage,
		Agent:         a.Agent,
	}
	if o.Detail != "" {
		j.outcome.Detail = detailLine(scanner, o.Detail)
	}
	if o.Reason == outcome.ReasonResultInvalid {
		j.invalid = o.Detail
	}
	if v := a.Verifier; v != nil {
		text, masked := verifierText(scanner, v.Text)
		j.outcome.Verifier = &snapshot.VerifierOutput{Source: v.Source, Text: text}
		if masked {
			j.masked = path.Join(j.dir, v.Source)
		}
	}
	j.ev = a.Evidence
	j.unknown = a.UnknownFields
	j.taskName = a.Task
	j.evidenceWarnings = a.Warnings
	j.secret = checkIdentity(scanner, a.Identity)
}

// checkIdentity refuses the first identity value of a record that carries
// a known secret: such values go to the snapshot and the platform as they
// are, so one is refused (never its bytes kept).
func checkIdentity(scanner *redact.Scanner, fields []attempt.Field) error {
	for _, f := range fields {
		if err := scanner.CheckIdentity("", f.Name, f.Value); err != nil {
			return err
		}
	}
	return nil
}

// detailLine is the judge's detail as an observation keeps it: one line
// (control characters become spaces), masked by the outgoing-text gate
// first and then cut to snapshot.MaxDetailLen bytes, so a secret is never
// half-kept by the cut.
func detailLine(s *redact.Scanner, detail string) string {
	detail = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, detail)
	detail = strings.TrimSpace(s.Mask(detail))
	if len(detail) <= snapshot.MaxDetailLen {
		return detail
	}
	cut := snapshot.MaxDetailLen - len(" …")
	for cut > 0 && !utf8.RuneStart(detail[cut]) {
		cut--
	}
	return detail[:cut] + " …"
}

// verifierText is the verifier's words as an observation keeps them:
// masked by the outgoing-text gate first (a secret in verifier output is
// replaced, never a reason to refuse the import), then cut to
// snapshot.MaxVerifierText bytes at a line or character boundary; masked
// says the gate replaced something.
func verifierText(s *redact.Scanner, text string) (string, bool) {
	out := s.Mask(text)
	masked := out != text
	if len(out) <= snapshot.MaxVerifierText {
		return out, masked
	}
	cut := snapshot.MaxVerifierText - len(" …")
	if i := strings.LastIndexByte(out[:cut], '\n'); i > 0 {
		cut = i
	}
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return out[:cut] + " …", masked
}

// checkPlanIdentity refuses a plan whose identity fields (name, split,
// checkpoint, tasks, dirs) carry a known secret, naming the field by its
// JSON pointer. The snapshot writer checks the whole normalized plan
// again, settings included, before plan.json is written.
func checkPlanIdentity(s *redact.Scanner, p *planfile.Plan) error {
	// Pointers are built only on a hit: a plan has up to 100,000 trials.
	check := func(v string, ptr func() string) error {
		if v == "" || len(s.Scan("", v)) == 0 {
			return nil
		}
		return s.CheckIdentity("plan", ptr(), v)
	}
	for _, f := range []struct{ ptr, v string }{
		{"/name", p.Name}, {"/source/revision", p.Source.Revision}, {"/split", p.Split}, {"/checkpoint/ref", p.Checkpoint.Ref}, {"/checkpoint/served_as", p.Checkpoint.ServedAs},
	} {
		if err := check(f.v, func() string { return f.ptr }); err != nil {
			return err
		}
	}
	for i, t := range p.Trials {
		if err := check(t.Task, func() string { return "/trials/" + strconv.Itoa(i) + "/task" }); err != nil {
			return err
		}
		for k, a := range t.Attempts {
			if err := check(a.Dir, func() string { return "/trials/" + strconv.Itoa(i) + "/attempts/" + strconv.Itoa(k) + "/dir" }); err != nil {
				return err
			}
		}
	}
	return nil
}

// observation builds a trial's observation from its attempts (ascending
// retry); the highest retry is the current result.
func observation(t planfile.Trial, jobs []attemptJob) snapshot.Observation {
	cur := &jobs[len(jobs)-1]
	outs := make([]snapshot.AttemptOutcome, len(jobs))
	for i, j := range jobs {
		outs[i] = j.outcome
	}
	return snapshot.Observation{
		TrialID:         snapshot.TrialID(t.Task, t.Repeat),
		Task:            t.Task,
		Repeat:          t.Repeat,
		TrialAttempt:    cur.retry,
		Attempts:        len(jobs),
		Status:          cur.outcome.Status,
		Reason:          cur.outcome.Reason,
		Reward:          cur.outcome.Reward,
		ExceptionType:   cur.outcome.ExceptionType,
		Evidence:        cur.ev,
		AttemptOutcomes: outs,
	}
}

// errEnough ends a read of the plan's trials early.
var errEnough = errors.New("enough tasks")

// plannedTasks groups the trials source yields, in canonical order, by
// task: a task's trials are consecutive.
func plannedTasks(source func(each func(planfile.Trial) error) error) producers.PlannedTasks {
	return func(fn func(producers.PlannedTask) bool) error {
		var cur producers.PlannedTask
		err := source(func(t planfile.Trial) error {
			if cur.Trials > 0 && t.Task != cur.Name {
				if !fn(cur) {
					return errEnough
				}
				cur = producers.PlannedTask{}
			}
			cur.Name = t.Task
			cur.Trials++
			for _, a := range t.Attempts {
				if len(cur.Dirs) >= producers.MaxTaskDirs {
					break
				}
				cur.Dirs = append(cur.Dirs, a.Dir)
			}
			return nil
		})
		switch {
		case errors.Is(err, errEnough):
			return nil
		case err != nil:
			return &rereadError{err}
		case cur.Trials > 0:
			fn(cur)
		}
		return nil
	}
}

// rereadError is a failed read of the plan's trials again (plannedTasks),
// told apart from a failed read of the producer's own files.
type rereadError struct{ err error }

func (e *rereadError) Error() string { return "reading the plan's trials again: " + e.err.Error() }
func (e *rereadError) Unwrap() error { return e.err }

// jobCheck compares the plan with what the producer's own files say the
// run planned, when --root holds such a declaration.
func (r *importRun) jobCheck(res *Result) ([]Warning, error) {
	c, err := r.prod.CheckJob(r.opts.Root, producers.PlannedSet{Sample: r.sample, Trials: r.total, Tasks: plannedTasks(r.again), Settings: r.plan.Settings})
	var reread *rereadError
	switch {
	case errors.As(err, &reread):
		return []Warning{{"job_unreadable", fmt.Sprintf("the plan's trials could not be read again from the snapshot's %s, so the plan was not compared with the %s job's own files: %v", snapshot.PlanFile, r.prod.Name(), reread.err)}}, nil
	case err != nil:
		return []Warning{{"job_unreadable", fmt.Sprintf("the %s job's own files could not be read, so the plan was not compared with them: %v", r.prod.Name(), err)}}, nil
	}
	if c == nil {
		return nil, nil
	}
	res.Job = c.Facts
	var out []Warning
	if c.Differs != "" {
		if r.opts.Strict {
			return nil, &PlanDiffersError{Message: "plan_differs_from_job: " + c.Differs}
		}
		out = append(out, Warning{"plan_differs_from_job", c.Differs})
	}
	for _, n := range c.Warnings {
		out = append(out, Warning{n.Code, n.Message})
	}
	return out, nil
}
