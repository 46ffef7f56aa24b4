package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/attest"
	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/snapshot"
)

// reportOptions are the resolved inputs of tpctl report.
type reportOptions struct {
	Dirs  []string // one snapshot, or BASE and CANDIDATE
	Out   string
	Force bool
	// Attestation and Key, when given, are verified and the page says
	// "signed by keyid …, verified".
	Attestation, Key string
}

// newReportCmd is tpctl report; runF nil is runReport.
func newReportCmd(a *app, runF func(context.Context, *app, *reportOptions) error) *cobra.Command {
	if runF == nil {
		runF = runReport
	}
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report SNAPSHOT | BASE CANDIDATE",
		Short: "Write a self-contained HTML report of a round or of a comparison",
		Long: `Write one self-contained HTML file (inline CSS and JavaScript, nothing fetched,
works from file:// with the network off).

With one snapshot: the round's headline and protocol, counts over the planned
trials, rates with their Wilson intervals, reason codes and exception types, a
per-trial table with filters and retry history, and the trajectory viewer.
With two: the comparison of BASE and CANDIDATE (the protocol gate, the delta
only when comparable, transitions linked to each side's trials) followed by
both rounds.

Every snapshot is verified first. The file is written atomically; an existing
file is refused unless --force. The exit status is 0 once the report is written,
also for rounds that are not comparable (tpctl compare gives that verdict as an
exit status); 2 for bad arguments or a snapshot that is unreadable or fails
verification. See docs/report.md.`,
		Example: `  tpctl report rounds/round-1 --out round-1.html
  tpctl report rounds/baseline rounds/candidate --out review.html`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Out == "" {
				return usageErr(errors.New("--out is required"), "pass --out FILE.html (or --out - for stdout)")
			}
			if (o.Attestation == "") != (o.Key == "") {
				return usageErr(errors.New("--attestation and --key go together"), "pass both to show a verified attestation, or neither")
			}
			o.Dirs = args
			return runF(cmd.Context(), a, o)
		},
	}
	cmd.Flags().StringVar(&o.Out, "out", "", "the HTML file to write (- for stdout)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace an existing file")
	cmd.Flags().StringVar(&o.Attestation, "attestation", "", "an attestation bundle to verify and show (with --key; see tpctl attest verify)")
	cmd.Flags().StringVar(&o.Key, "key", "", "with --attestation: the signer's public key")
	return cmd
}

// loadReportRound loads one snapshot, mapping its failures to exit codes.
func loadReportRound(dir string) (*report.Round, error) {
	r, err := report.LoadRound(dir)
	if err == nil {
		return r, nil
	}
	return nil, loadRoundErr(err, dir)
}

// loadRoundErr maps report.LoadRound's errors to exit codes and hints.
func loadRoundErr(err error, dir string) error {
	if err, ok := verifyErr(err); ok {
		return err
	}
	if snapshot.IsNotSnapshot(err) {
		return inputErr(err, "give the folder written by tpctl import --out or tpctl eval run")
	}
	return inputErr(err)
}

