package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/importer"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor/plandraft"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/upload"
)

// importOptions are the resolved inputs of tpctl import.
type importOptions struct {
	Plan, Root, Out       string
	AllowUnverifiedFormat bool
	TraceLimit            int
	Redactors             []string
	Upload                bool
	Strict                bool
}

// newImportCmd is tpctl import; runF nil is runImport.
func newImportCmd(a *app, runF func(context.Context, *app, *importOptions) error) *cobra.Command {
	if runF == nil {
		runF = runImport
	}
	o := &importOptions{}
	cmd := &cobra.Command{
		Use:   "import --plan PLAN --root DIR --out NEW_DIR",
		Short: "Import a Harbor job into a content-hashed snapshot",
		Long: `Import validates the plan and every attempt it lists, judges each attempt with
the outcome rules (tpctl explain outcomes), and saves a snapshot folder at --out,
which must not exist. The folder appears whole or not at all. With --upload the
saved snapshot is then sent to the TunePlane ingest API.

Transcripts are off by default: --trace-limit N (1…128) exports up to N redacted,
size-limited trajectories and requires --redactor.`,
		Example: `  tpctl import --plan testdata/example/import-plan.json --root testdata/example --out out/round-1
  tpctl import --plan testdata/example/import-plan.json --root testdata/example --out out/traces --trace-limit 32 --redactor builtin:secrets`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runF(cmd.Context(), a, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Plan, "plan", "", "import plan (import-plan.json)")
	f.StringVar(&o.Root, "root", "", "folder the plan's attempt dirs are relative to")
	f.StringVar(&o.Out, "out", "", "new snapshot folder (must not exist)")
	f.BoolVar(&o.AllowUnverifiedFormat, "allow-unverified-format", false, "accept a Harbor revision tpctl was not validated against (recorded as format_verified: false)")
	f.IntVar(&o.TraceLimit, "trace-limit", 0, "export up to N trajectories (1…128; requires --redactor)")
	f.BoolVar(&o.Upload, "upload", false, "after saving and verifying the snapshot, upload it (needs TUNEPLANE_JOB_ENDPOINT, TUNEPLANE_JOB_RUN_ID, TUNEPLANE_JOB_TOKEN)")
	f.BoolVar(&o.Strict, "strict", false, "make plan_differs_from_job (the plan lists fewer or more trials than the Harbor job planned) an error")
	f.StringArrayVar(&o.Redactors, "redactor", nil, "redactor for transcripts: builtin:secrets, rules:FILE, exec:COMMAND or MODULE:FUNCTION (repeat to chain)")
	return cmd
}

// warningsPerCode is how many warnings of each code the text output
// shows: a big job can carry thousands of one kind (dir_missing).
const warningsPerCode = 10

// importMemoryLimit is the Go heap's soft limit during an import without
// transcripts, unless GOMEMLIMIT says otherwise.
const importMemoryLimit = 16 << 20

// streamsAttempts reports whether the plan's producer keeps nothing of an
// attempt once it is judged (producers.Streaming).
func streamsAttempts(reg *producers.Registry, planPath string) bool {
	format, _ := peekPlan(planPath)
	p, err := reg.For(format)
	if err != nil {
		return false
	}
	s, ok := p.(producers.Streaming)
	return ok && s.StreamsAttempts()
}

func runImport(ctx context.Context, a *app, o *importOptions) error {
	for _, req := range []struct{ name, val string }{{"--plan", o.Plan}, {"--root", o.Root}, {"--out", o.Out}} {
		if req.val == "" {
			return usageErr(fmt.Errorf("%s is required", req.name), "tpctl import --plan PLAN --root DIR --out NEW_DIR")
		}
	}
	opts := importer.Options{Producers: a.producers(), PlanPath: o.Plan, Root: o.Root, Out: o.Out, AllowUnverifiedFormat: o.AllowUnverifiedFormat, Strict: o.Strict, Scanner: a.secrets.scanner()}
	traceLimit, traceNote, err := o.TraceLimit, "", error(nil)
	if traceLimit == 0 {
		if traceLimit, traceNote, err = lmevalTraceDefault(o.Plan, o.Redactors); err != nil {
			return err
		}
	}
	if traceLimit > 0 || traceNote == "" { // an lm-eval default of 0 is bodies off, said in the note
		if opts.Transcripts, err = transcriptOptions(traceLimit, o.Redactors); err != nil {
			return err
		}
	}
	// Credentials are checked before any work, so a missing variable
	// fails fast; the upload itself happens only after the save.
	var upCfg *upload.Config
	if o.Upload {
		cfg, err := a.uploadConfig()
		if err != nil {
			return err
		}
		upCfg = &cfg
	}
	if fi, err := os.Stat(o.Root); err != nil || !fi.IsDir() {
		return inputErr(fmt.Errorf("--root %q is not a readable folder", o.Root), "give the Harbor job folder the plan's dirs are relative to")
	}
	// A snapshot is never made inside another (it would break it): the
	// one rule of every writer beside snapshots, checked before mkdir.
	if err := safefs.CheckOutside(o.Out); err != nil {
		return err
	}
	// --out out/round-1 works on a fresh clone: the parent folder is made
	// like mkdir -p (the snapshot folder itself must still not exist).
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return inputErr(fmt.Errorf("cannot create the folder of --out %q: %w", o.Out, err), "choose an --out inside a writable folder")
	}
	// Judging a streaming producer's attempts holds a few MiB whatever the
	// number of trials or the plan's order; without a soft limit the
	// collector lets garbage double the heap, most of the peak RSS
	// (README, Performance). Transcripts hold whole trajectories, and
	// Inspect and lm-eval hold their logs, so they keep the default.
	if opts.Transcripts == nil && os.Getenv("GOMEMLIMIT") == "" && streamsAttempts(a.producers(), o.Plan) {
		debug.SetMemoryLimit(importMemoryLimit)
	}
	prog := a.startProgress()
	prog.Phase("validating plan", 0, "")
	phase := ""
	opts.Progress = func(p importer.Progress) {
		if p.Phase != phase {
			phase = p.Phase
			if p.Phase == importer.PhaseJudging {
				prog.Phase(p.Phase, int64(p.Total), "trials")
			} else {
				prog.Phase(p.Phase, 0, "")
			}
		}
		if p.Phase == importer.PhaseJudging {
			prog.Update(int64(p.Done), "")
		}
	}
	var tally *factsTally
	if !a.jsonOutput() {
		// A terminal shows the first few warnings of each code; the
		// importer keeps no more (--output json lists every one).
		opts.WarningsPerCode = warningsPerCode
		// The cost and the failures block are tallied from the
		// observations as they are saved, as snapshot show tallies them
		// from the saved file: no second read of the round.
		opts.Visitor = func() snapshot.Visit {
			tally = newFactsTally()
			return tally.visit
		}
	}
	res, err := importer.Import(ctx, opts)
	a.endProgress()
	if err != nil {
		return importError(a, err, o)
	}
	if a.jsonOutput() {
		if err := a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*snapshot.Manifest
			Path     string             `json:"path"`
			Warnings []importer.Warning `json:"warnings"`
			Skipped  []importer.Warning `json:"skipped_trajectories"`
			// Job is Harbor's job facts; ProducerJob another producer's
			// own figures, under its own key.
			Job         *plandraft.JobFacts `json:"harbor_job,omitempty"`
			ProducerJob any                 `json:"producer_job,omitempty"`
			// Dataset: which part of the dataset the rates stand on
			// (settings.dataset: Inspect and lm-eval rounds).
			Dataset *snapshot.DatasetScope `json:"dataset,omitempty"`
		}{"import", res.Manifest, res.Dir, res.Warnings, res.Skipped, harborJob(res), otherJob(res), res.Dataset}); err != nil {
			return err
		}
	} else {
		facts := tally.facts(res.Dataset)
		printSummary(a, res.Manifest, res.Dir, facts)
		printHarborNumbers(a, res)
		printProducerNumbers(a, res)
		if traceNote != "" {
			fmt.Fprintf(a.io.Out, "%s\n", traceNote)
		}
		st := a.io.Styles()
		// The importer kept the first warningsPerCode of each code and
		// counted the rest.
		for _, w := range res.Warnings {
			fmt.Fprintf(a.io.Out, "%s %s: %s\n", st.Warn.Render("warning"), w.Code, termsafe.Escape(w.Message))
		}
		for _, code := range slices.Sorted(maps.Keys(res.More)) {
			fmt.Fprintf(a.io.Out, "%s %s: … and %s more (--output json lists every warning)\n", st.Warn.Render("warning"), code, count(res.More[code]))
		}
		for _, w := range res.Skipped {
			fmt.Fprintf(a.io.Out, "%s %s\n", st.Warn.Render("skipped trajectory"), termsafe.Escape(w.Message))
		}
		writeTriage(a.io.Out, a.io.Width(), a.secrets.mask, res.Dir, facts, res.Manifest.Counts.Expected, st)
	}
	if upCfg != nil {
		return a.runUpload(ctx, res.Dir, *upCfg)
	}
	return nil
}

