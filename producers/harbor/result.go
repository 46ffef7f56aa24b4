package harbor

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxResultSize is the largest trial result.json tpctl reads: 16 MiB.
// Harbor writes a few KiB per trial (the biggest parts are the copied
// TrialConfig and exception tracebacks), so anything near the cap is not a
// Harbor result and is refused instead of being held in memory.
const MaxResultSize = 16 << 20

// TrialResult is the part of Harbor's TrialResult (src/harbor/models/trial/
// result.py, written by model_dump_json(indent=4) to <trial>/result.json)
// that tpctl needs to judge an attempt and bind evidence to it. Fields it
// does not need (config, agent_result, trial_uri) are checked for
// their JSON type and skipped; fields it does not know are counted.
type TrialResult struct {
	// ID is the trial UUID (all revisions).
	ID string
	// TaskName is Task.name: [task].name from task.toml (e.g.
	// "harbor/hello-world") or the task folder name (all revisions).
	TaskName string
	// TrialName is "<task dir name prefix>__<7 chars>" (all revisions).
	TrialName string
	// TaskChecksum is dirhash(task_dir, "sha256") (all revisions; deprecated
	// at v0.22.0 in favour of lock.json task.digest but still written).
	TaskChecksum string
	// TaskID identifies where the task came from (all revisions).
	TaskID TaskID
	// Source is the dataset name, nil for ad-hoc tasks (added 2025-10-28).
	Source *string
	// Agent is agent_info; nil when absent.
	Agent *AgentInfo
	// Verifier is the trial-level verifier_result; nil when null. For a
	// multi-step trial (v0.22.0) it is derived from the steps (mean or
	// final), so it can read 1.0 after a step crashed.
	Verifier *VerifierResult
	// VerifierEnvironmentMode is "shared", "separate" or nil (v0.22.0,
	// b3d5f5af). Harbor leaves it null for multi-step trials.
	VerifierEnvironmentMode *string
	// HasVerifierEnvironmentMode reports that the key was present, even as
	// null; 5f5618b8 output never has it.
	HasVerifierEnvironmentMode bool
	// Exception is the trial-level exception_info; nil when null (all
	// revisions). In multi-step trials step failures are recorded only on
	// the step, never here.
	Exception *ExceptionInfo
	// Phases says which of Harbor's timed phases started (their TimingInfo
	// was written, not null).
	Phases Phases
	// Timings are the phases' TimingInfo as written (display only).
	Timings Timings
	// Usage is agent_result's token and cost counts (summed over the
	// steps of a multi-step trial); display only.
	Usage Usage
	// StartedAt and FinishedAt are the timestamps as written (UTC, "…Z");
	// display only, never hashed.
	StartedAt, FinishedAt *string
	// Steps is step_results in execution order (v0.22.0, ce8303d7). Steps
	// that never ran are absent.
	Steps []StepResult
	// MultiStep reports that step_results was a list (possibly empty): the
	// trial was a multi-step trial that reached its step loop.
	MultiStep bool
	// UnknownFields counts object keys tpctl does not know in the parts it
	// interprets (newer Harbor adds fields; they are tolerated).
	UnknownFields int
	// UnknownFieldPointers names the first few unknown keys as JSON
	// pointers, for warnings (at most maxUnknownPointers).
	UnknownFieldPointers []string
}

// Phases records which trial-level TimingInfo fields are objects rather
// than null. Harbor sets each one just before the phase begins (trial.py
// _setup_environment / _setup_agent / _execute_agent / _run_verification at
// 5f5618b8; trial.py _setup_agent_environment / _setup_agent and
// single_step.py _run_verifier, trial.py _run_agent_phase at v0.22.0), so
// together they tell how far a trial got. Multi-step trials time the agent
// and verifier on each step, never at trial level.
type Phases struct {
	EnvironmentSetup bool
	AgentSetup       bool
	AgentExecution   bool
	Verifier         bool
}

