package preflight

import (
	"context"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

var pinnedNow = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

const exampleDir = "../testdata/preflight"

func exampleJob(t testing.TB) *Job {
	t.Helper()
	j, err := DecodeJob("job.yaml", readExample(t, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func exampleCatalog(t testing.TB) *Catalog {
	t.Helper()
	c, err := DecodeCatalog("catalog.yaml", readExample(t, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func opts() Options {
	return Options{Now: pinnedNow, ToolVersion: "tpctl test", JobName: "job.yaml", BaseDir: exampleDir}
}

func checkByID(t *testing.T, r *Report, id string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("report has no check %q; checks: %v", id, ids(r))
	return Check{}
}

func ids(r *Report) []string {
	var out []string
	for _, c := range r.Checks {
		out = append(out, c.ID)
	}
	return out
}

// assertInvariants holds for every report: the four always-unchecked
// items are present and unchecked, the summary matches, Ready means no
// fail, and no slice is null.
func assertInvariants(t *testing.T, r *Report) {
	t.Helper()
	var s Summary
	for _, c := range r.Checks {
		switch c.Status {
		case StatusPass:
			s.Pass++
		case StatusFail:
			s.Fail++
		case StatusUnchecked:
			s.Unchecked++
		default:
			t.Errorf("check %s has status %q", c.ID, c.Status)
		}
		if c.Problems == nil {
			t.Errorf("check %s has nil problems", c.ID)
		}
		if c.Reason == "" {
			t.Errorf("check %s has no reason", c.ID)
		}
	}
	if s != r.Summary {
		t.Errorf("summary = %+v, counted %+v", r.Summary, s)
	}
	if r.Ready != (s.Fail == 0) {
		t.Errorf("ready = %v with %d failures", r.Ready, s.Fail)
	}
	for _, id := range []string{CheckModelDownload, CheckMounts, CheckConnectivity, CheckSmokeRun} {
		if c := checkByID(t, r, id); c.Status != StatusUnchecked {
			t.Errorf("%s is %s, want unchecked", id, c.Status)
		}
	}
}

func TestRunChecks(t *testing.T) {
	tests := []struct {
		name      string
		job       func(*Job)
		cat       func(*Catalog)
		id        string
		want      Status
		field     string
		reasonHas string
		problems  []string // pointers of the problems, when given
	}{
		// recipe
		{name: "recipe pass", id: CheckRecipe, want: StatusPass, field: "/recipe", reasonHas: "/recipes/0"},
		{name: "recipe unknown", job: func(j *Job) { j.Recipe.Name = "dpo" }, id: CheckRecipe, want: StatusFail, field: "/recipe/name", reasonHas: `known: "grpo", "sft"`},
		{name: "recipe version out of range", job: func(j *Job) { j.Recipe.Version = "2.0" }, id: CheckRecipe, want: StatusFail, field: "/recipe/version", reasonHas: `">=1.2, <2"`},
		{name: "recipe range unreadable", cat: func(c *Catalog) { c.Recipes[0].Versions = ">=1.2-beta" }, id: CheckRecipe, want: StatusFail, field: "/recipe/version", problems: []string{"/recipes/0/versions"}},
		{name: "second entry of a name matches", cat: func(c *Catalog) {
			c.Recipes = append([]Recipe{{Name: "sft", Versions: "<1", Framework: "old"}}, c.Recipes...)
		}, id: CheckRecipe, want: StatusPass, reasonHas: "/recipes/1"},
		// framework
		{name: "framework pass", id: CheckFramework, want: StatusPass},
		{name: "framework mismatch", job: func(j *Job) { j.Recipe.Framework = "verl" }, id: CheckFramework, want: StatusFail, field: "/recipe/framework", reasonHas: `"nemo-rl"`},
		{name: "framework not declared", job: func(j *Job) { j.Recipe.Framework = "" }, id: CheckFramework, want: StatusUnchecked, reasonHas: "not set"},
		{name: "framework recipe unknown", job: func(j *Job) { j.Recipe.Name = "dpo" }, id: CheckFramework, want: StatusUnchecked},
		// params
		{name: "params pass", id: CheckParams, want: StatusPass},
		{name: "params every violation", job: func(j *Job) {
			j.Params["learning_rate"] = jsonNumber("0.5")
			j.Params["epochs"] = "three"
			j.Params["warmup"] = jsonNumber("1")
		}, id: CheckParams, want: StatusFail, field: "/params/epochs",
			problems: []string{"/params/epochs", "/params/learning_rate", "/params/warmup"}},
		{name: "params missing required", job: func(j *Job) { delete(j.Params, "epochs") }, id: CheckParams, want: StatusFail, problems: []string{"/params/epochs"}},
		{name: "params no schema", cat: func(c *Catalog) { c.Recipes[0].ParamsSchema = nil }, id: CheckParams, want: StatusUnchecked, reasonHas: "no params_schema"},
		{name: "params schema does not compile", cat: func(c *Catalog) {
			c.Recipes[0].ParamsSchema = map[string]any{"type": "integr"}
		}, id: CheckParams, want: StatusFail, reasonHas: "does not compile", problems: []string{"/recipes/0/params_schema"}},
		{name: "params schema external ref refused", cat: func(c *Catalog) {
			c.Recipes[0].ParamsSchema = map[string]any{"$ref": "file:///etc/passwd"}
		}, id: CheckParams, want: StatusFail, reasonHas: "not loaded"},
		{name: "params recipe unknown", job: func(j *Job) { j.Recipe.Name = "dpo" }, id: CheckParams, want: StatusUnchecked},
		// config rules
		{name: "rule pass", id: "config.rule:batch-divisible", want: StatusPass, field: "/config/global_batch_size"},
		{name: "rule false", job: func(j *Job) { j.Config["global_batch_size"] = jsonNumber("100") }, id: "config.rule:batch-divisible", want: StatusFail,
			reasonHas: "must be a multiple", problems: []string{"/config/global_batch_size", "/config/micro_batch_size", "/resources/gpus_per_node", "/resources/nodes"}},
		{name: "rule does not compile", cat: func(c *Catalog) { c.Recipes[0].Rules[1].Expr = "config.tensor_parallel <=" }, id: "config.rule:tp-fits-node", want: StatusFail,
			reasonHas: `rule "tp-fits-node" (catalog /recipes/0/rules/1/expr) does not compile`, problems: []string{"/recipes/0/rules/1/expr"}},
		{name: "rule runtime error", job: func(j *Job) { delete(j.Config, "micro_batch_size") }, id: "config.rule:batch-divisible", want: StatusFail, reasonHas: "could not be evaluated"},
		{name: "rule not boolean", cat: func(c *Catalog) { c.Recipes[0].Rules[1].Expr = "config.tensor_parallel" }, id: "config.rule:tp-fits-node", want: StatusFail},
		{name: "rule now() refused", cat: func(c *Catalog) { c.Recipes[0].Rules[1].Expr = "now().Year() > 2000" }, id: "config.rule:tp-fits-node", want: StatusFail, reasonHas: "does not compile"},
		{name: "rules absent", cat: func(c *Catalog) { c.Recipes[0].Rules = nil }, id: CheckConfig, want: StatusUnchecked, reasonHas: `framework "nemo-rl"`},
		{name: "rules recipe unknown", job: func(j *Job) { j.Recipe.Name = "dpo" }, id: CheckConfig, want: StatusUnchecked},
		{name: "duplicate rule names stay distinct", cat: func(c *Catalog) { c.Recipes[0].Rules[1].Name = "batch-divisible" }, id: "config.rule:batch-divisible#2", want: StatusPass},
		// hardware
		{name: "hardware pass", id: CheckHardware, want: StatusPass, reasonHas: "needs are met"},
		{name: "hardware unknown cluster", job: func(j *Job) { j.Resources.Cluster = "mars" }, id: CheckHardware, want: StatusFail, field: "/resources/cluster", reasonHas: `known: "a100-east", "l40s-west"`},
		{name: "hardware every mismatch", job: func(j *Job) {
			j.Resources.GPUType = "H100-80GB"
			j.Resources.GPUsPerNode = 16
			j.Resources.Nodes = 17
		}, id: CheckHardware, want: StatusFail, problems: []string{"/resources/gpu_type", "/resources/gpus_per_node", "/resources/nodes"}},
		{name: "hardware recipe needs", job: func(j *Job) {
			j.Resources = Resources{Cluster: "l40s-west", Nodes: 1, GPUsPerNode: 4, GPUType: "L40S"}
		}, id: CheckHardware, want: StatusFail, problems: []string{"/resources/gpu_type", "/resources/cluster", "/resources/nodes"}},
		{name: "hardware max gpus", cat: func(c *Catalog) { c.Recipes[0].Hardware.MaxGPUs = 8 }, id: CheckHardware, want: StatusFail, reasonHas: "at most 8"},
		{name: "hardware no recipe needs", cat: func(c *Catalog) { c.Recipes[0].Hardware = nil }, id: CheckHardware, want: StatusPass, reasonHas: "declares no hardware needs"},
		{name: "hardware recipe unknown", job: func(j *Job) { j.Recipe.Name = "dpo" }, id: CheckHardware, want: StatusUnchecked},
		// runtime
		{name: "image pass", id: CheckRuntimeImage, want: StatusPass},
		{name: "image by tag", job: func(j *Job) { j.Runtime.Image = "nemo-rl:24.09" }, id: CheckRuntimeImage, want: StatusFail, field: "/runtime/image"},
		{name: "image short digest", job: func(j *Job) { j.Runtime.Image = "nemo-rl@sha256:abc" }, id: CheckRuntimeImage, want: StatusFail},
		{name: "checkpoint in index", id: CheckRuntimeCheckpoint, want: StatusPass, reasonHas: "artifact index"},
		{name: "checkpoint on disk", job: func(j *Job) { j.Runtime.Checkpoint = "data/eval-sample.jsonl" }, id: CheckRuntimeCheckpoint, want: StatusPass, reasonHas: "on disk"},
		{name: "checkpoint file url", job: func(j *Job) { j.Runtime.Checkpoint = "file://data" }, id: CheckRuntimeCheckpoint, want: StatusPass},
		{name: "checkpoint missing on disk", job: func(j *Job) { j.Runtime.Checkpoint = "ckpt/step-100" }, id: CheckRuntimeCheckpoint, want: StatusFail, problems: []string{"/runtime/checkpoint"}},
		{name: "checkpoint remote not indexed", job: func(j *Job) { j.Runtime.Checkpoint = "s3://bucket/ckpt" }, id: CheckRuntimeCheckpoint, want: StatusFail, reasonHas: "not in the catalog's artifact index"},
		{name: "checkpoint indexed as other kind", job: func(j *Job) { j.Runtime.Checkpoint = j.Runtime.Datasets[0] }, id: CheckRuntimeCheckpoint, want: StatusFail, reasonHas: "as a dataset, not a checkpoint"},
		{name: "datasets pass", id: CheckRuntimeDatasets, want: StatusPass},
		{name: "datasets one missing", job: func(j *Job) { j.Runtime.Datasets = append(j.Runtime.Datasets, "hf://datasets/x", "data/none.jsonl") }, id: CheckRuntimeDatasets, want: StatusFail,
			field: "/runtime/datasets/2", problems: []string{"/runtime/datasets/2", "/runtime/datasets/3"}},
		{name: "datasets empty", job: func(j *Job) { j.Runtime.Datasets = nil }, id: CheckRuntimeDatasets, want: StatusPass, reasonHas: "no datasets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, cat := exampleJob(t), exampleCatalog(t)
			if tt.job != nil {
				tt.job(job)
			}
			if tt.cat != nil {
				tt.cat(cat)
			}
			o := opts()
			o.SkipSource = true
			r, err := Run(context.Background(), job, cat, o)
			if err != nil {
				t.Fatal(err)
			}
			assertInvariants(t, r)
			c := checkByID(t, r, tt.id)
			if c.Status != tt.want {
				t.Errorf("%s = %s, want %s; reason: %s", tt.id, c.Status, tt.want, c.Reason)
			}
			if tt.field != "" && c.Field != tt.field {
				t.Errorf("field = %q, want %q", c.Field, tt.field)
			}
			if !strings.Contains(c.Reason, tt.reasonHas) {
				t.Errorf("reason %q does not contain %q", c.Reason, tt.reasonHas)
			}
			if tt.problems != nil {
				var got []string
				for _, p := range c.Problems {
					got = append(got, p.Pointer)
				}
				if diff := cmp.Diff(tt.problems, got); diff != "" {
					t.Errorf("problem pointers (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestRunWithoutCatalogNeverPasses(t *testing.T) {
	o := opts()
	o.SkipSource = true
	o.CatalogError = errors.New("GET https://platform/catalog: 503 Service Unavailable")
	r, err := Run(context.Background(), exampleJob(t), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	assertInvariants(t, r)
	if r.Ready {
		t.Error("ready without a catalog")
	}
	for _, id := range []string{CheckRecipe, CheckFramework, CheckParams, CheckConfig, CheckHardware, CheckRuntimeCheckpoint} {
		c := checkByID(t, r, id)
		if c.Status == StatusPass {
			t.Errorf("%s passed without a catalog: %s", id, c.Reason)
		}
	}
	if c := checkByID(t, r, CheckRecipe); !strings.Contains(c.Reason, "503") {
		t.Errorf("recipe reason does not carry the catalog error: %s", c.Reason)
	}
}

func TestReportGolden(t *testing.T) {
	r, err := Run(context.Background(), exampleJob(t), exampleCatalog(t), opts())
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckFile(t, *update, got, filepath.Join("testdata", "report.golden.json"))
	// Same inputs, same bytes: no map order or machine path leaks in.
	again, _ := Run(context.Background(), exampleJob(t), exampleCatalog(t), opts())
	b, _ := again.JSON()
	if string(b) != string(got) {
		t.Error("two runs on the same inputs gave different reports")
	}
}

func TestFingerprintInvalidation(t *testing.T) {
	base := exampleJob(t)
	r, err := Run(context.Background(), base, exampleCatalog(t), Options{Now: pinnedNow, SkipSource: true, BaseDir: exampleDir})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mutate  func(*Job)
		applies bool
		changed []string
	}{
		{"unchanged", func(*Job) {}, true, []string{}},
		{"name and derived_from are not inputs", func(j *Job) { j.Name = "other"; j.DerivedFrom = nil }, true, []string{}},
		{"parameter change", func(j *Job) { j.Params["learning_rate"] = jsonNumber("2e-5") }, false, []string{"params"}},
		{"same number written differently", func(j *Job) { j.Params["learning_rate"] = jsonNumber("0.00001") }, true, []string{}},
		{"config and resources", func(j *Job) { j.Config["tensor_parallel"] = jsonNumber("4"); j.Resources.Nodes = 4 }, false, []string{"config", "resources"}},
		{"source reference", func(j *Job) { j.Source.Archive.SHA256 = strings.Repeat("0", 64) }, false, []string{"source"}},
		{"runtime", func(j *Job) { j.Runtime.Datasets = j.Runtime.Datasets[:1] }, false, []string{"runtime"}},
		{"recipe", func(j *Job) { j.Recipe.Version = "1.5.0" }, false, []string{"recipe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := exampleJob(t)
			tt.mutate(j)
			v, err := Verify(r, j)
			if err != nil {
				t.Fatal(err)
			}
			if v.Applies != tt.applies {
				t.Errorf("applies = %v, want %v (%s)", v.Applies, tt.applies, v.Reason)
			}
			if diff := cmp.Diff(tt.changed, v.Changed); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
	// Other fingerprint rules never "apply", even with equal digests.
	old := *r
	old.Fingerprint.Rules = "tpctl-preflight-fingerprint/0"
	if v, _ := Verify(&old, base); v.Applies {
		t.Error("a report with other fingerprint rules applies")
	}
}

func TestReportRoundTrip(t *testing.T) {
	r, err := Run(context.Background(), exampleJob(t), exampleCatalog(t), Options{Now: pinnedNow, SkipSource: true, BaseDir: exampleDir})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	b, _ := r.JSON()
	for name, bad := range map[string]string{
		"unknown field": strings.Replace(string(b), `"ready"`, `"extra": 1, "ready"`, 1),
		"other format":  strings.Replace(string(b), ReportFormat, "tpctl-snapshot/1", 1),
		"bad digest":    strings.Replace(string(b), r.Fingerprint.SHA256, "abc", 1),
		"not json":      "ready: true",
	} {
		if _, err := DecodeReport("r.json", []byte(bad)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func BenchmarkRun(b *testing.B) {
	job, cat := exampleJob(b), exampleCatalog(b)
	o := opts()
	o.SkipSource = true
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), job, cat, o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	job := exampleJob(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ComputeFingerprint(job); err != nil {
			b.Fatal(err)
		}
	}
}
