package main

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/formats"
)

// formatsReport is the `tpctl formats --output json` contract: one entry
// per input format, each with the revisions tpctl was validated against.
type formatsReport struct {
	MessageType string        `json:"message_type"` // "formats"
	Formats     []formatEntry `json:"formats"`
}

type formatEntry struct {
	Format    string             `json:"format"`
	Revisions []formats.Revision `json:"revisions"`
}

// formatsOptions are the inputs of tpctl formats: none but the output
// format.
type formatsOptions struct{}

// newFormatsCmd is tpctl formats; runF nil is formatsRun.
func newFormatsCmd(a *app, runF func(context.Context, *app, *formatsOptions) error) *cobra.Command {
	if runF == nil {
		runF = formatsRun
	}
	return &cobra.Command{
		Use:   "formats",
		Short: "List the Harbor revisions whose output format tpctl was validated against",
		Long: `List the input formats tpctl reads and, for each, the exact upstream revisions
it was validated against with fixtures. A plan whose source.revision is not
listed is refused by 'tpctl plan check' unless --allow-unverified-format is
given (the snapshot then records format_verified: false).`,
		Example: `  tpctl formats
  tpctl formats --output json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runF(cmd.Context(), a, &formatsOptions{})
		},
	}
}

func formatsRun(_ context.Context, a *app, _ *formatsOptions) error {
	rep := formatsReport{MessageType: "formats"}
	for _, f := range a.producers().Formats() {
		rep.Formats = append(rep.Formats, formatEntry{Format: f, Revisions: formats.Revisions(f)})
	}
	if a.jsonOutput() {
		return a.io.JSON(rep)
	}
	st := a.io.Styles()
	var b strings.Builder
	rows := [][]cell{{}}
	for _, h := range []string{"FORMAT", "REVISION", "NAME", "DATE", "ATIF", "NOTES"} {
		rows[0] = append(rows[0], cell{text: h, style: st.Bold.Render})
	}
	for _, f := range rep.Formats {
		for _, r := range f.Revisions {
			rows = append(rows, []cell{{text: f.Format}, {text: r.Commit}, {text: r.Name}, {text: r.Date}, {text: r.ATIF}, {text: r.Summary}})
		}
	}
	writeColumns(&b, a.io.Width(), rows)
	_, err := io.WriteString(a.io.Out, b.String())
	return err
}