func runReport(ctx context.Context, a *app, o *reportOptions) error {
	dirs := o.Dirs
	signature := ""
	if o.Attestation != "" {
		// The page claims the signature only after attest verify's checks.
		key, err := attest.LoadPublicKey(o.Key)
		if err != nil {
			return attestInputErr(err)
		}
		rep, err := attest.Verify(ctx, dirs, o.Attestation, key)
		if err != nil {
			return attestInputErr(err)
		}
		if !rep.OK {
			if err := writeAttestReport(a.io.ErrOut, a.io.Width(), a.secrets.mask, rep); err != nil {
				return err
			}
			return findingErr(fmt.Errorf("the attestation %q does not hold for %v; no report written", o.Attestation, dirs),
				"tpctl attest verify lists the same problems; drop --attestation to write the report without it")
		}
		signature = rep.Summary()
	}
	// One round is read and written in one streamed pass (its memory is
	// the page's compact data); two are loaded for the comparison.
	var render func(io.Writer) error
	var comparable *bool
	ids := make([]string, len(dirs))
	trials := 0
	if len(dirs) == 1 {
		render = func(w io.Writer) error {
			wr, err := report.WriteRoundSnapshot(w, dirs[0], signature)
			if err != nil {
				var le *report.LoadError
				if errors.As(err, &le) {
					return loadRoundErr(le.Err, le.Dir)
				}
				return err
			}
			ids[0], trials = wr.RoundID, wr.Trials
			return nil
		}
	} else {
		rounds := make([]*report.Round, len(dirs))
		for i, d := range dirs {
			r, err := loadReportRound(d)
			if err != nil {
				return err
			}
			r.Signature = signature
			rounds[i] = r
			ids[i] = r.Manifest.RoundID
			trials += len(r.Trials)
		}
		res, err := compare.Rounds(ctx, dirs[0], dirs[1])
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return err
			}
			return inputErr(err)
		}
		comparable = &res.Comparable
		render = func(w io.Writer) error { return report.WriteComparison(w, rounds[0], rounds[1], res) }
	}
	// A report is a file that leaves the machine (mailed, attached to a
	// CI run): a page that would carry a known secret - from a snapshot
	// edited after import - is refused, as upload refuses to send it.
	scanner := a.secrets.scanner()
	check := func(page []byte) error { return scanner.CheckPayload("the report for "+strconv.Quote(o.Out), page) }
	if o.Out == "-" {
		// Streamed through a temporary file: checked whole, by the scanner
		// the output filter uses, before a byte reaches stdout, so it goes
		// out unfiltered (not scanned twice); memory as for --out FILE.
		_, err := report.Stream(a.io.Unfiltered(), render, check)
		var payload *redact.PayloadError
		if errors.As(err, &payload) {
			return reportSecretErr(err)
		}
		return err
	}
	// Refused before its folder is made: a folder made inside a
	// snapshot would already break it.
	if err := safefs.CheckOutside(o.Out, dirs...); err != nil {
		return err
	}
	// --out reports/x.html works on a fresh clone: the folder is made
	// like mkdir -p, as import makes the folder of its --out.
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return usageErr(fmt.Errorf("cannot create the folder of --out %q: %w", o.Out, err), "choose an --out inside a writable folder")
	}
	cleanFileLeftovers(a.io.ErrOut, o.Out)
	n, err := report.Save(o.Out, o.Force, dirs, render, check)
	if err != nil {
		var payload *redact.PayloadError
		switch {
		case errors.As(err, &payload):
			return reportSecretErr(err)
		case errors.Is(err, fs.ErrExist):
			// One thing said: it exists, and --force replaces it.
			return usageErr(fmt.Errorf("%q already exists", o.Out), "pass --force to replace it, or choose another --out")
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
			return usageErr(err, "check that the folder of --out exists and is writable")
		}
		return err
	}
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string   `json:"message_type"`
			Out         string   `json:"out"`
			Bytes       int      `json:"bytes"`
			Rounds      []string `json:"rounds"`
			Trials      int      `json:"trials"`
			Comparable  *bool    `json:"comparable"`
		}{"report", o.Out, n, ids, trials, comparable})
	}
	fmt.Fprintf(a.io.Out, "wrote %s (%s, %s of %s)\n", o.Out, ui.Plural(n, "byte"), ui.Plural(trials, "trial"), ui.Plural(len(dirs), "round"))
	if comparable != nil && !*comparable {
		fmt.Fprintln(a.io.Out, "the rounds are not comparable: the report names the failed conditions and shows no delta")
	}
	return nil
}

// reportSecretErr is the refusal of a page that would carry a known
// secret: a finding (exit 1), as for upload, with nothing written.
func reportSecretErr(err error) error {
	return findingErr(err, secretHint)
}
