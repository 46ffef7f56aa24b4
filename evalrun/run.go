package evalrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tuneplane/tpctl/importer"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor"
	"github.com/tuneplane/tpctl/producers/harbor/wing"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
)

// RunOptions configure one evaluation run.
type RunOptions struct {
	// PlanPath is the eval plan; Out the new output folder (its parent
	// must exist, it must not).
	PlanPath string
	Out      string
	// ToolVersion and ToolRevision identify the tpctl build in
	// execution.json.
	ToolVersion  string
	ToolRevision string
	// Env is the environment Harbor is started from (default os.Environ());
	// TUNEPLANE_* variables are never passed on.
	Env []string
	// Events receives each trial's start, end and the run's stop as
	// they happen (see Event); nil discards them.
	Events func(Event)
	// Now is the clock for execution records (default time.Now).
	Now func() time.Time
	// AllowUnverifiedFormat runs even when `harbor --version` does not
	// answer the plan's validated revision; execution.json records it.
	AllowUnverifiedFormat bool
	// KeepGoing runs every trial even after one that did not end scored
	// (timeout, Harbor failure, infra_error, unscored). A signal still
	// stops the run.
	KeepGoing bool
	// Transcripts, when non-nil, exports redacted trajectories into the
	// snapshot with the same code and rules as `tpctl import`.
	Transcripts *importer.TranscriptOptions
	// Scanner is the invocation's registry of secrets (built once in
	// cmd/tpctl): the plan check and the import gate with it. nil: the
	// credential patterns only.
	Scanner *redact.Scanner
}

// Result describes a finished (possibly partial) evaluation.
type Result struct {
	// Out is the output folder; Snapshot the snapshot inside it (empty
	// when the snapshot could not be written).
	Out      string `json:"out"`
	Snapshot string `json:"snapshot"`
	// Manifest is the snapshot's manifest (nil without a snapshot).
	Manifest *snapshot.Manifest `json:"-"`
	// Import has the importer's warnings.
	Import *importer.Result `json:"-"`
	// Planned, Started and NotRun count trials by what the coordinator did.
	Planned int `json:"planned"`
	Started int `json:"started"`
	NotRun  int `json:"not_run"`
	// Errors are the coordinator errors, as in execution-errors.json.
	Errors []ExecError `json:"errors"`
	// Interrupted names the signal that stopped the run, if any.
	Interrupted string `json:"interrupted,omitempty"`
}

// Complete reports whether every planned trial finished and was scored
// (success or failure): the only case `tpctl eval run` exits 0.
func (r *Result) Complete() bool {
	if r == nil || r.Manifest == nil {
		return false
	}
	c := r.Manifest.Counts
	return c.Expected > 0 && c.Success+c.Failure == c.Expected && len(r.Errors) == 0 && r.Interrupted == ""
}

// PlanInvalidError means the eval plan has error findings; nothing was
// started or written.
type PlanInvalidError struct{ Report *planfile.Report }

func (e *PlanInvalidError) Error() string {
	n := 0
	for _, f := range e.Report.Findings {
		if f.Severity == planfile.SeverityError {
			n++
		}
	}
	return fmt.Sprintf("eval plan %q is invalid (%d errors); nothing was started", e.Report.Plan, n)
}

// OutExistsError means the output folder already exists: a folder whose
// execution state is uncertain is never resumed or overwritten.
type OutExistsError struct {
	Out string
	Err error
}

func (e *OutExistsError) Error() string { return e.Err.Error() }
func (e *OutExistsError) Unwrap() error { return e.Err }

// HarborNotFoundError means the Harbor command cannot be found or run.
type HarborNotFoundError struct {
	Command string
	Err     error
}

func (e *HarborNotFoundError) Error() string {
	return fmt.Sprintf("harbor command %q not found: %v", e.Command, e.Err)
}
func (e *HarborNotFoundError) Unwrap() error { return e.Err }

// HarborVersionError means the installed Harbor does not answer
// `--version` with the plan's validated revision's version (or does not
// answer at all); nothing was started or written.
type HarborVersionError struct {
	Command  string
	Got      string // the answer, or "unknown"
	Want     string // the version of the plan's revision
	Revision string
}

