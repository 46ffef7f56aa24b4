package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/trend"
)

// trendListLimit is how many regressed tasks a pair's line names before
// "… and N more" (--output json lists all).
const trendListLimit = 10

// writeTrend is the terminal view of a trend: one row per round (a table
// that fits width, ui.Columns), then the paired differences and the
// regressed tasks, wrapped to width.
func writeTrend(w io.Writer, width int, mask func(string) string, r *trend.Result) error {
	var b strings.Builder
	over := ""
	if d := r.Dataset; d != nil {
		// A limited run says so: the rates are over these samples.
		over = ", over " + sideScope(d)
	}
	fmt.Fprintf(&b, "trend over %s of one protocol (dataset %s…, cohort %s…%s)\n\n", ui.Plural(len(r.Rounds), "round"), r.Protocol.DatasetDigest[:min(12, len(r.Protocol.DatasetDigest))], r.Protocol.CohortDigest[:min(12, len(r.Protocol.CohortDigest))], over)
	if _, err := io.WriteString(w, ui.Wrap(b.String(), width, mask)); err != nil {
		return err
	}
	b.Reset()
	t := ui.Table{
		Header: []string{"  #", "checkpoint", "label", "success", "wilson 95%", "clustered 95%", "coverage", "cost", "per success"},
		Elide:  []bool{false, true},
		// Checkpoints of one run differ at their end (the step).
		ElideStart: []bool{false, true},
		Right:      []bool{false, false, false, true, false, false, true, true, true},
		// A narrow terminal keeps the rates with their counts and the
		// task-clustered interval; the cost and the Wilson interval are
		// in --output json.
		Drop:     []int{8, 7, 4},
		CutFirst: true,
	}
	for i, p := range r.Rounds {
		best := " "
		if i == r.Best {
			best = "*"
		}
		// A rate with the trials it stands on: success of scored, scored of planned.
		c := p.Counts
		t.Rows = append(t.Rows, []string{best + " " + strconv.Itoa(i+1), ui.Cell(p.Checkpoint.Ref), p.Label,
			trendPct(p.SuccessRate) + fmt.Sprintf(" (%d/%d)", c.Success, c.Scored()),
			trendInterval(p.SuccessRateCI95), trendInterval(p.SuccessRateCI95Clustered),
			trendPct(p.Coverage) + fmt.Sprintf(" (%d/%d)", c.Scored(), c.Expected), trendCost(&p.Cost), trendUSD(p.USDPerSuccess)})
	}
	known := false
	for _, p := range r.Rounds {
		known = known || p.Cost.Known()
	}
	if !known { // two columns of "—" say less than one line
		t = t.Without(7, 8)
		t.Drop = []int{4}
	}
	t, dropped := t.Fit(width)
	t.Mask = mask
	if err := ui.Columns(w, width, t); err != nil {
		return err
	}
	if len(dropped) > 0 {
		fmt.Fprintf(&b, "  %s left out to fit %d columns (--output json has them)\n", strings.Join(dropped, ", "), width)
	}
	if r.Best >= 0 {
		b.WriteString("  * best success rate\n")
	}
	// A degraded round's rate is over the trials scored; its worst and
	// best case over every planned trial are snapshot show's bounds.
	for i, p := range r.Rounds {
		if bd := p.SuccessRateBounds; bd != nil && bd.NotScored > 0 {
			fmt.Fprintf(&b, "  round %d: %s\n", i+1, boundsText(bd))
		}
	}
	switch {
	case known && slices.Contains(dropped, "cost"):
	case known:
		b.WriteString("  cost: the known spend of every attempt, retries included (with how many attempts reported one when not all); per success: that spend over the round's successes\n")
	default:
		b.WriteString("  cost: unknown (no attempt of any round reported one)\n")
	}
	if len(r.Pairs) > 0 {
		b.WriteString("\npaired differences (later − earlier; vs best: round − best)\n")
	}
	if f := firstFamily(r.Pairs); f != nil {
		fmt.Fprintf(&b, "  vs best: the best was chosen on these data, so its intervals hold together with every pair of the %s (Bonferroni over %s)\n",
			ui.Plural(len(r.Rounds), "round"), ui.Plural(f.Comparisons, "comparison"))
	}
	for _, p := range r.Pairs {
		label := fmt.Sprintf("%d → %d", p.From+1, p.To+1)
		if p.Kind == trend.PairVsBest {
			label += " (vs best)"
		}
		switch {
		case !p.Comparable:
			fmt.Fprintf(&b, "  %-16s not comparable: %s\n", label, ui.Printable(p.Reason))
		case p.Paired == nil:
			fmt.Fprintf(&b, "  %-16s no trial scored in both rounds\n", label)
		case p.Family != nil:
			fmt.Fprintf(&b, "  %-16s %s, 95%% family interval %s (%s, %s)\n", label, trendSigned(p.Paired.Delta), trendFamily(p.Family),
				ui.Plural(p.Paired.Trials, "trial"), ui.Plural(p.Paired.Tasks, "task"))
		default:
			fmt.Fprintf(&b, "  %-16s %s, 95%% interval %s (%s, %s)\n", label, trendSigned(p.Paired.Delta), trendPaired(p.Paired),
				ui.Plural(p.Paired.Trials, "trial"), ui.Plural(p.Paired.Tasks, "task"))
		}
		// A pair that is not comparable has no regressions to name: its
		// success counts measure different things.
		if p.Kind == trend.PairAdjacent && p.Comparable && len(p.Regressed) > 0 {
			var names []string
			for _, t := range p.Regressed[:min(trendListLimit, len(p.Regressed))] {
				names = append(names, fmt.Sprintf("%s %d→%d", ui.Printable(t.Task), t.BaseSuccess, t.CandSuccess))
			}
			more := ""
			if len(p.Regressed) > trendListLimit {
				more = fmt.Sprintf(", … and %d more (all in --output json)", len(p.Regressed)-trendListLimit)
			}
			fmt.Fprintf(&b, "  %-16s regressed: %s%s\n", "", strings.Join(names, ", "), more)
		}
	}
	_, err := io.WriteString(w, ui.Wrap(b.String(), width, mask))
	return err
}

