package preflight

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readExample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/preflight/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeJobExample(t *testing.T) {
	j, err := DecodeJob("job.yaml", readExample(t, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := Resources{Cluster: "a100-east", Nodes: 2, GPUsPerNode: 8, GPUType: "A100-80GB"}
	if diff := cmp.Diff(want, j.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if j.Source.Archive == nil || j.Source.Archive.Path != "source.tar" {
		t.Errorf("source = %+v, want archive source.tar", j.Source)
	}
	if got := j.Params["learning_rate"]; got != any(jsonNumber("1e-05")) {
		t.Errorf("learning_rate = %#v, want json.Number 1e-05", got)
	}
	if j.DerivedFrom == nil || j.DerivedFrom.JobID != "sft-0412" {
		t.Errorf("derived_from = %+v", j.DerivedFrom)
	}
}

const minimalJob = `version: 1
recipe: {name: sft, version: "1.4"}
params: {}
source: {path: src}
config: {}
resources: {cluster: c, nodes: 1, gpus_per_node: 8, gpu_type: A100}
runtime: {image: img, checkpoint: ck, datasets: []}
`

func TestDecodeJobProblems(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Problem // only In, Pointer, Line and a message substring are compared
	}{
		{"unknown top-level field", minimalJob + "colour: red\n",
			[]Problem{{In: "job", Pointer: "/colour", Line: 8, Message: `unknown field "colour"`}}},
		{"unknown nested field with line", strings.Replace(minimalJob, "gpu_type: A100", "gpu_type: A100, gpu: 1", 1),
			[]Problem{{In: "job", Pointer: "/resources/gpu", Line: 6, Message: `unknown field "gpu"`}}},
		{"every violation listed", strings.Replace(strings.Replace(minimalJob, "nodes: 1", "nodes: 0", 1), `version: "1.4"`, `version: "v1"`, 1),
			[]Problem{
				{In: "job", Pointer: "/recipe/version", Line: 2, Message: "does not match pattern"},
				{In: "job", Pointer: "/resources/nodes", Line: 6, Message: "minimum"},
			}},
		{"missing required field", strings.Replace(minimalJob, "config: {}\n", "", 1),
			[]Problem{{In: "job", Pointer: "/config", Line: 1, Message: `missing required field "config"`}}},
		{"two sources", strings.Replace(minimalJob, "{path: src}", "{path: src, archive: {path: a.tar, sha256: "+strings.Repeat("a", 64)+"}}", 1),
			[]Problem{{In: "job", Pointer: "/source", Line: 4, Message: "maxProperties"}}},
		{"git commit not full", strings.Replace(minimalJob, "{path: src}", "{git: {url: repo, commit: abc123}}", 1),
			[]Problem{{In: "job", Pointer: "/source/git/commit", Line: 4, Message: "does not match pattern"}}},
		{"git url option injection", strings.Replace(minimalJob, "{path: src}", "{git: {url: --upload-pack=x, commit: "+strings.Repeat("a", 40)+"}}", 1),
			[]Problem{{In: "job", Pointer: "/source/git/url", Line: 4, Message: "does not match pattern"}}},
		{"alias refused", "version: 1\nrecipe: &r {name: a, version: '1'}\nother: *r\n",
			[]Problem{{In: "job", Pointer: "/other", Line: 3, Message: "aliases"}}},
		{"duplicate key", "version: 1\nversion: 1\n",
			[]Problem{{In: "job", Pointer: "/version", Line: 2, Message: "appears twice"}}},
		{"NaN refused", strings.Replace(minimalJob, "params: {}", "params: {lr: .nan}", 1),
			[]Problem{{In: "job", Pointer: "/params/lr", Line: 3, Message: "no JSON form"}}},
		{"custom tag refused", strings.Replace(minimalJob, "params: {}", "params: {lr: !secret x}", 1),
			[]Problem{{In: "job", Pointer: "/params/lr", Line: 3, Message: "unsupported YAML tag"}}},
		{"two documents", minimalJob + "---\nversion: 1\n",
			[]Problem{{In: "job", Pointer: "", Line: 8, Message: "more than one YAML document"}}},
		{"empty", "", []Problem{{In: "job", Message: "empty"}}},
		{"not an object", "[1, 2]\n", []Problem{{In: "job", Pointer: "", Line: 1, Message: "want object"}}},
		{"syntax error", "version: [1\n", []Problem{{In: "job", Message: "not valid YAML or JSON"}}},
		{"integer past 2^53", strings.Replace(minimalJob, "params: {}", "params: {seed: 9007199254740993}", 1),
			[]Problem{{In: "job", Pointer: "/params/seed", Line: 3, Message: `integer 9007199254740993 is beyond ±2^53`}}},
		{"negative integer past 2^53", strings.Replace(minimalJob, "config: {}", "config: {offset: -9007199254740993}", 1),
			[]Problem{{In: "job", Pointer: "/config/offset", Line: 5, Message: `write it as a string ("-9007199254740993")`}}},
		{"uint64 integer", strings.Replace(minimalJob, "params: {}", "params: {seed: 18446744073709551615}", 1),
			[]Problem{{In: "job", Pointer: "/params/seed", Line: 3, Message: "beyond ±2^53"}}},
		{"too deep", strings.Replace(minimalJob, "params: {}", "params: "+strings.Repeat("[", 100)+strings.Repeat("]", 100), 1),
			[]Problem{{In: "job", Pointer: "/params" + strings.Repeat("/0", maxDepth), Line: 3, Message: "nested deeper"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeJob("job.yaml", []byte(tt.in))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want *DecodeError", err)
			}
			if de.File != "job.yaml" {
				t.Errorf("File = %q", de.File)
			}
			got := make([]Problem, len(de.Problems))
			for i, p := range de.Problems {
				got[i] = Problem{In: p.In, Pointer: p.Pointer, Line: p.Line, Message: p.Message}
				if i < len(tt.want) && strings.Contains(p.Message, tt.want[i].Message) {
					got[i].Message = tt.want[i].Message
				}
			}
			if tt.want[0].Pointer == "" && tt.want[0].Line == 0 && len(got) > 0 {
				got[0].Line = 0 // syntax errors: position is inside the message
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerror: %v", diff, err)
			}
			if !strings.HasPrefix(err.Error(), `"job.yaml`) {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

// TestFingerprintSeesEveryIntegerChange: a parameter changed by one must
// change the fingerprint, also at the edge of the exact range; past it the
// job is refused (TestDecodeJobProblems) instead of hashing two values the
// same.
func TestFingerprintSeesEveryIntegerChange(t *testing.T) {
	fp := func(v string) string {
		t.Helper()
		j, err := DecodeJob("j", []byte(strings.Replace(minimalJob, "params: {}", "params: {seed: "+v+"}", 1)))
		if err != nil {
			t.Fatal(err)
		}
		f, err := ComputeFingerprint(j)
		if err != nil {
			t.Fatal(err)
		}
		return f.SHA256
	}
	for _, pair := range [][2]string{{"9007199254740991", "9007199254740992"}, {"-9007199254740992", "-9007199254740991"}, {"1", "2"}} {
		if fp(pair[0]) == fp(pair[1]) {
			t.Errorf("seed %s and %s give the same fingerprint", pair[0], pair[1])
		}
	}
	// The catalog is not fingerprinted: a 64-bit bound in a params schema
	// stays readable.
	cat := strings.Replace(string(readExample(t, "catalog.yaml")), "maximum: 20}", "maximum: 18446744073709551615}", 1)
	if _, err := DecodeCatalog("catalog.yaml", []byte(cat)); err != nil {
		t.Errorf("catalog with a 64-bit maximum: %v", err)
	}
}

func TestDecodeJobNumbers(t *testing.T) {
	// YAML spellings of numbers become one JSON form, so the fingerprint
	// does not depend on how a number was written.
	a, err := DecodeJob("a", []byte(strings.Replace(minimalJob, "params: {}", "params: {lr: 1.0e-5, n: 0x10, big: 1_000}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeJob("b", []byte(strings.Replace(minimalJob, "params: {}", `params: {"big": 1000, "n": 16, "lr": 0.00001}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	fa, _ := ComputeFingerprint(a)
	fb, _ := ComputeFingerprint(b)
	if fa.SHA256 != fb.SHA256 {
		t.Errorf("fingerprints differ for equal params: %v vs %v", a.Params, b.Params)
	}
}

func TestDecodeJobTooLarge(t *testing.T) {
	_, err := DecodeJob("big.yaml", make([]byte, MaxJobBytes+1))
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v, want size limit error", err)
	}
}

func TestDecodeJobJSON(t *testing.T) {
	in := `{"version": 1, "recipe": {"name": "sft", "version": "1"}, "params": {"a": [1, 2.5, "x", null, true]},
	"source": {"path": "src"}, "config": {}, "resources": {"cluster": "c", "nodes": 1, "gpus_per_node": 0, "gpu_type": "cpu"},
	"runtime": {"image": "i", "checkpoint": "c", "datasets": ["d"]}}`
	j, err := DecodeJob("job.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{jsonNumber("1"), jsonNumber("2.5"), "x", nil, true}
	if diff := cmp.Diff(want, j.Params["a"]); diff != "" {
		t.Errorf("params.a (-want +got):\n%s", diff)
	}
}

func TestDecodeCatalog(t *testing.T) {
	c, err := DecodeCatalog("catalog.yaml", readExample(t, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Recipes) != 2 || len(c.Clusters) != 2 || len(c.Artifacts) != 3 {
		t.Fatalf("catalog = %d recipes, %d clusters, %d artifacts", len(c.Recipes), len(c.Clusters), len(c.Artifacts))
	}
	dup := "version: 1\nrecipes: []\nartifacts: []\nclusters:\n  - {name: a, gpu_type: x, gpu_memory_gb: 1, gpus_per_node: 1, max_nodes: 1}\n  - {name: a, gpu_type: y, gpu_memory_gb: 1, gpus_per_node: 1, max_nodes: 1}\n"
	_, err = DecodeCatalog("cat.yaml", []byte(dup))
	if err == nil || !strings.Contains(err.Error(), `cat.yaml":6:`) || !strings.Contains(err.Error(), "/clusters/1/name") {
		t.Errorf("duplicate cluster: err = %v", err)
	}
	_, err = DecodeCatalog("cat.yaml", []byte("version: 1\nrecipes: []\nclusters: []\nartifacts: [{ref: x, kind: model}]\n"))
	if err == nil || !strings.Contains(err.Error(), "/artifacts/0/kind") {
		t.Errorf("bad kind: err = %v", err)
	}
}

func FuzzDecodeJob(f *testing.F) {
	f.Add(readExample(f, "job.yaml"))
	f.Add(readExample(f, "job-not-ready.yaml"))
	f.Add([]byte(minimalJob))
	f.Add([]byte(`{"version": 1, "params": {"a": [1e400]}}`))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("? [a]\n: b\n"))
	f.Add([]byte("x: !!binary aGVsbG8=\n"))
	f.Add([]byte(`{"version": 1, "params": {"seed": 9007199254740993, "n": -9007199254740992}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := DecodeJob("fuzz.yaml", data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || len(de.Problems) == 0 {
				t.Fatalf("error is not a located *DecodeError: %v", err)
			}
			return
		}
		// A job that decodes must fingerprint and check without panics.
		if _, err := ComputeFingerprint(j); err != nil {
			t.Fatalf("fingerprint of a decoded job: %v", err)
		}
		r, err := Run(context.Background(), j, fuzzCatalog, Options{SkipSource: true, BaseDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if r.Ready && r.Summary.Fail != 0 {
			t.Fatal("ready with failures")
		}
	})
}

var fuzzCatalog = func() *Catalog {
	b, err := os.ReadFile("../testdata/preflight/catalog.yaml")
	if err != nil {
		panic(err)
	}
	c, err := DecodeCatalog("catalog.yaml", b)
	if err != nil {
		panic(err)
	}
	return c
}()

func FuzzDecodeCatalog(f *testing.F) {
	f.Add(readExample(f, "catalog.yaml"))
	f.Add([]byte("version: 1\nrecipes: [{name: a, versions: '>=1', framework: f, params_schema: {$ref: '#/x'}, rules: [{name: r, expr: 'params.a > 1'}]}]\nclusters: []\nartifacts: []\n"))
	f.Add([]byte(`{"version": 1, "recipes": [], "clusters": [{"name": "a"}], "artifacts": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cat, err := DecodeCatalog("fuzz.yaml", data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || len(de.Problems) == 0 {
				t.Fatalf("error is not a located *DecodeError: %v", err)
			}
			return
		}
		// Whatever a catalog holds (schemas, rules, ranges), checking the
		// example job against it must not panic.
		job, err := DecodeJob("job.yaml", fuzzJob)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(context.Background(), job, cat, Options{SkipSource: true, BaseDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
	})
}

var fuzzJob = []byte(minimalJob)

func FuzzDecodeReport(f *testing.F) {
	f.Add([]byte(`{"format":"tpctl-preflight/1","fingerprint":{"rules":"x","sha256":"` + strings.Repeat("a", 64) + `","inputs":{}}}`))
	f.Add([]byte(`{"format":"tpctl-preflight/1"} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeReport("fuzz.json", data)
		if err != nil {
			return
		}
		job, err := DecodeJob("job.yaml", fuzzJob)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(r, job); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzVersionInRange(f *testing.F) {
	f.Add("1.4.0", ">=1.2, <2")
	f.Add("1", "!=1.0.0,=1")
	f.Add("1.2.3", "")
	f.Fuzz(func(t *testing.T, v, rng string) {
		ok, err := versionInRange(v, rng)
		if err != nil && ok {
			t.Fatal("in range and an error")
		}
	})
}

func BenchmarkDecodeJob(b *testing.B) {
	data := readExample(b, "job.yaml")
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeJob("job.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