// importError maps import failures to exit codes and next steps.
func importError(a *app, err error, o *importOptions) error {
	var invalid *importer.PlanInvalidError
	var unreadable *importer.PlanUnreadableError
	var readErr *importer.ReadError
	var exists *safefs.ExistsError
	var redactErr *redact.Error
	var secret *redact.SecretFoundError
	var identity *redact.IdentityError
	var payload *redact.PayloadError
	var noFolders *importer.NoFoldersError
	var differs *importer.PlanDiffersError
	switch {
	case errors.Is(err, context.Canceled):
		// The snapshot is written to a temp folder and renamed only when
		// complete, so a cancelled import leaves no --out behind.
		return &cliError{code: exitInterrupted, err: &stoppedError{msg: "import interrupted: nothing was saved", err: err}}
	case errors.As(err, &noFolders):
		return usageErr(err, "--root is the folder the plan's dirs are relative to: for a plan drafted with 'tpctl plan init --root JOBDIR' that is JOBDIR")
	case errors.As(err, &differs):
		return findingErr(err, "nothing was written; draft every planned trial with 'tpctl plan init --root JOBDIR', or import without --strict")
	case errors.As(err, &invalid):
		if a.jsonOutput() {
			writePlanJSON(a.io.ErrOut, invalid.Report)
		} else if a.output == outputGitHub {
			_ = writePlanGitHub(a.secrets, a.io.Out, a.io.ErrOut, "tpctl import", invalid.Report)
			return silentFinding(err)
		} else {
			writePlanText(a.io, a.secrets.mask, invalid.Report)
		}
		return findingErr(err, fmt.Sprintf("fix the findings above; check with: tpctl plan check %s --root %s", o.Plan, o.Root))
	case errors.As(err, &unreadable):
		return inputErr(err, "check the path given to --plan")
	case errors.As(err, &readErr):
		return inputErr(err, "fix the machine's fault (for EMFILE raise the limit: ulimit -n; for EACCES restore the permissions), then run again")
	case errors.Is(err, importer.ErrNoRedactor):
		return usageErr(err)
	case errors.As(err, &identity), errors.As(err, &payload):
		return findingErr(err, "nothing was written; the scan never prints the matching text: look at the named field locally")
	case errors.As(err, &secret):
		return findingErr(err, "nothing was written; the scan never prints the matching text: look at the named trial's trajectory locally")
	case errors.As(err, &redactErr):
		return findingErr(err, "the import was aborted and nothing was written; check the redactor against the protocol in docs/redactors.md, then run again")
	case errors.As(err, &exists):
		// A bad --out is a usage error (exit 2), as for eval run and
		// plan init.
		return usageErr(err, "choose a new --out folder; to look at the existing one: tpctl snapshot show "+exists.Path)
	}
	if snapshot.IsNotSnapshot(err) {
		return inputErr(err)
	}
	return err
}

