package evalrun

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tuneplane/tpctl/internal/fixtures"
	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/schemas"
)

func TestSchemasCompile(t *testing.T) {
	if _, err := compiled(); err != nil {
		t.Fatal(err)
	}
}

// Every validated revision must have a TrialConfig schema, or eval run
// could not write configs for it.
func TestEveryRevisionHasTrialConfigSchema(t *testing.T) {
	for _, r := range formats.Harbor {
		if _, ok := trialConfigSchemaFile(r.Commit); !ok {
			t.Errorf("no TrialConfig schema for validated revision %s (%s)", r.Commit, r.Name)
		}
	}
}

func TestExamplePlanMatchesPublishedSchema(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "eval", "eval-plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if fs := validate("eval-plan.v1.json", doc, "", "schema", ""); len(fs) > 0 {
		t.Errorf("example eval plan does not match schemas/eval-plan.v1.json: %+v", fs)
	}
	// And a plan with an attempt does not: eval plans list unrun trials.
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	p["trials"].([]any)[0].(map[string]any)["attempts"] = []any{map[string]any{"retry": 0, "dir": "x"}}
	b, _ := json.Marshal(p)
	doc, _ = jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if fs := validate("eval-plan.v1.json", doc, "", "schema", ""); len(fs) == 0 {
		t.Error("a trial with attempts passes schemas/eval-plan.v1.json")
	}
}

func exampleExec(t *testing.T, revision string) *Execution {
	t.Helper()
	ev, rep, err := CheckPlan(filepath.Join("..", "testdata", "eval", "eval-plan.json"), nil)
	if err != nil || ev == nil {
		t.Fatalf("example plan: %v %+v", err, rep)
	}
	e := *ev.Exec
	e.Harbor.Revision = revision
	return &e
}

// Our hand-written schemas must accept only what Harbor's own models
// accept: every config tpctl generates validates against the schema
// generated from Harbor's pydantic models, every member our schema allows
// exists there, and our enums are subsets of Harbor's.
func TestTrialConfigAgainstHarborReference(t *testing.T) {
	root := fixtures.Harbor(t)
	for rev, file := range map[string]string{rev5f56: "5f5618b8", revV022: "v0.22.0"} {
		t.Run(file, func(t *testing.T) {
			refPath := filepath.Join(root, "schemas", file, "trial-config.schema.json")
			raw, err := os.ReadFile(refPath)
			if err != nil {
				t.Skipf("reference schema not available: %v", err)
			}
			refDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource("ref.json", refDoc); err != nil {
				t.Fatal(err)
			}
			ref, err := c.Compile("ref.json")
			if err != nil {
				t.Fatal(err)
			}
			e := exampleExec(t, rev)
			// claude-code takes the endpoint in agent.env (endpointRules).
			for _, agent := range []agentSpec{{Name: "terminus-2"}, {Name: "oracle"}, {Name: "claude-code"}, {ImportPath: "my_pkg.agents:MyAgent"}} {
				e.Agent.Name, e.Agent.ImportPath = agent.Name, agent.ImportPath
				data, err := e.TrialConfig("hello-world__0", "/abs/tasks/hello-world", "/abs/out/trials").Marshal()
				if err != nil {
					t.Fatal(err)
				}
				if fs := validateTrialConfig(rev, data, ""); len(fs) > 0 {
					t.Fatalf("our schema refuses our config: %+v", fs)
				}
				inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(data))
				if err := ref.Validate(inst); err != nil {
					t.Errorf("Harbor %s's TrialConfig schema refuses tpctl's config: %v\n%s", file, err, data)
				}
			}

			var refTree, ourTree map[string]any
			if err := json.Unmarshal(raw, &refTree); err != nil {
				t.Fatal(err)
			}
			ourRaw, err := schemas.FS.ReadFile(trialConfigSchemas[rev])
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(ourRaw, &ourTree); err != nil {
				t.Fatal(err)
			}
			var missing []string
			comparePaths(refTree, refTree, ourTree, "", &missing)
			if len(missing) > 0 {
				t.Errorf("our schema allows members Harbor %s does not have: %v", file, missing)
			}
			refEnv := refTree["$defs"].(map[string]any)["EnvironmentType"].(map[string]any)["enum"].([]any)
			ourEnv := ourTree["properties"].(map[string]any)["environment"].(map[string]any)["properties"].(map[string]any)["type"].(map[string]any)["enum"].([]any)
			for _, v := range ourEnv {
				if !slices.Contains(refEnv, v) {
					t.Errorf("environment type %v is not in Harbor %s's EnvironmentType", v, file)
				}
			}
		})
	}
}

// comparePaths records every property of our schema (walked through its
// nested "properties") that the reference schema lacks at the same place.
func comparePaths(refRoot, ref, ours map[string]any, at string, missing *[]string) {
	ref = deref(refRoot, ref)
	ourProps, _ := ours["properties"].(map[string]any)
	refProps, _ := ref["properties"].(map[string]any)
	names := make([]string, 0, len(ourProps))
	for n := range ourProps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r, ok := refProps[n].(map[string]any)
		if !ok {
			*missing = append(*missing, at+"/"+n)
			continue
		}
		if o, ok := ourProps[n].(map[string]any); ok {
			comparePaths(refRoot, r, o, at+"/"+n, missing)
		}
	}
}

// deref follows a local $ref, or the first $ref inside an anyOf (pydantic
// writes optional models as anyOf [$ref, null]).
func deref(root, s map[string]any) map[string]any {
	if r, ok := s["$ref"].(string); ok {
		name := filepath.Base(r)
		if d, ok := root["$defs"].(map[string]any)[name].(map[string]any); ok {
			return d
		}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				if _, has := m["$ref"]; has {
					return deref(root, m)
				}
			}
		}
	}
	return s
}

// The settings digest must cover the execution config (agent, kwargs,
// environment, limits) but not the model, so that two checkpoints run on
// one protocol stay comparable.
func TestEffectiveSettings(t *testing.T) {
	base := exampleExec(t, revV022)
	got, _ := json.Marshal(base.Effective())
	same := *base
	same.Model = modelSpec{Name: "openai/other", Endpoint: "https://elsewhere.example/v1"}
	if b, _ := json.Marshal(same.Effective()); !bytes.Equal(got, b) {
		t.Errorf("model name or endpoint changed the effective settings:\n%s\n%s", got, b)
	}
	for name, edit := range map[string]func(e *Execution){
		"kwargs":      func(e *Execution) { e.Agent.Kwargs = map[string]any{"max_turns": json.Number("31")} },
		"agent":       func(e *Execution) { e.Agent.Name = "claude-code" },
		"environment": func(e *Execution) { e.Environment.Type = "modal" },
		"timeout":     func(e *Execution) { e.Limits.TrialTimeoutSec = 60 },
		"env names":   func(e *Execution) { e.Agent.Env = append(e.Agent.Env, "OTHER") },
	} {
		e := *base
		edit(&e)
		if b, _ := json.Marshal(e.Effective()); bytes.Equal(got, b) {
			t.Errorf("changing %s did not change the effective settings", name)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"rules":           SettingsRules,
		"harbor_revision": revV022,
		"agent": map[string]any{"name": "terminus-2", "kwargs": map[string]any{"max_turns": 30.0, "temperature": 0.0},
			"env_names": []any{"HOSTED_VLLM_API_KEY"}},
		"environment":       map[string]any{"type": "docker", "delete": true},
		"trial_timeout_sec": 1800.0,
		"cleanup_grace_sec": 120.0,
		"retries":           0.0,
		"concurrency":       1.0,
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("effective settings mismatch (-want +got):\n%s", diff)
	}
}
