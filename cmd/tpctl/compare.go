package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/attest"
	"github.com/tuneplane/tpctl/compare"
)

// defaultListLimit is how many trial IDs each transition list shows on a
// terminal before "… and N more".
const defaultListLimit = 10

// compareOptions are the resolved arguments of tpctl compare.
type compareOptions struct {
	Base, Candidate string
	// ListLimit caps each transition list on a terminal; 0 shows all.
	ListLimit int
	// AttestKey, when set, signs the comparison into AttestOut (default
	// beside the candidate).
	AttestKey, AttestOut string
}

// newCompareCmd is tpctl compare; runF (nil: compareRun) is the seam
// tests use to check argument handling without snapshots.
func newCompareCmd(a *app, runF func(context.Context, *app, *compareOptions) error) *cobra.Command {
	if runF == nil {
		runF = compareRun
	}
	opts := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare BASE CANDIDATE",
		Short: "Compare two saved rounds, only when their protocols match",
		Long: `Compare two saved snapshots (folders written by 'tpctl import' or 'tpctl eval run').

Both snapshots are verified first. A success-rate delta is shown only when the
digest rules, outcome rules, dataset, cohort, verifier and settings digests are
equal, every trial judged in both rounds ran the same Harbor task content (the
task_checksum in its result.json), and both rounds are clean (every planned
trial scored). Otherwise every
failed condition is listed with a stable reason code and no delta is shown
(null in JSON). Trials are matched by trial_id and listed as failure → success,
success → failure, unchanged, or not comparable. Beside the delta: the
discordant-pair counts and an exact two-sided McNemar p-value. The delta is not
a statistical significance claim.

On a terminal each trial list shows the first --list-limit IDs; piped output and
--output json list every ID.

Exit status: 0 comparable; 1 not comparable; 2 usage error or a folder that is
not a snapshot or fails verification.`,
		Example: `  tpctl compare out/round-2 out/round-3
  tpctl compare out/round-2 out/round-3 --output json | jq .delta`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.ListLimit < 0 {
				return usageErr(fmt.Errorf("--list-limit must be 0 or more, got %d", opts.ListLimit), "use --list-limit 0 to show every trial ID")
			}
			opts.Base, opts.Candidate = args[0], args[1]
			return runF(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().IntVar(&opts.ListLimit, "list-limit", defaultListLimit, "trial IDs shown per transition list on a terminal (0 shows all)")
	cmd.Flags().StringVar(&opts.AttestKey, "attest", "", "also sign the comparison with this private key (see tpctl attest)")
	cmd.Flags().StringVar(&opts.AttestOut, "attest-out", "", "with --attest: the bundle file (default CANDIDATE.compare.intoto.jsonl)")
	return cmd
}

func compareRun(ctx context.Context, a *app, opts *compareOptions) error {
	var key *attest.PrivateKey
	if opts.AttestKey != "" {
		k, err := attest.LoadPrivateKey(opts.AttestKey)
		if err != nil {
			return attestInputErr(err)
		}
		key = k
	} else if opts.AttestOut != "" {
		return usageErr(errors.New("--attest-out needs --attest KEY"))
	}
	a.startProgress().Phase("verifying snapshots", 0, "")
	var res *compare.Result
	var signed *attest.Written
	var err error
	if key != nil {
		signed, res, err = attest.Comparison(ctx, opts.Base, opts.Candidate, key, a.secrets.scanner(), opts.AttestOut, producer())
	} else {
		res, err = compare.Rounds(ctx, opts.Base, opts.Candidate)
	}
	a.endProgress()
	if err != nil {
		var ie *attest.InsideSnapshotError
		if errors.As(err, &ie) {
			return usageErr(err)
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		if err, ok := verifyErr(err); ok {
			return err
		}
		return inputErr(err, "pass two snapshot folders written by 'tpctl import' or 'tpctl eval run'")
	}
	if signed != nil {
		// stdout is the comparison (a JSON contract with --output json).
		if err := writeAttestWritten(a.io.ErrOut, a.io.Width(), a.secrets.mask, signed); err != nil {
			return err
		}
	}
	if a.jsonOutput() {
		if err := a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*compare.Result
		}{"comparison", res}); err != nil {
			return err
		}
	} else if a.output == outputGitHub {
		if err := writeCompareGitHub(a, opts.Base, opts.Candidate, res); err != nil {
			return err
		}
	} else {
		limit := opts.ListLimit
		if !a.io.IsStdoutTTY() {
			limit = 0 // piped output is for reading in full or grepping
		}
		a.page()
		if err := writeCompare(a.io.Out, res, compareView{Styles: a.io.Styles(), Limit: limit, Width: a.io.Width(), Mask: a.secrets.mask}); err != nil {
			return err
		}
	}
	if !res.Comparable {
		return silentFinding(fmt.Errorf("rounds %q and %q are not comparable", opts.Base, opts.Candidate))
	}
	return nil
}
