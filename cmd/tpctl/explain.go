package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor"
)

// newExplainCmd is the group of tpctl explain TOPIC.
func newExplainCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "explain TOPIC",
		// A parent without RunE would print help and exit 0 for an
		// unknown topic; make that a usage error instead.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usageErr(fmt.Errorf("unknown topic %q for tpctl explain", args[0]),
				append(didYouMean(cmd, args[0]), "run 'tpctl explain outcomes' or 'tpctl explain statistics'")...)
		},
		Short: "Explain the rules tpctl applies (outcomes, statistics)",
		Long: `Print the written rules behind tpctl's numbers, straight from the code that
applies them. Topics:

  outcomes   how each Harbor attempt becomes success, failure, infra_error or
             unscored, with its stable reason code (tpctl-outcomes/2)
  statistics what pass@k, pass^k, the task-clustered errors and the paired
             comparison mean, their formulas, assumptions and when they are null`,
	}
	return cmd
}

// outcomeRulesReport is the `tpctl explain outcomes --output json`
// contract. Lists are never null.
type outcomeRulesReport struct {
	MessageType     string                 `json:"message_type"` // "outcome_rules"
	OutcomeRules    string                 `json:"outcome_rules"`
	Rules           []outcome.Rule         `json:"rules"`
	InfraExceptions []harbor.ExceptionRule `json:"infra_exceptions"`
	AgentExceptions []harbor.ExceptionRule `json:"agent_exceptions"`
	OtherExceptions []harbor.ExceptionRule `json:"other_exceptions"`
	MessageRules    []harbor.MessageRule   `json:"message_rules"`
	Unjudged        []harbor.Unjudged      `json:"unjudged_exceptions"`
	// OtherProducers are the tables of the producers other than Harbor
	// (whose table is the fields above), in registry order.
	OtherProducers []producerTable `json:"other_producers,omitempty"`
}

// producerTable is one producer's outcome table in the report.
type producerTable struct {
	Name string `json:"name"`
	outcome.Table
}

func buildOutcomeRulesReport(reg *producers.Registry) outcomeRulesReport {
	rep := outcomeRulesReport{
		MessageType:     "outcome_rules",
		OutcomeRules:    harbor.RulesVersion,
		Rules:           harbor.Table(),
		InfraExceptions: []harbor.ExceptionRule{},
		AgentExceptions: []harbor.ExceptionRule{},
		OtherExceptions: []harbor.ExceptionRule{},
		MessageRules:    harbor.MessageRules(),
		Unjudged:        harbor.UnjudgedExceptions(),
	}
	for _, e := range harbor.Exceptions() {
		switch {
		case e.Status == outcome.InfraError:
			rep.InfraExceptions = append(rep.InfraExceptions, e)
		case e.ScoreStands():
			rep.AgentExceptions = append(rep.AgentExceptions, e)
		default:
			rep.OtherExceptions = append(rep.OtherExceptions, e)
		}
	}
	for _, p := range reg.All() {
		if p.Format() != harbor.Format {
			rep.OtherProducers = append(rep.OtherProducers, producerTable{Name: p.Name(), Table: p.Outcomes()})
		}
	}
	return rep
}

// explainOptions are the inputs of an explain topic: none but the output
// format.
type explainOptions struct{}

