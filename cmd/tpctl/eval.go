package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/attest"
	"github.com/tuneplane/tpctl/evalrun"
	"github.com/tuneplane/tpctl/importer"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/upload"
)

// newEvalCmd is the group of tpctl eval check-plan and eval run.
func newEvalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Run a small native evaluation of one checkpoint through Harbor",
		Long: `An eval plan is an import plan whose trials have not run yet, plus an
"execution" section: task folders, agent, model routing name and endpoint,
Harbor environment type, time limits and the Harbor command. 'eval check-plan'
checks it offline; 'eval run' runs every trial once, one at a time, and saves
the same snapshot as 'tpctl import'. See docs/eval.md and
schemas/eval-plan.v1.json.`,
		Args: cobra.NoArgs,
	}
	return cmd
}

// evalCheckPlanOptions are the resolved inputs of tpctl eval check-plan.
type evalCheckPlanOptions struct {
	Plan string
}

// newEvalCheckPlanCmd is tpctl eval check-plan; runF nil is
// evalCheckPlanRun.
func newEvalCheckPlanCmd(a *app, runF func(context.Context, *app, *evalCheckPlanOptions) error) *cobra.Command {
	if runF == nil {
		runF = evalCheckPlanRun
	}
	opts := &evalCheckPlanOptions{}
	return &cobra.Command{
		Use:   "check-plan PLAN",
		Short: "Check an eval plan offline: task folders, declarations, generated Harbor configs",
		Long: `Check an eval plan without Harbor and without starting anything: every
import-plan rule (digests, pinned checkpoint, unique trials, …), at most 128
trials with no attempts yet, each task folder (relative to the plan's folder)
exists with a readable task.toml and no symlinks, no secret-looking field or
value, every generated Harbor TrialConfig valid against tpctl's embedded
schema for the plan's Harbor revision, and a model endpoint that the chosen
agent would use (endpoint_unused names what it needs; docs/eval.md lists how
each agent takes one). Every finding is reported at once.

Output: text, json ({"valid","plan","trials","findings":[…]}, as plan check)
or github (Actions annotations).

Exit status: 0 the plan is valid; 1 it has errors; 2 it cannot be read.`,
		Example: `  tpctl eval check-plan testdata/eval/eval-plan.json
  tpctl eval check-plan eval-plan.json --output github`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Plan = args[0]
			return runF(cmd.Context(), a, opts)
		},
	}
}

func evalCheckPlanRun(_ context.Context, a *app, opts *evalCheckPlanOptions) error {
	_, rep, err := evalrun.CheckPlan(opts.Plan, a.secrets.scanner())
	if err != nil {
		return inputErr(err, "check the PLAN path")
	}
	switch a.output {
	case outputJSON:
		err = writePlanJSON(a.io.Out, rep)
	case outputGitHub:
		err = writePlanGitHub(a.secrets, a.io.Out, a.io.ErrOut, "tpctl eval check-plan", rep)
	default:
		err = writePlanText(a.io, a.secrets.mask, rep)
	}
	if err != nil {
		return fmt.Errorf("failed to write the report: %w", err)
	}
	if !rep.Valid {
		return silentFinding(errors.New("eval plan is invalid"))
	}
	return nil
}

// evalRunOptions are the resolved inputs of tpctl eval run.
type evalRunOptions struct {
	Plan                  string
	Out                   string
	Upload                bool
	AllowUnverifiedFormat bool
	KeepGoing             bool
	TraceLimit            int
	Redactors             []string
	AttestKey             string
}

