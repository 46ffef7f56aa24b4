package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/ui"
)

// statisticEntry explains one number tpctl reports for repeated trials;
// the list is the `tpctl explain statistics --output json` contract.
type statisticEntry struct {
	Name        string `json:"name"`
	Where       string `json:"where"`
	Meaning     string `json:"meaning"`
	Formula     string `json:"formula"`
	Assumptions string `json:"assumptions"`
	NullWhen    string `json:"null_when"`
}

type statisticsReport struct {
	MessageType string           `json:"message_type"` // "statistics"
	Note        string           `json:"note"`
	Statistics  []statisticEntry `json:"statistics"`
}

const statisticsNote = "None of these numbers is a statistical significance claim for a delta: " +
	"they state how uncertain the numbers are. Trials of one task are not independent (a hard task fails every repeat), " +
	"so errors are clustered by task, and intervals use Student t on G−1 degrees of freedom for G tasks; below 5 tasks they are not given (null, with the reason). " +
	"Full text with a worked example and the measured coverage: docs/statistics.md."

func statisticsEntries() []statisticEntry {
	const snap, cmpJSON = "snapshot.json", "tpctl compare --output json"
	return []statisticEntry{
		{"success_rate_ci95", snap,
			"Wilson score 95% interval of the success rate.",
			"(p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n), z = 1.959964, p = success/n, n = scored trials",
			"every scored trial independent: right when each task runs once, too narrow when repeats of one task agree",
			"no trial is scored"},
		{"statistics.clusters", snap,
			"Number of tasks with at least one scored trial: G, the clusters of the errors below.",
			"count of tasks with success + failure ≥ 1", "", "never (0 when nothing is scored)"},
		{"statistics.success_rate_se_clustered", snap,
			"Standard error of the success rate that lets trials of one task be correlated (cluster-robust, CR1).",
			"√( G/(G−1) · Σ_g (s_g − n_g·p)² / N² ), s_g successes and n_g scored trials of task g, N = Σ n_g, p = Σ s_g / N; " +
				"the same as statsmodels OLS of the 0/1 outcome on a constant with cov_type=\"cluster\" by task",
			"tasks independent of each other, a sample of a larger population of tasks; with few tasks the SE itself is noisy and biased low",
			"fewer than two tasks are scored"},
		{"statistics.success_rate_ci95_clustered", snap,
			"95% interval of the success rate that respects the clustering: a Wilson interval on the effective number of independent trials, with Student t on G−1 degrees of freedom in place of z (the small-sample correction). Never of zero width, always inside [0, 1].",
			"Wilson(p, n_eff, t₀.₉₇₅(G−1)), n_eff = min(N, p(1−p)/se²) (N when se or p(1−p) is 0); success_rate_n_eff holds n_eff",
			"as for the clustered SE; measured coverage of the population mean over simulated task populations: 95.6–99.3% for G = 5, 10 and 30 (docs/statistics.md, Coverage), at least 93.6% over other shapes and repeat counts",
			"fewer than 5 tasks are scored: then success_rate_ci95_clustered_null says so (code too_few_tasks, naming G); the Wilson interval stays"},
		{"statistics.success_rate_n_eff", snap,
			"Effective sample size: the number of independent trials the clustered data are worth.",
			"min(N, p(1−p)/se²), N when se or p(1−p) is 0",
			"as for the clustered SE",
			"absent when success_rate_ci95_clustered is null"},
		{"statistics.pass_at_k", snap,
			"Chance that at least one of k repeats of a task succeeds, averaged over tasks (unbiased estimator, Chen et al. 2021).",
			"for each k: mean over the tasks with at least k scored repeats of 1 − C(n−c, k)/C(n, k), n the task's scored repeats, c its successes (Inspect AI's rule)",
			"repeats of a task are exchangeable draws; whether a repeat gets scored does not depend on what it would have scored",
			"{} when no task has a scored repeat; k runs from 1 to the most scored repeats of a task"},
		{"statistics.pass_hat_k", snap,
			"Chance that all k repeats of a task succeed (pass^k, as τ-bench reports it), averaged over tasks.",
			"for each k: mean over the tasks with at least k scored repeats of C(c, k)/C(n, k)",
			"as for pass_at_k",
			"{} when no task has a scored repeat"},
		{"statistics.pass_k_tasks_by_k", snap,
			"For each k, which tasks pass@k and pass^k average over (counted: at least k scored repeats) and why the others are left out, one reason each. Leaving out every task with a crashed repeat would select the crash-free tasks; keeping each task's scored repeats does not.",
			"reasons, first that applies: repeats_planned_below_k, repeat_missing (a planned repeat never ran), repeat_infra_error, repeat_unscored",
			"", "never (tpctl-snapshot/2 has pass_k_tasks instead: one set of tasks, those with every planned repeat scored)"},
		{"paired.delta", cmpJSON,
			"Mean paired difference over trials matched by trial_id and scored on both sides.",
			"mean of d = candidate success − base success (each −1, 0 or +1)",
			"the same trials ran in both rounds (the comparison is comparable)",
			"paired is null when the rounds are not comparable"},
		{"paired.se_clustered", cmpJSON,
			"Task-clustered (CR1) standard error of the paired delta.",
			"√( G/(G−1) · Σ_g (D_g − n_g·delta)² / N² ), D_g the sum of d over the n_g matched trials of task g",
			"tasks independent of each other; many tasks",
			"fewer than two tasks are matched"},
		{"paired.ci95", cmpJSON,
			"95% interval of the paired delta with Student t on G−1 degrees of freedom (paired.df), clipped to [−1, 1].",
			"delta ± t₀.₉₇₅(G−1) · max(se_clustered, 1/(trials+2)); the floor (the Agresti–Min SE of no change) keeps it from zero width when every task has the same mean difference",
			"as for se_clustered; measured: excludes 0 with no true change in at most 5.0% of simulated pairs for G = 5, 10 and 30 (docs/statistics.md); it describes uncertainty, it is not a test",
			"fewer than 5 tasks are matched: then paired.null_reason says so (code too_few_tasks, naming G)"},
		{"paired.mde80", cmpJSON,
			"Minimum detectable effect: the smallest true difference a two-sided test at α = 0.05 would detect with 80% power on this many tasks.",
			"(t₀.₉₇₅(G−1) + t₀.₈₀(G−1)) · max(se_clustered, 1/(trials+2)); ≈ 2.8·se with many tasks, 3.72·se with 5",
			"the standard error of a new comparison of the same size would be about the same",
			"as for paired.ci95"},
		{"paired.null_reason", cmpJSON,
			"Why paired.ci95, paired.mde80 and paired.df are null (the same object as statistics.success_rate_ci95_clustered_null).",
			"{code: \"too_few_tasks\", tasks: G, min_tasks: 5, message}",
			"", "null when the interval is given"},
		{"mcnemar_p", cmpJSON,
			"Exact two-sided McNemar test on the discordant pairs (failure → success against success → failure).",
			"two-sided binomial test of the discordant counts with p = 0.5",
			"trials independent: it ignores that repeats of a task are clustered",
			"the rounds are not comparable"},
	}
}