func (e *HarborVersionError) Error() string {
	if e.Got == VersionUnknown {
		return fmt.Sprintf("cannot tell which Harbor %q is: `%s --version` did not answer; the plan needs Harbor %s (version %s)",
			e.Command, e.Command, revisionName(e.Revision), e.Want)
	}
	return fmt.Sprintf("installed Harbor %q is version %q, not %s (version %s) that the plan was validated for; nothing was started",
		e.Command, e.Got, revisionName(e.Revision), e.Want)
}

// MissingEnvError lists agent.env names that are not set.
type MissingEnvError struct{ Names []string }

func (e *MissingEnvError) Error() string {
	return fmt.Sprintf("environment variables named in execution.agent.env are not set: %s", strings.Join(e.Names, ", "))
}

// InterruptedError means a signal stopped the run; the partial results
// were saved when Result.Snapshot is set. It unwraps to the context's
// cause, so the CLI can tell SIGINT from SIGTERM.
type InterruptedError struct{ Cause error }

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("evaluation stopped: %v", e.Cause)
}
func (e *InterruptedError) Unwrap() error { return e.Cause }

// Run checks the plan, runs every trial one at a time through Harbor and
// saves the snapshot (see the package documentation for the order). The
// Result is non-nil once the output folder exists, even with an error.
func Run(ctx context.Context, opts RunOptions) (*Result, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Env == nil {
		opts.Env = osEnviron()
	}
	events := opts.Events
	if events == nil {
		events = func(Event) {}
	}
	// Refuse an existing folder before reading anything else, so a typo
	// can never touch an earlier run.
	if err := safefs.MustNotExist(opts.Out); err != nil {
		return nil, &OutExistsError{Out: opts.Out, Err: err}
	}
	ev, rep, err := CheckPlan(opts.PlanPath, opts.Scanner)
	if err != nil {
		return nil, err
	}
	if ev == nil {
		return nil, &PlanInvalidError{Report: rep}
	}
	return ev.run(ctx, opts, events)
}

// runState is the coordinator's bookkeeping for one run.
type runState struct {
	ev     *Eval
	opts   RunOptions
	out    string
	exec   executionRecord
	errs   errorsRecord
	events func(Event)
}

func (ev *Eval) run(ctx context.Context, opts RunOptions, events func(Event)) (*Result, error) {
	pre, err := ev.prepare(ctx, opts)
	if err != nil {
		return nil, err
	}
	res, st, err := ev.create(opts, pre, events)
	if err != nil {
		return res, err
	}
	started, err := st.runAll(ctx, res, pre)
	if err != nil {
		return res, err
	}
	return st.save(ctx, res, started)
}

// prepared is what a run resolved and checked before creating anything.
type prepared struct {
	env        []string // Harbor's environment
	harborPath string   // the Harbor command, absolute
	out        string   // the output folder, absolute
	version    string   // what `harbor --version` answered
	want       string   // the version the plan's revision expects
	verified   bool     // version is want
	configs    [][]byte // each trial's TrialConfig, validated
}

