package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/harbor"
)

func init() { addCommand(newFormatsCmd) }

// formatsReport is the `tpctl formats --output json` contract: one entry
// per input format, each with the revisions tpctl was validated against.
type formatsReport struct {
	Formats []formatEntry `json:"formats"`
}

type formatEntry struct {
	Format    string            `json:"format"`
	Revisions []harbor.Revision `json:"revisions"`
}

func newFormatsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "formats",
		Short: "List the Harbor revisions whose output format tpctl was validated against",
		Long: `List the input formats tpctl reads and, for each, the exact upstream revisions
it was validated against with fixtures. A plan whose source.revision is not
listed is refused by 'tpctl plan check' unless --allow-unverified-format is
given (the snapshot then records format_verified: false).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep := formatsReport{Formats: []formatEntry{{Format: "harbor", Revisions: harbor.Revisions}}}
			if a.jsonOutput() {
				b, err := json.Marshal(rep)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(a.io.Out, "%s\n", b)
				return err
			}
			st := a.io.Styles()
			tw := tabwriter.NewWriter(a.io.Out, 0, 4, 2, ' ', 0)
			// Style each cell on its own: lipgloss expands tabs, which
			// would break the column alignment.
			head := []string{"FORMAT", "REVISION", "NAME", "DATE", "ATIF", "NOTES"}
			for i, h := range head {
				head[i] = st.Bold.Render(h)
			}
			fmt.Fprintln(tw, strings.Join(head, "\t"))
			for _, f := range rep.Formats {
				for _, r := range f.Revisions {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Format, r.Commit, r.Name, r.Date, r.ATIF, r.Summary)
				}
			}
			return tw.Flush()
		},
	}
}
