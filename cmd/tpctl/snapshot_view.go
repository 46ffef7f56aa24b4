package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/snapshot"
)

// The text and JSON views of snapshot show --trials and --trial.

// writeTrialLines writes one JSON object per trial that passes f, in
// canonical order (JSON Lines, by ui.JSON's rule).
func writeTrialLines(w io.Writer, r *report.Round, f report.Filter) error {
	bw := ui.NewLineBuffer(w) // whole lines: the secret gate masks each Write
	for i := range r.Trials {
		if f.Match(&r.Trials[i]) {
			if err := ui.JSON(bw, r.Line(&r.Trials[i])); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// writeTrialTable writes the trials that pass f as a table that fits
// width, one line a trial (at a narrow width DETAIL, then BODY, then
// EXCEPTION are left out before the rows are stacked), followed by how
// many were shown and which columns were left out.
func writeTrialTable(w io.Writer, width int, r *report.Round, f report.Filter, s ui.Styles) error {
	bw := ui.NewLineBuffer(w) // whole lines: the secret gate masks each Write
	t := ui.Table{
		Header: []string{"STATUS", "TRIAL", "REASON", "REWARD", "EXCEPTION", "ATTEMPTS", "BODY", "DETAIL"},
		Elide:  []bool{false, true, true, false, true, false, false, true},
		Drop:   []int{7, 6, 4},
	}
	for i := range r.Trials {
		tr := &r.Trials[i]
		if !f.Match(tr) {
			continue
		}
		l := r.Line(tr)
		body := "-"
		if len(l.Trajectories) > 0 {
			body = strconv.Itoa(len(l.Trajectories))
		}
		t.Rows = append(t.Rows, []string{report.Glyph(tr.Status) + " " + tr.Status, ui.Cell(tr.ID), ui.Cell(orDash(l.Reason)),
			reward(l.Reward), ui.Cell(orDash(l.ExceptionType)), strconv.Itoa(l.Attempts), body, ui.Cell(clip(orDash(l.Detail), maxDetailCell))})
	}
	t, dropped := t.Fit(width)
	for i, h := range t.Header {
		t.Header[i] = s.Bold.Render(h)
	}
	if err := ui.Columns(bw, width, t); err != nil {
		return err
	}
	left := ""
	if len(dropped) > 0 {
		left = fmt.Sprintf(" (%s left out to fit %d columns: --trial ID or --output json has them)", strings.Join(dropped, ", "), width)
	}
	fmt.Fprintln(bw, ui.Wrap(fmt.Sprintf("%s of %s shown%s", ui.Count(int64(len(t.Rows))), ui.Plural(len(r.Trials), "planned trial"), left), width))
	return bw.Flush()
}

// writeTrial writes one trial for a person: its current result, every
// attempt, and each exported body as readable text with tool calls
// paired to their results.
//
// The result and attempts wrap at width (0: no limit), hashes and paths
// kept whole; the bodies are printed as they are, their lines being the
// conversation's own.
func writeTrial(w io.Writer, width int, r *report.Round, id string, s ui.Styles) error {
	d, err := r.Detail(id)
	if err != nil {
		return err
	}
	out := ui.NewLineBuffer(w) // whole lines: the secret gate masks each Write
	var head strings.Builder
	bw := &head
	// flush writes the wrapped head; called once, before the bodies.
	flush := func() error {
		_, err := io.WriteString(out, ui.Wrap(head.String(), width))
		head.Reset()
		return err
	}
	fmt.Fprintf(bw, "%s %s  (task %s, repeat %d)\n", s.Bold.Render(report.Glyph(d.Status)+" "+d.Status), ui.PrintableLines(d.TrialID), ui.PrintableLines(d.Task), d.Repeat)
	if d.Status == report.StatusMissing {
		fmt.Fprintln(bw, "missing: the plan lists this trial but no attempt ran; it stays in the denominator")
		if err := flush(); err != nil {
			return err
		}
		return out.Flush()
	}
	fmt.Fprintf(bw, "reason %s, reward %s, exception %s, trainable %v\n", ui.PrintableLines(*d.Reason), reward(d.Reward), ui.PrintableLines(orDash(d.ExceptionType)), d.Trainable)
	fmt.Fprintf(bw, "evidence (current attempt): result_sha256 %s, task_checksum %s, verifier_environment_mode %s\n",
		orDash(d.Evidence.ResultSHA256), ui.PrintableLines(orDash(d.Evidence.TaskChecksum)), ui.PrintableLines(orDash(d.Evidence.VerifierEnvironmentMode)))
	if m := d.Evidence.VerifierEnvironmentMode; m != nil && *m == "shared" {
		fmt.Fprintln(bw, s.Warn.Render("warning: the verifier ran in the agent's own container, where the agent can write its own reward"))
	}
	fmt.Fprintf(bw, "\n%s (%d; the current result is the highest retry)\n", s.Heading.Render("attempts"), len(d.AttemptOutcomes))
	for _, a := range d.AttemptOutcomes {
		cur := ""
		if a.Retry == *d.TrialAttempt {
			cur = "  (current)"
		}
		fmt.Fprintf(bw, "  retry %d  %s %s  reason %s  reward %s  exception %s  result_sha256 %s%s\n", a.Retry, report.Glyph(a.Status), a.Status,
			ui.PrintableLines(a.Reason), reward(a.Reward), ui.PrintableLines(orDash(a.ExceptionType)), orDash(a.ResultSHA256), cur)
		writeExplanation(bw, &a)
	}
	fmt.Fprintf(bw, "\n%s\n", s.Heading.Render("trajectory"))
	if len(d.Bodies) == 0 {
		fmt.Fprintln(bw, "no body exported for this trial (transcripts are off by default and capped by --trace-limit); a missing body is not a failed trial")
	}
	if err := flush(); err != nil {
		return err
	}
	for _, b := range d.Bodies {
		writeBody(out, &b, s)
	}
	return out.Flush()
}

func writeBody(w io.Writer, b *report.Trajectory, s ui.Styles) {
	fmt.Fprintf(w, "%s  retry %d  %s, capture policy %s, complete %v\n", s.Bold.Render(b.File), b.TrialAttempt, ui.Plural(len(b.Messages), "message"), ui.PrintableLines(b.CapturePolicy), b.Complete)
	if b.Truncated {
		fmt.Fprintln(w, s.Warn.Render(fmt.Sprintf("truncated: %s of %s kept", count(len(b.Messages)), ui.Plural(b.TotalMessages, "message"))))
	}
	calls, results := map[string]int{}, map[string][]int{}
	for i, m := range b.Messages {
		switch {
		case m.CallID == nil:
		case m.Role == "tool":
			results[*m.CallID] = append(results[*m.CallID], i)
		case m.ToolName != nil:
			if _, ok := calls[*m.CallID]; !ok {
				calls[*m.CallID] = i
			}
		}
	}
	for i, m := range b.Messages {
		head := []string{fmt.Sprintf("#%d %s", i+1, m.Role)}
		if m.ToolName != nil {
			head = append(head, "tool "+ui.PrintableLines(*m.ToolName))
		}
		if m.CallID != nil {
			head = append(head, "call_id "+ui.PrintableLines(*m.CallID))
			if m.Role == "tool" {
				if c, ok := calls[*m.CallID]; ok {
					head = append(head, fmt.Sprintf("answers #%d", c+1))
				}
			} else if calls[*m.CallID] == i {
				for _, r := range results[*m.CallID] {
					head = append(head, fmt.Sprintf("result #%d", r+1))
				}
				if len(results[*m.CallID]) == 0 {
					head = append(head, "no result in this body")
				}
			}
		}
		if m.PromptTokens != nil {
			head = append(head, "prompt "+ui.Plural(int(*m.PromptTokens), "token"))
		}
		if m.CompletionTokens != nil {
			head = append(head, "completion "+ui.Plural(int(*m.CompletionTokens), "token"))
		}
		if m.DurationMS != nil {
			head = append(head, fmt.Sprintf("%d ms", *m.DurationMS))
		}
		fmt.Fprintln(w, s.Faint.Render("  ["+strings.Join(head, " · ")+"]"))
		for _, line := range strings.Split(ui.PrintableLines(m.Content), "\n") {
			if line == "" {
				fmt.Fprintln(w)
				continue
			}
			fmt.Fprintln(w, "    "+line)
		}
	}
	fmt.Fprintln(w)
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func reward(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// maxDetailCell bounds the DETAIL column (runes), so an unlimited-width
// line stays under 200 cells; --trial ID prints the detail whole.
const maxDetailCell = 72

// clip cuts s to at most n runes, marking a cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// writeExplanation writes an attempt's detail, timing, usage and agent
// (tpctl-snapshot/3), one indented line each, when it has them, and the
// verifier's own words under them.
func writeExplanation(w io.Writer, a *snapshot.AttemptOutcome) {
	if a.Detail != "" {
		fmt.Fprintf(w, "    detail: %s\n", ui.Cell(a.Detail))
	}
	if t := a.Timing; t != nil {
		fmt.Fprintf(w, "    timing: environment setup %s · agent setup %s · agent execution %s · verifier %s\n",
			seconds(t.EnvironmentSetup), seconds(t.AgentSetup), seconds(t.AgentExecution), seconds(t.Verifier))
	}
	if u := a.Usage; u != nil {
		cost := "-"
		if u.CostUSD != nil {
			cost = "$" + strconv.FormatFloat(*u.CostUSD, 'f', -1, 64)
		}
		fmt.Fprintf(w, "    usage: %s input tokens (%s cached) · %s output tokens · cost %s\n", countPtr(u.InputTokens), countPtr(u.CacheTokens), countPtr(u.OutputTokens), cost)
	}
	if ag := a.Agent; ag != nil {
		fmt.Fprintf(w, "    agent: %s · model %s\n", ui.Cell(ag.Name), ui.Cell(orDash(ag.Model)))
	}
	if v := a.Verifier; v != nil {
		// The verifier's own words, its lines kept (each escaped).
		fmt.Fprintf(w, "    verifier (%s):\n", ui.Cell(v.Source))
		for _, line := range strings.Split(strings.TrimRight(v.Text, "\n"), "\n") {
			fmt.Fprintf(w, "      %s\n", ui.Cell(line))
		}
	}
}

func seconds(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 1, 64) + " s"
}

func countPtr(v *int64) string {
	if v == nil {
		return "-"
	}
	return ui.Count(*v)
}

// writeTaskLines writes one JSON object per task (JSON Lines).
func writeTaskLines(w io.Writer, rows []snapshot.TaskSummary) error {
	bw := ui.NewLineBuffer(w)
	for i := range rows {
		if err := ui.JSON(bw, &rows[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeTaskTable writes the per-task rows as a table that fits width and
// a line counting the flags. A rate is shown with the trials it stands on
// ("100.0% of 1 scored, 3 planned"); at a narrow width the columns least
// needed to read a task's state are left out first.
func writeTaskTable(w io.Writer, width int, rows []snapshot.TaskSummary, s ui.Styles) error {
	bw := ui.NewLineBuffer(w)
	hat := "PASS^K"
	if len(rows) > 0 && rows[0].K > 0 {
		hat = "PASS^" + strconv.Itoa(rows[0].K)
	}
	t := ui.Table{
		Header: []string{"TASK", "RATE", "SUCCESS", "FAILURE", "INFRA", "UNSCORED", "MISSING", hat, "COST", "TIME", "FLAGS"},
		Elide:  []bool{true, false, false, false, false, false, false, false, false, false, false},
		Right:  []bool{false, false, true, true, true, true, true, true, true, true, false},
		Drop:   []int{9, 6, 5, 4, 3, 2, 7, 8},
	}
	var flaky, fail, infra, low int
	for _, r := range rows {
		flags := strings.Join(r.Flags(), ",")
		if flags == "" {
			flags = "-"
		}
		for _, f := range r.Flags() {
			switch f {
			case "flaky":
				flaky++
			case "always_fail":
				fail++
			case "infra_prone":
				infra++
			default:
				low++
			}
		}
		t.Rows = append(t.Rows, []string{ui.Cell(r.Task), r.RateText(), strconv.Itoa(r.Success),
			strconv.Itoa(r.Failure), strconv.Itoa(r.InfraError), strconv.Itoa(r.Unscored), strconv.Itoa(r.Missing),
			percent(r.PassHatK), taskCost(&r), taskTime(r.DurationSec), flags})
	}
	t, dropped := t.Fit(width)
	for i, h := range t.Header {
		t.Header[i] = s.Bold.Render(h)
	}
	if err := ui.Columns(bw, width, t); err != nil {
		return err
	}
	fmt.Fprintf(bw, "%s · %s flaky · %s always_fail · %s infra_prone · %s low_coverage\n", ui.Plural(len(rows), "task"), count(flaky), count(fail), count(infra), count(low))
	if len(dropped) > 0 {
		fmt.Fprintln(bw, ui.Wrap(fmt.Sprintf("%s left out to fit %d columns (--output json has them)", strings.Join(dropped, ", "), width), width))
	}
	return bw.Flush()
}

// taskCost is a task's known cost with its coverage when partial:
// "$0.42", "$0.42 (2 of 3)", "-" when no attempt reported one.
func taskCost(r *snapshot.TaskSummary) string {
	switch {
	case r.CostUSD == nil:
		return "-"
	case r.WithCost < r.Attempts:
		return fmt.Sprintf("%s (%d of %d)", snapshot.USD(*r.CostUSD), r.WithCost, r.Attempts)
	}
	return snapshot.USD(*r.CostUSD)
}

func taskTime(sec *float64) string {
	if sec == nil {
		return "-"
	}
	return duration(*sec)
}

// taskRows is the per-task view of a round with each task's cost
// (snapshot.TaskTable.AddObservation), sorted by key.
func taskRows(r *report.Round, key string) ([]snapshot.TaskSummary, error) {
	var tt snapshot.TaskTable
	for i := range r.Trials {
		if err := tt.AddObservation(r.Trials[i].Task, r.Trials[i].Status, r.Trials[i].Observation); err != nil {
			return nil, err
		}
	}
	rows := tt.Rows()
	return rows, snapshot.SortTasks(rows, key)
}

// percent shows a rate as a percentage with one decimal, "-" for none.
func percent(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
}
