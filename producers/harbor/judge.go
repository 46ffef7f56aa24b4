package harbor

// Judging one Harbor trial attempt: success, failure, infra_error or
// unscored, with a stable reason code (SPEC §2). The rules live in one
// table (outcomes.go), are versioned as RulesVersion and are printed by
// `tpctl explain outcomes`. Judging is pure: it takes a decoded
// TrialResult and never reads files.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/outcome"
)

// Missing is the outcome of an attempt whose folder or result.json does not
// exist.
func Missing() outcome.Outcome {
	return outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultMissing, Detail: "result.json is missing: Harbor writes it only when a trial ends, so the trial never finished or was killed"}
}

// Invalid is the outcome of a result.json that could not be decoded; err's
// text is kept in Detail.
func Invalid(err error) outcome.Outcome {
	msg := "unknown error"
	if err != nil {
		msg = err.Error()
	}
	return outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultInvalid, Detail: msg}
}

// Judge applies the outcome table to one decoded result. It never panics;
// a nil result is Invalid.
func Judge(r *TrialResult) outcome.Outcome {
	if r == nil {
		return Invalid(fmt.Errorf("no trial result"))
	}
	var steps []StepResult
	if r.MultiStep {
		steps = r.Steps
	}
	return judge(r.Exception, r.Verifier, steps, r.MultiStep, &r.Phases)
}

// judge is the table for one trial (phases set) or one step (phases nil),
// recursing into steps for a multi-step trial.
func judge(exc *ExceptionInfo, vr *VerifierResult, steps []StepResult, multiStep bool, phases *Phases) outcome.Outcome {
	onStep := phases == nil
	pick := pickReward(vr)
	var o outcome.Outcome
	o.Reward = pick.finite()
	scored := [2]string{ReasonRewardFailure, ReasonRewardSuccess}
	unscoredReason := ""
	var excDetail string
	if exc != nil {
		o.ExceptionType = ptr(exc.Type)
		excDetail = describeException(exc)
		if so, ok := judgeBeforeAgentRun(exc, excDetail, steps, phases); ok {
			so.Reward = o.Reward
			return so
		}
		rule, known := lookupException(exc.Type, onStep)
		if !known {
			o.Status, o.Reason = outcome.Unscored, ReasonUnknownException
			o.Detail = fmt.Sprintf("%s; %q is not in tpctl's exception table, so the attempt is not scored even with a reward", excDetail, exc.Type)
			return o
		}
		if !rule.ScoreStands() {
			o.Status, o.Reason = rule.Status, rule.Reason
			o.Detail = excDetail
			return o
		}
		// Agent timeout or agent command failure: Harbor still ran the
		// verifier, so a valid binary reward stands.
		scored = [2]string{rule.ScoredReason(), rule.ScoredReason()}
		unscoredReason = rule.Reason
	}

	if multiStep {
		if so, ok := judgeSteps(steps); ok {
			so.Reward = o.Reward
			if o.ExceptionType != nil {
				so.ExceptionType = o.ExceptionType
				so.Detail = excDetail + "; " + so.Detail
			}
			return so
		}
		if o.ExceptionType == nil {
			// Every step was scored; keep the first step exception (a scored in the exception counts.
			// agent timeout) visible in the exception counts, and give the
			// trial that exception's scored reason, as a single-step trial
			// would get.
			for _, s := range steps {
				if s.Exception != nil {
					o.ExceptionType = ptr(s.Exception.Type)
					excDetail = fmt.Sprintf("step %q: %s (the step's score stood)", s.Name, describeException(s.Exception))
					if rule, ok := lookupException(s.Exception.Type, true); ok && rule.ScoreStands() {
						scored = [2]string{rule.ScoredReason(), rule.ScoredReason()}
					}
					break
				}
			}
		}
	}

	if pick.problem != "" {
		o.Status, o.Reason, o.Detail = outcome.Unscored, pick.problem, pick.detail
		if unscoredReason != "" {
			o.Reason = unscoredReason
		}
	} else {
		o.Status, o.Reason = outcome.Failure, scored[0]
		if pick.binary == 1 {
			o.Status, o.Reason = outcome.Success, scored[1]
		}
		o.Detail = pick.detail
	}
	if excDetail != "" {
		o.Detail = excDetail + "; " + o.Detail
	}
	if multiStep && o.Status.Scored() {
		o.Detail += fmt.Sprintf(" (trial-level reward derived from %d scored step(s))", len(steps))
	}
	return o
}