// prepare checks everything that can fail without creating a file: the
// agent's environment, the Harbor command and its version, and every
// generated TrialConfig.
func (ev *Eval) prepare(ctx context.Context, opts RunOptions) (*prepared, error) {
	env := childEnv(opts.Env)
	var missing []string
	for _, n := range ev.Exec.Agent.Env {
		if v, ok := lookupEnv(env, n); !ok || v == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, &MissingEnvError{Names: missing}
	}
	command := ev.Exec.Command()
	if strings.Contains(command, "/") && !filepath.IsAbs(command) {
		command = filepath.Join(ev.PlanDir, command)
	}
	harborPath, err := exec.LookPath(command)
	if err != nil {
		return nil, &HarborNotFoundError{Command: ev.Exec.Command(), Err: err}
	}
	if harborPath, err = filepath.Abs(harborPath); err != nil {
		return nil, &HarborNotFoundError{Command: ev.Exec.Command(), Err: err}
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return nil, fmt.Errorf("failed to resolve output folder %q: %w", opts.Out, err)
	}
	if t, _, err := ev.Exec.endpointTarget(); err == nil && t.HostEnv && ev.Exec.Model.Endpoint != "" {
		// The agent looks the variable up in Harbor's own environment.
		env = append(env, t.Env+"="+ev.Exec.Model.Endpoint)
	}
	// Which Harbor is installed decides the format of everything it
	// writes: check it before anything is created.
	version := harborVersion(ctx, opts.Scanner, harborPath, ev.PlanDir, env)
	want, verified := checkHarborVersion(ev.Exec.Harbor.Revision, version)
	if !verified && !opts.AllowUnverifiedFormat {
		return nil, &HarborVersionError{Command: ev.Exec.Command(), Got: version, Want: want, Revision: ev.Exec.Harbor.Revision}
	}
	// Generate and validate every TrialConfig before creating anything.
	trialsDir := filepath.Join(out, TrialsDir)
	configs := make([][]byte, len(ev.Trials))
	for i, t := range ev.Trials {
		data, err := ev.Exec.TrialConfig(t.Name, t.TaskDir, trialsDir).Marshal()
		if err != nil {
			return nil, err
		}
		if fs := validateTrialConfig(ev.Exec.Harbor.Revision, data, ""); len(fs) > 0 {
			return nil, fmt.Errorf("trial %s: generated TrialConfig is invalid at %s: %s", t.ID(), fs[0].Pointer, fs[0].Message)
		}
		configs[i] = data
	}
	return &prepared{env: env, harborPath: harborPath, out: out, version: version, want: want, verified: verified, configs: configs}, nil
}

// create makes the output folder, writes the TrialConfigs and the first
// execution records. A nil Result means nothing was created.
func (ev *Eval) create(opts RunOptions, pre *prepared, events func(Event)) (*Result, *runState, error) {
	out := pre.out
	// os.Mkdir (not MkdirAll) fails if the folder appeared meanwhile.
	if err := os.Mkdir(out, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, nil, &OutExistsError{Out: opts.Out, Err: fmt.Errorf("%q already exists; choose a new output folder (tpctl never overwrites or resumes one)", opts.Out)}
		}
		return nil, nil, fmt.Errorf("failed to create output folder %q: %w", opts.Out, err)
	}
	res := &Result{Out: opts.Out, Planned: len(ev.Trials), Errors: []ExecError{}}
	for _, d := range []string{configsDir, logsDir, TrialsDir} {
		if err := os.Mkdir(filepath.Join(out, d), 0o755); err != nil {
			return res, nil, fmt.Errorf("failed to create %s in %q: %w", d, opts.Out, err)
		}
	}
	for i, t := range ev.Trials {
		if err := safefs.WriteNew(filepath.Join(out, configsDir, t.Name+".json"), pre.configs[i], 0o644); err != nil {
			return res, nil, fmt.Errorf("failed to write the TrialConfig of %s: %w", t.ID(), err)
		}
	}
	if err := safefs.SyncDir(filepath.Join(out, configsDir)); err != nil {
		return res, nil, err
	}
	st := &runState{ev: ev, opts: opts, out: out, events: events,
		errs: errorsRecord{Format: errorsFormat, Errors: []ExecError{}}}
	st.exec = executionRecord{
		Format: executionFormat,
		Plan:   planRef{Path: opts.PlanPath, SHA256: ev.PlanSHA256, Trials: len(ev.Trials)},
		Tool:   toolRef{Name: "tpctl", Version: opts.ToolVersion, Revision: opts.ToolRevision},
		Harbor: harborRef{Command: ev.Exec.Command(), Path: pre.harborPath, Revision: ev.Exec.Harbor.Revision,
			Version: pre.version, ExpectedVersion: pre.want, VersionVerified: pre.verified,
			AllowUnverifiedFormat: opts.AllowUnverifiedFormat},
		Model:     ev.Exec.Model,
		Settings:  ev.Exec.Effective(),
		StartedAt: timestamp(opts.Now()),
		Trials:    make([]trialRecord, len(ev.Trials)),
	}
	for i, t := range ev.Trials {
		st.exec.Trials[i] = trialRecord{TrialID: t.ID(), Task: t.Task, Repeat: t.Repeat, Name: t.Name, State: statePending}
	}
	// Order of writing (SPEC §8): execution metadata first, then errors.
	if err := st.saveExec(); err != nil {
		return res, nil, err
	}
	if err := st.saveErrors(); err != nil {
		return res, nil, err
	}
	return res, st, nil
}

