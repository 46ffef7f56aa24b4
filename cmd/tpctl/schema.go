package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/tuneplane/tpctl/internal/suggest"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/schemas"
)

// schemaOptions are the inputs of tpctl schema [NAME].
type schemaOptions struct {
	Name string // "": list them
}

// newSchemaCmd is tpctl schema; runF nil is schemaRun.
func newSchemaCmd(a *app, runF func(context.Context, *app, *schemaOptions) error) *cobra.Command {
	if runF == nil {
		runF = schemaRun
	}
	return &cobra.Command{
		Use:   "schema [NAME]",
		Short: "Print the JSON Schema of a machine-readable output or input format",
		Long: `Print one of the JSON Schemas (draft 2020-12) embedded in tpctl, exactly as
published in the repository's schemas/ folder. Without NAME, list them.

Outputs:  snapshot (snapshot.json, snapshot show/import --output json),
          observation (one line of observations.jsonl), plan-check (plan check
          and eval check-plan --output json), compare, preflight-report,
          gate-verdict (gate --output json), trend (trend --output json),
          power-plan (plan power --output json),
          exit-error (the stderr object of a failure under --output json).
Inputs:   import-plan, eval-plan, derived-job, preflight-catalog, and the
          Harbor TrialConfig schemas tpctl validates generated configs with.

--output json lists the schemas as {"schemas":[{"name","file","id","title","output"}]}.`,
		Example: `  tpctl schema
  tpctl schema snapshot > snapshot.schema.json
  tpctl schema observation`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			list, _ := schemas.List()
			var names []string
			for _, s := range list {
				names = append(names, s.Name+"\t"+s.Title)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &schemaOptions{}
			if len(args) == 1 {
				opts.Name = args[0]
			}
			return runF(cmd.Context(), a, opts)
		},
	}
}

func schemaRun(_ context.Context, a *app, opts *schemaOptions) error {
	if opts.Name != "" {
		_, b, err := schemas.Lookup(opts.Name)
		var nf *schemas.NotFoundError
		if errors.As(err, &nf) {
			hints := []string{"run 'tpctl schema' to list them"}
			if c := suggest.Closest(opts.Name, nf.Names); len(c) > 0 {
				hints = append([]string{fmt.Sprintf("did you mean %q?", c[0])}, hints...)
			}
			return usageErr(err, hints...)
		}
		if err != nil {
			return err
		}
		_, err = a.io.Out.Write(b)
		return err
	}
	list, err := schemas.List()
	if err != nil {
		return err
	}
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string           `json:"message_type"`
			Schemas     []schemas.Schema `json:"schemas"`
		}{"schemas", list})
	}
	return writeSchemaList(a, list)
}

func writeSchemaList(a *app, list []schemas.Schema) error {
	st := a.io.Styles()
	var b strings.Builder
	rows := [][]cell{{{text: "NAME", style: st.Bold.Render}, {text: "KIND", style: st.Bold.Render}, {text: "TITLE", style: st.Bold.Render}}}
	for _, s := range list {
		kind := "input"
		if s.Output {
			kind = "output"
		}
		rows = append(rows, []cell{{text: s.Name}, {text: kind}, {text: s.Title}})
	}
	writeColumns(&b, a.io.Width(), a.secrets.mask, rows)
	_, err := io.WriteString(a.io.Out, b.String())
	return err
}