// newEvalRunCmd is tpctl eval run; runF nil is runEval.
func newEvalRunCmd(a *app, runF func(context.Context, *app, *evalRunOptions) error) *cobra.Command {
	if runF == nil {
		runF = runEval
	}
	o := &evalRunOptions{}
	cmd := &cobra.Command{
		Use:   "run PLAN --out NEW_DIR [--upload]",
		Short: "Run every trial of an eval plan through Harbor, one at a time, and save a snapshot",
		Long: `Run an eval plan: check it, write every Harbor TrialConfig and validate it,
write NEW_DIR/execution.json, then run each trial once, in (task, repeat)
order, with 'harbor trial start -c NEW_DIR/configs/<name>.json --trials-dir
NEW_DIR/trials --trial-name <name>' (HARBOR_TELEMETRY=off, own process group,
output in NEW_DIR/logs/<name>.log). Nothing is retried and NEW_DIR must not
exist: an uncertain run is never resumed.

At a trial's time limit tpctl sends SIGINT (Harbor cleans up its sandbox only
on SIGINT), waits up to the cleanup grace period, then kills the process group
and records that the sandbox may have been left behind. Cleanup is
cooperative, not guaranteed: also set your sandbox provider's resource TTL.
A trial that does not end scored (it times out, Harbor exits non-zero or
writes no result.json, or its result is an infra error or unscored) stops
the remaining trials, which stay in the plan as missing; --keep-going runs
them anyway. SIGINT/SIGTERM to tpctl cancel the running trial the same way
and save the partial results.

Before anything is created, 'harbor --version' must answer the version of
the plan's validated revision (recorded in execution.json);
--allow-unverified-format runs another Harbor anyway, and records that.
--trace-limit N --redactor SPEC exports up to N redacted transcripts into the
snapshot, with the same rules as 'tpctl import'.

Then NEW_DIR/import-plan.json (the resolved import plan) and the snapshot
NEW_DIR/snapshot are written, and with --upload the snapshot is uploaded.

Exit status: 0 every planned trial finished and was scored (wrong answers
are fine); 1 anything unscored, an infra error or not run, or an invalid plan;
2 usage, unreadable plan, existing NEW_DIR, Harbor not found or not the plan's
version, agent.env unset;
3 upload failed (the snapshot is saved: 'tpctl upload NEW_DIR/snapshot');
130/143 interrupted by SIGINT/SIGTERM (partial snapshot saved).`,
		Example: `  tpctl eval check-plan eval-plan.json
  tpctl eval run eval-plan.json --out runs/2026-09-01
  tpctl eval run eval-plan.json --out runs/2 --trace-limit 8 --redactor builtin:secrets
  tpctl snapshot verify runs/2026-09-01/snapshot`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Plan = args[0]
			return runF(cmd.Context(), a, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Out, "out", "", "new folder for configs, logs, Harbor trials, records and the snapshot (must not exist)")
	f.BoolVar(&o.AllowUnverifiedFormat, "allow-unverified-format", false, "run even if 'harbor --version' is not the plan's validated revision (recorded in execution.json)")
	f.BoolVar(&o.KeepGoing, "keep-going", false, "run the remaining trials after one that did not end scored")
	f.IntVar(&o.TraceLimit, "trace-limit", 0, "export up to N trajectories (1…128; requires --redactor)")
	f.StringArrayVar(&o.Redactors, "redactor", nil, "redactor for transcripts: builtin:secrets, rules:FILE, exec:COMMAND or MODULE:FUNCTION (repeat to chain)")
	f.StringVar(&o.AttestKey, "attest", "", "sign SLSA provenance of the round with this private key into NEW_DIR/snapshot.intoto.jsonl (see tpctl attest)")
	f.BoolVar(&o.Upload, "upload", false, "after saving the snapshot, upload it (needs TUNEPLANE_JOB_ENDPOINT, TUNEPLANE_JOB_RUN_ID, TUNEPLANE_JOB_TOKEN)")
	return cmd
}

func runEval(ctx context.Context, a *app, o *evalRunOptions) error {
	if o.Out == "" {
		return usageErr(errors.New("--out is required"), "tpctl eval run PLAN --out NEW_DIR")
	}
	if err := safefs.CheckOutside(o.Out); err != nil {
		return err
	}
	// Transcript options and credentials are checked before anything
	// starts, with the same rules as import.
	transcripts, err := transcriptOptions(o.TraceLimit, o.Redactors)
	if err != nil {
		return err
	}
	var key *attest.PrivateKey
	if o.AttestKey != "" {
		if key, err = attest.LoadPrivateKey(o.AttestKey); err != nil {
			return attestInputErr(err)
		}
	}
	var upCfg *upload.Config
	if o.Upload {
		cfg, err := a.uploadConfig()
		if err != nil {
			return err
		}
		upCfg = &cfg
	}
	// Temporary folders of killed runs beside --out are cleared (their
	// owner is gone) or reported; the run's own snapshot does the same.
	for _, l := range safefs.CleanLeftovers(filepath.Dir(filepath.Clean(o.Out))) {
		fmt.Fprintf(a.io.ErrOut, "tpctl: warning: stale_temp: %s\n", termsafe.Escape(l.Message()))
	}
	version, revision := toolVersion()
	// Each trial's start and outcome is a line above a live timer.
	prog := a.startProgress()
	prog.Phase("running trials", 0, "")
	events := evalEvents(prog)
	if a.jsonOutput() {
		// No live line, but the trial lines stay.
		events = func(e evalrun.Event) { fmt.Fprintln(a.io.ErrOut, evalEventLine(e)) }
	}
	res, err := evalrun.Run(ctx, evalrun.RunOptions{
		Scanner:               a.secrets.scanner(),
		PlanPath:              o.Plan,
		Out:                   o.Out,
		ToolVersion:           version,
		ToolRevision:          revision,
		Events:                events,
		AllowUnverifiedFormat: o.AllowUnverifiedFormat,
		KeepGoing:             o.KeepGoing,
		Transcripts:           transcripts,
	})
	a.endProgress()
	if res == nil {
		return evalStartError(a, o, err)
	}
	if res.Manifest == nil {
		// The output folder exists but no snapshot could be saved.
		if err == nil {
			err = errors.New("evaluation produced no snapshot")
		}
		return findingErr(err, fmt.Sprintf("the run's records are in %s (execution.json, execution-errors.json, logs/); to save a snapshot of what ran: tpctl import --plan %s/%s --root %s --out NEW_DIR",
			o.Out, o.Out, evalrun.ResolvedPlanFile, o.Out))
	}
	if perr := printEvalResult(a, res); perr != nil {
		return perr
	}
	var ie *evalrun.InterruptedError
	if errors.As(err, &ie) {
		// The interrupted error unwraps to the signal, which sets 130/143.
		return &cliError{code: codeOf(ie.Cause), err: err, hints: []string{
			fmt.Sprintf("the partial results are saved in %s; inspect them with: tpctl snapshot show %s", res.Snapshot, res.Snapshot),
			"to evaluate again, start a new run with a new --out (a run is never resumed)",
		}}
	}
	if err != nil {
		return findingErr(err, fmt.Sprintf("the run's records are in %s (execution.json, execution-errors.json, logs/)", o.Out))
	}
	if key != nil {
		w, err := attest.ProvenanceOf(res.Snapshot, key, a.secrets.scanner(), "", producer())
		if err != nil {
			return findingErr(fmt.Errorf("the snapshot is saved but could not be attested: %w", err),
				"attest it again with: "+ui.Command("attest", "--provenance", res.Snapshot, "--key", o.AttestKey))
		}
		if err := writeAttestWritten(a.io.ErrOut, a.io.Width(), a.secrets.mask, w); err != nil {
			return err
		}
	}
	if upCfg != nil {
		if err := a.runUpload(ctx, res.Snapshot, *upCfg); err != nil {
			return err
		}
	}
	if !res.Complete() {
		return findingErr(errors.New("evaluation incomplete: "+incompleteSummary(res)),
			fmt.Sprintf("see %s/%s and %s/logs/; fix the cause, then run again with a new --out", o.Out, evalrun.ErrorsFile, o.Out))
	}
	return nil
}

// evalStartError maps failures before any snapshot exists to exit codes.
func evalStartError(a *app, o *evalRunOptions, err error) error {
	var invalid *evalrun.PlanInvalidError
	var exists *evalrun.OutExistsError
	var notFound *evalrun.HarborNotFoundError
	var missing *evalrun.MissingEnvError
	var version *evalrun.HarborVersionError
	if err == nil {
		err = errors.New("evaluation produced no result")
	}
	switch {
	case errors.As(err, &invalid):
		if a.jsonOutput() {
			_ = writePlanJSON(a.io.ErrOut, invalid.Report)
		} else if a.output == outputGitHub {
			_ = writePlanGitHub(a.secrets, a.io.Out, a.io.ErrOut, "tpctl eval run", invalid.Report)
		} else {
			_ = writePlanText(a.io, a.secrets.mask, invalid.Report)
		}
		return findingErr(err, "fix the findings above; check with: tpctl eval check-plan "+o.Plan)
	case errors.As(err, &exists):
		return usageErr(err, "choose a new --out; an earlier run's snapshot is in its snapshot/ folder (tpctl snapshot show DIR/snapshot)")
	case errors.As(err, &notFound):
		return inputErr(err, "install Harbor at the plan's validated revision, or set execution.harbor.command to its path")
	case errors.As(err, &version):
		return inputErr(err, "install Harbor at the plan's revision (version "+version.Want+"; 'tpctl formats' lists the validated revisions), or run with --allow-unverified-format to accept this one (recorded in execution.json)")
	case errors.As(err, &missing):
		return usageErr(err, "export "+strings.Join(missing.Names, ", ")+" before running; values are never written to any file")
	case errors.Is(err, context.Canceled):
		return err
	}
	return inputErr(err, "check the PLAN path and the --out parent folder")
}

func incompleteSummary(r *evalrun.Result) string {
	if r.Manifest == nil {
		return "no snapshot"
	}
	c := r.Manifest.Counts
	return fmt.Sprintf("%s of %s scored; %s unscored, %s infra error, %s not run",
		count(c.Scored()), ui.Plural(c.Expected, "planned trial"), count(c.Unscored), count(c.InfraError), count(c.Missing))
}

func printEvalResult(a *app, r *evalrun.Result) error {
	if a.jsonOutput() {
		// Absent values are null, never "" (the signal's name otherwise).
		var interrupted *string
		if r.Interrupted != "" {
			interrupted = &r.Interrupted
		}
		return a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*snapshot.Manifest
			Path        string             `json:"path"`
			Out         string             `json:"out"`
			Complete    bool               `json:"complete"`
			Planned     int                `json:"planned"`
			Started     int                `json:"started"`
			NotRun      int                `json:"not_run"`
			Errors      any                `json:"errors"`
			Interrupted *string            `json:"interrupted"`
			Warnings    []importer.Warning `json:"warnings"`
			Skipped     []importer.Warning `json:"skipped_trajectories"`
		}{"eval_run", r.Manifest, r.Snapshot, r.Out, r.Complete(), r.Planned, r.Started, r.NotRun, r.Errors, interrupted, r.Import.Warnings, r.Import.Skipped})
	}
	printSummary(a, r.Manifest, r.Snapshot, nil)
	st := a.io.Styles()
	w := a.io.Out
	for _, e := range r.Errors {
		fmt.Fprintf(w, "%s %s (%s): %s: %s\n", st.Error.Render("trial error"), termsafe.Escape(e.TrialID), termsafe.Escape(e.TrialName), e.Type, termsafe.Escape(e.Message))
	}
	for _, wn := range r.Import.Warnings {
		fmt.Fprintf(w, "%s %s: %s\n", st.Warn.Render("warning"), wn.Code, termsafe.Escape(wn.Message))
	}
	for _, sk := range r.Import.Skipped {
		fmt.Fprintf(w, "%s %s\n", st.Warn.Render("skipped trajectory"), termsafe.Escape(sk.Message))
	}
	return writeEvalVerdict(w, a, r)
}

func writeEvalVerdict(w io.Writer, a *app, r *evalrun.Result) error {
	st := a.io.Styles()
	var err error
	if r.Complete() {
		_, err = fmt.Fprintf(w, "%s\n", st.OK.Render(fmt.Sprintf("evaluation complete: all %s finished and were scored", ui.Plural(r.Planned, "planned trial"))))
	} else {
		_, err = fmt.Fprintf(w, "%s\n", st.Warn.Render("evaluation incomplete: "+incompleteSummary(r)))
	}
	return err
}
