package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
)

// The text view of tpctl compare.

// compareView controls the human-readable comparison.
type compareView struct {
	// Styles come from the command's streams so that NO_COLOR and
	// non-terminals get plain text.
	Styles ui.Styles
	// Mask is the invocation's secrets mask (cmd/tpctl/secretgate.go),
	// run before a cell is cut or a line folded; nil masks nothing.
	Mask func(string) string
	// Limit caps how many trial IDs each transition list shows, followed
	// by "… and N more"; 0 shows every ID.
	Limit int
	// Width is the width every line fits (0: no limit): the table elides
	// or stacks, prose wraps.
	Width int
}

// writeCompare writes the side-by-side report of r: the two rounds, their
// protocols, the verdict (reasons, or delta and McNemar's test) and the
// per-trial transitions.
func writeCompare(w io.Writer, r *compare.Result, opt compareView) error {
	var bw bytes.Buffer
	s := opt.Styles
	b, c := &r.Base, &r.Candidate

	header := []string{"", s.Bold.Render(compare.SideBase), s.Bold.Render(compare.SideCandidate), ""}
	rows := [][]string{
		{"folder", printable(b.Dir), printable(c.Dir), ""},
		{"round", short(b.RoundID), short(c.RoundID), ""},
		{"name", printable(b.Name), printable(c.Name), ""},
		{"checkpoint", printable(b.Checkpoint.Ref), printable(c.Checkpoint.Ref), ""},
		{"served as", printable(b.Checkpoint.ServedAs), printable(c.Checkpoint.ServedAs), ""},
		{"label", labelStyle(s, printable(b.Label)), labelStyle(s, printable(c.Label)), ""},
		{"planned", itoa(b.Counts.Expected), itoa(c.Counts.Expected), ""},
		{"success", itoa(b.Counts.Success), itoa(c.Counts.Success), ""},
		{"failure", itoa(b.Counts.Failure), itoa(c.Counts.Failure), ""},
		{"infra error", itoa(b.Counts.InfraError), itoa(c.Counts.InfraError), ""},
		{"unscored", itoa(b.Counts.Unscored), itoa(c.Counts.Unscored), ""},
		{"missing", itoa(b.Counts.Missing), itoa(c.Counts.Missing), ""},
		{"success rate", rate(b.SuccessRate, b.SuccessRateCI95), rate(c.SuccessRate, c.SuccessRateCI95), ""},
		{"coverage", rate(b.Coverage, b.CoverageCI95), rate(c.Coverage, c.CoverageCI95), ""},
		{"", "", "", ""},
		{s.Bold.Render("protocol"), "", "", ""},
		same(s, "digest rules", b.Protocol.DigestRules, c.Protocol.DigestRules),
		same(s, "outcome rules", b.OutcomeRules, c.OutcomeRules),
		same(s, "dataset", b.Protocol.DatasetDigest, c.Protocol.DatasetDigest),
		same(s, "cohort", b.Protocol.CohortDigest, c.Protocol.CohortDigest),
		same(s, "verifier", b.Protocol.VerifierDigest, c.Protocol.VerifierDigest),
		same(s, "settings", b.Protocol.SettingsDigest, c.Protocol.SettingsDigest),
		{"split", printable(b.Protocol.Split), printable(c.Protocol.Split), ""},
	}
	if b.Dataset != nil || c.Dataset != nil {
		// A limited run says so beside its rates (Inspect and lm-eval rounds).
		for i, r := range rows {
			if r[0] == "coverage" {
				rows = slices.Insert(rows, i+1, []string{"over", sideScope(b.Dataset), sideScope(c.Dataset), ""})
				break
			}
		}
	}
	if err := ui.Columns(&bw, opt.Width, ui.Table{Header: header, Rows: rows, Elide: []bool{false, true, true, false}, Mask: opt.Mask}); err != nil {
		return err
	}
	fmt.Fprintln(&bw)

	if r.Comparable {
		fmt.Fprintln(&bw, s.OK.Render("comparable:")+" same digest rules, outcome rules, dataset, cohort, verifier and settings; both rounds clean")
		if r.Delta != nil {
			fmt.Fprintf(&bw, "delta (candidate − base success rate): %s percentage points (%s)\n",
				s.Bold.Render(signed(*r.Delta*100)), strconv.FormatFloat(*r.Delta, 'g', 6, 64))
			fmt.Fprintln(&bw, s.Faint.Render("  the delta is not a statistical significance claim"))
		}
		fmt.Fprintf(&bw, "discordant pairs: %s failure → success, %s success → failure\n",
			count(r.Discordant.FailureToSuccess), count(r.Discordant.SuccessToFailure))
		if r.McNemarP != nil {
			note := ""
			if r.Discordant.FailureToSuccess+r.Discordant.SuccessToFailure == 0 {
				note = " (no discordant pairs)"
			}
			fmt.Fprintf(&bw, "exact two-sided McNemar test (binomial, p = 0.5, on the discordant pairs): p = %s%s\n",
				strconv.FormatFloat(*r.McNemarP, 'g', 4, 64), note)
		}
		if r.Paired != nil {
			renderPaired(&bw, s, r.Paired)
		}
	} else {
		fmt.Fprintln(&bw, s.Error.Render("not comparable:")+" no delta and no McNemar p-value are shown, because")
		width := 0
		for _, reason := range r.Reasons {
			width = max(width, len(reason.Code))
		}
		for _, reason := range r.Reasons {
			fmt.Fprintf(&bw, "  %s  %s\n", s.Warn.Render(pad(reason.Code, width)), printable(reason.Message))
		}
	}
	fmt.Fprintln(&bw)

	t := &r.Transitions
	fmt.Fprintln(&bw, s.Heading.Render("per trial (matched by trial_id)"))
	list(&bw, s, "failure → success", t.FailureToSuccess, nil, opt.Limit)
	list(&bw, s, "success → failure", t.SuccessToFailure, nil, opt.Limit)
	fmt.Fprintf(&bw, "unchanged: %s success, %s failure\n", count(t.UnchangedSuccess), count(t.UnchangedFailure))
	list(&bw, s, "not comparable", t.NotComparable, func(i int) string {
		if i >= len(t.NotComparableDetail) {
			return ""
		}
		d := t.NotComparableDetail[i]
		return s.Faint.Render(fmt.Sprintf("base %s, candidate %s", d.Base, d.Candidate))
	}, opt.Limit)
	// Whole lines, each written once: the secret gate masks each Write.
	lw := ui.NewLineBuffer(w)
	if _, err := io.WriteString(lw, ui.Wrap(bw.String(), opt.Width, opt.Mask)); err != nil {
		return err
	}
	return lw.Flush()
}

