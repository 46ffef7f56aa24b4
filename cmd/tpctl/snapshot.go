package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tuneplane/tpctl/compare"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/snapshot"
)

// newSnapshotCmd is the group of tpctl snapshot show and snapshot verify.
func newSnapshotCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "snapshot",
		Short: "Show or verify a saved snapshot",
	}
}

// snapshotShowOptions are the resolved inputs of tpctl snapshot show.
type snapshotShowOptions struct {
	Dir     string
	Trials  bool          // --trials: the table of planned trials
	Trial   string        // --trial ID: one trial in full
	Tasks   bool          // --tasks: one row per task
	Sort    string        // --sort: the --tasks column to order by
	SortSet bool          // --sort was given
	Filter  report.Filter // --status (repeatable), --reason, --task
}

// newSnapshotShowCmd is tpctl snapshot show; runF nil is snapshotShowRun.
func newSnapshotShowCmd(a *app, runF func(context.Context, *app, *snapshotShowOptions) error) *cobra.Command {
	if runF == nil {
		runF = snapshotShowRun
	}
	tv := &snapshotShowOptions{}
	show := &cobra.Command{
		Use:   "show DIR",
		Short: "Print a snapshot's round, protocol, counts, rates and trajectories",
		Long: `Print a snapshot's round, protocol, counts, rates and trajectories.

--trials lists every planned trial (missing ones included) as a table, or as
one JSON object per line with --output json, with the judge's detail of the
current attempt; --status (repeatable, or comma-separated), --reason and --task
narrow the list and imply --trials. --trial ID prints one trial: its current
result, every attempt with its detail, timings, tokens, cost, model and
evidence hash and, when exported, its trajectory as text. --tasks prints one
row per task: its success rate with the trials it stands on, the counts by
state, pass^k, what its attempts cost (known cost, with how many of them
reported one) and took, and the flags flaky, always_fail, infra_prone and
low_coverage (at least half its planned trials not scored); --sort orders
the rows worst first by a column. Every view verifies the snapshot first: a tampered one
prints its problems and exits 1, as tpctl snapshot verify does.`,
		Example: "  tpctl snapshot show out/round-1\n  tpctl snapshot show out/round-1 --output json\n" +
			"  tpctl snapshot show out/round-1 --status failure,infra_error\n  tpctl snapshot show out/round-1 --trial 'harbor/hello-world#1'\n" +
			"  tpctl snapshot show out/round-1 --tasks --sort rate",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tv.Dir = args[0]
			tv.SortSet = cmd.Flags().Changed("sort")
			return runF(cmd.Context(), a, tv)
		},
	}
	f := show.Flags()
	f.BoolVar(&tv.Trials, "trials", false, "list the planned trials")
	f.StringSliceVar(&tv.Filter.Statuses, "status", nil, "only trials in these states, repeatable or comma-separated ("+strings.Join(report.Statuses, ", ")+"); implies --trials")
	f.StringVar(&tv.Filter.Reason, "reason", "", "only this reason code (tpctl explain outcomes); implies --trials")
	f.StringVar(&tv.Filter.Task, "task", "", "only this task; implies --trials")
	f.StringVar(&tv.Trial, "trial", "", "print one trial by its ID (TASK#REPEAT)")
	f.BoolVar(&tv.Tasks, "tasks", false, "one row per task: counts, rate, pass^k and flags")
	f.StringVar(&tv.Sort, "sort", "task", "with --tasks: order rows worst first by "+strings.Join(snapshot.TaskSortKeys, ", "))
	return show
}

func snapshotShowRun(_ context.Context, a *app, o *snapshotShowOptions) error {
	if o.Trials || o.Trial != "" || o.Tasks || o.SortSet || !o.Filter.Empty() {
		return runSnapshotTrials(a, o)
	}
	return runSnapshotShow(a, o.Dir)
}

// snapshotVerifyOptions are the inputs of tpctl snapshot verify.
type snapshotVerifyOptions struct {
	Dir string
}

// newSnapshotVerifyCmd is tpctl snapshot verify; runF nil is
// runSnapshotVerify.
func newSnapshotVerifyCmd(a *app, runF func(context.Context, *app, *snapshotVerifyOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, a *app, o *snapshotVerifyOptions) error { return runSnapshotVerify(a, o.Dir) }
	}
	return &cobra.Command{
		Use:   "verify DIR",
		Short: "Re-hash every file and recompute the round ID",
		Long: `Verify re-hashes every file of a saved snapshot, re-derives counts, rates,
digests and the round ID from plan.json and observations.jsonl, and lists every
difference from snapshot.json. Exit 0 intact, 1 tampered, 2 not a snapshot.`,
		Example: "  tpctl snapshot verify out/round-1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(cmd.Context(), a, &snapshotVerifyOptions{Dir: args[0]})
		},
	}
}