// newExplainOutcomesCmd is tpctl explain outcomes; runF nil is
// explainOutcomesRun.
func newExplainOutcomesCmd(a *app, runF func(context.Context, *app, *explainOptions) error) *cobra.Command {
	if runF == nil {
		runF = explainOutcomesRun
	}
	return &cobra.Command{
		Use:   "outcomes",
		Short: "Print the outcome table: statuses, reason codes and Harbor exception names",
		Long: `Print the versioned outcome table (tpctl-outcomes/2) that 'tpctl import' applies
to every attempt, in the order the rules are tried, followed by the Harbor
exception names tpctl knows. Any exception name not listed is unscored
(unknown_exception). --output json prints the same as one object:
{"outcome_rules", "rules": [{situation, status, reason}], "infra_exceptions",
"agent_exceptions", "other_exceptions": [{exception_type, status, reason, scope,
source, defined: [{revision, file, line}]}], "message_rules", "unjudged_exceptions"}. The full explanation is in docs/outcomes.md.`,
		Example: `  tpctl explain outcomes
  tpctl explain outcomes --output json | jq '.rules[] | select(.status == "infra_error")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runF(cmd.Context(), a, &explainOptions{})
		},
	}
}

func explainOutcomesRun(_ context.Context, a *app, _ *explainOptions) error {
	rep := buildOutcomeRulesReport(a.producers())
	if a.jsonOutput() {
		return a.io.JSON(rep)
	}
	a.page()
	return writeOutcomeRules(a.io.Out, a.io.Width(), a.io.Styles(), rep)
}

// writeOutcomeRules prints the report as aligned plain columns; styles only
// add colour, so the text is identical with NO_COLOR or off a terminal.
// Headings and prose wrap at width; tables fit it (writeColumns).
func writeOutcomeRules(w io.Writer, width int, st ui.Styles, rep outcomeRulesReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", st.Heading.Render("Outcome rules "+rep.OutcomeRules))
	b.WriteString("Rules are tried in order; the first that matches decides.\n\n")
	statusStyle := func(s outcome.Status) func(...string) string {
		switch s {
		case outcome.Success:
			return st.OK.Render
		case outcome.Failure:
			return st.Bold.Render
		case outcome.InfraError:
			return st.Error.Render
		}
		return st.Warn.Render
	}
	rows := [][]cell{{{text: "STATUS", style: st.Bold.Render}, {text: "REASON", style: st.Bold.Render}, {text: "SITUATION", style: st.Bold.Render}}}
	for _, r := range rep.Rules {
		rows = append(rows, []cell{{text: string(r.Status), style: statusStyle(r.Status)}, {text: r.Reason}, {text: r.Situation}})
	}
	writeColumns(&b, width, rows)

	section := func(title string, list []harbor.ExceptionRule) {
		fmt.Fprintf(&b, "\n%s\n", st.Heading.Render(title))
		rows := [][]cell{{{text: "EXCEPTION", style: st.Bold.Render}, {text: "REASON", style: st.Bold.Render}, {text: "HARBOR CLASS STATEMENT", style: st.Bold.Render}}}
		for _, e := range list {
			name := e.Type
			if e.Scope == harbor.ScopeStep {
				name += " (steps only)"
			}
			reason := e.Reason
			if e.ScoreStands() {
				reason = e.ScoredReason() + " / " + e.Reason
			}
			where := joinDefinitions(e.Defined)
			if where == "" {
				where = e.Source
			}
			rows = append(rows, []cell{{text: name}, {text: reason}, {text: where, style: st.Faint.Render}})
		}
		writeColumns(&b, width, rows)
	}
	section("Infrastructure exceptions (infra_error)", rep.InfraExceptions)
	section("Agent exceptions (Harbor still ran the verifier: a reward of exactly 0 or 1 stands, anything else is unscored)", rep.AgentExceptions)
	section("Other known exceptions (unscored)", rep.OtherExceptions)
	fmt.Fprintf(&b, "\n%s\n", st.Heading.Render("Environment start failures Harbor records as RuntimeError (infra_error, environment_start_failed)"))
	b.WriteString("Only at trial level, with environment_setup set and agent_setup null.\n")
	mrows := [][]cell{{{text: "MESSAGE STARTS WITH", style: st.Bold.Render}, {text: "HARBOR MESSAGE TEXT", style: st.Bold.Render}}}
	for _, m := range rep.MessageRules {
		mrows = append(mrows, []cell{{text: strconv.Quote(m.Prefix)}, {text: joinDefinitions(m.Raised), style: st.Faint.Render}})
	}
	writeColumns(&b, width, mrows)
	fmt.Fprintf(&b, "\n%s\n", st.Heading.Render("Harbor exception classes not judged (unknown_exception when recorded)"))
	urows := [][]cell{{{text: "EXCEPTION", style: st.Bold.Render}, {text: "RECORDED", style: st.Bold.Render}, {text: "HARBOR CLASS STATEMENT", style: st.Bold.Render}}}
	for _, u := range rep.Unjudged {
		rec := "never"
		if u.Recorded {
			rec = "can be"
		}
		urows = append(urows, []cell{{text: u.Type}, {text: rec}, {text: joinDefinitions(u.Defined), style: st.Faint.Render}})
	}
	writeColumns(&b, width, urows)
	b.WriteString("\nAny other exception name is unscored (unknown_exception), even with a reward.\n")
	b.WriteString("Multi-step trials: each step is judged by this table; the trial is infra_error if\n")
	b.WriteString("any step is, else unscored if any step is, else judged by its trial-level reward.\n")
	b.WriteString("A trial-level exception is judged first and wins over the steps. See docs/outcomes.md.\n")
	for _, t := range rep.OtherProducers {
		fmt.Fprintf(&b, "\n%s\n", st.Heading.Render(t.Name+" outcome rules "+t.Version))
		b.WriteString("Rules are tried in order; the first that matches decides.\n\n")
		rows := [][]cell{{{text: "STATUS", style: st.Bold.Render}, {text: "REASON", style: st.Bold.Render}, {text: "SITUATION", style: st.Bold.Render}}}
		for _, r := range t.Rules {
			rows = append(rows, []cell{{text: string(r.Status), style: statusStyle(r.Status)}, {text: r.Reason}, {text: r.Situation}})
		}
		writeColumns(&b, width, rows)
	}
	_, err := io.WriteString(w, ui.Wrap(b.String(), width))
	return err
}

// joinDefinitions prints Harbor class statements as "REV FILE:LINE; …".
func joinDefinitions(defs []harbor.Definition) string {
	parts := make([]string, 0, len(defs))
	for _, d := range defs {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, "; ")
}

// cell is one table cell and its style.
type cell struct {
	text  string
	style func(...string) string
}

// writeColumns lays rows out by ui.Columns within width cells (0: no
// limit), each cell styled; the first row is the header (it names the
// values when rows are stacked on a narrow terminal), and the last column
// (a statement, a title, notes) wraps in the room the others leave.
func writeColumns(b *strings.Builder, width int, rows [][]cell) {
	t := ui.Table{WrapLast: true}
	for j, r := range rows {
		row := make([]string, len(r))
		for i, c := range r {
			row[i] = c.text
			if c.style != nil {
				row[i] = c.style(c.text)
			}
		}
		if j == 0 {
			t.Header = row
			continue
		}
		t.Rows = append(t.Rows, row)
	}
	_ = ui.Columns(b, width, t) // a strings.Builder does not fail
}