// judgeSteps judges each step with the same table. It returns the trial's
// outcome when a step is infra_error (first wins) or, failing that,
// unscored; ok is false when every step was scored.
func judgeSteps(steps []StepResult) (outcome.Outcome, bool) {
	var unscored *outcome.Outcome
	for i, s := range steps {
		so := judge(s.Exception, s.Verifier, nil, false, nil)
		if so.Status.Scored() {
			continue
		}
		t := outcome.Outcome{Status: so.Status, Reason: ReasonStepUnscored, ExceptionType: so.ExceptionType}
		if s.Exception != nil {
			t.Reason = ReasonStepException
		}
		t.Detail = fmt.Sprintf("step %q (%d of %d) is %s (%s): %s; the trial-level reward is derived from the other steps and is not used",
			s.Name, i+1, len(steps), so.Status, so.Reason, so.Detail)
		if so.Status == outcome.InfraError {
			return t, true
		}
		if unscored == nil {
			unscored = &t
		}
	}
	if unscored != nil {
		return *unscored, true
	}
	return outcome.Outcome{}, false
}

// judgeBeforeAgentRun recognises the infrastructure failures Harbor records
// at trial level under generic classes, by its own message text and by how
// far the trial got (Phases): an environment start failure recorded as a
// plain RuntimeError, and an agent command failure raised while installing
// the agent. ok is false for anything else, and always on a step.
func judgeBeforeAgentRun(exc *ExceptionInfo, excDetail string, steps []StepResult, phases *Phases) (outcome.Outcome, bool) {
	if phases == nil {
		return outcome.Outcome{}, false
	}
	// Its exception type is allocated only when a rule matches: most
	// attempts with an exception pass through here and match none.
	o := outcome.Outcome{Status: outcome.InfraError}
	if m, ok := matchMessageRule(exc.Type, exc.Message); ok && phases.EnvironmentSetup && !phases.AgentSetup {
		o.ExceptionType = ptr(exc.Type)
		o.Reason = m.Reason
		o.Detail = excDetail + "; Harbor's own environment start failure (recorded before agent setup began), so the attempt is infra_error"
		return o, true
	}
	rule, known := lookupException(exc.Type, false)
	// The agent's run sets agent_execution before it starts, so an agent
	// command failure without it came from setup: the agent's install
	// (agent_setup set) or, at v0.22.0, a simulated user's, which runs just
	// before it (agent_setup still null).
	if known && rule.class == classAgentError && phases.EnvironmentSetup && !phases.AgentExecution && !phases.Verifier && len(steps) == 0 {
		o.ExceptionType = ptr(exc.Type)
		o.Reason = ReasonAgentSetupFailed
		o.Detail = excDetail + "; raised while setting up the agent (agent_execution and verifier null): the agent never ran, so the attempt is infra_error"
		return o, true
	}
	return outcome.Outcome{}, false
}

func describeException(e *ExceptionInfo) string {
	typ := e.Type
	if typ == "" {
		typ = `""`
	}
	msg := strings.TrimSpace(e.Message)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] + " …"
	}
	if len(msg) > 200 {
		msg = cutUTF8(msg, 200) + " …"
	}
	if msg == "" {
		return "exception " + typ
	}
	return fmt.Sprintf("exception %s: %s", typ, msg)
}

// rewardPick is the reward the rules look at and what is wrong with it.
type rewardPick struct {
	value   *Value
	binary  int    // 0 or 1 when problem == ""
	problem string // a reward_* reason code, "" when binary
	detail  string
}

