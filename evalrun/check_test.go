package evalrun

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/planfile"
)

type codeAt struct{ Severity, Code, Pointer string }

func codesOf(rep *planfile.Report) []codeAt {
	out := []codeAt{}
	for _, f := range rep.Findings {
		out = append(out, codeAt{f.Severity, f.Code, f.Pointer})
	}
	return out
}

func TestCheckPlanExample(t *testing.T) {
	ev, rep, err := CheckPlan(filepath.Join("..", "testdata", "eval", "eval-plan.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]codeAt{}, codesOf(rep)); diff != "" {
		t.Fatalf("findings mismatch (-want +got):\n%s", diff)
	}
	var names []string
	for _, tr := range ev.Trials {
		names = append(names, tr.Name)
	}
	// Canonical (task, repeat) order, not file order.
	if diff := cmp.Diff([]string{"count-lines__0", "hello-world__0", "hello-world__1"}, names); diff != "" {
		t.Errorf("trial order mismatch (-want +got):\n%s", diff)
	}
}

func TestCheckPlanRules(t *testing.T) {
	e, w := planfile.SeverityError, planfile.SeverityWarning
	tasks := []task{{name: "alpha"}, {name: "beta"}}
	cases := []struct {
		name   string
		edit   func(t *testing.T, dir string, p map[string]any)
		want   []codeAt
		substr string // in some message
	}{
		{name: "valid", edit: func(*testing.T, string, map[string]any) {}, want: []codeAt{}},
		{name: "execution missing", edit: func(_ *testing.T, _ string, p map[string]any) { delete(p, "execution") },
			want: []codeAt{{e, codeExecutionMissing, ""}}},
		{name: "attempts present", edit: func(_ *testing.T, _ string, p map[string]any) {
			p["trials"].([]any)[1].(map[string]any)["attempts"] = []any{map[string]any{"retry": 0, "dir": "x"}}
		}, want: []codeAt{{e, codeAttemptsPresent, "/trials/1/attempts"}}},
		{name: "no trials", edit: func(_ *testing.T, _ string, p map[string]any) { p["trials"] = []any{} },
			want: []codeAt{{w, codeTaskUnused, "/execution/tasks/alpha"}, {w, codeTaskUnused, "/execution/tasks/beta"}, {e, codeNoTrials, "/trials"}}},
		{name: "129 trials", edit: func(_ *testing.T, _ string, p map[string]any) {
			var ts []any
			for i := range 129 {
				ts = append(ts, map[string]any{"task": "alpha", "repeat": i})
			}
			ts = append(ts[:128], map[string]any{"task": "beta", "repeat": 0})
			p["trials"] = ts
		}, want: []codeAt{{e, codeTooManyTrials, "/trials"}}},
		{name: "duplicate trial", edit: func(_ *testing.T, _ string, p map[string]any) {
			p["trials"] = append(p["trials"].([]any), map[string]any{"task": "alpha", "repeat": 0})
		}, want: []codeAt{{e, planfile.CodeDuplicateTrial, "/trials/2"}}},
		{name: "unpinned checkpoint and placeholder digest", edit: func(_ *testing.T, _ string, p map[string]any) {
			p["checkpoint"].(map[string]any)["ref"] = "hf://acme/m@main"
			p["protocol"].(map[string]any)["dataset_digest"] = "REPLACE_DATASET_MANIFEST_SHA256"
		}, want: []codeAt{{e, planfile.CodeCheckpointUnpinned, "/checkpoint/ref"}, {e, planfile.CodeDigestPlaceholder, "/protocol/dataset_digest"}}},
		{name: "unknown execution field", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["retries"] = 3
		}, want: []codeAt{{e, planfile.CodeUnknownField, "/execution/retries"}}},
		{name: "missing limits", edit: func(_ *testing.T, _ string, p map[string]any) { delete(execOf(p), "limits") },
			want: []codeAt{{e, planfile.CodeSchema, "/execution/limits"}}},
		{name: "zero timeout", edit: func(_ *testing.T, _ string, p map[string]any) { limits(p, 0, 1) },
			want: []codeAt{{e, planfile.CodeSchema, "/execution/limits/trial_timeout_sec"}}},
		{name: "secret field in kwargs", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["agent"].(map[string]any)["kwargs"] = map[string]any{"api_key": "x"}
		}, want: []codeAt{{e, planfile.CodeSecretField, "/execution/agent/kwargs/api_key"}}},
		{name: "secret value in kwargs", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["agent"].(map[string]any)["kwargs"] = map[string]any{"extra_headers": []any{"Authorization: Bearer abcdefgh12345678"}}
		}, want: []codeAt{{e, CodeSecretValue, "/execution/agent/kwargs/extra_headers/0"}}},
		{name: "openai key value", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["agent"].(map[string]any)["kwargs"] = map[string]any{"note": "sk-proj-abcdefghijklmnopqrstuv"}
		}, want: []codeAt{{e, CodeSecretValue, "/execution/agent/kwargs/note"}}},
		{name: "env value instead of name", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["agent"].(map[string]any)["env"] = []any{"OPENAI_API_KEY=abc"}
		}, want: []codeAt{{e, CodeSecretValue, "/execution/agent/env/0"}}},
		{name: "credentials in endpoint", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["model"].(map[string]any)["endpoint"] = "https://user:pw@models.example/v1"
		}, want: []codeAt{{e, CodeSecretValue, "/execution/model/endpoint"}}},
		{name: "bad endpoint", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["model"].(map[string]any)["endpoint"] = "localhost:8000"
		}, want: []codeAt{{e, codeEndpointInvalid, "/execution/model/endpoint"}}},
		{name: "model differs from served_as", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["model"].(map[string]any)["name"] = "hosted_vllm/other"
		}, want: []codeAt{{e, codeModelMismatch, "/execution/model/name"}}},
		{name: "name and import_path", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["agent"].(map[string]any)["import_path"] = "my.agents:Agent"
		}, want: []codeAt{{e, planfile.CodeSchema, "/execution/agent"}}},
		{name: "unknown agent name", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["agent"].(map[string]any)["name"] = "terminus-9"
		}, want: []codeAt{{e, codeTrialConfigInvalid, "/execution/agent/name"}, {e, codeEndpointUnused, "/execution/model/endpoint"}}},
		{name: "unknown environment type", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["environment"] = map[string]any{"type": "kubernetes"}
		}, want: []codeAt{{e, codeTrialConfigInvalid, "/execution/environment"}}},
		{name: "environment type newer than revision", edit: func(_ *testing.T, _ string, p map[string]any) {
			p["source"].(map[string]any)["revision"] = rev5f56
			execOf(p)["harbor"].(map[string]any)["revision"] = rev5f56
			execOf(p)["environment"] = map[string]any{"type": "singularity"}
		}, want: []codeAt{{e, codeTrialConfigInvalid, "/execution/environment"}}},
		{name: "revision mismatch", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["harbor"].(map[string]any)["revision"] = rev5f56
		}, want: []codeAt{{e, codeRevisionMismatch, "/execution/harbor/revision"}}},
		{name: "unvalidated revision", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["harbor"].(map[string]any)["revision"] = strings.Repeat("e", 40)
		}, want: []codeAt{{e, codeRevisionMismatch, "/execution/harbor/revision"}, {e, planfile.CodeRevisionUnverified, "/execution/harbor/revision"}}},
		{name: "settings conflict", edit: func(_ *testing.T, _ string, p map[string]any) {
			p["settings"].(map[string]any)["execution"] = "mine"
		}, want: []codeAt{{e, codeSettingsConflict, "/settings/execution"}}},
		{name: "task without folder", edit: func(_ *testing.T, _ string, p map[string]any) {
			delete(execOf(p)["tasks"].(map[string]any), "beta")
		}, want: []codeAt{{e, codeTaskPathMissing, "/trials/1/task"}}},
		{name: "task folder missing", edit: func(t *testing.T, dir string, _ map[string]any) {
			if err := os.RemoveAll(filepath.Join(dir, "tasks", "beta")); err != nil {
				t.Fatal(err)
			}
		}, want: []codeAt{{e, planfile.CodeDirMissing, "/execution/tasks/beta"}}},
		{name: "task path escapes", edit: func(_ *testing.T, _ string, p map[string]any) {
			execOf(p)["tasks"].(map[string]any)["beta"] = "../beta"
		}, want: []codeAt{{e, planfile.CodePathTraversal, "/execution/tasks/beta"}}},
		{name: "absolute task path", edit: func(_ *testing.T, dir string, p map[string]any) {
			execOf(p)["tasks"].(map[string]any)["beta"] = filepath.Join(dir, "tasks", "beta")
		}, want: []codeAt{{e, planfile.CodePathAbsolute, "/execution/tasks/beta"}}},
		{name: "task folder is a symlink", edit: func(t *testing.T, dir string, p map[string]any) {
			if err := os.Symlink(filepath.Join(dir, "tasks", "beta"), filepath.Join(dir, "beta-link")); err != nil {
				t.Fatal(err)
			}
			execOf(p)["tasks"].(map[string]any)["beta"] = "beta-link"
		}, want: []codeAt{{e, planfile.CodeSymlink, "/execution/tasks/beta"}}},
		{name: "symlink inside task folder", edit: func(t *testing.T, dir string, _ map[string]any) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "tasks", "beta", "instruction2.md")); err != nil {
				t.Fatal(err)
			}
		}, want: []codeAt{{e, planfile.CodeSymlink, "/execution/tasks/beta"}}, substr: "instruction2.md"},
		{name: "task.toml missing", edit: func(t *testing.T, dir string, _ map[string]any) {
			if err := os.Remove(filepath.Join(dir, "tasks", "beta", "task.toml")); err != nil {
				t.Fatal(err)
			}
		}, want: []codeAt{{e, codeTaskTOMLMissing, "/execution/tasks/beta"}}},
		{name: "task.toml invalid", edit: func(t *testing.T, dir string, _ map[string]any) {
			mustWrite(t, filepath.Join(dir, "tasks", "beta", "task.toml"), "[agent\ntimeout_sec = ")
		}, want: []codeAt{{e, codeTaskTOMLInvalid, "/execution/tasks/beta"}}},
		{name: "task.toml is a symlink", edit: func(t *testing.T, dir string, _ map[string]any) {
			tt := filepath.Join(dir, "tasks", "beta", "task.toml")
			if err := os.Rename(tt, filepath.Join(dir, "real.toml")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(dir, "real.toml"), tt); err != nil {
				t.Fatal(err)
			}
		}, want: []codeAt{{e, planfile.CodeSymlink, "/execution/tasks/beta"}, {e, codeTaskTOMLInvalid, "/execution/tasks/beta"}}},
		{name: "task name differs from Harbor's", edit: func(t *testing.T, dir string, _ map[string]any) {
			mustWrite(t, filepath.Join(dir, "tasks", "beta", "task.toml"), "[task]\nname = \"org/beta\"\n")
		}, want: []codeAt{{w, codeTaskNameMismatch, "/execution/tasks/beta"}}},
		{name: "unused task", edit: func(t *testing.T, dir string, p map[string]any) {
			mustWrite(t, filepath.Join(dir, "tasks", "gamma", "task.toml"), "")
			execOf(p)["tasks"].(map[string]any)["gamma"] = "tasks/gamma"
		}, want: []codeAt{{w, codeTaskUnused, "/execution/tasks/gamma"}}},
		{name: "trial name collision", edit: func(t *testing.T, dir string, p map[string]any) {
			mustWrite(t, filepath.Join(dir, "tasks", "a-b", "task.toml"), "[task]\nname = \"a/b\"\n")
			mustWrite(t, filepath.Join(dir, "tasks", "a-b2", "task.toml"), "[task]\nname = \"a-b\"\n")
			execOf(p)["tasks"] = map[string]any{"a/b": "tasks/a-b", "a-b": "tasks/a-b2"}
			p["trials"] = []any{map[string]any{"task": "a/b", "repeat": 0}, map[string]any{"task": "a-b", "repeat": 0}}
		}, want: []codeAt{{e, codeTrialNameCollision, "/trials/1"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := basePlan(t, tasks...)
			writePlan(t, dir, p, tasks...)
			tc.edit(t, dir, p)
			path := writePlan(t, dir, p)
			ev, rep, err := CheckPlan(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, codesOf(rep)); diff != "" {
				t.Errorf("findings mismatch (-want +got):\n%s\n%+v", diff, rep.Findings)
			}
			if got := ev != nil; got != !planfile.HasErrors(rep.Findings) {
				t.Errorf("Eval returned = %v with findings %+v", got, rep.Findings)
			}
			if rep.Valid == planfile.HasErrors(rep.Findings) {
				t.Errorf("Valid = %v inconsistent with findings", rep.Valid)
			}
			if tc.substr != "" && !slices.ContainsFunc(rep.Findings, func(f planfile.Finding) bool { return strings.Contains(f.Message, tc.substr) }) {
				t.Errorf("no finding mentions %q: %+v", tc.substr, rep.Findings)
			}
			for _, f := range rep.Findings {
				if f.Message == "" || f.Hint == "" {
					t.Errorf("finding without message or hint: %+v", f)
				}
			}
		})
	}
}

