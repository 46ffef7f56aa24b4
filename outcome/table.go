package outcome

// RulesVersion names this rule set. It is recorded in every snapshot as
// outcome_rules; any change to what status or reason a given result.json
// gets must bump it.
const RulesVersion = "tpctl-outcomes/1"

// Status is the verdict for one attempt.
type Status string

// The four statuses. Only Success and Failure are scored (they enter the
// success rate and may be trainable).
const (
	Success    Status = "success"
	Failure    Status = "failure"
	InfraError Status = "infra_error"
	Unscored   Status = "unscored"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case Success, Failure, InfraError, Unscored:
		return true
	}
	return false
}

// Scored reports whether s counts toward the success rate.
func (s Status) Scored() bool { return s == Success || s == Failure }

// Stable reason codes. They are part of the snapshot and upload contract:
// never rename one, add a new code (and bump RulesVersion) instead.
const (
	ReasonResultMissing        = "result_missing"
	ReasonResultInvalid        = "result_invalid"
	ReasonVerifierTimeout      = "verifier_timeout"
	ReasonInfraException       = "infra_exception"
	ReasonCancelled            = "cancelled"
	ReasonVerifierError        = "verifier_error"
	ReasonUnknownException     = "unknown_exception"
	ReasonAgentTimeoutScored   = "agent_timeout_scored"
	ReasonAgentTimeoutUnscored = "agent_timeout_unscored"
	ReasonAgentErrorScored     = "agent_error_scored"
	ReasonAgentErrorUnscored   = "agent_error_unscored"
	ReasonStepException        = "step_exception"
	ReasonStepUnscored         = "step_unscored"
	ReasonRewardSuccess        = "reward_success"
	ReasonRewardFailure        = "reward_failure"
	ReasonRewardMissing        = "reward_missing"
	ReasonRewardNotFinite      = "reward_not_finite"
	ReasonRewardNotBinary      = "reward_not_binary"
	ReasonRewardAmbiguous      = "reward_ambiguous"
)

// Rule is one row of the outcome table, in the order Judge applies them
// (the first that matches decides).
type Rule struct {
	Situation string `json:"situation"`
	Status    Status `json:"status"`
	Reason    string `json:"reason"`
}

var rules = []Rule{
	{"attempt listed in the plan, but its folder or result.json is missing", Unscored, ReasonResultMissing},
	{"result.json unreadable, empty, truncated, not JSON, over the size cap, or not Harbor's TrialResult shape (the parse error is kept in detail)", Unscored, ReasonResultInvalid},
	{"exception_type is Harbor's verifier timeout: VerifierTimeoutError (on a step of a multi-step trial, a bare TimeoutError)", InfraError, ReasonVerifierTimeout},
	{"exception_type is a documented infrastructure exception (environment start/build, agent setup, healthcheck, test upload/download; see the infrastructure exception list)", InfraError, ReasonInfraException},
	{"exception_type is CancelledError (the run was interrupted)", Unscored, ReasonCancelled},
	{"exception_type is a verifier reward-file error (RewardFileNotFoundError, RewardFileEmptyError, VerifierOutputParseError)", Unscored, ReasonVerifierError},
	{"exception_type is AgentTimeoutError and the reward is exactly 1: the score stands", Success, ReasonAgentTimeoutScored},
	{"exception_type is AgentTimeoutError and the reward is exactly 0: the score stands", Failure, ReasonAgentTimeoutScored},
	{"exception_type is AgentTimeoutError and there is no valid binary reward", Unscored, ReasonAgentTimeoutUnscored},
	{"exception_type is an agent command failure (NonZeroAgentExitCodeError or a subclass such as ApiRateLimitError; Harbor still ran the verifier) and the reward is exactly 1", Success, ReasonAgentErrorScored},
	{"agent command failure and the reward is exactly 0", Failure, ReasonAgentErrorScored},
	{"agent command failure and no valid binary reward", Unscored, ReasonAgentErrorUnscored},
	{"any other exception_type, even with a reward (exception_type names it)", Unscored, ReasonUnknownException},
	{"multi-step trial: a step is infra_error (judged by this same table; the first such step is named)", InfraError, ReasonStepException},
	{"multi-step trial: a step is unscored because of its exception", Unscored, ReasonStepException},
	{"multi-step trial: a step has no valid binary reward (e.g. no verifier result)", Unscored, ReasonStepUnscored},
	{"reward is exactly 1 (int or float: 1, 1.0, 1e0)", Success, ReasonRewardSuccess},
	{"reward is exactly 0 (0, 0.0, -0.0)", Failure, ReasonRewardFailure},
	{"verifier_result or rewards is null, rewards is {}, or the reward value is null (Harbor writes NaN and ±Infinity rewards as null)", Unscored, ReasonRewardMissing},
	{"reward is NaN, Infinity, -Infinity or too large for a float64 (1e400)", Unscored, ReasonRewardNotFinite},
	{"reward is a number other than 0 or 1 (0.5, 7, a multi-step mean), a boolean, a string, an object or an array", Unscored, ReasonRewardNotBinary},
	{"several reward keys and none is named \"reward\", or both the rewards and the legacy reward shapes are present", Unscored, ReasonRewardAmbiguous},
}

