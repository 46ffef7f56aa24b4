package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/preflight"
)

// preflightOptions is everything `tpctl preflight` needs, resolved from
// flags, TUNEPLANE_* environment and config.
type preflightOptions struct {
	Job           string
	Catalog       string
	Report        string
	Git           string
	SourceTimeout time.Duration
	SkipSource    bool
	// Now is the report clock; tests pin it.
	Now func() time.Time
}

// preflightNow is the clock of the command; the testscript setup pins it
// through TPCTL_TEST_NOW so reports are byte-stable in tests.
var preflightNow = time.Now

// newPreflightCmd is tpctl preflight (and the group of verify-report);
// runF nil is preflightRun.
func newPreflightCmd(a *app, runF func(context.Context, *app, *preflightOptions) error) *cobra.Command {
	if runF == nil {
		runF = preflightRun
	}
	opts := &preflightOptions{}
	cmd := &cobra.Command{
		Use:   "preflight JOB --catalog CATALOG [--report FILE]",
		Short: "Check that a derived training job is ready to submit, without submitting it",
		Long: `Check a derived job (a re-run, or a plan a diagnosis proposed) against the
platform catalog before submission, without submitting anything or using a GPU:
recipe compatibility, params against the recipe's JSON Schema, source
availability (materialized in a temporary copy that is always removed), the
recipe's effective-config rules, cluster hardware, and runtime references.

Each check is pass, fail or unchecked with the reason and the exact field.
Unchecked is never a pass. Model download inside the worker, mounts,
environment connectivity and a real smoke run are always unchecked.
Admission is still checked again at submission.

JOB and CATALOG are YAML or JSON (schemas/derived-job.v1.json,
schemas/preflight-catalog.v1.json). Relative paths in JOB are read from
JOB's folder. --report saves the report (with its time, the tool version
and the input fingerprint); 'tpctl preflight verify-report REPORT JOB'
later says whether it still applies.

Exit status: 0 no check failed (unchecked items are listed, not failures);
1 a check failed; 2 usage or unusable input; 130/143 interrupted.`,
		Example: `  tpctl preflight job.yaml --catalog catalog.yaml
  tpctl preflight job.yaml --catalog catalog.yaml --report preflight.json --output json
  tpctl preflight verify-report preflight.json job.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Job = args[0]
			if opts.Catalog == "" {
				return usageErr(errors.New("--catalog is required"),
					"pass --catalog CATALOG (or set TUNEPLANE_CATALOG) naming the platform's recipe and cluster catalog")
			}
			if opts.SourceTimeout < 0 {
				return usageErr(fmt.Errorf("--source-timeout %s is negative", opts.SourceTimeout), "use a duration like 10m, or 0 for no limit")
			}
			opts.Now = preflightNow
			return runF(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Catalog, "catalog", "", "platform catalog (YAML or JSON) of recipes, clusters and known runtime references")
	f.StringVar(&opts.Report, "report", "", "save the report as JSON to this file (written atomically)")
	f.StringVar(&opts.Git, "git", "", "git program used to check a git source (default: git on PATH)")
	f.DurationVar(&opts.SourceTimeout, "source-timeout", 10*time.Minute, "time limit for materializing the source; 0 for none")
	f.BoolVar(&opts.SkipSource, "skip-source", false, "do not materialize the source; the source check is then unchecked")
	return cmd
}

func preflightRun(ctx context.Context, a *app, opts *preflightOptions) error {
	// A --report that cannot be written is found before any check runs: a
	// git clone can take minutes, and its result must not be lost to a
	// typo in the report path, nor overwrite the job or the catalog.
	if err := checkReportPath(opts.Report, opts.Job, opts.Catalog); err != nil {
		return usageErr(err, "pass --report a new or existing report file in a folder that exists, not the job or the catalog")
	}
	job, err := preflight.LoadJob(opts.Job)
	if err != nil {
		return inputErr(err, "fix the job file; its format is schemas/derived-job.v1.json (see docs/preflight.md)")
	}
	cat, err := preflight.LoadCatalog(opts.Catalog)
	if err != nil {
		return inputErr(err, "fix or replace the catalog given to --catalog; its format is schemas/preflight-catalog.v1.json")
	}
	v, rev := toolVersion()
	rep, err := preflight.Run(ctx, job, cat, preflight.Options{
		Now:           opts.Now,
		ToolVersion:   fmt.Sprintf("tpctl %s (revision %s)", v, rev),
		JobName:       opts.Job,
		BaseDir:       filepath.Dir(opts.Job),
		Git:           opts.Git,
		SourceTimeout: opts.SourceTimeout,
		SkipSource:    opts.SkipSource,
	})
	if err != nil {
		return err
	}
	var saveErr error
	if opts.Report != "" {
		// A report file leaves the machine with the job (SPEC §4): one that
		// would carry a known secret (quoted from the job or catalog) is
		// not written; the printed report is masked by the output gate.
		if b, err := rep.JSON(); err == nil {
			saveErr = a.secrets.scanner().CheckPayload("the report for "+strconv.Quote(opts.Report), b)
		}
		if saveErr == nil {
			cleanFileLeftovers(a.io.ErrOut, opts.Report)
			saveErr = rep.Save(opts.Report)
		}
		if saveErr != nil {
			// Still print the report below: the checks ran and their
			// result is worth having even if the file is not.
			opts.Report = ""
		}
	}
	if a.jsonOutput() {
		// The report itself, the document --report saves (on one line,
		// by the JSON rule): no envelope, no message_type.
		if err := a.io.JSON(rep); err != nil {
			return err
		}
	} else if a.output == outputGitHub {
		if err := writePreflightGitHub(a, rep, opts.Job, opts.Catalog); err != nil {
			return err
		}
	} else if err := printPreflight(a.io, a.secrets.mask, rep, opts.Report); err != nil {
		return err
	}
	if saveErr != nil {
		return findingErr(saveErr, "the report above was not saved; run the command again with a writable --report path")
	}
	if !rep.Ready {
		return silentFinding(fmt.Errorf("%d preflight check(s) failed", rep.Summary.Fail))
	}
	return nil
}

// checkReportPath refuses a --report destination that cannot work: a
// folder, a path whose folder does not exist, or the job or catalog file
// itself (saving would replace the input with the report).
func checkReportPath(report, job, catalog string) error {
	if report == "" {
		return nil
	}
	dir := filepath.Dir(report)
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("--report %q: its folder %q cannot be used: %w", report, dir, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("--report %q: %q is not a folder", report, dir)
	}
	fi, err := os.Stat(report)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--report %q cannot be used: %w", report, err)
	case fi.IsDir():
		return fmt.Errorf("--report %q is a folder; name a file inside it, e.g. %q", report, filepath.Join(report, "preflight.json"))
	}
	for _, in := range []struct{ what, path string }{{"job", job}, {"catalog", catalog}} {
		if other, err := os.Stat(in.path); err == nil && os.SameFile(fi, other) {
			return fmt.Errorf("--report %q is the %s file; saving the report would replace it", report, in.what)
		}
	}
	return nil
}

// printPreflight writes the human report: on a terminal a table that fits
// its width (ui.Columns, reasons wrapped, never cut), otherwise stable
// tab-separated lines.
func printPreflight(io *ui.Streams, mask func(string) string, rep *preflight.Report, saved string) error {
	st := io.Styles()
	w := &pfErrWriter{w: io.Out}
	statusStyle := func(s preflight.Status) lipgloss.Style {
		switch s {
		case preflight.StatusPass:
			return st.OK
		case preflight.StatusFail:
			return st.Error
		}
		return st.Warn
	}
	width := io.Width()
	fmt.Fprintln(w, ui.Wrap(st.Heading.Render("preflight")+" "+pfPrintable(rep.Job), width, mask))
	if io.IsStdoutTTY() {
		t := ui.Table{
			Header:   []string{st.Bold.Render("CHECK"), st.Bold.Render("STATUS"), st.Bold.Render("REASON")},
			Elide:    []bool{true},
			WrapLast: true,
		}
		for _, c := range rep.Checks {
			reason := pfPrintable(c.Reason)
			for _, p := range pfMoreProblems(c) {
				reason += "\n- " + pfPrintable(p.String())
			}
			t.Rows = append(t.Rows, []string{pfPrintable(c.ID), statusStyle(c.Status).Render(string(c.Status)), reason})
		}
		t.Mask = mask
		if err := ui.Columns(w, width, t); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, "CHECK\tSTATUS\tREASON")
		for _, c := range rep.Checks {
			fmt.Fprintf(w, "%s\t%s\t%s\n", pfPrintable(c.ID), c.Status, pfOneLine(c.Reason))
			for _, p := range pfMoreProblems(c) {
				fmt.Fprintf(w, "  - %s\n", pfOneLine(p.String()))
			}
		}
	}
	s := rep.Summary
	verdict := st.OK.Render("ready")
	if !rep.Ready {
		verdict = st.Error.Render("not ready")
	}
	line := func(format string, args ...any) {
		fmt.Fprintln(w, ui.Wrap(fmt.Sprintf(format, args...), width, mask))
	}
	line("%s: %d pass, %d fail, %d unchecked (unchecked items were not checked; they are not passes)", verdict, s.Pass, s.Fail, s.Unchecked)
	line("checked at %s by %s", rep.CheckedAt, rep.ToolVersion)
	line("input fingerprint %s (%s)", rep.Fingerprint.SHA256, rep.Fingerprint.Rules)
	for _, n := range rep.Notes {
		line("%s", st.Faint.Render("note: "+n))
	}
	if saved != "" {
		line("report saved to %s; check it later with: tpctl preflight verify-report %s %s", saved, saved, rep.Job)
	}
	return w.err
}

// pfMoreProblems lists a check's problems when there are several; a
// single problem is already what the reason says.
func pfMoreProblems(c preflight.Check) []preflight.Problem {
	if len(c.Problems) < 2 {
		return nil
	}
	return c.Problems
}

// pfErrWriter keeps the first write error so printing code stays linear.
type pfErrWriter struct {
	w   io.Writer
	err error
}

func (e *pfErrWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// pfOneLine folds whitespace to single spaces and escapes what is left of
// control characters, for one tab-separated line.
func pfOneLine(s string) string { return pfPrintable(strings.Join(strings.Fields(s), " ")) }

// pfPrintable escapes job and catalog values (recipe and rule names,
// references) for the terminal (internal/termsafe). JSON output keeps
// the values (JSON escapes them).
func pfPrintable(s string) string { return termsafe.Escape(s) }

// preflightVerifyOptions are the inputs of tpctl preflight verify-report.
type preflightVerifyOptions struct {
	Report, Job string
}

// newPreflightVerifyCmd is tpctl preflight verify-report; runF nil is
// preflightVerifyRun.
func newPreflightVerifyCmd(a *app, runF func(context.Context, *app, *preflightVerifyOptions) error) *cobra.Command {
	if runF == nil {
		runF = preflightVerifyRun
	}
	return &cobra.Command{
		Use:   "verify-report REPORT JOB",
		Short: "Say whether a saved preflight report still applies to a job",
		Long: `Compare the input fingerprint saved in REPORT with the fingerprint of JOB as it
is now. Any change to the recipe, params, source reference, config, resources
or runtime invalidates the report. No check is run again, and a report that
applies is still evidence from its own time: admission is checked again at
submission.

Exit status: 0 the report applies; 1 it does not (the inputs that changed are
named); 2 usage or unusable input.`,
		Example: `  tpctl preflight verify-report preflight.json job.yaml
  tpctl preflight verify-report preflight.json job.yaml --output json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(cmd.Context(), a, &preflightVerifyOptions{Report: args[0], Job: args[1]})
		},
	}
}

