// Package gate decides whether a candidate round may pass a CI gate: a
// strict policy file of rules (a clean round, a minimum success rate
// judged on the lower bound of its 95% interval, a maximum infra-error
// rate, non-inferiority to a baseline judged on the paired 95% lower
// bound), with quarantined tasks left out of every rule. An interval that
// cannot be computed is not enough evidence, which fails the rule and
// says so. The JSON verdict is documented in docs/ci.md and
// schemas/gate-verdict.v1.json.
package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/internal/suggest"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/stats"
)

// Format is the version of the JSON verdict.
const Format = "tpctl-gate/1"

// Rule names, as in the policy file.
const (
	RuleRequire     = "require"
	RuleMinSuccess  = "min_success_rate"
	RuleMaxInfra    = "max_infra_error_rate"
	RuleNonInferior = "baseline.non_inferiority_margin"
	RuleMaxCost     = "max_cost_usd"
	maxListedInRule = 10
)

// Outcomes of one rule.
const (
	OutcomePass          = "pass"
	OutcomeFail          = "fail"
	OutcomeNoEvidence    = "not_enough_evidence"
	OutcomeNotComparable = "not_comparable"
)

// Verdict is the gate's answer; Pass is true when every rule passes.
type Verdict struct {
	Format    string `json:"format"`
	Pass      bool   `json:"pass"`
	Policy    string `json:"policy"`
	Candidate Side   `json:"candidate"`
	Baseline  *Side  `json:"baseline"`
	// Quarantined are the policy's quarantined tasks, each in the
	// candidate's plan, with the planned trials each leaves out.
	Quarantined []QuarantinedTask `json:"quarantined"`
	Rules       []Rule            `json:"rules"`
}

// QuarantinedTask is one task left out of the gate.
type QuarantinedTask struct {
	Task   string `json:"task"`
	Trials int    `json:"trials"`
}

// Side identifies a round and gives its numbers after the quarantine.
type Side struct {
	Dir        string              `json:"dir"`
	RoundID    string              `json:"round_id"`
	Name       string              `json:"name"`
	Checkpoint snapshot.Checkpoint `json:"checkpoint"`
	Summary    round.Summary       `json:"summary"`
	// Dataset is the planned samples beside the dataset's size when the
	// round's plan records both (Inspect and lm-eval rounds): the rates judged are
	// over those samples, never the whole dataset.
	Dataset *DatasetScope `json:"dataset,omitempty"`
}

// DatasetScope is which part of the dataset a round's rates stand on
// (snapshot.DatasetScope).
type DatasetScope = snapshot.DatasetScope

// Rule is one rule's judgement. Value is the number judged (a lower
// bound, a rate), nil when there is none; Threshold is the policy's.
type Rule struct {
	Rule      string   `json:"rule"`
	Outcome   string   `json:"outcome"`
	Threshold any      `json:"threshold"`
	Value     *float64 `json:"value"`
	// Interval is the 95% interval the rule judged, when it judges one.
	Interval *[2]float64 `json:"interval"`
	Message  string      `json:"message"`
}

// Passed reports whether the rule passed.
func (r Rule) Passed() bool { return r.Outcome == OutcomePass }

// InputError means the gate cannot judge: a snapshot is unusable, the
// policy and the arguments disagree, or a quarantined task is not in the
// plan. The CLI exits 2.
type InputError struct {
	Msg  string
	Hint string
	Err  error
}

func (e *InputError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *InputError) Unwrap() error { return e.Err }

// Options are the gate's inputs besides the policy.
type Options struct {
	Candidate string
	// Baseline is "" when no baseline is given.
	Baseline   string
	PolicyFile string
}

// Run loads and verifies the rounds and judges them by the policy.
func Run(ctx context.Context, p *Policy, opts Options) (*Verdict, error) {
	if err := p.CheckBaseline(opts.Baseline != "", opts.PolicyFile, "pass --baseline BASE, the snapshot to compare against"); err != nil {
		return nil, err
	}
	cand, err := LoadRound(ctx, opts.Candidate, "candidate")
	if err != nil {
		return nil, err
	}
	var base *round.Round
	if opts.Baseline != "" {
		if base, err = LoadRound(ctx, opts.Baseline, "baseline"); err != nil {
			return nil, err
		}
	}
	return Judge(p, opts.PolicyFile, cand, base)
}

