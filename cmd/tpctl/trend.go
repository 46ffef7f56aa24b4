package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/trend"
)

// trendOptions are the resolved arguments of tpctl trend.
type trendOptions struct {
	Snapshots []string
	Out       string
	Order     string
	Force     bool
}

// newTrendCmd is tpctl trend; runF (nil: trendRun) is the seam tests use
// to check argument handling.
func newTrendCmd(a *app, runF func(context.Context, *app, *trendOptions) error) *cobra.Command {
	if runF == nil {
		runF = trendRun
	}
	opts := &trendOptions{}
	cmd := &cobra.Command{
		Use:   "trend SNAPSHOT...",
		Short: "Success rates across rounds of one protocol, with intervals, paired deltas and regressions",
		Long: `Lay saved rounds of one protocol side by side, in the order given (or
--order checkpoint: by checkpoint ref, numbers in it compared as numbers).

Each round: success rate with its Wilson and task-clustered 95% intervals,
coverage and label. Each adjacent pair, and each round against the best: the
paired difference over the trials scored in both, with its task-clustered 95%
interval, when both rounds are clean and ran the same task content. The tasks
that lost successes. Rounds whose protocols differ (digest rules, outcome
rules, dataset, cohort, verifier or settings digest) are refused, naming the
digest: a line across protocols would join different experiments.

--out FILE.html writes a self-contained page: a chart of the rates with their
intervals (inline SVG, readable without colour), the task × round table and
the regressions.

Exit status: 0 ok; 1 the rounds' protocols differ; 2 usage error or a folder
that is not a snapshot or fails verification.`,
		Example: `  tpctl trend out/step-1000 out/step-2000 out/step-4000
  tpctl trend out/* --order checkpoint --out trend.html
  tpctl trend out/* --output json | jq '.rounds[].success_rate'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Order != trend.OrderGiven && opts.Order != trend.OrderCheckpoint {
				return usageErr(fmt.Errorf("--order %q is not given or checkpoint", opts.Order))
			}
			opts.Snapshots = args
			return runF(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "also write the HTML page to FILE.html")
	cmd.Flags().StringVar(&opts.Order, "order", trend.OrderGiven, "round order: given (as listed) or checkpoint (by checkpoint ref)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing --out file")
	return cmd
}

func trendRun(ctx context.Context, a *app, opts *trendOptions) error {
	// The page is refused up front where it could never be written:
	// inside a snapshot, over something not a regular file, or over a
	// file without --force (safefs.WriteBeside checks again at the write).
	if opts.Out != "" {
		if err := safefs.CheckOutside(opts.Out, opts.Snapshots...); err != nil {
			return err
		}
		if err := safefs.CheckReplaceable(opts.Out, opts.Force); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return usageErr(err, "pass --force to replace it")
			}
			return err
		}
	}
	a.startProgress().Phase("verifying snapshots", 0, "")
	res, err := trend.Run(ctx, opts.Snapshots, opts.Order)
	a.endProgress()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		var pe *trend.ProtocolError
		if errors.As(err, &pe) {
			return findingErr(err, ui.Command("compare", pe.First, pe.Other)+" lists every difference")
		}
		var se *round.SnapshotError
		if errors.As(err, &se) && len(se.Problems) > 0 {
			return inputErr(err, "run "+ui.Command("snapshot", "verify", se.Dir)+" for the full report")
		}
		return inputErr(err, "pass snapshot folders written by 'tpctl import' or 'tpctl eval run'")
	}
	if opts.Out != "" {
		page, err := trend.HTML(res)
		if err != nil {
			return err
		}
		if err := a.secrets.scanner().CheckPayload("the trend page "+strconv.Quote(opts.Out), page); err != nil {
			return findingErr(err, secretHint)
		}
		if err := safefs.WriteBeside(opts.Out, page, 0o644, opts.Force, opts.Snapshots...); err != nil {
			return err
		}
	}
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*trend.Result
		}{"trend", res})
	}
	a.page()
	if err := writeTrend(a.io.Out, a.io.Width(), a.secrets.mask, res); err != nil {
		return err
	}
	if opts.Out != "" {
		_, err := fmt.Fprintf(a.io.Out, "\nwrote %s\n", ui.Printable(opts.Out))
		return err
	}
	return nil
}
