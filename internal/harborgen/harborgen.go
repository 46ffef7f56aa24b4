// Package harborgen writes synthetic Harbor jobs in the real on-disk format
// (5f5618b8 TrialResult, model_dump_json(indent=4) layout) together with an
// import plan, for benchmarks and scale tests. Outcomes cycle through a
// fixed, documented mix so counts are predictable.
package harborgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Revision is the Harbor revision whose format the generated files follow.
const Revision = "5f5618b8f5419dde63f2df6d86706782e597e8a3"

// Kind is the outcome a generated attempt is written to produce.
type Kind int

// The generated mix, by trial index modulo 100.
const (
	Success       Kind = iota // 0–69: reward 1.0
	Failure                   // 70–89: reward 0.0
	AgentTimeout              // 90–94: AgentTimeoutError with reward 1.0 (scored)
	VerifierTime              // 95–97: VerifierTimeoutError, no verifier result
	MissingResult             // 98–99: planned attempt with no folder
)

// KindOf returns the outcome of trial i.
func KindOf(i int) Kind {
	switch m := i % 100; {
	case m < 70:
		return Success
	case m < 90:
		return Failure
	case m < 95:
		return AgentTimeout
	case m < 98:
		return VerifierTime
	default:
		return MissingResult
	}
}

// Job describes a generated job.
type Job struct {
	Root     string // the --root folder
	PlanPath string
	Trials   int
}

// Options vary a generated job for benchmarks.
type Options struct {
	// IndentPlan writes import-plan.json indented (two spaces), as a
	// hand-edited or Python-written plan would be.
	IndentPlan bool
	// Trajectories gives the first Trajectories attempts that have a
	// result an agent/trajectory.json (ATIF) of about TrajectoryBytes.
	Trajectories    int
	TrajectoryBytes int
	// ShufflePlan writes the plan's trials in a shuffled order (the same
	// order for the same n), as a plan built by a script that walks a map
	// or merges shards would be: the folders are unchanged.
	ShufflePlan bool
}

// Write creates a job of n trials (tasks of 10 repeats each) under root and
// an import plan at root/import-plan.json.
func Write(root string, n int) (*Job, error) { return WriteWith(root, n, Options{}) }

// WriteWith is Write with options.
func WriteWith(root string, n int, o Options) (*Job, error) {
	jobDir := filepath.Join(root, "jobs", "2026-04-08__12-00-00")
	if err := os.MkdirAll(jobDir, 0o755); err != nil {
		return nil, err
	}
	type attempt struct {
		Retry int    `json:"retry"`
		Dir   string `json:"dir"`
	}
	type trial struct {
		Task     string    `json:"task"`
		Repeat   int       `json:"repeat"`
		Attempts []attempt `json:"attempts"`
	}
	trials := make([]trial, 0, n)
	for i := 0; i < n; i++ {
		task := fmt.Sprintf("bench/task-%05d", i/10)
		name := fmt.Sprintf("task-%05d__%07d", i/10, i)
		rel := "jobs/2026-04-08__12-00-00/" + name
		trials = append(trials, trial{Task: task, Repeat: i % 10, Attempts: []attempt{{0, rel}}})
		if KindOf(i) == MissingResult {
			continue
		}
		dir := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "result.json"), []byte(Result(task, name, KindOf(i))), 0o644); err != nil {
			return nil, err
		}
		if o.Trajectories > 0 {
			o.Trajectories--
			if err := os.Mkdir(filepath.Join(dir, "agent"), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, "agent", "trajectory.json"), Trajectory(o.TrajectoryBytes), 0o644); err != nil {
				return nil, err
			}
		}
	}
	if o.ShufflePlan {
		rand.New(rand.NewPCG(uint64(n), 36)).Shuffle(len(trials), func(i, j int) { trials[i], trials[j] = trials[j], trials[i] })
	}
	plan := map[string]any{
		"version":    1,
		"source":     map[string]string{"format": "harbor", "revision": Revision},
		"name":       "bench",
		"split":      "heldout",
		"trainable":  false,
		"checkpoint": map[string]string{"ref": "hf://acme/coder-7b@3f0c9d2e5b7a41c8e6f2d9b0a1c3e5f7a9b1d3e5", "served_as": "hosted_vllm/coder-7b"},
		"protocol": map[string]string{
			"dataset_digest":     strings.Repeat("1", 64),
			"verifier_digest":    strings.Repeat("2", 64),
			"environment_digest": strings.Repeat("3", 64),
			"harness_digest":     strings.Repeat("4", 64),
		},
		"settings": map[string]any{"temperature": 0, "max_tokens": 4096, "context_window": 32768, "repeats": 10, "environment_type": "docker", "network": "none"},
		"trials":   trials,
	}
	var b []byte
	var err error
	if o.IndentPlan {
		b, err = json.MarshalIndent(plan, "", "  ")
	} else {
		b, err = json.Marshal(plan)
	}
	if err != nil {
		return nil, err
	}
	p := filepath.Join(root, "import-plan.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return nil, err
	}
	return &Job{Root: root, PlanPath: p, Trials: n}, nil
}