// Table returns every rule in the order Judge applies them. The caller may
// modify the returned slice.
func Table() []Rule { return append([]Rule(nil), rules...) }

// Reasons returns every reason code once, in table order.
func Reasons() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rules {
		if !seen[r.Reason] {
			seen[r.Reason] = true
			out = append(out, r.Reason)
		}
	}
	return out
}

// exceptionClass is how the rules treat one exception type.
type exceptionClass int

const (
	classVerifierTimeout exceptionClass = iota + 1
	classInfra
	classCancelled
	classVerifierError
	classAgentTimeout
	classAgentError
)

// Scope says where an exception type is recognised.
const (
	ScopeAny  = "any"
	ScopeStep = "step" // only on a step of a multi-step trial
)

// ExceptionRule is one known Harbor exception class name and its verdict.
type ExceptionRule struct {
	// Type is Python's bare type(e).__name__ as Harbor records it.
	Type string `json:"exception_type"`
	// Status is the verdict; for agent exceptions it is the status when no
	// valid binary reward exists (a valid one stands).
	Status Status `json:"status"`
	Reason string `json:"reason"`
	// Scope is ScopeAny or ScopeStep.
	Scope string `json:"scope"`
	// Source is where Harbor defines or raises it.
	Source string `json:"source"`
	class  exceptionClass
}

// ScoreStands reports whether a valid binary reward still decides the
// status after this exception (agent timeouts and agent command failures,
// after which Harbor still runs the verifier).
func (e ExceptionRule) ScoreStands() bool {
	return e.class == classAgentTimeout || e.class == classAgentError
}

// ScoredReason is the reason code when ScoreStands and the reward is
// exactly 0 or 1 ("" for other exceptions).
func (e ExceptionRule) ScoredReason() string {
	switch e.class {
	case classAgentTimeout:
		return ReasonAgentTimeoutScored
	case classAgentError:
		return ReasonAgentErrorScored
	}
	return ""
}

const (
	srcTrialErrors = "src/harbor/trial/trial.py (5f5618b8); src/harbor/trial/errors.py (v0.22.0)"
	srcEnvBase     = "src/harbor/environments/base.py"
	srcVerifier    = "src/harbor/verifier/verifier.py"
	srcInstalled   = "src/harbor/agents/installed/base.py (v0.22.0)"
)

func infra(t, src string) ExceptionRule {
	return ExceptionRule{Type: t, Status: InfraError, Reason: ReasonInfraException, Scope: ScopeAny, Source: src, class: classInfra}
}

func agentErr(t, src string) ExceptionRule {
	return ExceptionRule{Type: t, Status: Unscored, Reason: ReasonAgentErrorUnscored, Scope: ScopeAny, Source: src, class: classAgentError}
}