func (p rewardPick) finite() *float64 {
	if p.value == nil {
		return nil
	}
	f, ok := p.value.Float()
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// pickReward finds the primary reward: the "reward" key, else the only
// key (Harbor's metrics and pass@k treat a single-key dict as the score),
// else nothing; then checks that it is exactly 0 or 1.
func pickReward(vr *VerifierResult) rewardPick {
	if vr == nil {
		return rewardPick{problem: ReasonRewardMissing, detail: "verifier_result is null: the verifier did not finish or was disabled"}
	}
	if vr.HasRewards && len(vr.Rewards) > 0 && vr.LegacyReward != nil {
		return rewardPick{problem: ReasonRewardAmbiguous, detail: `verifier_result has both "rewards" and the legacy "reward" key`}
	}
	var key string
	var val *Value
	switch {
	case vr.LegacyReward != nil:
		key, val = "reward", vr.LegacyReward
	case !vr.HasRewards:
		return rewardPick{problem: ReasonRewardMissing, detail: "verifier_result.rewards is null"}
	case len(vr.Rewards) == 0:
		return rewardPick{problem: ReasonRewardMissing, detail: "verifier_result.rewards is {}"}
	default:
		for i := range vr.Rewards {
			if vr.Rewards[i].Key == "reward" {
				key, val = "reward", &vr.Rewards[i].Value
				break
			}
		}
		if val == nil {
			if len(vr.Rewards) > 1 {
				keys := make([]string, 0, len(vr.Rewards))
				for _, r := range vr.Rewards {
					keys = append(keys, fmt.Sprintf("%q", r.Key))
				}
				if len(keys) > 8 {
					keys = append(keys[:8], "…")
				}
				return rewardPick{problem: ReasonRewardAmbiguous, detail: fmt.Sprintf("%d reward keys (%s) and none is named \"reward\"", len(vr.Rewards), strings.Join(keys, ", "))}
			}
			key, val = vr.Rewards[0].Key, &vr.Rewards[0].Value
		}
	}
	p := rewardPick{value: val}
	shown := val.Raw
	if len(shown) > 40 {
		shown = cutUTF8(shown, 40) + "…"
	}
	// "reward %q is %s", without fmt: this runs for every attempt.
	quoted := `"reward"`
	if key != "reward" {
		quoted = strconv.Quote(key)
	}
	where := rewardWhere(quoted, shown)
	switch val.Kind {
	case KindNull:
		p.problem, p.detail = ReasonRewardMissing, where+" (Harbor writes NaN and ±Infinity rewards as null)"
		return p
	case KindNumber:
	default:
		p.problem, p.detail = ReasonRewardNotBinary, fmt.Sprintf("%s, %s, not the number 0 or 1", where, val.Kind)
		return p
	}
	if f, _ := val.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
		p.problem, p.detail = ReasonRewardNotFinite, where+", not a finite number"
		return p
	}
	// Harbor reads the reward as a Python float, so the double decides:
	// 1.0000000000000001 is 1 there, and so here; the recorded value and
	// the status then agree.
	switch f, _ := val.Float(); f {
	case 0:
		p.binary = 0
	case 1:
		p.binary = 1
	default:
		p.problem, p.detail = ReasonRewardNotBinary, where+", not exactly 0 or 1 as a double"
		return p
	}
	p.detail = where
	return p
}

// rewardWhere is "reward " + quoted + " is " + shown, the words of the
// usual rewards written once: every attempt's judging builds them, and
// most attempts' detail then drops them.
func rewardWhere(quoted, shown string) string {
	if quoted == `"reward"` {
		switch shown {
		case "1.0":
			return `reward "reward" is 1.0`
		case "0.0":
			return `reward "reward" is 0.0`
		case "1":
			return `reward "reward" is 1`
		case "0":
			return `reward "reward" is 0`
		}
	}
	return "reward " + quoted + " is " + shown
}

// cutUTF8 returns at most the first n bytes of s (n < len(s)), ending
// before a rune that would be split so the text stays valid UTF-8.
func cutUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func ptr[T any](v T) *T { return &v }