func trendPct(x *float64) string {
	if x == nil {
		return "—"
	}
	return strconv.FormatFloat(100**x, 'f', 1, 64) + "%"
}

func trendInterval(ci *[2]float64) string {
	if ci == nil {
		return "—"
	}
	return "[" + trendPct(&ci[0]) + ", " + trendPct(&ci[1]) + "]"
}

// trendCost is a round's known spend, with its coverage when partial.
func trendCost(c *snapshot.Cost) string {
	switch {
	case c.USDAllAttempts == nil:
		return "—"
	case c.WithCost < c.Attempts:
		return fmt.Sprintf("%s (%d of %d)", snapshot.USD(*c.USDAllAttempts), c.WithCost, c.Attempts)
	}
	return snapshot.USD(*c.USDAllAttempts)
}

func trendUSD(v *float64) string {
	if v == nil {
		return "—"
	}
	return snapshot.USD(*v)
}

// trendSigned is a difference of rates in percentage points, as compare
// says it.
func trendSigned(x float64) string {
	s := strconv.FormatFloat(100*x, 'f', 1, 64) + " pp"
	if x >= 0 {
		return "+" + s
	}
	return "−" + strings.TrimPrefix(s, "-")
}

func trendPaired(p *compare.Paired) string {
	if p.CI95 == nil {
		if p.NullReason != nil {
			return "— (" + ui.Printable(p.NullReason.Message) + ")"
		}
		return "— (too few tasks)"
	}
	return "[" + trendSigned(p.CI95[0]) + ", " + trendSigned(p.CI95[1]) + "]"
}

// firstFamily is the family of the first vs-best pair that has one.
func firstFamily(ps []trend.Pair) *trend.Family {
	for _, p := range ps {
		if p.Family != nil {
			return p.Family
		}
	}
	return nil
}

func trendFamily(f *trend.Family) string {
	if f.CI95 == nil {
		if f.NullReason != nil {
			return "— (" + ui.Printable(f.NullReason.Message) + ")"
		}
		return "— (too few tasks)"
	}
	return "[" + trendSigned(f.CI95[0]) + ", " + trendSigned(f.CI95[1]) + "]"
}
