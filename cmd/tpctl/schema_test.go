package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/schemas"
)

// runCapture runs tpctl and returns its exit code, stdout and stderr.
func runCapture(t *testing.T, args ...string) (int, []byte, []byte) {
	t.Helper()
	s, _, out, errOut := ui.Test()
	code := runWith(context.Background(), s, args)
	return code, out.Bytes(), errOut.Bytes()
}

// validate checks one JSON document against the embedded schema name.
func validate(t *testing.T, name, what string, doc []byte) {
	t.Helper()
	sch, err := schemas.Compile(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, doc)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s does not match schema %s:\n%v", what, name, err)
	}
}

// lines splits JSON lines output.
func lines(b []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, append([]byte(nil), sc.Bytes()...))
		}
	}
	return out
}

// TestOutputsMatchSchemas runs real commands and validates what they print
// and save against the published schemas.
func TestOutputsMatchSchemas(t *testing.T) {
	dir := t.TempDir()
	example := filepath.Join("..", "..", "testdata", "example")
	plan := filepath.Join(example, "import-plan.json")
	snap := filepath.Join(dir, "round-1")

	code, out, errOut := runCapture(t, "import", "--plan", plan, "--root", example, "--out", snap, "--output", "json", "--trace-limit", "4", "--redactor", "builtin:secrets")
	if code != 0 {
		t.Fatalf("import exit %d: %s", code, errOut)
	}
	validate(t, "snapshot", "import --output json", out)
	manifest, err := os.ReadFile(filepath.Join(snap, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	validate(t, "snapshot", "snapshot.json", manifest)
	_, out, _ = runCapture(t, "snapshot", "show", snap, "--output", "json")
	validate(t, "snapshot", "snapshot show --output json", out)
	obs, err := os.ReadFile(filepath.Join(snap, "observations.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines(obs)) == 0 {
		t.Fatal("no observations")
	}
	for i, l := range lines(obs) {
		validate(t, "observation", "observations.jsonl line "+string(rune('1'+i)), l)
	}

	// plan check: valid, invalid, and eval check-plan.
	_, out, _ = runCapture(t, "plan", "check", plan, "--root", example, "--output", "json")
	validate(t, "plan-check", "plan check (valid)", out)
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version": 1, "colour": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCapture(t, "plan", "check", bad, "--output", "json")
	if code != 1 || !bytes.Contains(out, []byte(`"findings":[{`)) {
		t.Fatalf("bad plan: exit %d, %s", code, out)
	}
	validate(t, "plan-check", "plan check (invalid)", out)
	validate(t, "exit-error", "exit_error of plan check", lines(errOut)[len(lines(errOut))-1])
	_, out, _ = runCapture(t, "eval", "check-plan", filepath.Join("..", "..", "testdata", "eval", "eval-plan.json"), "--output", "json")
	validate(t, "plan-check", "eval check-plan", out)

	// exit_error of a usage error and of unreadable input.
	for _, args := range [][]string{{"snapshot", "verfy", "x", "-o", "json"}, {"snapshot", "show", filepath.Join(dir, "nope"), "-o", "json"}} {
		_, _, errOut = runCapture(t, args...)
		ls := lines(errOut)
		validate(t, "exit-error", "exit_error of "+strings.Join(args, " "), ls[len(ls)-1])
	}

	// compare: not comparable (degraded example) and comparable.
	_, out, _ = runCapture(t, "compare", snap, snap, "--output", "json")
	validate(t, "compare", "compare (not comparable)", out)
	var sides []string
	for i, trials := range [][]string{{"a#0=success", "a#1=failure", "b#0=failure"}, {"a#0=success", "a#1=success", "b#0=failure"}} {
		spec, err := comparetest.ParseArgs(trials)
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, "cmp"+string(rune('a'+i)))
		if _, err := comparetest.Build(d, spec); err != nil {
			t.Fatal(err)
		}
		sides = append(sides, d)
	}
	code, out, errOut = runCapture(t, "compare", sides[0], sides[1], "--output", "json")
	if code != 0 {
		t.Fatalf("compare of clean rounds: exit %d %s", code, errOut)
	}
	validate(t, "compare", "compare (comparable)", out)

	// preflight report, printed and saved.
	pf := t.TempDir()
	if err := pfCopyDir(filepath.Join("..", "..", "testdata", "preflight"), pf); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(pf, "report.json")
	for _, job := range []string{"job.yaml", "job-not-ready.yaml"} {
		_, out, errOut = runCapture(t, "preflight", filepath.Join(pf, job), "--catalog", filepath.Join(pf, "catalog.yaml"), "--skip-source", "--report", report, "--output", "json")
		validate(t, "preflight-report", "preflight "+job, out)
		saved, err := os.ReadFile(report)
		if err != nil {
			t.Fatalf("%s: %v (%s)", job, err, errOut)
		}
		validate(t, "preflight-report", "saved report of "+job, saved)
	}
}

// TestSchemaTooStrictFails: the schemas are not so loose that they pass
// anything.
func TestSchemaTooStrictFails(t *testing.T) {
	sch, err := schemas.Compile("observation")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"trial_id":"a#0","task":"a","repeat":0}`))
	if sch.Validate(v) == nil {
		t.Error("an observation missing most members passed the schema")
	}
}

// TestSchemaStatistics: the statistics of tpctl-snapshot/2 and /3 and compare's
// paired member are described, not merely allowed as unknown members.
func TestSchemaStatistics(t *testing.T) {
	tests := []struct {
		schema, doc string
	}{
		{"snapshot", `{"statistics": {"clusters": 2, "success_rate_se_clustered": "0.1", "success_rate_ci95_clustered": null, "pass_at_k": {}, "pass_hat_k": {}, "pass_k_tasks": {"counted": 0, "left_out": 0, "left_out_reasons": {}}}}`},
		{"snapshot", `{"statistics": {"clusters": 2, "success_rate_se_clustered": null, "success_rate_ci95_clustered": null, "pass_at_k": {"k1": 0.5}, "pass_hat_k": {}, "pass_k_tasks": {"counted": 1, "left_out": 0, "left_out_reasons": {}}}}`},
		{"snapshot", `{"statistics": {"clusters": 2, "success_rate_se_clustered": null, "success_rate_ci95_clustered": null, "pass_at_k": {}, "pass_hat_k": {}, "pass_k_tasks": {"counted": 0, "left_out": 1, "left_out_reasons": {"repeat_lost": 1}}}}`},
		{"compare", `{"paired": {"trials": 6, "tasks": 3, "delta": 0.1, "se_clustered": 0.1, "ci95": [0, 0.3]}}`},
		{"compare", `{"paired": {"trials": 6, "tasks": 3, "delta": 0.1, "se_clustered": -0.1, "ci95": null, "mde80": null}}`},
		// tpctl-snapshot/3 statistics and the null-with-reason form.
		{"snapshot", `{"statistics": {"clusters": 3, "success_rate_se_clustered": 0.1, "success_rate_ci95_clustered": null, "success_rate_ci95_clustered_null": {"code": "too_few", "tasks": 3, "min_tasks": 5, "message": "x"}, "pass_at_k": {}, "pass_hat_k": {}, "pass_k_tasks_by_k": {}}}`},
		{"snapshot", `{"statistics": {"clusters": 3, "success_rate_se_clustered": 0.1, "success_rate_ci95_clustered": null, "pass_at_k": {"1": 0.5}, "pass_hat_k": {"1": 0.5}, "pass_k_tasks_by_k": {"1": {"counted": 1, "left_out": 1, "left_out_reasons": {"repeat_lost": 1}}}}}`},
		{"snapshot", `{"statistics": {"clusters": 3, "success_rate_se_clustered": 0.1, "success_rate_ci95_clustered": null, "pass_at_k": {}, "pass_hat_k": {}}}`},
		{"compare", `{"paired": {"trials": 6, "tasks": 6, "delta": 0.1, "se_clustered": 0.1, "ci95": [-1.2, 0.3], "mde80": 0.3, "df": 5, "null_reason": null}}`},
		{"compare", `{"paired": {"trials": 6, "tasks": 3, "delta": 0.1, "se_clustered": 0.1, "ci95": null, "mde80": null, "df": null, "null_reason": {"code": "too_few_tasks", "tasks": 3}}}`},
	}
	for _, tt := range tests {
		sch, err := schemas.Compile(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		// Only the member under test may fail: check it alone.
		var member string
		for k := range v.(map[string]any) {
			member = k
		}
		err = sch.Validate(v)
		if err == nil || !strings.Contains(err.Error(), "/"+member) {
			t.Errorf("%s schema: %s gave %v, want an error at /%s", tt.schema, tt.doc, err, member)
		}
	}
}

// buildRounds writes one synthetic snapshot per trial list into dir
// (comparetest's KEY=VALUE and TASK#REPEAT=STATUS arguments).
func buildRounds(t *testing.T, dir string, rounds ...[]string) []string {
	t.Helper()
	var dirs []string
	for i, args := range rounds {
		spec, err := comparetest.ParseArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, fmt.Sprintf("r%d", i))
		if _, err := comparetest.Build(d, spec); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// TestTrendAndGateMatchSchemas: tpctl trend and tpctl gate --output json
// match schemas/trend.v1.json and schemas/gate-verdict.v1.json in each of
// their shapes: comparable and refused pairs, a degraded round, a null
// interval; a passing, a failing and a not-enough-evidence verdict.
func TestTrendAndGateMatchSchemas(t *testing.T) {
	dir := t.TempDir()
	six := func(ckpt string, successes int, extra ...string) []string {
		args := []string{"checkpoint=" + ckpt}
		for i := range 12 {
			st := "failure"
			if i < successes {
				st = "success"
			}
			args = append(args, fmt.Sprintf("t%d#%d=%s", i/2, i%2, st))
		}
		return append(args, extra...)
	}
	dirs := buildRounds(t, dir,
		six("hf://m@step-100", 4, "t5#1=missing"), six("hf://m@step-200", 8), six("hf://m@step-300", 6),
		[]string{"checkpoint=hf://m@step-1", "a#0=success", "a#1=failure"}, // one task: no clustered interval
	)
	code, out, errOut := runCapture(t, "trend", dirs[0], dirs[1], dirs[2], "--output", "json")
	if code != 0 {
		t.Fatalf("trend: exit %d %s", code, errOut)
	}
	for _, want := range []string{`"comparable":false`, `"comparable":true`, `"regressed":[{`, `"label":"degraded"`, `"success_rate_bounds":{"worst_case":`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("trend output lacks %s, so the schema is not tested on it:\n%s", want, out)
		}
	}
	validate(t, "trend", "trend --output json", out)
	// The schema is not so loose that it passes anything: a refused pair
	// without its reason, an unknown order.
	for _, bad := range [][2]string{{`"reason":"round 1`, `"reason":"","x":"`}, {`"order":"given"`, `"order":"random"`}} {
		if !bytes.Contains(out, []byte(bad[0])) {
			t.Fatalf("trend output lacks %s", bad[0])
		}
		doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(bytes.Replace(out, []byte(bad[0]), []byte(bad[1]), 1)))
		sch, err := schemas.Compile("trend")
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(doc) == nil {
			t.Errorf("the trend schema passes %s", bad[1])
		}
	}
	_, out, _ = runCapture(t, "trend", dirs[3], dirs[3], "--output", "json")
	if !bytes.Contains(out, []byte(`"success_rate_ci95_clustered":null`)) {
		t.Errorf("one-task trend has a clustered interval:\n%s", out)
	}
	validate(t, "trend", "trend of a one-task round", out)

	policy := filepath.Join(dir, "gate.yaml")
	if err := os.WriteFile(policy, []byte("require: clean\nmin_success_rate: 0.1\nmax_infra_error_rate: 0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withBase := filepath.Join(dir, "base.yaml")
	if err := os.WriteFile(withBase, []byte("require: any\nbaseline:\n  non_inferiority_margin: 0.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		code    int
		outcome string
	}{
		{[]string{dirs[1], "--policy", policy}, 0, `"outcome":"pass"`},
		{[]string{dirs[0], "--policy", policy}, 1, `"outcome":"fail"`},
		{[]string{dirs[3], "--policy", policy}, 1, `"outcome":"not_enough_evidence"`},
		{[]string{dirs[2], "--baseline", dirs[1], "--policy", withBase}, 0, `"rule":"baseline.non_inferiority_margin","outcome":"pass"`},
		{[]string{dirs[2], "--baseline", dirs[3], "--policy", withBase}, 1, `"outcome":"not_comparable"`},
	} {
		code, out, errOut := runCapture(t, append([]string{"gate", "--output", "json"}, tc.args...)...)
		if code != tc.code || !bytes.Contains(out, []byte(tc.outcome)) {
			t.Errorf("gate %v: exit %d (want %d), want %s:\n%s%s", tc.args, code, tc.code, tc.outcome, out, errOut)
		}
		validate(t, "gate-verdict", "gate "+strings.Join(tc.args, " "), out)
	}
}

// TestTrendDocExample: the terminal view docs/trend.md shows is the one
// trend-gate-done.txtar checks tpctl prints.
func TestTrendDocExample(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", "trend-gate-done.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var golden []byte
	for _, f := range ar.Files {
		if f.Name == "trend-checkpoint.golden" {
			golden = f.Data
		}
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "trend.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := bytes.Cut(doc, []byte("## What it shows\n\n```text\n"))
	shown, _, ok := bytes.Cut(rest, []byte("```\n"))
	if len(golden) == 0 || !ok {
		t.Fatal("no golden in trend-gate-done.txtar or no text block under \"What it shows\" in docs/trend.md")
	}
	if !bytes.Equal(shown, golden) {
		t.Errorf("docs/trend.md shows\n%s\ntpctl prints\n%s", shown, golden)
	}
}

// TestPowerPlanMatchesSchema: tpctl plan power --output json matches
// schemas/power-plan.v1.json in each of its shapes: a recommended design
// and none, a design under five tasks with its reason, a pilot with
// trials not scored (unscored), a paired plan against a baseline; and the
// schema is not so loose that it passes a power above 1 or a design
// without its power.
func TestPowerPlanMatchesSchema(t *testing.T) {
	dir := t.TempDir()
	eight := func(lost ...string) []string {
		var args []string
		for i := range 16 {
			st := "success"
			if i%4 == 3 {
				st = "failure"
			}
			args = append(args, fmt.Sprintf("t%d#%d=%s", i/2, i%2, st))
		}
		return append(args, lost...)
	}
	dirs := buildRounds(t, dir, eight(), eight("t0#1=infra_error", "t5#0=missing"), eight("t1#0=failure", "t2#0=failure", "t3#0=failure"))
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	minRate, high, ni := write("min.yaml", "min_success_rate: 0.45\n"), write("high.yaml", "min_success_rate: 0.99\n"), write("ni.yaml", "baseline: {non_inferiority_margin: 0.1}\n")
	design := []string{"--tasks", "3,20", "--repeats", "2", "--simulations", "40"}
	var first []byte
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--pilot", dirs[0], "--policy", minRate}, []string{`"recommended":{"tasks":20`, `"reason":"3 tasks;`, `"paired":null`}},
		{[]string{"--pilot", dirs[1], "--policy", high}, []string{`"recommended":null`, `"unscored":"2 of the pilot's 16`}},
		{[]string{"--pilot", dirs[0], "--baseline", dirs[2], "--policy", ni}, []string{`"paired":{"margin":0.1`, `"baseline":{"dir":`}},
	} {
		args := append(append([]string{"plan", "power", "--output", "json"}, tc.args...), design...)
		code, out, errOut := runCapture(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		for _, w := range tc.want {
			if !bytes.Contains(out, []byte(w)) {
				t.Errorf("%v lacks %s, so the schema is not tested on it:\n%s", args, w, out)
			}
		}
		validate(t, "power-plan", "plan power "+strings.Join(tc.args, " "), out)
		if first == nil {
			first = out
		}
	}
	sch, err := schemas.Compile("power-plan")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]string{{`"power":0,`, `"power":1.5,`}, {`"power":0,"mc_se":0,`, ``}, {`"format":"tpctl-power/1"`, `"format":"tpctl-power/2"`}} {
		if !bytes.Contains(first, []byte(bad[0])) {
			t.Fatalf("plan power output lacks %s:\n%s", bad[0], first)
		}
		doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(bytes.Replace(first, []byte(bad[0]), []byte(bad[1]), 1)))
		if sch.Validate(doc) == nil {
			t.Errorf("the power-plan schema passes %s in place of %s", bad[1], bad[0])
		}
	}
}

// TestDatasetScopeMatchesSchemas: the dataset member (which part of the
// dataset the rates stand on, settings.dataset) of compare, trend and
// gate --output json, in Inspect's form and lm-eval's, matches
// compare.v1.json, trend.v1.json and gate-verdict.v1.json; a noun the
// schema does not allow fails it.
func TestDatasetScopeMatchesSchemas(t *testing.T) {
	for _, tc := range []struct{ name, settings, want string }{
		{"inspect", `{"temperature":0,"dataset":{"planned_samples":4,"samples":100}}`, `"dataset":{"planned_samples":4,"samples":100}`},
		{"lm-eval", `{"temperature":0,"dataset":{"planned_samples":4,"samples":2376,"item":"document","whole":"split"}}`,
			`"dataset":{"planned_samples":4,"samples":2376,"item":"document","whole":"split"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rounds := buildRounds(t, dir,
				[]string{"settings=" + tc.settings, "checkpoint=hf://m@step-1", "a#0=success", "b#0=failure", "c#0=success", "d#0=success"},
				[]string{"settings=" + tc.settings, "checkpoint=hf://m@step-2", "a#0=success", "b#0=success", "c#0=success", "d#0=failure"})
			policy := filepath.Join(dir, "gate.yaml")
			if err := os.WriteFile(policy, []byte("require: any\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				schema string
				args   []string
			}{
				{"compare", []string{"compare", rounds[0], rounds[1], "--output", "json"}},
				{"trend", []string{"trend", rounds[0], rounds[1], "--output", "json"}},
				{"gate-verdict", []string{"gate", rounds[1], "--policy", policy, "--output", "json"}},
			} {
				_, out, errOut := runCapture(t, c.args...)
				if !bytes.Contains(out, []byte(tc.want)) {
					t.Fatalf("%s output lacks %s:\n%s%s", c.args[0], tc.want, out, errOut)
				}
				validate(t, c.schema, c.args[0]+" --output json", out)
				bad := bytes.Replace(out, []byte(`"samples":`), []byte(`"item":"Sample\u001b","samples":`), 1)
				if tc.name == "inspect" {
					doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(bad))
					sch, err := schemas.Compile(c.schema)
					if err != nil {
						t.Fatal(err)
					}
					if sch.Validate(doc) == nil {
						t.Errorf("the %s schema passes a dataset noun with control text", c.schema)
					}
				}
			}
		})
	}
}
