package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/export"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/redact"
)

// exportOptions are the resolved arguments of tpctl export.
type exportOptions struct {
	Snapshots []string
	Format    string
	Out       string
}

// newExportCmd is tpctl export; runF (nil: exportRun) is the seam tests
// use to check argument handling.
func newExportCmd(a *app, runF func(context.Context, *app, *exportOptions) error) *cobra.Command {
	if runF == nil {
		runF = exportRun
	}
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export SNAPSHOT... --format parquet|csv|jsonl --out DIR",
		Short: "Export saved rounds as Parquet, CSV or JSON Lines tables for DuckDB, pandas and Spark",
		Long: `Export saved snapshots as tables, one Hive-style partition per round:
DIR/round_id=<hex>/{rounds,trials,attempts,tasks}.<ext>.

Every snapshot is verified first. trials has one row per planned trial,
missing ones included (status "missing"), so rates computed from the export
keep the plan's denominator. Columns are typed the same way in every format
(docs/export.md lists them); Parquet footers carry the export format, round
ID, snapshot SHA-256 and the protocol digests. The same snapshots give the same
bytes. A partition already in DIR with the same bytes is left as it is; one
with other bytes is never replaced.

Exit status: 0 exported; 2 usage error, a folder that is not a snapshot or
fails verification, a partition in DIR that differs, or a secret in an
exported string.`,
		Example: `  tpctl export out/round-1 out/round-2 --format parquet --out exports
  duckdb -c "SELECT status, count(*) FROM 'exports/*/trials.parquet' GROUP BY status"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := export.ParseFormat(opts.Format); err != nil {
				return usageErr(err, "use --format parquet, csv or jsonl")
			}
			if opts.Out == "" {
				return usageErr(errors.New("--out is required"), "name the dataset folder: --out exports")
			}
			opts.Snapshots = args
			return runF(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "parquet", "file format: parquet, csv or jsonl")
	cmd.Flags().StringVar(&opts.Out, "out", "", "dataset folder; each round becomes DIR/round_id=<hex>/")
	return cmd
}

// exportMemoryLimit is the Go heap's soft limit during an export unless
// GOMEMLIMIT says otherwise: verification and the export's streams keep
// well under it, and without it the collector lets garbage double the
// heap, which is most of the peak RSS (README, Performance). The export
// keeps about 24 MiB live (most of it the Parquet row groups being
// built): at 40 MiB the collector ran every 6 MiB allocated, about 8% of
// the CPU at a million trials; at 64 MiB it costs 15% less CPU for about
// 21 MiB more peak RSS (76 MiB at a million trials), still flat.
const exportMemoryLimit = 64 << 20

func exportRun(ctx context.Context, a *app, opts *exportOptions) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(exportMemoryLimit)
	}
	a.startProgress().Phase("verifying and exporting", 0, "")
	v, _ := toolVersion()
	parts, err := export.Run(ctx, opts.Snapshots, export.Options{
		Format: export.Format(opts.Format), Out: opts.Out, Version: v, Scanner: a.secrets.scanner(),
	})
	a.endProgress()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		var se *export.SnapshotError
		var ce *export.ConflictError
		var ie *redact.IdentityError
		switch {
		case errors.As(err, &se) && len(se.Problems) > 0:
			return inputErr(err, "run "+ui.Command("snapshot", "verify", se.Dir)+" for the full report")
		case errors.As(err, &se):
			return inputErr(err, "pass snapshot folders written by 'tpctl import' or 'tpctl eval run'")
		case errors.As(err, &ce), errors.As(err, &ie):
			return inputErr(err)
		}
		return inputErr(err)
	}
	if a.jsonOutput() {
		// One line per partition (JSON Lines), as listings are.
		for _, p := range parts {
			if err := a.io.JSON(struct {
				MessageType string `json:"message_type"`
				export.Partition
			}{"export_partition", p}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range parts {
		what := ui.Plural(int(p.Trials), "trial") + ", " + ui.Plural(int(p.Attempts), "attempt") + ", " + ui.Plural(int(p.Tasks), "task")
		if p.Unchanged {
			what = "already there, unchanged"
		}
		line := fmt.Sprintf("%s → %s (%s)", ui.Printable(p.Snapshot), ui.Printable(p.Dir), what)
		if _, err := fmt.Fprintln(a.io.Out, ui.Wrap(line, a.io.Width(), a.secrets.mask)); err != nil {
			return err
		}
	}
	return nil
}
