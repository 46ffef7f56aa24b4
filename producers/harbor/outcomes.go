package harbor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/outcome"
)

// RulesVersion names this rule set. It is recorded in every snapshot as
// outcome_rules; any change to what status or reason a given result.json
// gets must bump it.
const RulesVersion = "tpctl-outcomes/2"

// Harbor's stable reason codes (with outcome's ReasonResultMissing and
// ReasonResultInvalid). They are part of the snapshot and upload contract:
// never rename one, add a new code (and bump RulesVersion) instead.
const (
	ReasonVerifierTimeout      = "verifier_timeout"
	ReasonInfraException       = "infra_exception"
	ReasonEnvironmentStart     = "environment_start_failed"
	ReasonAgentSetupFailed     = "agent_setup_failed"
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

var rules = []outcome.Rule{
	outcome.Row("attempt listed in the plan, but its folder or result.json is missing", outcome.Unscored, outcome.ReasonResultMissing),
	outcome.Row("result.json unreadable, empty, truncated, not JSON, over the size cap, or not Harbor's TrialResult shape (the parse error is kept in detail)", outcome.Unscored, outcome.ReasonResultInvalid),
	outcome.Row("exception_type is Harbor's verifier timeout: VerifierTimeoutError (on a step of a multi-step trial, a bare TimeoutError)", outcome.InfraError, ReasonVerifierTimeout),
	outcome.Row("exception_type is a documented infrastructure exception (environment start/build, agent setup, healthcheck, test upload/download; see the infrastructure exception list)", outcome.InfraError, ReasonInfraException),
	outcome.Row("exception_type is RuntimeError with one of Harbor's own environment start failure messages (Docker compose, Apple container, Docker-in-sandbox compose build/up; see the message rules), recorded at trial level after the environment phase began and before agent setup (environment_setup set, agent_setup null)", outcome.InfraError, ReasonEnvironmentStart),
	outcome.Row("agent command failure (NonZeroAgentExitCodeError or a subclass) raised while setting up the agent (its install, or a simulated user's): recorded at trial level with environment_setup set and agent_execution, verifier and every step absent (the agent never ran)", outcome.InfraError, ReasonAgentSetupFailed),
	outcome.Row("exception_type is CancelledError (the run was interrupted)", outcome.Unscored, ReasonCancelled),
	outcome.Row("exception_type is a verifier reward-file error (RewardFileNotFoundError, RewardFileEmptyError, VerifierOutputParseError)", outcome.Unscored, ReasonVerifierError),
	outcome.Row("exception_type is AgentTimeoutError (on the trial, or on a step of a multi-step trial whose steps all scored) and the reward is exactly 1: the score stands", outcome.Success, ReasonAgentTimeoutScored),
	outcome.Row("exception_type is AgentTimeoutError and the reward is exactly 0: the score stands", outcome.Failure, ReasonAgentTimeoutScored),
	outcome.Row("exception_type is AgentTimeoutError and there is no valid binary reward", outcome.Unscored, ReasonAgentTimeoutUnscored),
	outcome.Row("exception_type is an agent command failure during the agent run (NonZeroAgentExitCodeError or a subclass such as ApiRateLimitError or the vibe agent's ApiConnectionError; Harbor still ran the verifier; on the trial, or on a step of a multi-step trial whose steps all scored) and the reward is exactly 1", outcome.Success, ReasonAgentErrorScored),
	outcome.Row("agent command failure and the reward is exactly 0", outcome.Failure, ReasonAgentErrorScored),
	outcome.Row("agent command failure and no valid binary reward", outcome.Unscored, ReasonAgentErrorUnscored),
	outcome.Row("any other exception_type, even with a reward (exception_type names it)", outcome.Unscored, ReasonUnknownException),
	outcome.Row("multi-step trial: a step is infra_error (judged by this same table; the first such step is named)", outcome.InfraError, ReasonStepException),
	outcome.Row("multi-step trial: a step is unscored because of its exception", outcome.Unscored, ReasonStepException),
	outcome.Row("multi-step trial: a step has no valid binary reward (e.g. no verifier result)", outcome.Unscored, ReasonStepUnscored),
	outcome.Row("reward is exactly 1 as a double, the way Harbor's Python reads it (1, 1.0, 1e0, 1.0000000000000001)", outcome.Success, ReasonRewardSuccess),
	outcome.Row("reward is exactly 0 as a double (0, 0.0, -0.0, 1e-400)", outcome.Failure, ReasonRewardFailure),
	outcome.Row("verifier_result or rewards is null, rewards is {}, or the reward value is null (Harbor writes NaN and ±Infinity rewards as null)", outcome.Unscored, ReasonRewardMissing),
	outcome.Row("reward is NaN, Infinity, -Infinity or too large for a float64 (1e400)", outcome.Unscored, ReasonRewardNotFinite),
	outcome.Row("reward is a number other than 0 or 1 as a double (0.5, 7, 0.9999999999999999, a multi-step mean), a boolean, a string, an object or an array", outcome.Unscored, ReasonRewardNotBinary),
	outcome.Row("several reward keys and none is named \"reward\", or both the rewards and the legacy reward shapes are present", outcome.Unscored, ReasonRewardAmbiguous),
}

// Table returns every rule in the order Judge applies them. The caller may
// modify the returned slice.
func Table() []outcome.Rule { return append([]outcome.Rule(nil), rules...) }

// Reasons returns every reason code once, in table order.
func Reasons() []string { return OutcomeTable().Reasons() }

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
	Status outcome.Status `json:"status"`
	Reason string         `json:"reason"`
	// Scope is ScopeAny or ScopeStep.
	Scope string `json:"scope"`
	// Source says when Harbor raises it.
	Source string `json:"source"`
	// Defined is its class statement at each validated revision that has
	// it (empty for Python builtins and historical names).
	Defined []Definition `json:"defined"`
	class   exceptionClass
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

// Revision labels of Harbor's validated revisions (formats.Harbor), as
// Definition.Revision spells them.
const (
	Rev5f5618b8 = "5f5618b8" // commit 5f5618b8f5419dde63f2df6d86706782e597e8a3
	RevV0220    = "v0.22.0"  // commit 4407eb5227a2ff4f0d3f16b2eb48849382fdf276
)

// Definition is where Harbor defines an exception class at one validated
// revision: the line of its class statement.
type Definition struct {
	Revision string `json:"revision"`
	File     string `json:"file"`
	Line     int    `json:"line"`
}

// String is "REV FILE:LINE".
func (d Definition) String() string { return fmt.Sprintf("%s %s:%d", d.Revision, d.File, d.Line) }

// at builds the definitions of one class: pairs of revision label and
// "file:line".
func at(pairs ...string) []Definition {
	var out []Definition
	for i := 0; i+1 < len(pairs); i += 2 {
		file, line, _ := strings.Cut(pairs[i+1], ":")
		n, _ := strconv.Atoi(line)
		out = append(out, Definition{Revision: pairs[i], File: file, Line: n})
	}
	return out
}

const (
	installedBase = "src/harbor/agents/installed/base.py"
	verifierPy    = "src/harbor/verifier/verifier.py"
	trialPy       = "src/harbor/trial/trial.py"
	errorsPy      = "src/harbor/trial/errors.py"
	envBase       = "src/harbor/environments/base.py"
)

func infra(t, src string, def []Definition) ExceptionRule {
	return ExceptionRule{Type: t, Status: outcome.InfraError, Reason: ReasonInfraException, Scope: ScopeAny, Source: src, Defined: def, class: classInfra}
}

func agentErr(t, src string, def []Definition) ExceptionRule {
	return ExceptionRule{Type: t, Status: outcome.Unscored, Reason: ReasonAgentErrorUnscored, Scope: ScopeAny, Source: src, Defined: def, class: classAgentError}
}

func verifierErr(t string, def []Definition) ExceptionRule {
	return ExceptionRule{Type: t, Status: outcome.Unscored, Reason: ReasonVerifierError, Scope: ScopeAny, Source: "the verifier, after test.sh, reading the reward file", Defined: def, class: classVerifierError}
}

// apiErr is a v0.22.0 agent API error: Harbor picks the class from the
// failed command's output (installed/base.py _classify_exec_error).
func apiErr(t string, line int) ExceptionRule {
	return agentErr(t, "an installed agent's command failed and its output matched one of Harbor's error patterns",
		[]Definition{{RevV0220, installedBase, line}})
}

// exceptions is the one table of Harbor exception names tpctl judges. Each
// Harbor-defined class carries its class statement per validated revision;
// outcome/testdata/harbor-exceptions holds the list of every exception class
// in Harbor's source at each revision (and how it was derived), and a test
// checks this table, unjudged below and that list against each other.
// Generic Python names (RuntimeError, FileNotFoundError, ValueError,
// ValidationError) are deliberately absent: Harbor raises them for both
// infrastructure and task problems, so they stay unknown_exception unless
// one of the message rules (environment start failures) recognises Harbor's
// own text.
var exceptions = []ExceptionRule{
	{Type: "VerifierTimeoutError", Status: outcome.InfraError, Reason: ReasonVerifierTimeout, Scope: ScopeAny, Source: "test.sh outlived the verifier timeout",
		Defined: at(Rev5f5618b8, trialPy+":43", RevV0220, errorsPy+":12"), class: classVerifierTimeout},
	{Type: "TimeoutError", Status: outcome.InfraError, Reason: ReasonVerifierTimeout, Scope: ScopeStep, Source: "builtin; a step verifier timeout is recorded unwrapped (v0.22.0 src/harbor/trial/multi_step.py:216)", class: classVerifierTimeout},

	infra("EnvironmentStartTimeoutError", "environment start outlived the build timeout", at(Rev5f5618b8, trialPy+":47", RevV0220, errorsPy+":16")),
	infra("EnvironmentBuildTimeoutError", "historical name (2025-08 to early 2026), defined at neither validated revision; kept for older result files", nil),
	infra("AgentSetupTimeoutError", "agent install/setup outlived the setup timeout", at(Rev5f5618b8, trialPy+":35", RevV0220, errorsPy+":4")),
	infra("HealthcheckError", "the task's environment healthcheck failed", at(Rev5f5618b8, envBase+":17", RevV0220, envBase+":61")),
	infra("AddTestsDirError", "uploading tests/ into the environment failed", at(Rev5f5618b8, verifierPy+":13", RevV0220, verifierPy+":19")),
	infra("DownloadVerifierDirError", "downloading the verifier's output failed", at(Rev5f5618b8, verifierPy+":21", RevV0220, verifierPy+":27")),
	infra("SandboxBuildFailedError", "a cloud environment's image build failed", at(RevV0220, envBase+":70")),
	infra("ServiceOperationsUnsupportedError", "sidecar operations on a provider without compose support", at(RevV0220, envBase+":65")),
	infra("GKEExecStreamClosedError", "the GKE exec stream closed under a command", at(RevV0220, "src/harbor/environments/gke.py:119")),
	infra("VercelScopeError", "the Vercel sandbox scope is misconfigured or unavailable", at(RevV0220, "src/harbor/environments/vercel/scope.py:41")),

	{Type: "CancelledError", Status: outcome.Unscored, Reason: ReasonCancelled, Scope: ScopeAny, Source: "asyncio (Ctrl-C, SIGTERM, job abort)", class: classCancelled},

	verifierErr("RewardFileNotFoundError", at(Rev5f5618b8, verifierPy+":25", RevV0220, verifierPy+":31")),
	verifierErr("RewardFileEmptyError", at(Rev5f5618b8, verifierPy+":29", RevV0220, verifierPy+":35")),
	verifierErr("VerifierOutputParseError", at(Rev5f5618b8, verifierPy+":17", RevV0220, verifierPy+":23")),

	{Type: "AgentTimeoutError", Status: outcome.Unscored, Reason: ReasonAgentTimeoutUnscored, Scope: ScopeAny, Source: "the agent run outlived the agent timeout",
		Defined: at(Rev5f5618b8, trialPy+":39", RevV0220, errorsPy+":8"), class: classAgentTimeout},

	agentErr("NonZeroAgentExitCodeError", "an installed agent's command exited non-zero", at(Rev5f5618b8, installedBase+":16", RevV0220, installedBase+":27")),
	apiErr("ApiError", 33),
	apiErr("ApiRateLimitError", 39),
	apiErr("ApiUsageLimitError", 50),
	apiErr("ApiInternalServerError", 58),
	apiErr("ApiOverloadedError", 66),
	apiErr("ApiConnectionClosedError", 74),
	apiErr("ApiResponseStalledError", 82),
	apiErr("OutputTokenExceededError", 90),
	apiErr("ContextWindowExceededError", 98),
	apiErr("UnknownApiError", 106),
	apiErr("ApiProviderResourceNotFoundError", 114),
	apiErr("AgentSafetyRefusalError", 125),
	apiErr("AgentAuthenticationError", 138),
	apiErr("ModelNotFoundError", 144),
	apiErr("NetworkConnectionError", 152),
	agentErr("ApiConnectionError", "the vibe agent's command failed with a connection or read timeout in its output",
		at(RevV0220, "src/harbor/agents/installed/vibe.py:30")),
}

// Unjudged is an exception class Harbor defines that the table above does
// not judge, and why: it never reaches a trial's exception_info, or it can
// but says nothing certain about the infrastructure or the score (then it
// is unknown_exception, unscored).
type Unjudged struct {
	Type     string       `json:"exception_type"`
	Recorded bool         `json:"recorded"`
	Why      string       `json:"why"`
	Defined  []Definition `json:"defined"`
}

const (
	whyAuth     = "Harbor's login commands; raised before any trial exists"
	whyRegistry = "dataset or registry lookup; aborts the job before trials run"
	whyHosted   = "hosted-run and upload commands; not part of a trial"
)

var unjudged = []Unjudged{
	{"AuthenticationError", false, whyAuth, at(Rev5f5618b8, "src/harbor/auth/errors.py:1", RevV0220, "src/harbor/auth/errors.py:4")},
	{"RefreshTokenExpiredError", false, whyAuth, at(Rev5f5618b8, "src/harbor/auth/errors.py:5")},
	{"OAuthCallbackError", false, whyAuth, at(Rev5f5618b8, "src/harbor/auth/errors.py:9", RevV0220, "src/harbor/auth/errors.py:27")},
	{"NotAuthenticatedError", false, whyAuth, at(RevV0220, "src/harbor/auth/errors.py:8")},
	{"ApiKeyRejectedError", false, whyAuth, at(RevV0220, "src/harbor/auth/errors.py:15")},
	{"MultimodalExportError", false, "trace export (harbor traces), after the trials", at(Rev5f5618b8, "src/harbor/utils/traces_utils.py:48", RevV0220, "src/harbor/utils/traces_utils.py:49")},
	{"EmptyDatasetError", false, whyRegistry, at(RevV0220, "src/harbor/registry/client/base.py:27")},
	{"UnavailableDatasetTasksError", false, whyRegistry, at(RevV0220, "src/harbor/registry/client/base.py:13")},
	{"TaskVersionNotFoundError", false, whyRegistry, at(RevV0220, "src/harbor/db/client.py:80")},
	{"HostedNotApprovedError", false, whyHosted, at(RevV0220, "src/harbor/hosted/submit.py:44")},
	{"HostedQuotaExceededError", false, whyHosted, at(RevV0220, "src/harbor/hosted/submit.py:40")},
	{"RegistryCredentialReplacementRequired", false, whyHosted, at(RevV0220, "src/harbor/hosted/registry_credentials.py:47")},
	{"SecretReplacementRequired", false, whyHosted, at(RevV0220, "src/harbor/hosted/secrets.py:33")},
	{"StaleAccessTokenError", false, whyHosted, at(RevV0220, "src/harbor/hosted/api.py:35")},
	{"OwnerOrgError", false, whyHosted, at(RevV0220, "src/harbor/upload/db_client.py:35")},
	{"LeaderboardAPIError", false, "harbor hub leaderboard commands; not part of a trial", at(RevV0220, "src/harbor/hub/leaderboards.py:45")},
	{"_BatchUpdateError", false, "private to the package-access CLI, caught there", at(RevV0220, "src/harbor/cli/package_access.py:28")},
	{"_SnapshotNeedsCreate", false, "private to Daytona snapshot handling, caught there", at(RevV0220, "src/harbor/environments/daytona/snapshots.py:42")},
	{"ContextLengthExceededError", true, "raised by Harbor's LLM wrapper inside in-process agents (terminus-2), which mostly handle it; if it escapes, Harbor skips the verifier, so there is no score", at(Rev5f5618b8, "src/harbor/llms/base.py:40", RevV0220, "src/harbor/llms/base.py:40")},
	{"OutputLengthExceededError", true, "as ContextLengthExceededError", at(Rev5f5618b8, "src/harbor/llms/base.py:46", RevV0220, "src/harbor/llms/base.py:46")},
	{"RuntimeRequestError", true, "the in-process computer-1 agent's runtime; an agent failure that skips the verifier", at(RevV0220, "src/harbor/agents/computer_1/runtime.py:196")},
	{"DspyImportError", true, "the in-process dspy agent cannot import its dependency: a set-up problem of the machine running Harbor, not of the task", at(RevV0220, "src/harbor/agents/dspy_rlm.py:25")},
	{"MissingExtraError", true, "an optional Python extra for an environment is not installed where Harbor runs: a set-up problem of that machine", at(RevV0220, "src/harbor/utils/optional_import.py:9")},
	{"MemoryLimitExceededError", true, "Singularity memory limit: can be the agent's own doing, so it is neither infrastructure nor a score", at(RevV0220, "src/harbor/environments/singularity/singularity.py:50")},
	{"RegradeError", true, "harbor's regrade tool refused a trial; not a verdict on the original run", at(RevV0220, "src/harbor/trial/regrade.py:42")},
}

// UnjudgedExceptions returns the Harbor-defined exception classes the table
// does not judge, with why.
func UnjudgedExceptions() []Unjudged { return append([]Unjudged(nil), unjudged...) }

// MessageRule recognises an environment start failure that Harbor records
// as a plain RuntimeError, by the fixed start of the message Harbor itself
// writes. It applies only at trial level, with environment_setup set and
// agent_setup null (Harbor sets them just before environment start and
// agent setup), so the same text raised later (a compose command failing
// during the agent run) is not matched.
type MessageRule struct {
	Type   string `json:"exception_type"`
	Prefix string `json:"message_prefix"`
	Reason string `json:"reason"`
	// Raised is the line of Harbor's message text per validated revision.
	Raised []Definition `json:"raised"`
}

var messageRules = []MessageRule{
	{"RuntimeError", "Docker compose command failed for environment ", ReasonEnvironmentStart,
		at(Rev5f5618b8, "src/harbor/environments/docker/docker.py:322", RevV0220, "src/harbor/environments/docker/docker.py:657")},
	{"RuntimeError", "Container command failed for environment ", ReasonEnvironmentStart,
		at(Rev5f5618b8, "src/harbor/environments/apple_container.py:134", RevV0220, "src/harbor/environments/apple_container.py:139")},
	{"RuntimeError", "docker compose build failed: ", ReasonEnvironmentStart,
		at(Rev5f5618b8, "src/harbor/environments/daytona.py:538",
			RevV0220, "src/harbor/environments/daytona/environment.py:757", RevV0220, "src/harbor/environments/modal.py:793",
			RevV0220, "src/harbor/environments/gke.py:2012", RevV0220, "src/harbor/environments/beam.py:514",
			RevV0220, "src/harbor/environments/blaxel.py:1205", RevV0220, "src/harbor/environments/hyperbrowser.py:452")},
	{"RuntimeError", "docker compose up failed: ", ReasonEnvironmentStart,
		at(Rev5f5618b8, "src/harbor/environments/daytona.py:545",
			RevV0220, "src/harbor/environments/daytona/environment.py:764", RevV0220, "src/harbor/environments/modal.py:800",
			RevV0220, "src/harbor/environments/gke.py:2021", RevV0220, "src/harbor/environments/beam.py:520",
			RevV0220, "src/harbor/environments/blaxel.py:1211", RevV0220, "src/harbor/environments/hyperbrowser.py:459")},
}

// MessageRules returns the environment start failure message rules.
func MessageRules() []MessageRule { return append([]MessageRule(nil), messageRules...) }

// matchMessageRule finds the message rule for a trial-level exception.
func matchMessageRule(typ, msg string) (MessageRule, bool) {
	for _, m := range messageRules {
		if typ == m.Type && strings.HasPrefix(msg, m.Prefix) {
			return m, true
		}
	}
	return MessageRule{}, false
}

// Exceptions returns every known exception type, grouped by verdict.
func Exceptions() []ExceptionRule { return append([]ExceptionRule(nil), exceptions...) }

// InfraExceptions returns the exception types judged infra_error.
func InfraExceptions() []ExceptionRule {
	var out []ExceptionRule
	for _, e := range exceptions {
		if e.Status == outcome.InfraError {
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