// transcriptOptions checks --trace-limit and --redactor, with the same
// rules for import and eval run: nil when neither is given, a usage error
// when they do not go together or a redactor spec is mistyped.
func transcriptOptions(limit int, redactors []string) (*importer.TranscriptOptions, error) {
	if limit == 0 && len(redactors) == 0 {
		return nil, nil
	}
	if limit == 0 {
		return nil, usageErr(errors.New("--redactor only applies to transcripts"), "add --trace-limit N (1…128)")
	}
	t := importer.TranscriptOptions{Limit: limit, Redactors: redactors}
	if err := t.Validate(); err != nil {
		return nil, usageErr(err, "example: --trace-limit 32 --redactor builtin:secrets")
	}
	return &t, nil
}

// printHarborNumbers shows the Harbor job's own counts beside tpctl's,
// with why they differ.
func printHarborNumbers(a *app, res *importer.Result) {
	j := harborJob(res)
	if j == nil {
		return
	}
	w := a.io.Out
	planned := "not listed by the job"
	if j.Planned >= 0 {
		planned = fmt.Sprintf("%s planned (its %s)", count(j.Planned), j.Source)
	}
	fmt.Fprintf(w, "harbor job    %s: %s\n", termsafe.Escape(strings.Join(j.Jobs, ", ")), planned)
	h := j.Harbor
	if h == nil {
		return
	}
	num := func(p *int) string {
		if p == nil {
			return "–"
		}
		return strconv.Itoa(*p)
	}
	fmt.Fprintf(w, "  harbor says n_total_trials %s · completed %s · errored %s · retries %s (all agents of the job)\n",
		num(h.NTotalTrials), num(h.NCompleted), num(h.NErrored), num(h.NRetries))
	for _, key := range slices.Sorted(maps.Keys(h.Evals)) {
		ev := h.Evals[key]
		var parts []string
		for _, m := range ev.Metrics {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if v, ok := m[k].(float64); ok {
					parts = append(parts, fmt.Sprintf("%s %.1f%%", k, 100*v))
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(ev.PassAtK)) {
			parts = append(parts, fmt.Sprintf("pass@%s %.1f%%", k, 100*ev.PassAtK[k]))
		}
		fmt.Fprintf(w, "  %s: %s, %s%s\n", termsafe.Escape(key), ui.Plural(ev.NTrials, "trial"), ui.Plural(ev.NErrors, "error"), prefixed(" · ", strings.Join(parts, " · ")))
	}
	if len(h.Evals) > 0 {
		fmt.Fprintln(w, "  why they differ: Harbor's mean counts a trial without a reward as 0 and only the trials that finished; tpctl keeps unscored trials out of the success rate and counts every planned trial in coverage")
	}
}

// harborJob is the import's Harbor job facts, nil when it has none.
func harborJob(res *importer.Result) *plandraft.JobFacts {
	j, _ := res.Job.(*plandraft.JobFacts)
	return j
}

// printProducerNumbers shows another producer's own figures beside
// tpctl's, as the producer words them, with why they differ (Inspect: its
// header's counts and metrics; lm-eval: its results file's figures set
// beside tpctl's counts). Harbor's are printHarborNumbers'.
func printProducerNumbers(a *app, res *importer.Result) {
	if b, ok := res.Job.(besider); ok {
		for i, l := range b.Beside(res.Manifest.Counts) {
			if i == 0 {
				fmt.Fprintf(a.io.Out, "producer      %s\n", termsafe.Escape(l))
			} else {
				fmt.Fprintf(a.io.Out, "  %s\n", termsafe.Escape(l))
			}
		}
		return
	}
	if l, ok := otherJob(res).(interface{ Lines() []string }); ok {
		for _, line := range l.Lines() {
			fmt.Fprintln(a.io.Out, termsafe.Escape(line))
		}
	}
}

// otherJob is another producer's own figures about its run, nil for
// Harbor's (harborJob) or none.
func otherJob(res *importer.Result) any {
	if _, ok := res.Job.(*plandraft.JobFacts); ok {
		return nil
	}
	return res.Job
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