// CheckBaseline is an *InputError when the policy's baseline rule and the
// arguments disagree: a rule with no baseline given (missingHint says
// what the baseline is for, in the caller's words), or a baseline with no
// rule. Every command that reads a policy (gate, plan lock's gate, plan
// power) checks its arguments here.
func (p *Policy) CheckBaseline(hasBaseline bool, policyFile, missingHint string) error {
	if p.NonInferiorityMargin != nil && !hasBaseline {
		return &InputError{Msg: fmt.Sprintf("policy %s has a baseline rule (baseline.non_inferiority_margin) but no --baseline was given", policyFile),
			Hint: missingHint}
	}
	if p.NonInferiorityMargin == nil && hasBaseline {
		return &InputError{Msg: fmt.Sprintf("--baseline was given but policy %s has no baseline rule", policyFile),
			Hint: "add baseline: {non_inferiority_margin: 0.05} to the policy, or drop --baseline"}
	}
	return nil
}

// LoadRound loads and verifies the round at dir (round.Load); when it
// cannot be used, an *InputError naming its role ("candidate",
// "baseline", "pilot").
func LoadRound(ctx context.Context, dir, role string) (*round.Round, error) {
	r, err := round.Load(ctx, dir)
	if err != nil {
		return nil, &InputError{Msg: "the " + role + " cannot be used", Err: err}
	}
	return r, nil
}

// Judge applies the policy to loaded rounds (base nil without a baseline).
func Judge(p *Policy, policyFile string, cand, base *round.Round) (*Verdict, error) {
	tasks := cand.Tasks()
	planned := map[string]int{}
	for _, t := range cand.Trials {
		planned[t.Task]++
	}
	v := &Verdict{Format: Format, Policy: policyFile, Quarantined: []QuarantinedTask{}, Rules: []Rule{}}
	quarantined := map[string]bool{}
	for _, q := range p.Quarantine {
		if planned[q] == 0 {
			hint := "remove it from quarantine, or check the task name (tpctl snapshot show lists the tasks)"
			if c := closestTask(q, tasks); c != "" {
				hint = fmt.Sprintf("did you mean %q?", c)
			}
			return nil, &InputError{Msg: fmt.Sprintf("policy %s quarantines task %q, which the candidate's plan does not have", policyFile, q), Hint: hint}
		}
		quarantined[q] = true
		v.Quarantined = append(v.Quarantined, QuarantinedTask{q, planned[q]})
	}
	skip := func(task string) bool { return quarantined[task] }
	cs := cand.Summarize(skip)
	v.Candidate = side(cand, cs)
	if base != nil {
		b := side(base, base.Summarize(skip))
		v.Baseline = &b
	}
	c := cs.Counts
	if c.Expected == 0 {
		return nil, &InputError{Msg: "the candidate plans no trials outside the quarantine; there is nothing to gate"}
	}
	if p.Require != "" {
		r := Rule{Rule: RuleRequire, Threshold: p.Require, Outcome: OutcomePass}
		notScored := c.Expected - c.Scored()
		switch {
		case p.Require == RequireAny:
			r.Message = fmt.Sprintf("require any: %d of %d planned trials scored (not required to be clean)", c.Scored(), c.Expected)
		case notScored == 0:
			r.Message = fmt.Sprintf("require clean: all %d planned trials scored", c.Expected)
		default:
			r.Outcome = OutcomeFail
			r.Message = fmt.Sprintf("require clean: %d of %d planned trials are not scored (%d infra_error, %d unscored, %d missing)",
				notScored, c.Expected, c.InfraError, c.Unscored, c.Missing)
		}
		v.Rules = append(v.Rules, r)
	}
	if p.MinSuccessRate != nil {
		v.Rules = append(v.Rules, minSuccess(*p.MinSuccessRate, p.UnscoredTrials, cs))
	}
	if p.MaxInfraErrorRate != nil {
		max := *p.MaxInfraErrorRate
		rate := *cs.InfraErrorRate
		r := Rule{Rule: RuleMaxInfra, Threshold: max, Value: &rate, Outcome: OutcomePass}
		cmp := "≤"
		if rate > max {
			r.Outcome, cmp = OutcomeFail, ">"
		}
		r.Message = fmt.Sprintf("max_infra_error_rate %s: %d of %d planned trials are infra_error (%s %s %s)", pct(max), c.InfraError, c.Expected, pct(rate), cmp, pct(max))
		v.Rules = append(v.Rules, r)
	}
	if p.MaxCostUSD != nil {
		v.Rules = append(v.Rules, maxCost(*p.MaxCostUSD, cand.CostOf(skip)))
	}
	if p.NonInferiorityMargin != nil && base != nil {
		var incomplete []string
		for _, sd := range []struct {
			which string
			s     round.Summary
		}{{compare.SideBase, v.Baseline.Summary}, {compare.SideCandidate, cs}} {
			if r := compare.Incomplete(sd.which, sd.s.Label, sd.s.Counts); r != nil {
				incomplete = append(incomplete, r.Message)
			}
		}
		v.Rules = append(v.Rules, nonInferiority(*p.NonInferiorityMargin, base, cand, skip, incomplete, p.AllowDegraded))
	}
	v.Pass = true
	for _, r := range v.Rules {
		if !r.Passed() {
			v.Pass = false
		}
	}
	return v, nil
}

