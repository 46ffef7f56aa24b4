package evalrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuneplane/tpctl/internal/fakeharbor"
)

// The test binary doubles as the substitute harbor: Run starts it with
// EVALRUN_FAKE_HARBOR=1 in the environment (see testEnv).
func TestMain(m *testing.M) {
	if os.Getenv("EVALRUN_FAKE_HARBOR") == "1" {
		fakeharbor.Main()
	}
	os.Exit(m.Run())
}

const (
	revV022 = "4407eb5227a2ff4f0d3f16b2eb48849382fdf276"
	rev5f56 = "5f5618b8f5419dde63f2df6d86706782e597e8a3"
	hexA    = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

// task is one task folder of a test plan and the substitute's scenario.
type task struct {
	name     string
	scenario string
	repeats  int
}

// basePlan returns a valid eval plan (as a JSON tree) for the tasks, with
// trials (task, 0..repeats-1) in the order given, run by the test binary.
func basePlan(t testing.TB, tasks ...task) map[string]any {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	taskPaths := map[string]any{}
	var trials []any
	for _, tk := range tasks {
		taskPaths[tk.name] = "tasks/" + tk.name
		for r := range max(tk.repeats, 1) {
			trials = append(trials, map[string]any{"task": tk.name, "repeat": r})
		}
	}
	return map[string]any{
		"version":    1,
		"source":     map[string]any{"format": "harbor", "revision": revV022},
		"name":       "test-eval",
		"split":      "heldout",
		"checkpoint": map[string]any{"ref": "hf://acme/m@" + hexA[:40], "served_as": "hosted_vllm/m"},
		"protocol": map[string]any{"dataset_digest": hexA, "verifier_digest": hexA,
			"environment_digest": hexA, "harness_digest": hexA},
		"settings": map[string]any{"temperature": 0, "context_window": 8192, "repeats": 1, "max_turns": 5, "network": "none"},
		"trials":   trials,
		"execution": map[string]any{
			"harbor":      map[string]any{"command": self, "revision": revV022},
			"tasks":       taskPaths,
			"agent":       map[string]any{"name": "terminus-2", "kwargs": map[string]any{"max_turns": 5}},
			"model":       map[string]any{"name": "hosted_vllm/m", "endpoint": "http://127.0.0.1:8000/v1"},
			"environment": map[string]any{"type": "docker"},
			"limits":      map[string]any{"trial_timeout_sec": 20, "cleanup_grace_sec": 5},
		},
	}
}

// writePlan writes the task folders and the plan into dir and returns the
// plan's path.
func writePlan(t testing.TB, dir string, plan map[string]any, tasks ...task) string {
	t.Helper()
	for _, tk := range tasks {
		td := filepath.Join(dir, "tasks", tk.name)
		mustWrite(t, filepath.Join(td, "task.toml"), "schema_version = \"1.4\"\n\n[agent]\ntimeout_sec = 60.0\n")
		mustWrite(t, filepath.Join(td, "instruction.md"), "Do the thing.\n")
		if tk.scenario != "" {
			mustWrite(t, filepath.Join(td, "fake-harbor.scenario"), tk.scenario)
		}
	}
	b, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "eval-plan.json")
	mustWrite(t, p, string(b))
	return p
}

func mustWrite(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// exec returns the plan's execution member for editing.
func execOf(plan map[string]any) map[string]any { return plan["execution"].(map[string]any) }

func limits(plan map[string]any, timeout, grace float64) {
	execOf(plan)["limits"] = map[string]any{"trial_timeout_sec": timeout, "cleanup_grace_sec": grace}
}
