package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/snapshot"
)

// The end of a round's summary (tpctl import, tpctl snapshot show DIR):
// what it cost, the non-success trials with their why, and the next
// commands.

// roundFacts is what the summary adds to the manifest, from one pass over
// a verified snapshot's planned trials.
type roundFacts struct {
	Cost   snapshot.Cost
	Triage snapshot.Triage
	// Dataset is which part of the dataset the rates stand on ("3 of
	// 2,376 samples of the dataset", "10 of 2,376 documents of the
	// split"), nil when the plan does not record it.
	Dataset *snapshot.DatasetScope
}

// factsTally collects a round's facts from its planned trials, one at a
// time in canonical order: from a verified read of a saved snapshot
// (snapshot show) or as the import saves them (importer.Options.Visitor),
// so the two summaries of one round are the same.
type factsTally struct {
	f  roundFacts
	cs snapshot.CostSum
}

func newFactsTally() *factsTally {
	return &factsTally{f: roundFacts{Triage: snapshot.Triage{Examples: triageExamples}}}
}

func (t *factsTally) visit(p snapshot.PlannedTrial) error {
	t.cs.Add(p.Observation)
	t.f.Triage.Add(p)
	return nil
}

// facts is the tally's result; dataset is the plan's (DatasetScope).
func (t *factsTally) facts(dataset *snapshot.DatasetScope) *roundFacts {
	f := t.f
	f.Cost = t.cs.Cost()
	f.Dataset = dataset
	return &f
}

// openSavedFacts verifies the snapshot at dir and reads its facts in the
// same single read (snapshot.OpenTrials), so memory stays flat however
// many trials the round has, keeping the verified snapshot open for its
// manifest and trajectories (snapshot show). The facts are used only
// when the whole snapshot verified.
func openSavedFacts(dir string) (*snapshot.Snapshot, *roundFacts, error) {
	var t *factsTally
	s, err := snapshot.OpenTrials(dir, func(*snapshot.Manifest, []byte) (snapshot.Visit, error) {
		// Called again when OpenTrials falls back to Open: start over.
		t = newFactsTally()
		return t.visit, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return s, t.facts(s.Plan().DatasetScope()), nil
}

// triageGroups and triageExamples bound the failures block: the rest is
// one command away (tpctl snapshot show DIR --status …).
const (
	triageGroups   = 4
	triageExamples = 2
)

// costRows adds the cost rows to a summary: spend of every attempt with
// its coverage, of the deciding attempts, Harbor's figure beside, tokens
// and the wall time per phase.
func costRows(row func(k, v string), c *snapshot.Cost) {
	if c == nil || c.Attempts == 0 {
		return
	}
	row("cost", c.Text()+", retries included")
	row("  deciding", c.FinalText())
	if h := c.HarborText(); h != "" {
		row("  harbor", "Harbor's job view would show "+h)
	}
	if c.WithTokens == 0 {
		row("tokens", fmt.Sprintf("unknown (none of %s reported tokens)", ui.Plural(c.Attempts, "attempt")))
	} else {
		cached := ""
		if c.CacheTokens != nil {
			cached = " (" + countPtr(c.CacheTokens) + " cached)"
		}
		row("tokens", fmt.Sprintf("%s input%s · %s output, known for %d of %s", countPtr(c.InputTokens), cached, countPtr(c.OutputTokens),
			c.WithTokens, ui.Plural(c.Attempts, "attempt")))
	}
	p := c.Phases
	var parts []string
	for _, ph := range []struct {
		name string
		t    snapshot.PhaseTime
	}{{"environment setup", p.EnvironmentSetup}, {"agent setup", p.AgentSetup}, {"agent execution", p.AgentExecution}, {"verifier", p.Verifier}} {
		if ph.t.Seconds != nil {
			parts = append(parts, fmt.Sprintf("%s %s (%d)", ph.name, duration(*ph.t.Seconds), ph.t.Attempts))
		}
	}
	if len(parts) == 0 {
		row("time", "unknown (no attempt recorded its phases)")
	} else {
		row("time", strings.Join(parts, " · ")+" (summed over the attempts that recorded each)")
	}
}

// duration shows seconds as a person reads them: 42.1s, 3m05s, 2h03m.
func duration(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	switch {
	case d < time.Minute:
		return strconv.FormatFloat(sec, 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// writeTriage ends a round's summary: the worst few non-success trials
// with their why (failures first, the largest group first), then the
// commands that show more.
func writeTriage(w io.Writer, width int, mask func(string) string, dir string, f *roundFacts, planned int, s ui.Styles) {
	groups := f.Triage.Groups()
	fit := func(line string) string {
		if width > 0 {
			return redact.Clip(mask, line, width)
		}
		return line
	}
	fmt.Fprintln(w)
	if len(groups) == 0 {
		fmt.Fprintln(w, s.OK.Render(fmt.Sprintf("every one of %s succeeded", ui.Plural(planned, "planned trial"))))
	} else {
		fmt.Fprintln(w, s.Heading.Render(fmt.Sprintf("not a success: %s of %s", count(f.Triage.Total()), ui.Plural(planned, "planned trial"))))
		var statuses []string
		for i, g := range groups {
			if !slices.Contains(statuses, g.Status) {
				statuses = append(statuses, g.Status)
			}
			if i == triageGroups {
				rest := 0
				for _, g := range groups[i:] {
					rest += g.Count
				}
				more := "groups"
				if len(groups)-i == 1 {
					more = "group"
				}
				fmt.Fprintf(w, "  … and %d more %s (%s)\n", len(groups)-i, more, ui.Plural(rest, "trial"))
				break
			}
			head := report.Glyph(g.Status) + " " + g.Status
			if g.Reason != "" {
				head += " " + g.Reason
			}
			if g.ExceptionType != "" {
				head += " " + g.ExceptionType
			}
			// Cut as plain text, then styled: a style cut open would run
			// into the next line.
			line := fit(fmt.Sprintf("  %s  %s", termsafe.Escape(head), ui.Plural(g.Count, "trial")))
			bold := min(len(line), 2+len(termsafe.Escape(head)))
			fmt.Fprintln(w, "  "+s.Bold.Render(line[2:bold])+line[bold:])
			for _, e := range g.Examples {
				why := e.Detail
				if why == "" {
					why = "no detail recorded"
					if g.Status == snapshot.StatusMissing {
						why = "planned, never run"
					}
				}
				fmt.Fprintln(w, fit(fmt.Sprintf("    %s: %s", ui.Cell(e.TrialID), ui.Cell(why))))
			}
			if more := g.Count - len(g.Examples); more > 0 {
				fmt.Fprintf(w, "    … and %s more\n", count(more))
			}
		}
		fmt.Fprintln(w, s.Heading.Render("next"))
		// Escaped: a trial ID or folder name is the source's text.
		fmt.Fprintf(w, "  %s\n", termsafe.Escape(ui.Command("snapshot", "show", dir, "--status", strings.Join(statuses, ","))))
		fmt.Fprintf(w, "  %s\n", termsafe.Escape(ui.Command("snapshot", "show", dir, "--trial", groups[0].Examples[0].TrialID)))
		fmt.Fprintf(w, "  %s\n", termsafe.Escape(ui.Command("report", dir, "--out", strings.TrimSuffix(dir, "/")+".html")))
		return
	}
	fmt.Fprintln(w, s.Heading.Render("next"))
	fmt.Fprintf(w, "  %s\n", termsafe.Escape(ui.Command("report", dir, "--out", strings.TrimSuffix(dir, "/")+".html")))
}