// Result returns a TrialResult document of the given kind, shaped like
// Harbor's indent=4 output (about 3.5 KiB).
func Result(task, trialName string, k Kind) string {
	verifier := `{
        "rewards": {
            "reward": 1.0
        }
    }`
	exception := "null"
	switch k {
	case Failure:
		verifier = strings.Replace(verifier, "1.0", "0.0", 1)
	case AgentTimeout:
		exception = exceptionJSON("AgentTimeoutError", "Agent execution timed out after 120.0 seconds")
	case VerifierTime:
		verifier = "null"
		exception = exceptionJSON("VerifierTimeoutError", "Verifier execution timed out after 60.0 seconds")
	}
	short := task[strings.LastIndex(task, "/")+1:]
	return fmt.Sprintf(resultTemplate, trialName, task, trialName, trialName, short, short, trialName, verifier, exception)
}

func exceptionJSON(typ, msg string) string {
	return fmt.Sprintf(`{
        "exception_type": %q,
        "exception_message": %q,
        "exception_traceback": "Traceback (most recent call last):\n  File \"/home/user/harbor/src/harbor/trial/trial.py\", line 546, in run\n    await self._execute_agent()\nharbor.trial.trial.%s: %s\n",
        "occurred_at": "2026-04-08T12:03:36.510000"
    }`, typ, msg, typ, msg)
}

const resultTemplate = `{
    "id": "00000000-0000-4000-8000-%s",
    "task_name": %q,
    "trial_name": %q,
    "trial_uri": "file:///home/user/harbor/jobs/2026-04-08__12-00-00/%s",
    "task_id": {
        "path": "examples/tasks/%s"
    },
    "source": "tasks",
    "task_checksum": "afa27b44d43b02a9fea41d13cedc2e4016cfcf87c5dbf990e593669aa8ce286d",
    "config": {
        "task": {
            "path": "examples/tasks/%s",
            "git_url": null,
            "git_commit_id": null,
            "overwrite": false,
            "download_dir": null,
            "source": "tasks"
        },
        "trial_name": %q,
        "trials_dir": "jobs/2026-04-08__12-00-00",
        "timeout_multiplier": 1.0,
        "agent": {
            "name": "terminus-2",
            "import_path": null,
            "model_name": "hosted_vllm/coder-7b",
            "override_timeout_sec": null,
            "max_timeout_sec": null,
            "kwargs": {},
            "env": {}
        },
        "environment": {
            "type": "docker",
            "import_path": null,
            "force_build": false,
            "delete": true,
            "override_cpus": null,
            "override_memory_mb": null,
            "override_storage_mb": null,
            "override_gpus": null,
            "env": {},
            "kwargs": {}
        },
        "verifier": {
            "override_timeout_sec": null,
            "max_timeout_sec": null,
            "disable": false
        },
        "artifacts": [],
        "job_id": "8b3f4ac4-92ac-454c-b5c7-a6a1c2b76427"
    },
    "agent_info": {
        "name": "terminus-2",
        "version": "2.0.0",
        "model_info": {
            "name": "coder-7b",
            "provider": "hosted_vllm"
        }
    },
    "agent_result": {
        "n_input_tokens": 2600,
        "n_cache_tokens": 0,
        "n_output_tokens": 324,
        "cost_usd": 0.0098,
        "rollout_details": null,
        "metadata": {
            "n_episodes": 3,
            "api_request_times_msec": [
                812.4,
                640.9,
                702.3
            ],
            "summarization_count": 0
        }
    },
    "verifier_result": %s,
    "exception_info": %s,
    "started_at": "2026-04-08T12:01:21Z",
    "finished_at": "2026-04-08T12:03:40.710000Z",
    "environment_setup": {
        "started_at": "2026-04-08T12:01:21.200000Z",
        "finished_at": "2026-04-08T12:01:27.400000Z"
    },
    "agent_setup": {
        "started_at": "2026-04-08T12:01:27.700000Z",
        "finished_at": "2026-04-08T12:01:36.500000Z"
    },
    "agent_execution": {
        "started_at": "2026-04-08T12:01:36.510000Z",
        "finished_at": "2026-04-08T12:03:36.510000Z"
    },
    "verifier": {
        "started_at": "2026-04-08T12:03:36.910000Z",
        "finished_at": "2026-04-08T12:03:38.510000Z"
    }
}
`

// FakeToken is the credential-shaped string Trajectory plants now and
// then, so a redactor has something to find; it is not a real token.
var FakeToken = "gh" + "p_" + strings.Repeat("a1B2", 9)

// Trajectory returns an ATIF-v1.6 trajectory of about size bytes: agent
// steps with a tool call and a long observation each, FakeToken in every
// 50th message.
func Trajectory(size int) []byte {
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString(`{"schema_version":"ATIF-v1.6","agent":{"name":"bench","version":"1"},"steps":[`)
	b.WriteString(`{"step_id":1,"source":"user","message":"Fix the failing test in the repository."}`)
	output, _ := json.Marshal(strings.Repeat("ok   github.com/example/pkg/sub\t0.123s coverage: 81.2% of statements — ünïcode ✓\n", 24))
	for i := 2; b.Len() < size; i++ {
		key := ""
		if i%50 == 0 {
			key = " token " + FakeToken
		}
		fmt.Fprintf(&b, `,{"step_id":%d,"source":"agent","message":"Step %d: running the tests again.%s",`+
			`"tool_calls":[{"tool_call_id":"call_%d","function_name":"bash","arguments":{"command":"go test ./... -run TestX%d","timeout":120}}],`+
			`"observation":{"results":[{"source_call_id":"call_%d","content":%s}]},`+
			`"metrics":{"prompt_tokens":%d,"completion_tokens":57}}`, i, i, key, i, i, i, output, 1000+i)
	}
	b.WriteString("]}")
	return []byte(b.String())
}
