package fakeharbor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// result is Harbor v0.22.0's TrialResult (src/harbor/models/trial/result.py)
// with its field order; every optional field is present, null when unset,
// as pydantic's model_dump_json writes it.
type result struct {
	ID                      string          `json:"id"`
	TaskName                string          `json:"task_name"`
	TrialName               string          `json:"trial_name"`
	TrialURI                string          `json:"trial_uri"`
	TaskID                  taskID          `json:"task_id"`
	Source                  *string         `json:"source"`
	TaskChecksum            string          `json:"task_checksum"`
	Config                  fullConfig      `json:"config"`
	AgentInfo               agentInfo       `json:"agent_info"`
	AgentResult             *agentContext   `json:"agent_result"`
	VerifierResult          *verifierResult `json:"verifier_result"`
	VerifierEnvironmentMode *string         `json:"verifier_environment_mode"`
	ExceptionInfo           *exceptionInfo  `json:"exception_info"`
	StartedAt               *string         `json:"started_at"`
	FinishedAt              *string         `json:"finished_at"`
	EnvironmentSetup        *timing         `json:"environment_setup"`
	AgentSetup              *timing         `json:"agent_setup"`
	AgentExecution          *timing         `json:"agent_execution"`
	Verifier                *timing         `json:"verifier"`
	StepResults             *[]any          `json:"step_results"`
}

type taskID struct {
	Path string `json:"path"`
}

type agentInfo struct {
	Name      string     `json:"name"`
	Version   string     `json:"version"`
	ModelInfo *modelInfo `json:"model_info"`
}

type modelInfo struct {
	Name     string  `json:"name"`
	Provider *string `json:"provider"`
}

type agentContext struct {
	NInputTokens   *int     `json:"n_input_tokens"`
	NCacheTokens   *int     `json:"n_cache_tokens"`
	NOutputTokens  *int     `json:"n_output_tokens"`
	CostUSD        *float64 `json:"cost_usd"`
	RolloutDetails *[]any   `json:"rollout_details"`
	Metadata       *any     `json:"metadata"`
}

type verifierResult struct {
	// Rewards is raw so a float reward keeps Harbor's "1.0" spelling.
	Rewards json.RawMessage `json:"rewards"`
}

type exceptionInfo struct {
	ExceptionType      string `json:"exception_type"`
	ExceptionMessage   string `json:"exception_message"`
	ExceptionTraceback string `json:"exception_traceback"`
	OccurredAt         string `json:"occurred_at"`
}