// runAll runs the trials in order until one does not end scored (unless
// --keep-going) or the context ends, then records what ran; started says
// which trials Harbor started.
func (st *runState) runAll(ctx context.Context, res *Result, pre *prepared) (started []bool, err error) {
	ev := st.ev
	stopped := false
	for i, t := range ev.Trials {
		if stopped || ctx.Err() != nil {
			break
		}
		ok, err := st.runTrial(ctx, i, t, pre.harborPath, pre.env)
		if err != nil {
			return nil, err
		}
		if !ok && i+1 < len(ev.Trials) && ctx.Err() == nil {
			e := Event{Kind: KeepingGoing, Index: i, Total: len(ev.Trials), TrialID: t.ID(), Name: t.Name}
			if !st.opts.KeepGoing {
				e.Kind, e.Remaining = Stopping, len(ev.Trials)-i-1
				stopped = true
			}
			st.events(e)
		}
	}
	// A trial was started when its record has a start time: runTrial
	// clears it again when Harbor could not be started.
	started = make([]bool, len(ev.Trials))
	for i := range ev.Trials {
		if st.exec.Trials[i].State == statePending {
			st.exec.Trials[i].State = stateNotRun
			res.NotRun++
		}
		started[i] = st.exec.Trials[i].StartedAt != nil
		if started[i] {
			res.Started++
		}
	}
	if ctx.Err() != nil {
		sig := fmt.Sprint(context.Cause(ctx))
		res.Interrupted = sig
		st.exec.Interrupted = &sig
	}
	fin := timestamp(st.opts.Now())
	st.exec.FinishedAt = &fin
	if err := st.saveExec(); err != nil {
		return nil, err
	}
	res.Errors = st.errs.Errors
	return started, nil
}

// save writes the resolved import plan of what ran and imports it as the
// run's snapshot.
func (st *runState) save(ctx context.Context, res *Result, started []bool) (*Result, error) {
	// Saving the partial results must not be cut short by the signal that
	// stopped the run.
	saveCtx := context.WithoutCancel(ctx)
	plan := st.ev.resolvedPlan(started)
	planPath := filepath.Join(st.out, ResolvedPlanFile)
	if err := writeJSON(planPath, plan); err != nil {
		return res, err
	}
	// eval runs Harbor itself, so its rounds are Harbor's: the import
	// reads them through Harbor's producer alone.
	harborOnly, err := producers.NewRegistry(wing.New())
	if err != nil {
		return res, err
	}
	imp, err := importer.ImportPlan(saveCtx, plan, importer.Options{
		Producers:   harborOnly,
		Scanner:     st.opts.Scanner,
		PlanPath:    planPath,
		Root:        st.out,
		Out:         filepath.Join(st.out, snapshotDir),
		Transcripts: st.opts.Transcripts,
	})
	if err != nil {
		return res, fmt.Errorf("failed to save the snapshot of %q: %w", st.opts.Out, err)
	}
	res.Snapshot = filepath.Join(st.opts.Out, snapshotDir)
	res.Import = imp
	res.Manifest = imp.Manifest
	if ctx.Err() != nil {
		return res, &InterruptedError{Cause: context.Cause(ctx)}
	}
	return res, nil
}

