package report

import (
	"strconv"

	"github.com/tuneplane/tpctl/snapshot"
)

// costView is the round's spend, tokens and time as the page shows them,
// from snapshot.Cost (the same computation as tpctl snapshot show):
// unknown is never shown as 0, and every figure says how many attempts
// it stands on.
type costView struct {
	All, Final, Harbor string
	Tokens             string
	Phases             []phaseRow
	Known              bool
}

type phaseRow struct{ Name, Time string }

func costViewOf(c snapshot.Cost) costView {
	v := costView{All: coverage(c.USDAllAttempts, c.WithCost, c.Attempts, "attempt"), Final: coverage(c.USDFinalAttempts, c.FinalWithCost, c.FinalAttempts, "deciding attempt"),
		Harbor: c.HarborText(), Known: c.Known()}
	tok := func(p *int64) string {
		if p == nil {
			return "unknown"
		}
		return thousands(int(*p))
	}
	switch {
	case c.Attempts == 0:
		v.Tokens = "none (no attempt)"
	case c.WithTokens == 0:
		v.Tokens = "unknown (no attempt reported tokens)"
	default:
		v.Tokens = tok(c.InputTokens) + " in (" + tok(c.CacheTokens) + " cached) · " + tok(c.OutputTokens) + " out, from " +
			thousands(c.WithTokens) + " of " + thousands(c.Attempts) + " attempts"
	}
	for _, p := range []struct {
		name string
		t    snapshot.PhaseTime
	}{{"environment setup", c.Phases.EnvironmentSetup}, {"agent setup", c.Phases.AgentSetup}, {"agent execution", c.Phases.AgentExecution}, {"verifier", c.Phases.Verifier}} {
		if p.t.Seconds == nil {
			v.Phases = append(v.Phases, phaseRow{p.name, "unknown"})
			continue
		}
		v.Phases = append(v.Phases, phaseRow{p.name, duration(*p.t.Seconds) + " over " + thousands(p.t.Attempts) + " of " + thousands(c.Attempts) + " attempts"})
	}
	return v
}

// coverage is snapshot.Cost's Text and FinalText with the page's
// thousands separators: "$4.12 known for 1,700 of 2,000 attempts",
// "unknown (none of 20 attempts reported a cost)"; never $0 for unknown.
func coverage(usd *float64, known, of int, noun string) string {
	switch {
	case of == 0:
		return "none (no " + noun + ")"
	case usd == nil && of == 1:
		return "unknown (the " + noun + " reported no cost)"
	case usd == nil:
		return "unknown (none of " + thousands(of) + " " + noun + "s reported a cost)"
	case known == of && of == 1:
		return snapshot.USD(*usd) + " known for the one " + noun
	case known == of:
		return snapshot.USD(*usd) + " known for all " + thousands(of) + " " + noun + "s"
	}
	return snapshot.USD(*usd) + " known for " + thousands(known) + " of " + thousands(of) + " " + noun + "s"
}

// duration shows seconds as s, min or h with one decimal.
func duration(sec float64) string {
	switch {
	case sec >= 3600:
		return strconv.FormatFloat(sec/3600, 'f', 1, 64) + " h"
	case sec >= 60:
		return strconv.FormatFloat(sec/60, 'f', 1, 64) + " min"
	}
	return strconv.FormatFloat(sec, 'f', 1, 64) + " s"
}

// boundsView is the success rate's worst and best case over the planned
// trials (Manski bounds): every trial that was not scored (infra_error,
// unscored, missing) counted as a failure, or as a success.
type boundsView struct {
	Lo, Hi      string
	NotScored   int
	Planned     int
	LoX, WidthX string
}

// boundsOf is the view of snapshot.BoundsOf (issue 34, the rule tpctl
// snapshot show and gate use); nil for a plan without trials.
func boundsOf(c snapshot.Counts) *boundsView {
	b := snapshot.BoundsOf(c)
	if b == nil {
		return nil
	}
	return &boundsView{Lo: pct(b.WorstCase), Hi: pct(b.BestCase), NotScored: b.NotScored, Planned: b.Planned,
		LoX: num(100 * b.WorstCase), WidthX: num(100 * (b.BestCase - b.WorstCase))}
}
