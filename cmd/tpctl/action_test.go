package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tuneplane/tpctl/compare/comparetest"
)

const repoRoot = "../.."

// buildTpctl builds the real binary once per test into a temporary folder.
func buildTpctl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tpctl")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// actionFile is the part of action.yml the tests rely on.
type actionFile struct {
	Inputs map[string]struct {
		Required bool   `yaml:"required"`
		Default  string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID               string            `yaml:"id"`
			If               string            `yaml:"if"`
			Uses             string            `yaml:"uses"`
			Run              string            `yaml:"run"`
			Shell            string            `yaml:"shell"`
			WorkingDirectory string            `yaml:"working-directory"`
			Env              map[string]string `yaml:"env"`
			With             map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) actionFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

// TestActionDefinition: the composite Action first tries the release
// binary of a tagged ref (action/install.sh, tested in ./action), else
// builds tpctl from its own checkout with the Go of go.mod and the build
// cache, and passes every input to the script.
func TestActionDefinition(t *testing.T) {
	a := readAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q, want composite", a.Runs.Using)
	}
	if a.Inputs["command"].Default != "plan check" {
		t.Errorf("input command defaults to %q, want plan check", a.Inputs["command"].Default)
	}
	var install, setupGo, build, check bool
	const notInstalled = "steps.release.outputs.installed != 'true'"
	input := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`)
	for _, s := range a.Runs.Steps {
		switch {
		case strings.Contains(s.Run, "action/install.sh"):
			install = s.ID == "release" && s.Env["ACTION_REF"] == "${{ github.action_ref }}"
		case strings.HasPrefix(s.Uses, "actions/setup-go@"):
			setupGo = s.With["go-version-file"] == "${{ github.action_path }}/go.mod" && s.With["cache"] == "true" && s.If == notInstalled
		case strings.Contains(s.Run, "go build") && strings.Contains(s.Run, "./cmd/tpctl"):
			build = s.WorkingDirectory == "${{ github.action_path }}" && strings.Contains(s.Run, "GITHUB_PATH") && s.If == notInstalled
		case strings.Contains(s.Run, "action/check.sh"):
			check = true
			var passed []string
			for k, v := range s.Env {
				if m := input.FindStringSubmatch(v); m != nil {
					if k != "INPUT_"+strings.ToUpper(m[1]) {
						t.Errorf("env %s carries inputs.%s; the script reads INPUT_%s", k, m[1], strings.ToUpper(m[1]))
					}
					passed = append(passed, m[1])
				}
			}
			for name := range a.Inputs {
				if !slices.Contains(passed, name) {
					t.Errorf("input %q is not passed to action/check.sh", name)
				}
			}
		}
	}
	if !install || !setupGo || !build || !check {
		t.Errorf("action.yml steps: release download %v, setup-go from go.mod with cache %v, build from the checkout %v, check.sh %v; want all", install, setupGo, build, check)
	}
}

// runAction runs the Action's check script as a runner would, with a fake
// GITHUB_* environment, and returns the exit code, stdout and summary.
func runAction(t *testing.T, bin, work string, inputs map[string]string) (int, string, string) {
	t.Helper()
	summary := filepath.Join(work, "step-summary.md")
	_ = os.Remove(summary)
	cmd := exec.Command("bash", filepath.Join(mustAbs(t, repoRoot), "action", "check.sh"))
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + work,
		"CI=true", "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=" + work,
		"GITHUB_STEP_SUMMARY=" + summary, "RUNNER_TEMP=" + t.TempDir(),
		"TPCTL=" + bin,
	}
	for k, v := range inputs {
		cmd.Env = append(cmd.Env, "INPUT_"+strings.ToUpper(k)+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	s, _ := os.ReadFile(summary)
	return code, out.String(), string(s)
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestActionScript: on a bad plan the Action annotates each finding and
// writes the step summary; a good plan passes; unreadable input is an
// ::error with exit 2.
func TestActionScript(t *testing.T) {
	bin := buildTpctl(t)
	work := t.TempDir()
	bad := "{\n  \"version\": 1,\n  \"colour\": \"red\"\n}\n"
	if err := os.WriteFile(filepath.Join(work, "import-plan.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	example := mustAbs(t, filepath.Join(repoRoot, "testdata", "example"))
	evalPlan := mustAbs(t, filepath.Join(repoRoot, "testdata", "eval", "eval-plan.json"))
	tests := []struct {
		name     string
		inputs   map[string]string
		code     int
		stdout   []string
		summary  []string
		noOutput string
	}{
		{"bad plan", map[string]string{"plan": "import-plan.json", "command": "plan check", "strict": "false"}, 1,
			[]string{"::error file=import-plan.json,line=3,col=3,title=unknown_field::/colour: ", "::error file=import-plan.json,line=1,col=1,title=schema::"},
			[]string{"### ❌ tpctl plan check `import-plan.json`: invalid", "| error | `unknown_field` | `import-plan.json:3:3 /colour` |"}, ""},
		{"good plan with root", map[string]string{"plan": filepath.Join(example, "import-plan.json"), "root": example, "strict": "false"}, 0,
			[]string{": valid, 8 trials"}, []string{"### ✅ tpctl plan check"}, "::error"},
		{"strict is passed on", map[string]string{"plan": filepath.Join(example, "import-plan.json"), "strict": "true"}, 0,
			[]string{"+ tpctl plan check " + filepath.Join(example, "import-plan.json") + " --strict --output github"}, nil, ""},
		{"unreadable plan", map[string]string{"plan": "missing.json"}, 2,
			[]string{`::error title=tpctl (exit 2)::failed to open plan "missing.json"`}, []string{"### ❌ tpctl failed (exit 2)"}, ""},
		{"eval check-plan", map[string]string{"plan": evalPlan, "command": "eval check-plan"}, 0,
			[]string{": valid, "}, []string{"### ✅ tpctl eval check-plan"}, "::error"},
		{"unknown command input", map[string]string{"plan": "import-plan.json", "command": "plan chek"}, 2,
			[]string{"::error title=tpctl action::unknown 'command' input 'plan chek'"}, nil, ""},
		{"a command input cannot forge a workflow command", map[string]string{"plan": "import-plan.json", "command": "plan chek\n::warning title=forged::x"}, 2,
			[]string{"unknown 'command' input 'plan chek%0A::warning title=forged::x'"}, nil, "\n::warning title=forged"},
		{"a plan input cannot forge a workflow command", map[string]string{"plan": "x\r\n::warning title=forged::y.json"}, 2,
			[]string{"+ tpctl plan check x%0D%0A::warning title=forged::y.json --output github"}, nil, "\n::warning title=forged"},
		{"missing plan input", map[string]string{}, 2,
			[]string{"::error title=tpctl action::the 'plan' input is required"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, summary := runAction(t, bin, work, tt.inputs)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, out)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, want := range tt.summary {
				if !strings.Contains(summary, want) {
					t.Errorf("step summary lacks %q:\n%s", want, summary)
				}
			}
			if tt.noOutput != "" && strings.Contains(out, tt.noOutput) {
				t.Errorf("output has %q:\n%s", tt.noOutput, out)
			}
		})
	}
}

// TestDocsWorkflowUsesAction: the three-line example in docs/ci.md uses
// this Action with inputs it has, including the required plan.
func TestDocsWorkflowUsesAction(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- ci-example -->\n```yaml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/ci.md has no <!-- ci-example --> yaml block")
	}
	if n := strings.Count(strings.TrimSpace(string(m[1])), "\n") + 1; n != 3 {
		t.Errorf("the example is %d lines, the docs promise three", n)
	}
	var steps []struct {
		Uses string            `yaml:"uses"`
		With map[string]string `yaml:"with"`
	}
	if err := yaml.Unmarshal(m[1], &steps); err != nil {
		t.Fatalf("example is not a YAML list of steps: %v", err)
	}
	a := readAction(t)
	if len(steps) != 1 || !strings.HasPrefix(steps[0].Uses, "tuneplane/tpctl@") {
		t.Fatalf("example steps %+v do not use tuneplane/tpctl@REF", steps)
	}
	for k := range steps[0].With {
		if _, ok := a.Inputs[k]; !ok {
			t.Errorf("example passes %q, which action.yml does not define", k)
		}
	}
	if steps[0].With["plan"] == "" {
		t.Error("example does not pass the required plan input")
	}
}