// trajectoryHead is what show needs from a saved trajectory.
type trajectoryHead struct {
	File          string `json:"file"`
	TrialID       string `json:"trial_id"`
	TrialAttempt  int    `json:"trial_attempt"`
	Messages      int    `json:"messages"`
	TotalMessages int    `json:"total_messages"`
	Truncated     bool   `json:"truncated"`
}

func readTrajectoryHeads(s *snapshot.Snapshot) ([]trajectoryHead, error) {
	heads := []trajectoryHead{}
	for tr, err := range s.Trajectories() {
		if err != nil {
			return nil, err
		}
		name, b := tr.Name, tr.Data
		var t struct {
			TrialID       string            `json:"trial_id"`
			TrialAttempt  int               `json:"trial_attempt"`
			Messages      []json.RawMessage `json:"messages"`
			TotalMessages int               `json:"total_messages"`
			Truncated     bool              `json:"truncated"`
		}
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		heads = append(heads, trajectoryHead{name, t.TrialID, t.TrialAttempt, len(t.Messages), t.TotalMessages, t.Truncated})
	}
	return heads, nil
}

func runSnapshotShow(a *app, dir string) error {
	// Show prints what it verified, never a tampered snapshot's claims.
	// One streamed read verifies and gathers the facts: memory does not
	// grow with the round.
	s, facts, err := openSavedFacts(dir)
	if err != nil {
		var ve *snapshot.VerifyError
		if errors.As(err, &ve) {
			return refuseTampered(a, dir, ve.Problems)
		}
		return inputErr(err, "give the folder written by tpctl import --out")
	}
	defer s.Close()
	m := s.Manifest()
	heads, err := readTrajectoryHeads(s)
	if err != nil {
		return findingErr(fmt.Errorf("snapshot %q: %w", dir, err), "tpctl snapshot verify "+dir)
	}
	if a.jsonOutput() {
		// The document snapshot.json holds (on one line, by the JSON
		// rule), no envelope, no message_type, and beside its members
		// what was computed as read, not saved: what the round cost
		// (snapshot.Cost) and the success rate's worst and best case
		// (snapshot.RateBounds), so snapshot.json's bytes and round IDs
		// stay as they were.
		return a.io.JSON(struct {
			*snapshot.Manifest
			Cost              snapshot.Cost        `json:"cost"`
			SuccessRateBounds *snapshot.RateBounds `json:"success_rate_bounds"`
			// Dataset: which part of the dataset the rates stand on
			// (settings.dataset: Inspect and lm-eval rounds); absent when
			// the plan does not record it.
			Dataset *compare.DatasetScope `json:"dataset,omitempty"`
		}{m, facts.Cost, m.SuccessRateBounds(), facts.Dataset})
	}
	a.page()
	printSummary(a, m, dir, facts)
	for _, h := range heads {
		cut := ""
		if h.Truncated {
			cut = " (truncated)"
		}
		fmt.Fprintf(a.io.Out, "  %s  %s retry %d  %s/%s%s\n", termsafe.Escape(h.File), termsafe.Escape(h.TrialID), h.TrialAttempt, count(h.Messages), ui.Plural(h.TotalMessages, "message"), cut)
	}
	writeTriage(a.io.Out, a.io.Width(), a.secrets.mask, dir, facts, m.Counts.Expected, a.io.Styles())
	return nil
}

// refuseTampered prints a snapshot's verification problems as verify
// does and returns its exit-1 error.
func refuseTampered(a *app, dir string, problems []snapshot.Problem) error {
	if snapshot.OnlyReadErrors(problems) {
		// The machine failed, not the snapshot: said as an I/O error
		// (exit 2), never as a failed verification, as verify says it.
		return inputErr(&snapshot.VerifyError{Dir: dir, Problems: problems})
	}
	if a.jsonOutput() {
		if err := a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*snapshot.VerifyReport
		}{"verify_report", &snapshot.VerifyReport{Dir: dir, OK: false, Problems: problems}}); err != nil {
			return err
		}
		return silentFinding(errors.New("snapshot verification failed"))
	}
	st := a.io.Styles()
	for _, p := range problems {
		fmt.Fprintf(a.io.Out, "%s %s %s: %s\n", st.Error.Render("problem"), p.Code, termsafe.Escape(p.File), termsafe.Escape(p.Message))
	}
	return findingErr(fmt.Errorf("snapshot %q failed verification with %s; nothing of it is shown", dir, ui.Plural(len(problems), "problem")),
		"re-import from the source files with tpctl import; do not upload this snapshot")
}

