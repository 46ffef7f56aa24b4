package fakeharbor

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tuneplane/tpctl/internal/fixtures"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/producers/harbor"
)

func TestParseScenario(t *testing.T) {
	cases := []struct {
		in      string
		want    Scenario
		wantErr bool
	}{
		{"", Scenario{Kind: "success"}, false},
		{"score0", Scenario{Kind: "score0"}, false},
		{"agent-timeout:0.0", Scenario{Kind: "agent-timeout", Arg: "0.0"}, false},
		{"slow-cleanup:0.5", Scenario{Kind: "slow-cleanup", Arg: "0.5"}, false},
		{"success,delay=0.25", Scenario{Kind: "success", Delay: 250 * time.Millisecond}, false},
		{"slow-cleanup", Scenario{}, true},
		{"explode", Scenario{}, true},
		{"success,speed=2", Scenario{}, true},
		{"success,delay=-1", Scenario{}, true},
	}
	for _, c := range cases {
		got, err := ParseScenario(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("ParseScenario(%q) error = %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if err == nil {
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("ParseScenario(%q) mismatch (-want +got):\n%s", c.in, diff)
			}
		}
	}
}

func TestScenarioEnv(t *testing.T) {
	if got, want := ScenarioEnv("/x/tasks/hello-world.v2"), "FAKE_HARBOR_SCENARIO_HELLO_WORLD_V2"; got != want {
		t.Errorf("ScenarioEnv = %q, want %q", got, want)
	}
}

// runTrial runs one fake trial in-process for a scenario that needs no
// signal and returns the trial folder and exit status.
func runTrial(t *testing.T, scenario string) (string, int, string) {
	t.Helper()
	dir := t.TempDir()
	task := filepath.Join(dir, "tasks", "hello")
	if err := os.MkdirAll(task, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(task, "task.toml"), []byte("[task]\nname = \"org/hello\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ScenarioEnv(task), scenario)
	cfg := map[string]any{
		"task":        map[string]any{"path": task},
		"trial_name":  "hello__0",
		"trials_dir":  "ignored",
		"agent":       map[string]any{"name": "terminus-2", "model_name": "hosted_vllm/m", "kwargs": map[string]any{"max_turns": 3}},
		"environment": map[string]any{"type": "docker", "delete": true},
	}
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "hello__0.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Run([]string{"trial", "start", "-c", cfgPath, "--trials-dir", filepath.Join(dir, "trials"), "--trial-name", "other"}, &out, &errOut)
	return filepath.Join(dir, "trials", "hello__0"), code, out.String() + errOut.String()
}

func TestScenarios(t *testing.T) {
	cases := []struct {
		scenario   string
		code       int
		result     bool
		status     outcome.Status
		reason     string
		exception  string
		wantOutput string
	}{
		{"success", 0, true, outcome.Success, "reward_success", "", "Rewards: {\"reward\": 1.0}"},
		{"score0", 0, true, outcome.Failure, "reward_failure", "", "Rewards"},
		{"agent-timeout", 0, true, outcome.Success, "agent_timeout_scored", "AgentTimeoutError", "Error: AgentTimeoutError"},
		{"agent-timeout:0.0", 0, true, outcome.Failure, "agent_timeout_scored", "AgentTimeoutError", "Error: AgentTimeoutError"},
		{"verifier-timeout", 0, true, outcome.InfraError, "verifier_timeout", "VerifierTimeoutError", "Error: VerifierTimeoutError"},
		{"error", 0, true, outcome.Unscored, "", "RuntimeError", "Error: RuntimeError"},
		{"no-result", 0, false, "", "", "", "Trial completed!"},
		{"exit1", 1, false, "", "", "", "Traceback"},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			dir, code, output := runTrial(t, c.scenario)
			if code != c.code {
				t.Fatalf("exit status = %d, want %d; output:\n%s", code, c.code, output)
			}
			if !strings.Contains(output, c.wantOutput) {
				t.Errorf("output lacks %q:\n%s", c.wantOutput, output)
			}
			data, err := os.ReadFile(filepath.Join(dir, "result.json"))
			if !c.result {
				if err == nil {
					t.Fatalf("result.json written for %s", c.scenario)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := harbor.DecodeTrialResult(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("the real decoder refuses the substitute's result: %v", err)
			}
			o := harbor.Judge(r)
			if o.Status != c.status || (c.reason != "" && o.Reason != c.reason) {
				t.Errorf("judged %s/%s, want %s/%s", o.Status, o.Reason, c.status, c.reason)
			}
			if c.exception != "" && (o.ExceptionType == nil || *o.ExceptionType != c.exception) {
				t.Errorf("exception = %v, want %s", o.ExceptionType, c.exception)
			}
			if r.TaskName != "org/hello" || r.TrialName != "hello__0" {
				t.Errorf("task/trial name = %q/%q; want org/hello and the config's trial_name (Harbor ignores --trial-name with -c)", r.TaskName, r.TrialName)
			}
			validateAgainstReference(t, data)
		})
	}
}

// validateAgainstReference checks a result against the TrialResult schema
// generated from Harbor v0.22.0's own models, when the fixtures exist.
func validateAgainstReference(t *testing.T, data []byte) {
	t.Helper()
	root := fixtures.Harbor(t)
	f, err := os.Open(filepath.Join(root, "schemas", "v0.22.0", "trial-result.schema.json"))
	if err != nil {
		t.Skipf("reference schema not available: %v", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("ref.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("ref.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("result.json does not match Harbor v0.22.0's TrialResult schema: %v", err)
	}
}

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run([]string{"--version"}, &out, &errOut); code != 0 || strings.TrimSpace(out.String()) != Version {
		t.Errorf("--version = %d %q", code, out.String())
	}
	// Like Harbor's CLI, -v is the short form; FAKE_HARBOR_VERSION plays
	// another release.
	for _, args := range [][]string{{"-v"}, {"--version"}} {
		out.Reset()
		t.Setenv("FAKE_HARBOR_VERSION", "0.3.0")
		if code := Run(args, &out, &errOut); code != 0 || out.String() != "0.3.0\n" {
			t.Errorf("%v with FAKE_HARBOR_VERSION = %d %q", args, code, out.String())
		}
	}
	t.Setenv("FAKE_HARBOR_VERSION_FAIL", "1")
	if code := Run([]string{"--version"}, &out, &errOut); code != 1 {
		t.Errorf("--version with FAKE_HARBOR_VERSION_FAIL = %d, want 1", code)
	}
	if code := Run([]string{"job", "start"}, &out, &errOut); code != 2 {
		t.Errorf("unknown command = %d, want 2", code)
	}
}