// minSuccess judges min_success_rate on the lower bound of the
// task-clustered 95% interval: of the rate over scored trials on a clean
// round, and on a degraded one of the worst case — every planned trial not
// scored counted as failed (the Manski lower bound) — unless the policy
// says unscored_trials: leave_out.
func minSuccess(min float64, unscored string, cs round.Summary) Rule {
	c := cs.Counts
	r := Rule{Rule: RuleMinSuccess, Threshold: min}
	notScored := c.Expected - c.Scored()
	worst := notScored > 0 && unscored != UnscoredLeftOut
	ci, null := cs.SuccessRateCI95Clustered, cs.SuccessRateCI95ClusteredNull
	if worst {
		ci, null = cs.WorstCaseCI95Clustered, cs.WorstCaseCI95ClusteredNull
	}
	r.Interval = ci
	if ci == nil {
		r.Outcome = OutcomeNoEvidence
		r.Message = fmt.Sprintf("min_success_rate %s: not enough evidence — the 95%% interval cannot be computed (%d scored trials in %d tasks; %s)",
			pct(min), c.Scored(), cs.Tasks, tooFew(null))
		return r
	}
	lo := ci[0]
	r.Value = &lo
	r.Outcome = OutcomePass
	cmp := "≥"
	if lo < min {
		r.Outcome, cmp = OutcomeFail, "<"
	}
	switch {
	case worst:
		b := cs.SuccessRateBounds
		r.Message = fmt.Sprintf("min_success_rate %s: worst case %s (%d/%d, with %d not scored counted as failed), 95%% interval [%s, %s]; lower bound %s %s %s (over scored trials: %s, %d/%d; best case %s; unscored_trials: leave_out judges the scored trials only)",
			pct(min), pct(b.WorstCase), c.Success, c.Expected, notScored, pct(ci[0]), pct(ci[1]), pct(lo), cmp, pct(min), pctOr(cs.SuccessRate), c.Success, c.Scored(), pct(b.BestCase))
	default:
		r.Message = fmt.Sprintf("min_success_rate %s: success rate %s (%d/%d), 95%% interval [%s, %s]; lower bound %s %s %s",
			pct(min), pct(*cs.SuccessRate), c.Success, c.Scored(), pct(ci[0]), pct(ci[1]), pct(lo), cmp, pct(min))
		if notScored > 0 {
			b := cs.SuccessRateBounds
			r.Message += fmt.Sprintf(" (over scored trials only, unscored_trials: leave_out; worst–best case %s–%s with the %d not scored)", pct(b.WorstCase), pct(b.BestCase), notScored)
		}
	}
	return r
}

// maxCost judges the known spend of every attempt, retries included,
// against max: known spend over it fails (the unknown can only add);
// otherwise, when at most half of the attempts reported a cost, the rest
// could be anything and the rule has not enough evidence; else it passes,
// saying how many attempts the spend stands on.
func maxCost(max float64, c snapshot.Cost) Rule {
	r := Rule{Rule: RuleMaxCost, Threshold: max, Value: c.USDAllAttempts}
	name := "max_cost_usd " + snapshot.USD(max)
	known := 0.0
	if c.USDAllAttempts != nil {
		known = *c.USDAllAttempts
	}
	switch {
	case c.Attempts == 0:
		r.Outcome = OutcomeNoEvidence
		r.Message = name + ": not enough evidence — no attempt ran"
	case c.USDAllAttempts != nil && known > max:
		r.Outcome = OutcomeFail
		r.Message = fmt.Sprintf("%s: spent %s > %s", name, c.Text(), snapshot.USD(max))
	case 2*c.WithCost <= c.Attempts:
		r.Outcome = OutcomeNoEvidence
		r.Message = fmt.Sprintf("%s: not enough evidence — spend %s; with most of it unknown the round may have cost more", name, c.Text())
	default:
		r.Outcome = OutcomePass
		r.Message = fmt.Sprintf("%s: spent %s ≤ %s", name, c.Text(), snapshot.USD(max))
		switch n := c.Attempts - c.WithCost; {
		case n == 1:
			r.Message += " (the 1 attempt of unknown cost is not counted)"
		case n > 1:
			r.Message += fmt.Sprintf(" (the %d attempts of unknown cost are not counted)", n)
		}
	}
	return r
}