func runSnapshotVerify(a *app, dir string) error {
	a.startProgress().Phase("verifying snapshot", 0, "")
	rep, err := snapshot.Verify(dir)
	a.endProgress()
	if err != nil {
		return inputErr(err, "give the folder written by tpctl import --out")
	}
	if a.jsonOutput() {
		if err := a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*snapshot.VerifyReport
		}{"verify_report", rep}); err != nil {
			return err
		}
	} else if a.output == outputGitHub {
		if err := writeVerifyGitHub(a, dir, rep); err != nil {
			return err
		}
	} else {
		st := a.io.Styles()
		for _, p := range rep.Problems {
			fmt.Fprintf(a.io.Out, "%s %s %s: %s\n", st.Error.Render("problem"), p.Code, termsafe.Escape(p.File), termsafe.Escape(p.Message))
		}
		if rep.OK {
			fmt.Fprintln(a.io.Out, ui.Wrap(fmt.Sprintf("%s %s: every file matches and the round ID recomputes to %s", st.OK.Render("ok"), termsafe.Escape(dir), termsafe.Escape(rep.RoundID)), a.io.Width(), a.secrets.mask))
		}
	}
	if !rep.OK && snapshot.OnlyReadErrors(rep.Problems) {
		// The machine failed, not the snapshot: unreadable input (2),
		// said as an I/O error, never as a failed verification.
		return inputErr(&snapshot.VerifyError{Dir: dir, Problems: rep.Problems})
	}
	if !rep.OK {
		if a.jsonOutput() || a.output == outputGitHub {
			return silentFinding(errors.New("snapshot verification failed"))
		}
		return findingErr(fmt.Errorf("snapshot %q failed verification with %s", dir, ui.Plural(len(rep.Problems), "problem")),
			"re-import from the source files with tpctl import; do not upload this snapshot")
	}
	return nil
}

func runSnapshotTrials(a *app, tv *snapshotShowOptions) error {
	dir := tv.Dir
	for i, s := range tv.Filter.Statuses {
		tv.Filter.Statuses[i] = strings.TrimSpace(s)
	}
	switch {
	case tv.Trial != "" && (tv.Trials || tv.Tasks || !tv.Filter.Empty()):
		return usageErr(errors.New("--trial prints one trial; it does not combine with --trials, --tasks, --status, --reason or --task"))
	case tv.Tasks && (tv.Trials || !tv.Filter.Empty()):
		return usageErr(errors.New("--tasks prints one row per task; --trials, --status, --reason and --task filter the list of trials"),
			"run the two views one after the other")
	case tv.SortSet && !tv.Tasks:
		return usageErr(errors.New("--sort orders the rows of --tasks"), "add --tasks")
	case tv.Tasks && !slices.Contains(snapshot.TaskSortKeys, tv.Sort):
		return usageErr(fmt.Errorf("--sort %q is not one of %s", tv.Sort, strings.Join(snapshot.TaskSortKeys, ", ")), didYouMeanValue(report.Closest(tv.Sort, snapshot.TaskSortKeys))...)
	}
	if err := tv.Filter.Check(nil, a.producers().Reasons()); err != nil {
		return unknownValueErr(err, dir)
	}
	r, err := report.LoadRound(dir)
	if err != nil {
		var ve *snapshot.VerifyError
		if errors.As(err, &ve) {
			return refuseTampered(a, dir, ve.Problems)
		}
		return loadRoundErr(err, dir)
	}
	if err := tv.Filter.Check(r, a.producers().Reasons()); err != nil {
		return unknownValueErr(err, dir)
	}
	st := a.io.Styles()
	if tv.Tasks {
		rows, err := taskRows(r, tv.Sort)
		if err != nil {
			return err
		}
		if a.jsonOutput() {
			return writeTaskLines(a.io.Out, rows)
		}
		a.page()
		return writeTaskTable(a.io.Out, a.io.Width(), a.secrets.mask, rows, st)
	}
	if tv.Trial != "" {
		d, err := r.Detail(tv.Trial)
		if err != nil {
			return unknownValueErr(err, dir)
		}
		if a.jsonOutput() {
			return a.io.JSON(struct {
				MessageType string `json:"message_type"`
				*report.TrialDetail
			}{"trial", d})
		}
		a.page()
		return writeTrial(a.io.Out, a.io.Width(), a.secrets.mask, r, tv.Trial, st)
	}
	if a.jsonOutput() {
		return writeTrialLines(a.io.Out, r, tv.Filter)
	}
	a.page()
	return writeTrialTable(a.io.Out, a.io.Width(), a.secrets.mask, r, tv.Filter, st)
}

// unknownValueErr is exit 2 for a status, reason, task or trial that names
// nothing, with the closest values as a suggestion.
func unknownValueErr(err error, dir string) error {
	var ue *report.UnknownValueError
	if !errors.As(err, &ue) {
		return inputErr(err)
	}
	hints := didYouMeanValue(ue.Suggestions)
	switch ue.What {
	case "reason":
		hints = append(hints, "list the reason codes with tpctl explain outcomes")
	case "task":
		hints = append(hints, "list the tasks with "+ui.Command("snapshot", "show", dir, "--tasks"))
	case "trial":
		hints = append(hints, "list the trial IDs with "+ui.Command("snapshot", "show", dir, "--trials"))
	}
	return usageErr(err, hints...)
}

// didYouMeanValue is the "did you mean" hint for suggested values.
func didYouMeanValue(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = strconv.Quote(v)
	}
	return []string{"did you mean " + strings.Join(q, " or ") + "?"}
}