func TestCheckPlanUnreadable(t *testing.T) {
	if _, _, err := CheckPlan(filepath.Join(t.TempDir(), "nope.json"), nil); err == nil {
		t.Fatal("CheckPlan of a missing file: want an error")
	}
}

func TestTrialName(t *testing.T) {
	cases := []struct {
		task   string
		repeat int
		want   string
	}{
		{"hello-world", 0, "hello-world__0"},
		{"harbor/hello-world", 3, "harbor-hello-world__3"},
		{"..hidden", 1, "hidden__1"},
		{"ünï côdé", 0, "n--c-d-__0"},
		{"///", 2, "task__2"},
		{strings.Repeat("x", 100), 7, strings.Repeat("x", 64) + "__7"},
	}
	for _, c := range cases {
		if got := trialName(c.task, c.repeat); got != c.want {
			t.Errorf("trialName(%q, %d) = %q, want %q", c.task, c.repeat, got, c.want)
		}
	}
}

func FuzzCheckPlan(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("..", "testdata", "eval", "eval-plan.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"execution": {"tasks": {"a": "../x"}, "agent": {"kwargs": {"k": [1, {"token": 2}]}}}}`))
	f.Add([]byte(`{"trials": [{"task": "a", "repeat": 0}], "execution": []}`))
	f.Add([]byte(`{"execution": {"harbor": {"revision": 5}, "limits": {"trial_timeout_sec": "x"}}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "plan.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ev, rep, err := CheckPlan(p, nil)
		if err != nil {
			t.Fatalf("CheckPlan of a readable file returned an error: %v", err)
		}
		if rep.Valid != (ev != nil) {
			t.Fatalf("Valid = %v but Eval = %v", rep.Valid, ev != nil)
		}
		if ev != nil && len(ev.Trials) > MaxTrials {
			t.Fatalf("accepted %d trials", len(ev.Trials))
		}
	})
}

// TestCheckTaskPathWording: eval plans have no --root; a task path
// finding must not tell the user to use one.
func TestCheckTaskPathWording(t *testing.T) {
	for _, rel := range []string{"../beta", "/abs/beta"} {
		_, fs := checkTaskDir(t.TempDir(), rel, "beta", "/execution/tasks/beta")
		if len(fs) != 1 {
			t.Fatalf("%q: findings %+v", rel, fs)
		}
		if strings.Contains(fs[0].Message, "--root") || strings.Contains(fs[0].Hint, "--root") {
			t.Errorf("%q: finding mentions --root: %s / %s", rel, fs[0].Message, fs[0].Hint)
		}
		if !strings.Contains(fs[0].Hint, "plan") {
			t.Errorf("%q: hint does not say the path is relative to the plan: %s", rel, fs[0].Hint)
		}
	}
}

// TestSecretValuePatterns: credential-shaped values in the execution
// section are refused, with the same AWS prefixes as redact's builtin
// patterns (which had drifted apart).
func TestSecretValuePatterns(t *testing.T) {
	for _, v := range []string{
		"AKIAABCDEFGHIJKLMNOP", "ASIAABCDEFGHIJKLMNOP", "ABIAABCDEFGHIJKLMNOP", "ACCAABCDEFGHIJKLMNOP",
		"hf_abcdefghijklmnopqrstuvwxyz0123456789",
	} {
		fs := secretFindings(map[string]any{"agent": map[string]any{"kwargs": map[string]any{"note": v}}})
		if len(fs) != 1 || fs[0].Code != CodeSecretValue || fs[0].Pointer != "/execution/agent/kwargs/note" {
			t.Errorf("value %q: findings %+v; want one %s at /execution/agent/kwargs/note", v, fs, CodeSecretValue)
		}
	}
	if fs := secretFindings(map[string]any{"agent": map[string]any{"name": "terminus-2"}}); len(fs) != 0 {
		t.Errorf("a plain agent name was refused: %+v", fs)
	}
}
