package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/snapshot"
)

// printSummary writes the human summary of a round; facts, when not nil,
// add what it cost and which part of the dataset the rates are over
// (Inspect's samples of the dataset, lm-eval's documents of the split).
func printSummary(a *app, m *snapshot.Manifest, dir string, facts *roundFacts) {
	var cost *snapshot.Cost
	scope := ""
	if facts != nil {
		cost = &facts.Cost
		scope = facts.Dataset.String()
	}
	st := a.io.Styles()
	w := a.io.Out
	// Pad the plain key, then style it: escape sequences would otherwise
	// count toward the width and shift every value on a terminal.
	// A long value is wrapped beside its key, its further lines under it;
	// a value of one word (a round ID, a digest) is never cut, so it can
	// still be copied whole.
	const valueAt = 14
	room := a.io.Width() - valueAt
	if room < 24 {
		room = 0 // too narrow to wrap beside the keys: lines stay whole
	}
	row := func(k, v string) {
		if strings.Contains(v, " ") {
			v = strings.ReplaceAll(ui.Wrap(v, room, a.secrets.mask), "\n", "\n"+strings.Repeat(" ", valueAt))
		}
		fmt.Fprintf(w, "%s%s %s\n", st.Bold.Render(k), strings.Repeat(" ", max(valueAt-1-len(k), 0)), v)
	}
	row("snapshot", termsafe.Escape(dir))
	row("round", termsafe.Escape(m.RoundID))
	row("name", fmt.Sprintf("%s (split %s)", termsafe.Escape(m.Name), termsafe.Escape(m.Protocol.Split)))
	served := ""
	if m.Checkpoint.ServedAs != "" {
		served = fmt.Sprintf(" served as %s (a routing name; proves nothing about the weights)", termsafe.Escape(m.Checkpoint.ServedAs))
	}
	row("checkpoint", termsafe.Escape(m.Checkpoint.Ref)+served)
	src := termsafe.Escape(fmt.Sprintf("%s %s", m.Source.Format, m.Source.Revision))
	if !m.Source.FormatVerified {
		src += " " + st.Warn.Render("(format NOT verified)")
	}
	row("source", src)
	c := m.Counts
	row("counts", fmt.Sprintf("expected %s · success %s · failure %s · infra_error %s · unscored %s · missing %s",
		count(c.Expected), count(c.Success), count(c.Failure), count(c.InfraError), count(c.Unscored), count(c.Missing)))
	over := ""
	if scope != "" {
		over = ", over " + termsafe.Escape(scope)
	}
	row("success rate", rateText(m.SuccessRate, m.SuccessRateCI95, fmt.Sprintf("of %s scored%s", count(c.Scored()), over)))
	clusteredRow(row, m.Statistics)
	if b := m.SuccessRateBounds(); b != nil && b.NotScored > 0 {
		row("  bounds", boundsText(b))
	}
	row("coverage", rateText(m.Coverage, m.CoverageCI95, fmt.Sprintf("%s of %s planned scored%s", count(c.Scored()), count(c.Expected), over)))
	passKRows(row, m.Statistics)
	label := st.OK.Render(termsafe.Escape(m.Label))
	if m.Label != snapshot.LabelClean {
		label = st.Warn.Render(termsafe.Escape(m.Label)) + " (not every planned trial was scored)"
	}
	row("label", label)
	if len(m.ExceptionTypes) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m.ExceptionTypes)) {
			parts = append(parts, termsafe.Escape(k)+" "+count(m.ExceptionTypes[k]))
		}
		row("exceptions", strings.Join(parts, " · "))
	}
	costRows(row, cost)
	row("protocol", fmt.Sprintf("rules %s · outcomes %s", termsafe.Escape(m.Protocol.DigestRules), termsafe.Escape(m.OutcomeRules)))
	row("  dataset", termsafe.Escape(m.Protocol.DatasetDigest))
	row("  cohort", termsafe.Escape(m.Protocol.CohortDigest))
	row("  verifier", termsafe.Escape(m.Protocol.VerifierDigest))
	row("  settings", termsafe.Escape(m.Protocol.SettingsDigest))
	t := m.Trajectories
	if t.Count > 0 {
		row("trajectories", fmt.Sprintf("%s (%s truncated), redacted by %s, capture policy sampled", count(t.Count), count(t.Truncated), termsafe.Escape(strings.Join(t.Redactors, ", "))))
	} else {
		row("trajectories", "none")
	}
}

// boundsText says the worst and best case of the success rate (Manski
// bounds) of a round with trials not scored.
func boundsText(b *snapshot.RateBounds) string {
	return fmt.Sprintf("worst–best case %.1f–%.1f%% (if the %s of %s planned trials not scored had all failed / all succeeded)",
		b.WorstCase*100, b.BestCase*100, count(b.NotScored), count(b.Planned))
}