// exceptions is the one table of Harbor exception names tpctl knows, from
// research/harbor.md §3.2 (5f5618b8) and §D (v0.22.0). Generic Python
// names (RuntimeError, FileNotFoundError, ValueError, ValidationError) are
// deliberately absent: Harbor raises them for both infrastructure and task
// problems, so they stay unknown_exception (unscored) rather than guess.
var exceptions = []ExceptionRule{
	{Type: "VerifierTimeoutError", Status: InfraError, Reason: ReasonVerifierTimeout, Scope: ScopeAny, Source: srcTrialErrors, class: classVerifierTimeout},
	{Type: "TimeoutError", Status: InfraError, Reason: ReasonVerifierTimeout, Scope: ScopeStep, Source: "builtin; a step verifier timeout in src/harbor/trial/multi_step.py is not wrapped (v0.22.0)", class: classVerifierTimeout},

	infra("EnvironmentStartTimeoutError", srcTrialErrors),
	infra("EnvironmentBuildTimeoutError", "src/harbor/trial/trial.py (historical name, 2025-08 to early 2026)"),
	infra("AgentSetupTimeoutError", srcTrialErrors),
	infra("HealthcheckError", srcEnvBase),
	infra("AddTestsDirError", srcVerifier),
	infra("DownloadVerifierDirError", srcVerifier),
	infra("SandboxBuildFailedError", srcEnvBase+" (v0.22.0)"),
	infra("ServiceOperationsUnsupportedError", srcEnvBase+" (v0.22.0)"),
	infra("GKEExecStreamClosedError", "src/harbor/environments/gke.py (v0.22.0)"),
	infra("VercelScopeError", "src/harbor/environments/vercel/scope.py (v0.22.0)"),

	{Type: "CancelledError", Status: Unscored, Reason: ReasonCancelled, Scope: ScopeAny, Source: "asyncio (Ctrl-C, SIGTERM, job abort)", class: classCancelled},

	{Type: "RewardFileNotFoundError", Status: Unscored, Reason: ReasonVerifierError, Scope: ScopeAny, Source: srcVerifier, class: classVerifierError},
	{Type: "RewardFileEmptyError", Status: Unscored, Reason: ReasonVerifierError, Scope: ScopeAny, Source: srcVerifier, class: classVerifierError},
	{Type: "VerifierOutputParseError", Status: Unscored, Reason: ReasonVerifierError, Scope: ScopeAny, Source: srcVerifier, class: classVerifierError},

	{Type: "AgentTimeoutError", Status: Unscored, Reason: ReasonAgentTimeoutUnscored, Scope: ScopeAny, Source: srcTrialErrors, class: classAgentTimeout},

	agentErr("NonZeroAgentExitCodeError", "src/harbor/agents/installed/base.py"),
	agentErr("ApiError", srcInstalled),
	agentErr("ApiRateLimitError", srcInstalled),
	agentErr("ApiUsageLimitError", srcInstalled),
	agentErr("ApiInternalServerError", srcInstalled),
	agentErr("ApiOverloadedError", srcInstalled),
	agentErr("ApiConnectionClosedError", srcInstalled),
	agentErr("ApiResponseStalledError", srcInstalled),
	agentErr("OutputTokenExceededError", srcInstalled),
	agentErr("ContextWindowExceededError", srcInstalled),
	agentErr("UnknownApiError", srcInstalled),
	agentErr("ApiProviderResourceNotFoundError", srcInstalled),
	agentErr("AgentSafetyRefusalError", srcInstalled),
	agentErr("AgentAuthenticationError", srcInstalled),
	agentErr("ModelNotFoundError", srcInstalled),
	agentErr("NetworkConnectionError", srcInstalled),
}

// Exceptions returns every known exception type, grouped by verdict.
func Exceptions() []ExceptionRule { return append([]ExceptionRule(nil), exceptions...) }

// InfraExceptions returns the exception types judged infra_error.
func InfraExceptions() []ExceptionRule {
	var out []ExceptionRule
	for _, e := range exceptions {
		if e.Status == InfraError {
			out = append(out, e)
		}
	}
	return out
}

// lookupException finds the rule for an exception type; onStep enables
// step-only names.
func lookupException(typ string, onStep bool) (ExceptionRule, bool) {
	for _, e := range exceptions {
		if e.Type == typ && (e.Scope == ScopeAny || onStep) {
			return e, true
		}
	}
	return ExceptionRule{}, false
}