// nonInferiority judges the baseline rule. incomplete are compare's
// reasons for a degraded side (over the tasks not quarantined): the pair
// is not comparable then, as compare says, unless allowDegraded.
func nonInferiority(margin float64, base, cand *round.Round, skip func(string) bool, incomplete []string, allowDegraded bool) Rule {
	r := Rule{Rule: RuleNonInferior, Threshold: margin}
	pr := round.Pair(base, cand, skip)
	name := fmt.Sprintf("baseline.non_inferiority_margin %s", pct(margin))
	switch {
	case len(pr.Differences) > 0:
		var parts []string
		for _, d := range pr.Differences {
			parts = append(parts, d.String())
		}
		r.Outcome = OutcomeNotComparable
		r.Message = name + ": the rounds are not comparable (" + strings.Join(parts, "; ") + "); a delta across protocols means nothing"
	case len(pr.ChecksumDiffers) > 0:
		r.Outcome = OutcomeNotComparable
		r.Message = fmt.Sprintf("%s: the rounds are not comparable: %d trial(s) ran different Harbor task content (task_checksum differs), e.g. %s",
			name, len(pr.ChecksumDiffers), strings.Join(pr.ChecksumDiffers[:min(3, len(pr.ChecksumDiffers))], ", "))
	case len(incomplete) > 0 && !allowDegraded:
		r.Outcome = OutcomeNotComparable
		r.Message = fmt.Sprintf("%s: the rounds are not comparable, as tpctl compare says: %s; the trials scored in both would be a selected subset (crashes are rarely independent of difficulty), so the rule does not judge them — rerun the missing trials, or set baseline.allow_degraded: true to judge them anyway",
			name, strings.Join(incomplete, "; "))
	case pr.Paired == nil || pr.Paired.CI95 == nil:
		r.Outcome = OutcomeNoEvidence
		trials, tasks := 0, 0
		var null *stats.NullReason
		if pr.Paired != nil {
			trials, tasks, null = pr.Paired.Trials, pr.Paired.Tasks, pr.Paired.NullReason
		}
		why := tooFew(null)
		r.Message = fmt.Sprintf("%s: not enough evidence — the paired 95%% interval cannot be computed (%d trials scored in both rounds, in %d tasks; %s)", name, trials, tasks, why)
	default:
		p := pr.Paired
		r.Interval = p.CI95
		lo := p.CI95[0]
		r.Value = &lo
		r.Outcome = OutcomePass
		cmp := "≥"
		if lo < -margin {
			r.Outcome, cmp = OutcomeFail, "<"
		}
		r.Message = fmt.Sprintf("%s: paired delta %s over %d trials in %d tasks, 95%% interval [%s, %s]; lower bound %s %s −%s",
			name, signedPct(p.Delta), p.Trials, p.Tasks, signedPct(p.CI95[0]), signedPct(p.CI95[1]), signedPct(lo), cmp, pct(margin))
		if len(incomplete) > 0 {
			r.Message += fmt.Sprintf(" (judged although not comparable, baseline.allow_degraded: %s; over the trials scored in both rounds only, which lean to the tasks that did not crash)", strings.Join(incomplete, "; "))
		}
		if r.Outcome == OutcomeFail && len(pr.Regressed) > 0 {
			var names []string
			for _, t := range pr.Regressed[:min(maxListedInRule, len(pr.Regressed))] {
				names = append(names, fmt.Sprintf("%s %d→%d", t.Task, t.BaseSuccess, t.CandSuccess))
			}
			r.Message += "; tasks with fewer successes: " + strings.Join(names, ", ")
			if len(pr.Regressed) > maxListedInRule {
				r.Message += fmt.Sprintf(", … and %d more", len(pr.Regressed)-maxListedInRule)
			}
		}
	}
	return r
}

// tooFew says why an interval is null, after the message has given the
// trial and task counts: the minimum the null reason names.
func tooFew(null *stats.NullReason) string {
	min := stats.MinTasks
	if null != nil {
		min = null.MinTasks
	}
	return fmt.Sprintf("a task-clustered interval needs at least %d tasks, and more repeats of the same tasks do not help", min)
}

func side(r *round.Round, s round.Summary) Side {
	m := r.Manifest
	side := Side{Dir: r.Dir, RoundID: m.RoundID, Name: m.Name, Checkpoint: m.Checkpoint, Summary: s}
	side.Dataset = r.Dataset
	return side
}

// pct formats a fraction as a percentage with up to one decimal.
func pct(x float64) string {
	s := fmt.Sprintf("%.1f", 100*x)
	s = strings.TrimSuffix(s, ".0")
	return s + "%"
}

// pctOr is pct of x, or "n/a" when there is none.
func pctOr(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return pct(*x)
}

func signedPct(x float64) string {
	if x >= 0 {
		return "+" + pct(x)
	}
	return "−" + pct(-x)
}

// closestTask is the plan task nearest to name: the same last path
// segment, else a likely typo.
func closestTask(name string, tasks []string) string {
	for _, t := range tasks {
		if strings.HasSuffix(t, "/"+name) || strings.HasSuffix(name, "/"+t) {
			return t
		}
	}
	if c := suggest.Closest(name, tasks); len(c) > 0 {
		return c[0]
	}
	return ""
}
