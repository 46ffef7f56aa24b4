package importer_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/importer"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor/wing"
	"github.com/tuneplane/tpctl/snapshot"
)

// TestPlanDiffersByIdentity (issue 31 part 3): plan_differs_from_job
// compares the (task, agent, model) multiset of the job's lock with the
// plan's, not counts. On the v0.22.0 job Harbor's own models wrote
// (testdata/harbor-v0.22.0), a plan that drops terminus-2's finished
// failure and adds a never-run trial keeps the count of 6; it used to get
// no warning while its success rate went from 2 of 3 to 2 of 2 (the
// issue's audit job went from 75% to 100% the same way).
func TestPlanDiffersByIdentity(t *testing.T) {
	const root = "../testdata/harbor-v0.22.0/jobs/2026-09-01__10-00-00"
	reg := harborOnly(t)
	d, err := wing.New().Draft(context.Background(), root, producers.DraftOptions{Model: "gpt-5.4", Split: "heldout"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := planfile.DraftJSON(d.Plan)
	if err != nil {
		t.Fatal(err)
	}
	for ptr, v := range map[string]string{
		"/checkpoint/ref":              `"hf://acme/coder-7b@3f0c9d2e5b7a41c8e6f2d9b0a1c3e5f7a9b1d3e5"`,
		"/protocol/verifier_digest":    `"` + strings.Repeat("b", 64) + `"`,
		"/protocol/environment_digest": `"` + strings.Repeat("c", 64) + `"`,
		"/protocol/harness_digest":     `"` + strings.Repeat("d", 64) + `"`,
	} {
		if b, err = planfile.Set(b, ptr, []byte(v), planfile.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	imp := func(name string, plan []byte) (*importer.Result, map[string]string) {
		t.Helper()
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, plan, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "snap")
		res, err := importer.Import(context.Background(), importer.Options{Producers: reg, PlanPath: p, Root: root, Out: out, Environ: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		st := map[string]string{}
		if err := snapshot.ReadObservations(out, func(o snapshot.Observation) error { st[o.TrialID] = o.Status; return nil }); err != nil {
			t.Fatal(err)
		}
		return res, st
	}
	differs := func(res *importer.Result) string {
		for _, w := range res.Warnings {
			if w.Code == "plan_differs_from_job" {
				return w.Message
			}
		}
		return ""
	}

	res, st := imp("draft.json", b)
	if m := differs(res); m != "" {
		t.Fatalf("the draft of every planned trial differs from the job: %s", m)
	}
	if r := res.Manifest.Counts; r.Success != 2 || r.Failure != 1 || r.Expected != 6 {
		t.Fatalf("draft counts %+v; want 2 success, 1 failure of 6", r)
	}
	failed := ""
	for id, s := range st {
		if s == "failure" {
			failed = id
		}
	}

	// Drop the finished failure, add a never-run trial of another task.
	var plan map[string]any
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	var trials []any
	raft := ""
	for _, tr := range plan["trials"].([]any) {
		m := tr.(map[string]any)
		if snapshot.TrialID(m["task"].(string), int(m["repeat"].(float64))) == failed {
			continue
		}
		if strings.Contains(m["task"].(string), "raft") {
			raft = m["task"].(string)
		}
		trials = append(trials, m)
	}
	trials = append(trials, map[string]any{"task": raft, "repeat": 7, "attempts": []any{}})
	plan["trials"] = trials
	swapped, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	res, _ = imp("swapped.json", swapped)
	if r := res.Manifest.Counts; r.Success != 2 || r.Failure != 0 || r.Expected != 6 {
		t.Fatalf("swapped counts %+v; want the 100%% the swap buys", r)
	}
	want := `the plan lists 6 trials, as many as the job (` + root + `, its lock.json) planned for terminus-2 with gpt-5.4, but not the same ones: ` +
		`the plan lacks 1 of "hello-world" planned and lists 1 of "build-a-distributed-key-value-store-with-raft" the job did not plan`
	if m := differs(res); !strings.HasPrefix(m, want) {
		t.Errorf("plan_differs_from_job = %q\nwant it to start %q", m, want)
	}
	_, err = importer.Import(context.Background(), importer.Options{Producers: reg, PlanPath: writeTemp(t, swapped), Root: root,
		Out: filepath.Join(t.TempDir(), "snap"), Environ: []string{}, Strict: true})
	if _, ok := err.(*importer.PlanDiffersError); !ok {
		t.Errorf("--strict: err = %v, want *importer.PlanDiffersError", err)
	}
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