// TestPreCommitHooks runs each hook's entry as pre-commit does (entry,
// then the staged file names) with the built tpctl on PATH.
func TestPreCommitHooks(t *testing.T) {
	bin := buildTpctl(t)
	b, err := os.ReadFile(filepath.Join(repoRoot, ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID       string `yaml:"id"`
		Entry    string `yaml:"entry"`
		Language string `yaml:"language"`
		Files    string `yaml:"files"`
		// PassFilenames is nil when the hook does not set it (true).
		PassFilenames *bool `yaml:"pass_filenames"`
	}
	if err := yaml.Unmarshal(b, &hooks); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "import-plan.bad.json"), []byte(`{"version": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	good := map[string]string{
		"tpctl-plan-check":      mustAbs(t, filepath.Join(repoRoot, "testdata", "example", "import-plan.json")),
		"tpctl-eval-check-plan": mustAbs(t, filepath.Join(repoRoot, "testdata", "eval", "eval-plan.json")),
	}
	if len(hooks) != len(good)+1 {
		t.Fatalf("%d hooks, want %d", len(hooks), len(good)+1)
	}
	for _, h := range hooks {
		if h.ID == "tpctl-gate" {
			t.Run(h.ID, func(t *testing.T) { testGateHook(t, bin, h.Entry, h.Files, h.PassFilenames) })
			continue
		}
		t.Run(h.ID, func(t *testing.T) {
			if h.Language != "golang" {
				t.Errorf("language %q: pre-commit must build tpctl with Go", h.Language)
			}
			if !regexp.MustCompile(h.Files).MatchString(filepath.Base(good[h.ID])) {
				t.Errorf("files %q does not match %s", h.Files, filepath.Base(good[h.ID]))
			}
			run := func(files ...string) int {
				cmd := exec.Command("sh", append([]string{"-c", h.Entry + ` "$@"`, "sh"}, files...)...)
				cmd.Dir = work
				cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
				out, err := cmd.CombinedOutput()
				if ee, ok := err.(*exec.ExitError); ok {
					return ee.ExitCode()
				} else if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				return 0
			}
			if code := run(good[h.ID]); code != 0 {
				t.Errorf("a good plan fails the hook (exit %d)", code)
			}
			if code := run(good[h.ID], "import-plan.bad.json"); code != 1 {
				t.Errorf("a bad plan among good ones: exit %d, want 1", code)
			}
		})
	}
}

// gateRounds writes a better and a worse round of one protocol for the
// gate's Action and hook tests, and a policy, into work.
func gateRounds(t *testing.T, work string) {
	t.Helper()
	// Ten tasks of two repeats: with the t(G−1) paired interval, six tasks
	// were too few for a +33 pp change to clear a 10 pp margin.
	for name, succ := range map[string]int{"main": 10, "better": 18, "worse": 2} {
		trials := map[string]string{}
		for i := range 20 {
			st := "failure"
			if i < succ {
				st = "success"
			}
			trials[fmt.Sprintf("task-%d#%d", i/2, i%2)] = st
		}
		if _, err := comparetest.Build(filepath.Join(work, name), comparetest.Spec{Trials: trials}); err != nil {
			t.Fatal(err)
		}
	}
	policy := "require: clean\nmin_success_rate: 0.2\nbaseline:\n  non_inferiority_margin: 0.1\n"
	if err := os.WriteFile(filepath.Join(work, "gate.yaml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
}

// testGateHook runs the gate hook as pre-commit does: its entry with the
// args a user gives, no file names, when a policy or snapshot is staged.
func testGateHook(t *testing.T, bin, entry, files string, passFilenames *bool) {
	if passFilenames == nil || *passFilenames {
		t.Error("the gate hook must set pass_filenames: false (it gates rounds, not the staged files)")
	}
	for _, f := range []string{"gate.yaml", "ci/gate-main.yml", "out/main/snapshot.json"} {
		if !regexp.MustCompile(files).MatchString(f) {
			t.Errorf("files %q does not match %s", files, f)
		}
	}
	work := t.TempDir()
	gateRounds(t, work)
	run := func(args ...string) int {
		cmd := exec.Command("sh", append([]string{"-c", entry + ` "$@"`, "sh"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return 0
	}
	if code := run("better", "--baseline", "main", "--policy", "gate.yaml"); code != 0 {
		t.Errorf("a better candidate fails the hook (exit %d)", code)
	}
	if code := run("worse", "--baseline", "main", "--policy", "gate.yaml"); code != 1 {
		t.Errorf("a worse candidate: exit %d, want 1", code)
	}
}

// TestActionGate runs the Action's script with command: gate.
func TestActionGate(t *testing.T) {
	bin := buildTpctl(t)
	work := t.TempDir()
	gateRounds(t, work)
	for _, tc := range []struct {
		name    string
		inputs  map[string]string
		code    int
		stdout  string
		summary string
	}{
		{"better passes", map[string]string{"command": "gate", "candidate": "better", "baseline": "main", "policy": "gate.yaml"}, 0,
			"+ tpctl gate better --policy gate.yaml --baseline main --output github", "### ✅ tpctl gate `better`: passed"},
		{"worse fails", map[string]string{"command": "gate", "candidate": "worse", "baseline": "main", "policy": "gate.yaml"}, 1,
			"::error title=tpctl gate%3A baseline.non_inferiority_margin fail::", "### ❌ tpctl gate `worse`: failed"},
		{"missing policy input", map[string]string{"command": "gate", "candidate": "better"}, 2,
			"::error title=tpctl action::command 'gate' needs the 'candidate' and 'policy' inputs", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, summary := runAction(t, bin, work, tc.inputs)
			if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(summary, tc.summary) {
				t.Errorf("exit %d (want %d)\n%s\nsummary:\n%s", code, tc.code, out, summary)
			}
		})
	}
}

// TestDocsGateWorkflow: the three-line gate workflow of docs/ci.md uses
// inputs the Action has, with command: gate and the inputs gate needs.
func TestDocsGateWorkflow(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- ci-gate-example -->\n```yaml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/ci.md has no <!-- ci-gate-example --> yaml block")
	}
	if n := strings.Count(strings.TrimSpace(string(m[1])), "\n") + 1; n != 3 {
		t.Errorf("the gate workflow is %d lines, the docs promise three", n)
	}
	var steps []struct {
		Uses string            `yaml:"uses"`
		With map[string]string `yaml:"with"`
	}
	if err := yaml.Unmarshal(m[1], &steps); err != nil {
		t.Fatalf("example is not a YAML list of steps: %v", err)
	}
	a := readAction(t)
	found := false
	for _, s := range steps {
		if !strings.HasPrefix(s.Uses, "tuneplane/tpctl@") {
			continue
		}
		found = true
		for k := range s.With {
			if _, ok := a.Inputs[k]; !ok {
				t.Errorf("example passes %q, which action.yml does not define", k)
			}
		}
		if s.With["command"] != "gate" || s.With["candidate"] == "" || s.With["policy"] == "" {
			t.Errorf("gate step inputs %v", s.With)
		}
	}
	if !found {
		t.Error("the gate workflow does not use tuneplane/tpctl")
	}
}