type timing struct {
	StartedAt  *string `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
}

// fullConfig is the full TrialConfig dump inside result.json (v0.22.0
// omits agent.env, include/exclude_logs and environment.env when empty).
type fullConfig struct {
	Task struct {
		Path        string  `json:"path"`
		GitURL      *string `json:"git_url"`
		GitCommitID *string `json:"git_commit_id"`
		Name        *string `json:"name"`
		Ref         *string `json:"ref"`
		Overwrite   bool    `json:"overwrite"`
		DownloadDir *string `json:"download_dir"`
		Source      *string `json:"source"`
	} `json:"task"`
	TrialName                         string   `json:"trial_name"`
	TrialsDir                         string   `json:"trials_dir"`
	InstallOnly                       bool     `json:"install_only"`
	TimeoutMultiplier                 float64  `json:"timeout_multiplier"`
	AgentTimeoutMultiplier            *float64 `json:"agent_timeout_multiplier"`
	VerifierTimeoutMultiplier         *float64 `json:"verifier_timeout_multiplier"`
	AgentSetupTimeoutMultiplier       *float64 `json:"agent_setup_timeout_multiplier"`
	EnvironmentBuildTimeoutMultiplier *float64 `json:"environment_build_timeout_multiplier"`
	Agent                             struct {
		Name                    *string        `json:"name"`
		ImportPath              *string        `json:"import_path"`
		ModelName               *string        `json:"model_name"`
		NConcurrent             *int           `json:"n_concurrent"`
		ConcurrencyGroup        *string        `json:"concurrency_group"`
		Skills                  []string       `json:"skills"`
		OverrideTimeoutSec      *float64       `json:"override_timeout_sec"`
		OverrideSetupTimeoutSec *float64       `json:"override_setup_timeout_sec"`
		MaxTimeoutSec           *float64       `json:"max_timeout_sec"`
		ResumeTrajectory        bool           `json:"resume_trajectory"`
		LoadTrajectory          *string        `json:"load_trajectory"`
		ExtraAllowedHosts       []string       `json:"extra_allowed_hosts"`
		Kwargs                  map[string]any `json:"kwargs"`
		MCPServers              []any          `json:"mcp_servers"`
	} `json:"agent"`
	UserAgent   *any `json:"user_agent"`
	Environment struct {
		Type                    *string        `json:"type"`
		ImportPath              *string        `json:"import_path"`
		ForceBuild              bool           `json:"force_build"`
		Delete                  bool           `json:"delete"`
		CPUEnforcementPolicy    string         `json:"cpu_enforcement_policy"`
		MemoryEnforcementPolicy string         `json:"memory_enforcement_policy"`
		OverrideCPUs            *int           `json:"override_cpus"`
		OverrideMemoryMB        *int           `json:"override_memory_mb"`
		OverrideStorageMB       *int           `json:"override_storage_mb"`
		OverrideGPUs            *int           `json:"override_gpus"`
		OverrideTPU             *any           `json:"override_tpu"`
		Mounts                  *[]any         `json:"mounts"`
		ExtraDockerCompose      []string       `json:"extra_docker_compose"`
		Kwargs                  map[string]any `json:"kwargs"`
		ExtraAllowedHosts       []string       `json:"extra_allowed_hosts"`
	} `json:"environment"`
	Verifier struct {
		OverrideTimeoutSec *float64 `json:"override_timeout_sec"`
		MaxTimeoutSec      *float64 `json:"max_timeout_sec"`
		Disable            bool     `json:"disable"`
	} `json:"verifier"`
	Artifacts             []any    `json:"artifacts"`
	ExtraInstructionPaths []string `json:"extra_instruction_paths"`
	ExtraInstructions     []string `json:"extra_instructions"`
	JobID                 *string  `json:"job_id"`
	SourceTrial           *any     `json:"source_trial"`
}

func ptr[T any](v T) *T { return &v }

func newResult(cfg inConfig, _ []byte, taskName, trialDir string, start time.Time) *result {
	abs, err := filepath.Abs(trialDir)
	if err != nil {
		abs = trialDir
	}
	var fc fullConfig
	fc.Task.Path = cfg.Task.Path
	fc.TrialName = cfg.TrialName
	fc.TrialsDir = cfg.TrialsDir
	fc.TimeoutMultiplier = 1.0
	fc.Agent.Name = cfg.Agent.Name
	fc.Agent.ImportPath = cfg.Agent.ImportPath
	if fc.Agent.Name == nil && fc.Agent.ImportPath == nil {
		fc.Agent.Name = ptr("oracle")
	}
	fc.Agent.ModelName = cfg.Agent.ModelName
	fc.Agent.Skills, fc.Agent.ExtraAllowedHosts, fc.Agent.MCPServers = []string{}, []string{}, []any{}
	fc.Agent.Kwargs = cfg.Agent.Kwargs
	if fc.Agent.Kwargs == nil {
		fc.Agent.Kwargs = map[string]any{}
	}
	fc.Environment.Type = cfg.Environment.Type
	if fc.Environment.Type == nil {
		fc.Environment.Type = ptr("docker")
	}
	fc.Environment.Delete = cfg.Environment.Delete == nil || *cfg.Environment.Delete
	fc.Environment.CPUEnforcementPolicy, fc.Environment.MemoryEnforcementPolicy = "auto", "auto"
	fc.Environment.ExtraDockerCompose, fc.Environment.ExtraAllowedHosts = []string{}, []string{}
	fc.Environment.Kwargs = map[string]any{}
	fc.Artifacts, fc.ExtraInstructionPaths, fc.ExtraInstructions = []any{}, []string{}, []string{}

	name := "oracle"
	if fc.Agent.Name != nil {
		name = *fc.Agent.Name
	} else if fc.Agent.ImportPath != nil {
		name = *fc.Agent.ImportPath
	}
	var mi *modelInfo
	if m := cfg.Agent.ModelName; m != nil && *m != "" {
		// v0.22.0: provider is the text before the first '/', else null.
		if p, n, ok := strings.Cut(*m, "/"); ok {
			mi = &modelInfo{Name: n, Provider: ptr(p)}
		} else {
			mi = &modelInfo{Name: *m}
		}
	}
	t0 := pyTime(start)
	t1 := pyTime(start.Add(time.Millisecond))
	return &result{
		ID:                      uuid4(),
		TaskName:                taskName,
		TrialName:               cfg.TrialName,
		TrialURI:                "file://" + filepath.ToSlash(abs),
		TaskID:                  taskID{Path: cfg.Task.Path},
		TaskChecksum:            dirhash(cfg.Task.Path),
		Config:                  fc,
		AgentInfo:               agentInfo{Name: name, Version: "1.0.0", ModelInfo: mi},
		AgentResult:             &agentContext{NInputTokens: ptr(1200), NCacheTokens: ptr(0), NOutputTokens: ptr(80)},
		VerifierEnvironmentMode: ptr("shared"),
		StartedAt:               &t0,
		EnvironmentSetup:        &timing{StartedAt: &t0, FinishedAt: &t1},
		AgentSetup:              &timing{StartedAt: &t1, FinishedAt: &t1},
		AgentExecution:          &timing{StartedAt: &t1, FinishedAt: &t1},
	}
}

func (r *result) setReward(v string) {
	r.VerifierResult = &verifierResult{Rewards: json.RawMessage(`{"reward": ` + v + `}`)}
	now := pyTime(time.Now())
	r.Verifier = &timing{StartedAt: &now, FinishedAt: &now}
}

func (r *result) setException(typ, msg string) {
	r.ExceptionInfo = &exceptionInfo{
		ExceptionType:      typ,
		ExceptionMessage:   msg,
		ExceptionTraceback: fmt.Sprintf("Traceback (most recent call last):\n  File \"harbor/trial/trial.py\", line 1, in run\n%s: %s\n", typ, msg),
		OccurredAt:         pyTime(time.Now()),
	}
	if typ == "CancelledError" {
		r.ExceptionInfo.ExceptionTraceback = "Traceback (most recent call last):\n  File \"harbor/trial/trial.py\", line 1, in run\nasyncio.exceptions.CancelledError\n"
	}
}

// write writes result.json with pydantic's indent of 4, through a
// temporary file so a reader never sees half of it.
func (r *result) write(trialDir string) error {
	now := pyTime(time.Now())
	r.FinishedAt = &now
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	return safefs.WriteFile(filepath.Join(trialDir, "result.json"), bytes.TrimRight(buf.Bytes(), "\n"), 0o644)
}