// TaskID is Harbor's untagged task id union (src/harbor/models/task/id.py):
// LocalTaskId {path}, GitTaskId {git_url, git_commit_id, path} or
// PackageTaskId {org, name, ref}, told apart by their keys.
type TaskID struct {
	// Kind is "local", "git", "package", or "" when task_id was absent.
	Kind        string
	Path        string
	GitURL      string
	GitCommitID string
	Org         string
	Name        string
	Ref         string
}

// DisplayName is the task id's name the way Harbor's get_name() gives it:
// the last path element for local and git tasks, "org/name" for packages.
func (t TaskID) DisplayName() string {
	switch t.Kind {
	case "package":
		return t.Org + "/" + t.Name
	case "local", "git":
		p := strings.TrimRight(t.Path, "/")
		if i := strings.LastIndex(p, "/"); i >= 0 {
			return p[i+1:]
		}
		return p
	}
	return ""
}

// AgentInfo is agent_info. ModelProvider may be nil since v0.22.0
// (89af63da: ModelInfo.provider became optional).
type AgentInfo struct {
	Name          string
	Version       string
	ModelName     string
	ModelProvider *string
	// HasModel reports that model_info was an object (not null).
	HasModel bool
}

// ExceptionInfo is exception_info. Type is Python's bare type(e).__name__;
// the traceback is skipped (it is large and machine-specific).
type ExceptionInfo struct {
	Type       string
	Message    string
	OccurredAt string
}

// VerifierResult is verifier_result. Two shapes exist: {"rewards": {name:
// number}} (all validated revisions) and, before 2025-10-28 (the
// "sandboxes" package), {"reward": number|null}. Reward values are kept as
// raw JSON so the rules can tell 1 from 1.0, true, "1" and NaN apart.
type VerifierResult struct {
	// Rewards is verifier_result.rewards in file order; nil when null or
	// absent, empty for {}.
	Rewards []Reward
	// HasRewards reports that a non-null "rewards" object was present.
	HasRewards bool
	// LegacyReward is the old single verifier_result.reward value; nil when
	// the key is absent.
	LegacyReward *Value
}

// Reward is one entry of verifier_result.rewards.
type Reward struct {
	Key   string
	Value Value
}

// StepResult is one entry of step_results (v0.22.0): a step's own verifier
// result and exception. A bare "TimeoutError" on a step is the step
// verifier's timeout (Harbor does not wrap it there).
type StepResult struct {
	Name      string
	Verifier  *VerifierResult
	Exception *ExceptionInfo
}

// Kind is the JSON type of a Value.
type Kind uint8

// JSON value kinds. Python's NaN, Infinity and -Infinity tokens are
// KindNumber.
const (
	KindNull Kind = iota + 1
	KindBool
	KindNumber
	KindString
	KindObject
	KindArray
)

// String names the kind the way error messages say it.
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "a boolean"
	case KindNumber:
		return "a number"
	case KindString:
		return "a string"
	case KindObject:
		return "an object"
	case KindArray:
		return "an array"
	}
	return "nothing"
}

// Value is a JSON value kept as written.
type Value struct {
	Kind Kind
	// Raw is the exact JSON text, e.g. `1`, `1.0`, `true`, `"1"`, `NaN`.
	Raw string
}

// Float returns a number's value: NaN and ±Inf for Python's tokens, ±Inf for
// a literal too large for float64 (1e400). ok is false for non-numbers.
func (v Value) Float() (f float64, ok bool) {
	if v.Kind != KindNumber {
		return 0, false
	}
	switch v.Raw {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	// A syntactically valid literal only fails with ErrRange, and then f is
	// already ±Inf (overflow) or the rounded value.
	f, _ = strconv.ParseFloat(v.Raw, 64)
	return f, true
}

// VerifierEnvironmentModes are the values of Harbor's
// VerifierEnvironmentMode (src/harbor/models/task/config.py), which a
// result's verifier_environment_mode may hold besides null.
var VerifierEnvironmentModes = []string{"shared", "separate"}

// IsVerifierEnvironmentMode reports whether m is one of
// VerifierEnvironmentModes.
func IsVerifierEnvironmentMode(m string) bool { return slices.Contains(VerifierEnvironmentModes, m) }