func preflightVerifyRun(_ context.Context, a *app, opts *preflightVerifyOptions) error {
	reportPath, jobPath := opts.Report, opts.Job
	rep, err := preflight.LoadReport(reportPath)
	if err != nil {
		return inputErr(err, "give a report saved by 'tpctl preflight JOB --catalog CATALOG --report FILE'")
	}
	job, err := preflight.LoadJob(jobPath)
	if err != nil {
		return inputErr(err, "fix the job file; its format is schemas/derived-job.v1.json (see docs/preflight.md)")
	}
	v, err := preflight.Verify(rep, job)
	if err != nil {
		return inputErr(err)
	}
	rerun := fmt.Sprintf("run 'tpctl preflight %s --catalog CATALOG --report %s' again", jobPath, reportPath)
	if a.jsonOutput() {
		if err := a.io.JSON(struct {
			MessageType string `json:"message_type"`
			Report      string `json:"report"`
			Job         string `json:"job"`
			*preflight.Verification
		}{"preflight_verification", reportPath, jobPath, v}); err != nil {
			return err
		}
		if !v.Applies {
			return silentFinding(errors.New(v.Reason))
		}
		return nil
	}
	if !v.Applies && a.output == outputGitHub {
		fmt.Fprint(a.io.Out, annotation{level: "error", file: jobPath, title: "preflight report out of date", message: fmt.Sprintf("report %s does not apply: %s (%s)", reportPath, v.Reason, rerun)}.format(a.secrets))
		a.secrets.appendStepSummary(a.io.ErrOut, fmt.Sprintf("### ❌ tpctl preflight verify-report %s %s: does not apply\n\n%s\n\n", a.secrets.mdCode(reportPath), a.secrets.mdCode(jobPath), a.secrets.mdCell(v.Reason)))
		return silentFinding(errors.New(v.Reason))
	}
	if !v.Applies {
		return findingErr(fmt.Errorf("report %q does not apply to %q: %s (fingerprint %s, report has %s)", reportPath, jobPath, v.Reason, v.JobFingerprint, v.ReportFingerprint), rerun)
	}
	verdict := "ready"
	if !v.Ready {
		verdict = "not ready"
	}
	st := a.io.Styles()
	_, err = fmt.Fprintf(a.io.Out, "%s: report %s applies to %s: %s (fingerprint %s)\nthe report, made at %s, says: %s; admission is still checked again at submission\n",
		st.OK.Render("applies"), reportPath, jobPath, v.Reason, v.JobFingerprint, v.CheckedAt, verdict)
	return err
}
