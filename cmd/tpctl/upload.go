package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/upload"
)

// uploadOptions are the resolved arguments of `tpctl upload`.
type uploadOptions struct {
	Dir         string
	DryRun      bool
	Concurrency int
}

// testOnlyUploadConfig, when set by a test, adjusts every upload's config
// (instant retry waits) just before the upload starts.
var testOnlyUploadConfig func(*upload.Config)

// newUploadCmd is tpctl upload; runF nil is uploadRun.
func newUploadCmd(a *app, runF func(context.Context, *app, *uploadOptions) error) *cobra.Command {
	if runF == nil {
		runF = uploadRun
	}
	opts := &uploadOptions{}
	cmd := &cobra.Command{
		Use:   "upload DIR",
		Short: "Upload a saved snapshot to the TunePlane ingest API (safe to repeat)",
		Long: `Upload verifies the snapshot in DIR (a tampered snapshot is refused), then sends
it to the TunePlane ingest API: the protocol, the round total, the observations
in batches of 32 and one request per trajectory, up to --concurrency requests
in flight at once. Every record has an immutable
identity and the server keeps the first copy, so re-running the command after a
failure resends safely: what was already stored comes back as duplicates.

Credentials come from the platform job, never from a plan:
  TUNEPLANE_JOB_ENDPOINT  https:// base URL (http:// only for loopback)
  TUNEPLANE_JOB_RUN_ID    the platform run
  TUNEPLANE_JOB_TOKEN     the per-run ingest token (never printed)
or the config file keys job-endpoint, job-run-id and job-token.

--dry-run verifies and prints what would be sent, without credentials.

Exit status: 0 uploaded; 1 the server holds different records under some of
this round's identities (conflicts, listed); 2 bad credentials setup, not a
snapshot, a tampered snapshot or a record over an API limit; 3 the upload
failed (network, HTTP error, token refused) — run tpctl upload DIR again later.`,
		Example: `  tpctl upload out/round-1
  tpctl upload out/round-1 --dry-run --output json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			return runF(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "verify and print what would be sent (counts, batches, bytes) without sending")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", upload.DefaultConcurrency, "requests in flight at once after the protocol and round total (1…32)")
	return cmd
}

func uploadRun(ctx context.Context, a *app, opts *uploadOptions) error {
	// Flags are checked the same with or without --dry-run.
	if opts.Concurrency < 1 || opts.Concurrency > upload.MaxConcurrency {
		return usageErr(fmt.Errorf("--concurrency %d is out of range", opts.Concurrency), fmt.Sprintf("use 1…%d requests in flight", upload.MaxConcurrency))
	}
	if opts.DryRun {
		return a.uploadDryRun(opts.Dir)
	}
	// The snapshot is the cheaper, local check: a mistyped folder is
	// reported as such before any word about credentials.
	if _, err := snapshot.Load(opts.Dir); err != nil && snapshot.IsNotSnapshot(err) {
		return uploadError(opts.Dir, err)
	}
	cfg, err := a.uploadConfig()
	if err != nil {
		return err
	}
	cfg.Concurrency = opts.Concurrency
	return a.runUpload(ctx, opts.Dir, cfg)
}

// Config file keys for the upload credentials; envName maps each to its
// TUNEPLANE_JOB_* variable.
var uploadKeys = map[string]string{
	upload.EnvEndpoint: "job-endpoint",
	upload.EnvRunID:    "job-run-id",
	upload.EnvToken:    "job-token",
}

// uploadConfig resolves the credentials (environment > config file). The
// import command calls it before importing, so a missing variable fails
// before any work is done.
func (a *app) uploadConfig() (upload.Config, error) {
	getenv := func(name string) string { return a.configValue(uploadKeys[name]) }
	cfg, err := upload.ConfigFromEnv(getenv)
	var me *upload.MissingEnvError
	var ce *upload.ConfigError
	switch {
	case errors.As(err, &me):
		return cfg, usageErr(err, "set "+strings.Join(me.Names, ", ")+" (or job-endpoint, job-run-id, job-token in the --config file); the platform job provides them")
	case errors.As(err, &ce):
		return cfg, usageErr(err, "fix "+ce.Field+", then run the command again")
	case err != nil:
		return cfg, usageErr(err)
	}
	cfg.Scanner = a.secrets.scanner()
	return cfg, nil
}

// runUpload uploads the snapshot in dir, draws progress on a terminal,
// prints the summary (also after a partial upload) and maps errors to
// exit codes. tpctl import --upload calls it after saving the snapshot.
func (a *app) runUpload(ctx context.Context, dir string, cfg upload.Config) error {
	cfg.Progress = uploadProgress(a.startProgress())
	if testOnlyUploadConfig != nil {
		testOnlyUploadConfig(&cfg)
	}
	sum, err := upload.Snapshot(ctx, dir, cfg)
	a.endProgress()
	if sum != nil {
		if perr := a.printUploadSummary(sum); perr != nil && err == nil {
			return perr
		}
	}
	return uploadError(dir, err)
}

// uploadError wraps an upload failure with its exit code and next step.
func uploadError(dir string, err error) error {
	if err == nil {
		return nil
	}
	retry := "tpctl upload " + ui.Quote(dir)
	var (
		record   *upload.RecordError
		httpErr  *upload.HTTPError
		trans    *upload.TransportError
		redirect *upload.RedirectError
		conflict *upload.ConflictError
		resp     *upload.ResponseError
		payload  *redact.PayloadError
	)
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The exit code stays 130/143 (the signal decides it in run); the
		// hint says how to finish: nothing sent so far is lost or doubled.
		return &cliError{code: exitInterrupted, err: &stoppedError{msg: "upload interrupted: the saved snapshot is intact", err: err},
			hints: []string{"the snapshot is saved: run " + retry + " to finish the upload; records already stored come back as duplicates"}}
	case errors.As(err, new(*snapshot.VerifyError)):
		err, _ := verifyErr(err, "nothing was sent")
		return err
	case snapshot.IsNotSnapshot(err):
		return inputErr(fmt.Errorf("failed to read the snapshot: %w", err), "give the folder written by tpctl import --out; tpctl snapshot verify "+ui.Quote(dir)+" checks it")
	case errors.As(err, &payload):
		return findingErr(err, "nothing was sent; the scan never prints the matching text: re-create the snapshot with tpctl import from sources without the secret")
	case errors.As(err, &record):
		return inputErr(err, "nothing was sent; re-create the snapshot with tpctl import, which truncates trajectories to the limits")
	case errors.As(err, &conflict):
		return findingErr(err, "the platform kept its first copy of these records; a changed snapshot must be a new round (tpctl snapshot show "+ui.Quote(dir)+" prints its round ID)")
	case errors.As(err, &redirect):
		return transportErr(err, "set TUNEPLANE_JOB_ENDPOINT to the ingest API's final URL, then run "+retry)
	case errors.As(err, &trans):
		return transportErr(err, "the snapshot is saved: run "+retry+" later; records already stored come back as duplicates")
	case errors.As(err, &httpErr):
		switch httpErr.Status {
		case 401:
			return transportErr(err, "get a fresh ingest token for this run into TUNEPLANE_JOB_TOKEN, then run "+retry)
		case 403:
			return transportErr(err, "check that TUNEPLANE_JOB_TOKEN is the ingest token of run TUNEPLANE_JOB_RUN_ID, then run "+retry)
		default:
			return transportErr(err, "the platform refused the data, so retrying will not help; report it with the output of "+retry+" --dry-run --output json")
		}
	case errors.As(err, &resp):
		return transportErr(err, "check TUNEPLANE_JOB_ENDPOINT points at the TunePlane ingest API, then run "+retry)
	}
	return transportErr(err, "run "+retry+" later")
}

// uploadDryRun prints what an upload of dir would send.
func (a *app) uploadDryRun(dir string) error {
	d, err := upload.Plan(dir, a.secrets.scanner())
	if err != nil {
		return uploadError(dir, err)
	}
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*upload.DryRun
		}{"upload_dry_run", d})
	}
	st := a.io.Styles()
	w := a.io.Out
	fmt.Fprintf(w, "%s %s (nothing sent)\n", st.Bold.Render("Would upload round"), d.RoundID)
	fmt.Fprintf(w, "  validation_protocol  1 request\n")
	fmt.Fprintf(w, "  round_total          1 request (expected %s)\n", ui.Count(int64(d.Expected)))
	fmt.Fprintf(w, "  observations         %s (%s, at most %d a request; largest event %s of %s)\n",
		ui.Plural(d.Batches, "request"), ui.Plural(d.Events, "event"), upload.MaxEventsPerRequest, ui.Size(int64(d.LargestEvent)), ui.Size(upload.MaxEventBytes))
	fmt.Fprintf(w, "  trajectory           %s (largest %s of %s)\n",
		ui.Plural(d.Trajectories, "request"), ui.Size(int64(d.LargestTrajectory)), ui.Size(upload.MaxTrajectoryBytes))
	_, err = fmt.Fprintf(w, "Total: %s, %s\n", ui.Plural(d.Requests, "request"), ui.Size(d.Bytes))
	return err
}

func (a *app) printUploadSummary(s *upload.Summary) error {
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*upload.Summary
		}{"upload_summary", s})
	}
	st := a.io.Styles()
	w := a.io.Out
	head := st.Bold.Render("Uploaded round")
	if !s.Complete {
		head = st.Warn.Render("Upload incomplete for round")
	}
	fmt.Fprintf(w, "%s %s to run %s\n", head, s.RoundID, s.RunID)
	for _, row := range []struct {
		name string
		t    upload.Tally
	}{{"protocol", s.Protocol}, {"round_total", s.Total}, {"events", s.Events}, {"trajectories", s.Trajectories}} {
		fmt.Fprintf(w, "  %-13s accepted %s, duplicates %s, conflicts %s\n", row.name,
			ui.Count(int64(row.t.Accepted)), ui.Count(int64(row.t.Duplicates)), ui.Count(int64(row.t.Conflicts)))
	}
	conflicts := "conflicts " + ui.Count(int64(s.Conflicts))
	if s.Conflicts > 0 {
		conflicts = st.Error.Render(conflicts)
	}
	fmt.Fprintf(w, "Total: accepted %s, duplicates %s, %s (%s)\n",
		ui.Count(int64(s.Accepted)), ui.Count(int64(s.Duplicates)), conflicts, uploadTraffic(s))
	if len(s.ConflictIDs) > 0 {
		fmt.Fprintf(w, "%s\n", st.Error.Render("CONFLICTS: the platform holds different records for these trials:"))
		for _, id := range s.ConflictIDs {
			fmt.Fprintf(w, "  %s\n", termsafe.Escape(id))
		}
	}
	return nil
}

// uploadTraffic is what reached the server and what did not, apart: only
// requests a server answered 2xx count as accepted, with their bytes; a
// refused connection sent nothing anywhere (issue 27).
func uploadTraffic(s *upload.Summary) string {
	parts := []string{ui.Size(s.AcceptedBytes) + " accepted in " + ui.Plural(s.AcceptedRequests, "request")}
	for _, f := range []struct {
		n    int
		what string
	}{
		{s.FailedToConnect, "failed to connect"},
		{s.NoAnswer, "got no answer"},
		{s.ErrorAnswers, "answered with an error"},
	} {
		if f.n > 0 {
			parts = append(parts, ui.Plural(f.n, "attempt")+" "+f.what)
		}
	}
	return strings.Join(parts, "; ")
}