// newExplainStatisticsCmd is tpctl explain statistics; runF nil is
// explainStatisticsRun.
func newExplainStatisticsCmd(a *app, runF func(context.Context, *app, *explainOptions) error) *cobra.Command {
	if runF == nil {
		runF = explainStatisticsRun
	}
	return &cobra.Command{
		Use:   "statistics",
		Short: "Print what each statistic for repeated trials means, its formula, assumptions and when it is null",
		Long: `Print the meaning, formula, assumptions and null condition of every statistic
tpctl reports for repeated trials: the Wilson interval, the task-clustered
standard error and interval of the success rate, pass@k and pass^k (in
snapshot.json), and the paired delta with its clustered standard error, 95%
interval and minimum detectable effect (in tpctl compare). Below 5 tasks the
clustered and paired intervals and the MDE are null with a reason. None is a
significance claim. --output json prints {"note", "statistics": [{name, where,
meaning, formula, assumptions, null_when}]}. The full text, with a worked
example, is in docs/statistics.md.`,
		Example: "  tpctl explain statistics\n  tpctl explain statistics --output json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runF(cmd.Context(), a, &explainOptions{})
		},
	}
}

func explainStatisticsRun(_ context.Context, a *app, _ *explainOptions) error {
	rep := statisticsReport{MessageType: "statistics", Note: statisticsNote, Statistics: statisticsEntries()}
	if a.jsonOutput() {
		return a.io.JSON(rep)
	}
	a.page()
	return writeStatistics(a.io.Out, a.io.Width(), a.secrets.mask, a.io.Styles(), rep)
}

// writeStatistics prints each statistic's fields as a two-column table
// whose values wrap within width (0: no limit); the note is wrapped at 80
// or the narrower terminal.
func writeStatistics(w io.Writer, width int, mask func(string) string, st ui.Styles, rep statisticsReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", st.Heading.Render("Statistics for repeated trials"))
	noteWidth := 80
	if width > 0 && width < noteWidth {
		noteWidth = width
	}
	b.WriteString(wrapWords(rep.Note, noteWidth) + "\n")
	for _, e := range rep.Statistics {
		b.WriteString(ui.Wrap(fmt.Sprintf("\n%s  %s\n", st.Bold.Render(e.Name), st.Faint.Render("("+e.Where+")")), width, mask))
		t := ui.Table{WrapLast: true}
		for _, f := range [][2]string{{"meaning", e.Meaning}, {"formula", e.Formula}, {"assumes", e.Assumptions}, {"null when", e.NullWhen}} {
			if f[1] != "" {
				// The label padded to 11 cells: the value starts in the
				// same column whatever the entry's labels.
				t.Rows = append(t.Rows, []string{fmt.Sprintf("  %-9s", f[0]), f[1]})
			}
		}
		t.Mask = mask
		_ = ui.Columns(&b, width, t) // a strings.Builder does not fail
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapWords breaks s into lines of at most width runes at spaces.
func wrapWords(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := len([]rune(w))
		if i > 0 {
			if n+1+l > width {
				b.WriteByte('\n')
				n = 0
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}