// renderPaired prints the paired difference and its uncertainty, in
// percentage points.
func renderPaired(w io.Writer, s ui.Styles, p *compare.Paired) {
	fmt.Fprintf(w, "paired difference over %s in %s (matched by trial_id, scored on both sides):\n", ui.Plural(p.Trials, "trial"), ui.Plural(p.Tasks, "task"))
	se := "task-clustered SE n/a"
	if p.SEClustered != nil {
		se = fmt.Sprintf("task-clustered SE %.1f pp", *p.SEClustered*100)
	}
	switch {
	case p.NullReason != nil:
		fmt.Fprintf(w, "  delta %s pp (%s), %s; 95%% CI and MDE n/a: %s\n",
			signed(p.Delta*100), strconv.FormatFloat(p.Delta, 'g', 6, 64), se, p.NullReason.Message)
	case p.CI95 != nil && p.MDE80 != nil && p.DF != nil:
		fmt.Fprintf(w, "  delta %s pp (%s), %s, 95%% CI %s to %s pp (t, %d df)\n",
			signed(p.Delta*100), strconv.FormatFloat(p.Delta, 'g', 6, 64), se, signed(p.CI95[0]*100), signed(p.CI95[1]*100), *p.DF)
		fmt.Fprintf(w, "  minimum detectable effect (80%% power, two-sided α = 0.05): %.1f pp\n", *p.MDE80*100)
	}
	fmt.Fprintln(w, s.Faint.Render("  the interval and the MDE state the uncertainty of the delta; they are not a significance claim"))
}

// list prints a heading with the count, then one ID a line, cut at limit.
func list(w io.Writer, s ui.Styles, title string, ids []string, detail func(int) string, limit int) {
	fmt.Fprintf(w, "%s (%s)\n", title, count(len(ids)))
	for i, id := range ids {
		if limit > 0 && i == limit {
			fmt.Fprintf(w, "  %s\n", s.Faint.Render(fmt.Sprintf("… and %s more (--output json lists all)", count(len(ids)-i))))
			return
		}
		if detail != nil {
			fmt.Fprintf(w, "  %s  %s\n", printable(id), detail(i))
		} else {
			fmt.Fprintf(w, "  %s\n", printable(id))
		}
	}
}

// printable escapes untrusted text for the terminal (ui.Printable):
// names, checkpoints and trial IDs come from the plan and may carry
// terminal escape sequences. JSON output carries the values unchanged.
func printable(s string) string { return ui.Printable(s) }

// same is a protocol row: both values shortened, and whether they match.
func same(s ui.Styles, name, b, c string) []string {
	verdict := s.OK.Render("same")
	if b != c {
		verdict = s.Warn.Render("differs")
	}
	return []string{name, short(b), short(c), verdict}
}

func short(v string) string { return compare.ShortDigest(v) }

func labelStyle(s ui.Styles, label string) string {
	if label == "clean" {
		return s.OK.Render(label)
	}
	return s.Warn.Render(label)
}

// rate formats a fraction as a percentage with its Wilson interval.
func rate(v *float64, ci *[2]float64) string {
	if v == nil {
		return "n/a (nothing to divide by)"
	}
	out := fmt.Sprintf("%.1f%%", *v*100)
	if ci != nil {
		out += fmt.Sprintf(" (95%% CI %.1f–%.1f%%)", ci[0]*100, ci[1]*100)
	}
	return out
}

// signed formats percentage points with an explicit sign; values that
// round to zero read "0.0", never "-0.0" or "+0.0".
func signed(x float64) string {
	switch {
	case x >= 0.05:
		return fmt.Sprintf("+%.1f", x)
	case x <= -0.05:
		return fmt.Sprintf("%.1f", x)
	}
	return "0.0"
}

func itoa(n int) string { return ui.Count(int64(n)) }

func pad(s string, width int) string { return s + strings.Repeat(" ", max(0, width-len(s))) }

// sideScope words which part of the dataset a round's rates stand on
// (snapshot.DatasetScope.String: "10 of 100 samples of the dataset", "10
// of 2,376 documents of the split"); "" when the plan does not record it.
func sideScope(d *compare.DatasetScope) string { return termsafe.Escape(d.String()) }