func rateText(r *float64, ci *[2]float64, of string) string {
	if r == nil || ci == nil {
		return "n/a (" + of + ")"
	}
	return fmt.Sprintf("%.1f%% (95%% CI %.1f–%.1f%%, Wilson) %s", *r*100, ci[0]*100, ci[1]*100, of)
}

// clusteredRow prints the task-clustered error of the success rate under
// it. See docs/statistics.md.
func clusteredRow(row func(k, v string), st *snapshot.Statistics) {
	if st == nil {
		return
	}
	se := ""
	if st.SuccessRateSEClustered != nil {
		se = fmt.Sprintf("SE %.1f pp, ", *st.SuccessRateSEClustered*100)
	}
	switch ci := st.SuccessRateCI95Clustered; {
	case st.SuccessRateCI95ClusteredNull != nil:
		row("  clustered", fmt.Sprintf("%s95%% CI n/a: %s", se, st.SuccessRateCI95ClusteredNull.Message))
	case ci == nil:
		row("  clustered", fmt.Sprintf("n/a (%s scored; the task-clustered SE needs two)", ui.Plural(st.Clusters, "task")))
	case st.SuccessRateNEff != nil:
		row("  clustered", fmt.Sprintf("%s95%% CI %.1f–%.1f%% (Wilson on %.1f effective trials, t with %d df; trials clustered by task, %s)",
			se, ci[0]*100, ci[1]*100, *st.SuccessRateNEff, st.Clusters-1, ui.Plural(st.Clusters, "task")))
	default: // tpctl-snapshot/2
		row("  clustered", fmt.Sprintf("%s95%% CI %.1f–%.1f%% (normal, trials clustered by task, %s)",
			se, ci[0]*100, ci[1]*100, ui.Plural(st.Clusters, "task")))
	}
}

// passKRows prints pass@k and pass^k (a tpctl-snapshot/1 manifest has no
// statistics at all).
func passKRows(row func(k, v string), st *snapshot.Statistics) {
	if st == nil {
		row("statistics", "none (a tpctl-snapshot/1 snapshot; import again for pass@k and task-clustered errors)")
		return
	}
	reasons := func(pt snapshot.PassKTasks) string {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(pt.LeftOutReasons)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, pt.LeftOutReasons[k]))
		}
		return strings.Join(parts, " · ")
	}
	if pt := st.PassKTasks; pt != nil { // tpctl-snapshot/2
		if pt.Counted == 0 {
			row("pass@k", "n/a (no task has every planned repeat scored)")
		} else {
			row("pass@k", kValuesText(st.PassAtK)+" (over "+ui.Plural(pt.Counted, "task")+" with every repeat scored)")
			row("pass^k", kValuesText(st.PassHatK)+" (all k succeed)")
		}
		if pt.LeftOut > 0 {
			row("  left out", fmt.Sprintf("%s: %s", ui.Plural(pt.LeftOut, "task"), reasons(*pt)))
		}
		return
	}
	if st.PassAtK.MaxK() == 0 {
		row("pass@k", "n/a (no task has a scored repeat)")
		return
	}
	row("pass@k", kValuesText(st.PassAtK)+" (each k over the tasks with at least k scored repeats)")
	row("pass^k", kValuesText(st.PassHatK)+" (all k succeed)")
	var left []string
	for _, k := range shownK(st.PassAtK.MaxK()) {
		if pt, ok := st.PassKTasksByK.K(k); ok && pt.LeftOut > 0 {
			left = append(left, fmt.Sprintf("k=%d %s (%s)", k, ui.Plural(pt.LeftOut, "task"), reasons(pt)))
		}
	}
	if len(left) > 0 {
		row("  left out", strings.Join(left, "; "))
	}
}

// shownK is the k that kValuesText shows: 1…8, then the powers of two and
// the largest.
func shownK(maxK int) []int {
	var ks []int
	for k := 1; k <= maxK; k++ {
		if k > 8 && k&(k-1) != 0 && k != maxK {
			continue
		}
		ks = append(ks, k)
	}
	return ks
}

// kValuesText lists k=1…8 and then the powers of two and the largest k,
// so that a plan of many repeats keeps a readable line (JSON has all).
func kValuesText(m snapshot.KValues) string {
	var parts []string
	for _, k := range shownK(m.MaxK()) {
		v, _ := m.K(k)
		parts = append(parts, fmt.Sprintf("k=%d %.1f%%", k, v*100))
	}
	return strings.Join(parts, " · ")
}

// count is n with thousands separators, for the counts of a summary:
// "1,234 trials" reads at a glance where "1234" must be counted.
func count(n int) string { return ui.Count(int64(n)) }