// runTrial runs one trial and records it. ok is false when the trial
// must stop the run; err only for failures to write tpctl's own records.
func (st *runState) runTrial(ctx context.Context, i int, t PlannedTrial, harborPath string, env []string) (ok bool, err error) {
	rec := &st.exec.Trials[i]
	logPath := filepath.Join(st.out, logsDir, t.Name+".log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, fmt.Errorf("failed to create the log of trial %s: %w", t.ID(), err)
	}
	defer logf.Close()
	now := timestamp(st.opts.Now())
	rec.State, rec.StartedAt = stateRunning, &now
	if err := st.saveExec(); err != nil {
		return false, err
	}
	st.events(Event{Kind: TrialStarted, Index: i, Total: len(st.ev.Trials), TrialID: t.ID(), Name: t.Name, Limit: st.ev.Exec.TrialTimeout()})
	cfgPath := filepath.Join(st.out, configsDir, t.Name+".json")
	cr := runChild(ctx, childSpec{
		Path:   harborPath,
		Args:   []string{"trial", "start", "-c", cfgPath, "--trials-dir", filepath.Join(st.out, TrialsDir), "--trial-name", t.Name},
		Dir:    st.out,
		Env:    env,
		Output: logf,
		Limit:  st.ev.Exec.TrialTimeout(),
		Grace:  st.ev.Exec.CleanupGrace(),
	})
	if cr.NotStarted {
		// Never started: the trial stays missing (no attempt).
		rec.StartedAt = nil
	}
	_ = logf.Sync()
	fin := timestamp(st.opts.Now())
	dur := cr.Ended.Sub(cr.Started).Seconds()
	rec.FinishedAt, rec.DurationSec = &fin, &dur
	if cr.ExitCode >= 0 {
		code := cr.ExitCode
		rec.ExitCode = &code
	}
	if cr.Signal != "" {
		s := cr.Signal
		rec.Signal = &s
	}
	e := st.classify(t, cr, context.Cause(ctx))
	if e == nil {
		rec.State = stateFinished
		o := st.judge(t)
		rec.Outcome, rec.Reason = string(o.Status), o.Reason
		st.events(Event{Kind: TrialFinished, Index: i, Total: len(st.ev.Trials), TrialID: t.ID(), Name: t.Name,
			Duration: cr.Ended.Sub(cr.Started), Status: string(o.Status), Reason: o.Reason})
		if cr.StragglersKilled {
			st.events(Event{Kind: StragglersKilled, Index: i, Total: len(st.ev.Trials), TrialID: t.ID(), Name: t.Name})
		}
		// Like a coordinator failure, a trial Harbor records as an infra
		// error or that cannot be scored stops the run (SPEC §8).
		return o.Status.Scored(), st.saveExec()
	}
	rec.State = stateFailed
	if rec.StartedAt == nil {
		rec.State = stateNotRun
	}
	e.At = fin
	st.errs.Errors = append(st.errs.Errors, *e)
	st.events(Event{Kind: TrialFailed, Index: i, Total: len(st.ev.Trials), TrialID: t.ID(), Name: t.Name, Error: e})
	if err := st.saveErrors(); err != nil {
		return false, err
	}
	return false, st.saveExec()
}

// stragglersNote is said when processes were left in Harbor's process
// group after it ended and tpctl killed them.
const stragglersNote = "leftover processes in Harbor's process group were killed"