// TestDocsCIPinsByCommit: docs/ci.md installs tpctl by commit while the
// repository has no release tag (issue 33), and says so: every
// `uses: tuneplane/tpctl@REF` and `go install …@REF` in it names COMMIT
// or a tag that exists.
func TestDocsCIPinsByCommit(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", repoRoot, "tag", "--list").Output()
	if err != nil {
		t.Skipf("git tag: %v (not a git checkout)", err)
	}
	tags := strings.Fields(string(out))
	refs := regexp.MustCompile(`(?m)^\s*- (?:uses: tuneplane/tpctl|run: go install github\.com/tuneplane/tpctl/cmd/tpctl)@(\S+)`).FindAllSubmatch(b, -1)
	if len(refs) == 0 {
		t.Fatal("docs/ci.md installs tpctl nowhere")
	}
	for _, m := range refs {
		if ref := string(m[1]); ref != "COMMIT" && !slices.Contains(tags, ref) {
			t.Errorf("docs/ci.md pins tpctl@%s, which is no tag of this repository (tags: %v); pin COMMIT until a release is tagged", ref, tags)
		}
	}
	if len(tags) == 0 && !strings.Contains(string(b), "No release tag exists yet") {
		t.Error("docs/ci.md does not say that no release tag exists yet")
	}
}