// classify turns how Harbor ended into an error record, or nil when the
// trial finished normally with a result.json.
func (st *runState) classify(t PlannedTrial, cr childResult, cause error) *ExecError {
	e := &ExecError{TrialID: t.ID(), TrialName: t.Name, Cleanup: cleanupNone}
	if cr.ExitCode >= 0 {
		c := cr.ExitCode
		e.ExitCode = &c
	}
	if cr.Signal != "" {
		s := cr.Signal
		e.Signal = &s
	}
	grace := st.ev.Exec.CleanupGrace()
	if cr.TimedOut || cr.Cancelled {
		e.Cleanup = cleanupCompleted
		if cr.Killed {
			e.Cleanup = cleanupKilled
			e.SandboxMayRemain = true
		}
		what := fmt.Sprintf("trial exceeded its %s limit", st.ev.Exec.TrialTimeout())
		e.Type = errTimeout
		if cr.Cancelled {
			e.Type = errInterrupted
			what = fmt.Sprintf("tpctl was stopped (%v) during the trial", cause)
		}
		if cr.Killed {
			e.Message = fmt.Sprintf("%s; Harbor got SIGINT but did not finish its cleanup within %s, so its process group was killed: the sandbox may have been left behind", what, grace)
		} else {
			e.Message = fmt.Sprintf("%s; Harbor got SIGINT and ended within the %s grace period", what, grace)
		}
	} else {
		switch {
		case cr.NotStarted:
			e.Type = errStartFailed
			e.Message = fmt.Sprintf("could not start Harbor: %v", cr.StartErr)
		case cr.Signal != "":
			e.Type = errSignaled
			e.SandboxMayRemain = true
			e.Message = fmt.Sprintf("Harbor was killed by %s (not sent by tpctl); it writes no result and stops no sandbox when killed", cr.Signal)
		case cr.ExitCode != 0:
			e.Type = errExitNonZero
			e.Message = fmt.Sprintf("Harbor exited with status %d; see %s/%s.log", cr.ExitCode, logsDir, t.Name)
			if !st.hasResult(t) {
				e.SandboxMayRemain = true
			}
		case !st.hasResult(t):
			e.Type = errResultMissing
			e.SandboxMayRemain = true
			e.Message = fmt.Sprintf("Harbor exited 0 but wrote no %s/%s/result.json", TrialsDir, t.Name)
		default:
			return nil
		}
	}
	if cr.StragglersKilled {
		e.Message += "; " + stragglersNote
	}
	return e
}

// judge applies the outcome rules to the trial's result.json, as the
// snapshot will: the coordinator stops on what the snapshot calls
// infra_error or unscored.
func (st *runState) judge(t PlannedTrial) outcome.Outcome {
	p, err := safefs.Resolve(st.out, TrialsDir+"/"+t.Name+"/"+harbor.ResultFile)
	if err != nil {
		return harbor.Invalid(err)
	}
	data, err := safefs.ReadFileCapped(p, harbor.MaxResultSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return harbor.Missing()
		}
		return harbor.Invalid(err)
	}
	r, err := harbor.DecodeTrialResultBytes(data)
	if err != nil {
		return harbor.Invalid(err)
	}
	return harbor.Judge(r)
}

func (st *runState) hasResult(t PlannedTrial) bool {
	p, err := safefs.Resolve(st.out, TrialsDir+"/"+t.Name+"/result.json")
	if err != nil {
		return false
	}
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

func (st *runState) saveExec() error {
	return writeJSON(filepath.Join(st.out, executionFile), st.exec)
}

func (st *runState) saveErrors() error {
	return writeJSON(filepath.Join(st.out, ErrorsFile), st.errs)
}

// resolvedPlan is the import plan of this run: the eval plan without its
// execution section, with one attempt (retry 0, trials/<name>) for every
// trial that was started, checkpoint.served_as set to the model name, and
// the effective execution settings under settings.execution so that the
// settings digest covers them.
func (ev *Eval) resolvedPlan(started []bool) *planfile.Plan {
	p := *ev.Plan
	p.Execution = nil
	p.Settings = maps.Clone(ev.Plan.Settings)
	if p.Settings == nil {
		p.Settings = map[string]any{}
	}
	eff, _ := json.Marshal(ev.Exec.Effective())
	p.Settings["execution"] = json.RawMessage(eff)
	if p.Checkpoint.ServedAs == "" {
		p.Checkpoint.ServedAs = ev.Exec.Model.Name
	}
	byIndex := map[int]int{}
	for i, t := range ev.Trials {
		byIndex[t.Index] = i
	}
	p.Trials = slices.Clone(ev.Plan.Trials)
	for i := range p.Trials {
		p.Trials[i].Attempts = []planfile.Attempt{}
		if k, ok := byIndex[i]; ok && started[k] {
			p.Trials[i].Attempts = []planfile.Attempt{{Retry: 0, Dir: TrialsDir + "/" + ev.Trials[k].Name}}
		}
	}
	return &p
}
