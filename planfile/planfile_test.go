package planfile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const (
	hexA = "536c585d2e7701ff4cc2fa40ddc31e37081261383180d6eba179f2138c2ca4cb"
	rev1 = "5f5618b8f5419dde63f2df6d86706782e597e8a3"
)

// basePlan is a small valid plan; cases mutate a fresh copy.
func basePlan() map[string]any {
	return map[string]any{
		"version": 1,
		"source":  map[string]any{"format": "harbor", "revision": rev1},
		"name":    "t",
		"split":   "heldout",
		"checkpoint": map[string]any{
			"ref": "hf://acme/coder-7b@3f0c9d2e5b7a41c8e6f2d9b0a1c3e5f7a9b1d3e5", "served_as": "x/y",
		},
		"protocol": map[string]any{
			"dataset_digest": hexA, "verifier_digest": hexA, "environment_digest": hexA, "harness_digest": hexA,
		},
		"settings": map[string]any{"temperature": 0, "context_window": 8192, "repeats": 2, "max_turns": 5, "network": "none"},
		"trials": []any{
			map[string]any{"task": "a", "repeat": 0, "attempts": []any{
				map[string]any{"retry": 0, "dir": "j/a0"},
				map[string]any{"retry": 1, "dir": "j/a0r1"},
			}},
			map[string]any{"task": "a", "repeat": 1, "attempts": []any{}},
		},
	}
}

func trial(p map[string]any, i int) map[string]any { return p["trials"].([]any)[i].(map[string]any) }
func attempt(p map[string]any, i, j int) map[string]any {
	return trial(p, i)["attempts"].([]any)[j].(map[string]any)
}

// brief is the part of a finding the rule tables compare.
type brief struct{ Severity, Code, Pointer string }

func briefs(fs []Finding) []brief {
	out := []brief{}
	for _, f := range fs {
		out = append(out, brief{f.Severity, f.Code, f.Pointer})
	}
	return out
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBasePlanValid(t *testing.T) {
	p, fs := Parse(mustJSON(t, basePlan()), "plan.json", Options{})
	if len(fs) != 0 {
		t.Fatalf("base plan has findings: %+v", fs)
	}
	if got := p.Trials[0].ID(); got != "a#0" {
		t.Errorf("ID() = %q, want a#0", got)
	}
}

// TestRules has one case per semantic rule; each fails if its check is
// removed.
func TestRules(t *testing.T) {
	E, W := SeverityError, SeverityWarning
	tests := []struct {
		name   string
		mutate func(p map[string]any)
		opts   Options
		want   []brief
	}{
		{"digest placeholder", func(p map[string]any) {
			p["protocol"].(map[string]any)["dataset_digest"] = "REPLACE_DATASET_MANIFEST_SHA256"
		}, Options{}, []brief{{E, CodeDigestPlaceholder, "/protocol/dataset_digest"}}},
		{"digest uppercase", func(p map[string]any) {
			p["protocol"].(map[string]any)["verifier_digest"] = strings.ToUpper(hexA)
		}, Options{}, []brief{{E, CodeDigestFormat, "/protocol/verifier_digest"}}},
		{"digest short", func(p map[string]any) {
			p["protocol"].(map[string]any)["environment_digest"] = "abc123"
		}, Options{}, []brief{{E, CodeDigestFormat, "/protocol/environment_digest"}}},
		{"digest prefixed", func(p map[string]any) {
			p["protocol"].(map[string]any)["harness_digest"] = "sha256:" + hexA
		}, Options{}, []brief{{E, CodeDigestFormat, "/protocol/harness_digest"}}},
		{"digest empty", func(p map[string]any) {
			p["protocol"].(map[string]any)["harness_digest"] = ""
		}, Options{}, []brief{{E, CodeDigestFormat, "/protocol/harness_digest"}}},
		{"digest wrong type", func(p map[string]any) {
			p["protocol"].(map[string]any)["harness_digest"] = 7
		}, Options{}, []brief{{E, CodeSchema, "/protocol/harness_digest"}}},
		{"checkpoint @main", func(p map[string]any) {
			p["checkpoint"].(map[string]any)["ref"] = "hf://acme/coder-7b@main"
		}, Options{}, []brief{{E, CodeCheckpointUnpinned, "/checkpoint/ref"}}},
		{"checkpoint no pin", func(p map[string]any) {
			p["checkpoint"].(map[string]any)["ref"] = "hf://acme/coder-7b"
		}, Options{}, []brief{{E, CodeCheckpointUnpinned, "/checkpoint/ref"}}},
		{"checkpoint short sha256 pin", func(p map[string]any) {
			p["checkpoint"].(map[string]any)["ref"] = "oci://r/m@sha256:abc"
		}, Options{}, []brief{{E, CodeCheckpointUnpinned, "/checkpoint/ref"}}},
		{"checkpoint sha256 pin ok", func(p map[string]any) {
			p["checkpoint"].(map[string]any)["ref"] = "oci://r/m@sha256:" + hexA
		}, Options{}, []brief{}},
		{"checkpoint ref missing", func(p map[string]any) {
			delete(p["checkpoint"].(map[string]any), "ref")
		}, Options{}, []brief{{E, CodeCheckpointUnpinned, "/checkpoint/ref"}}},
		{"checkpoint missing", func(p map[string]any) {
			delete(p, "checkpoint")
		}, Options{}, []brief{{E, CodeCheckpointUnpinned, "/checkpoint"}}},
		{"revision unknown", func(p map[string]any) {
			p["source"].(map[string]any)["revision"] = "ea644fec" + strings.Repeat("0", 32)
		}, Options{}, []brief{{E, CodeRevisionUnverified, "/source/revision"}}},
		{"revision unknown allowed", func(p map[string]any) {
			p["source"].(map[string]any)["revision"] = "ea644fec" + strings.Repeat("0", 32)
		}, Options{AllowUnverifiedFormat: true}, []brief{{W, CodeRevisionUnverified, "/source/revision"}}},
		{"revision unknown allowed strict", func(p map[string]any) {
			p["source"].(map[string]any)["revision"] = "ea644fec" + strings.Repeat("0", 32)
		}, Options{AllowUnverifiedFormat: true, Strict: true}, []brief{{E, CodeRevisionUnverified, "/source/revision"}}},
		{"duplicate trial", func(p map[string]any) {
			trial(p, 1)["repeat"] = 0
		}, Options{}, []brief{{E, CodeDuplicateTrial, "/trials/1"}}},
		{"duplicate retry", func(p map[string]any) {
			attempt(p, 0, 1)["retry"] = 0
		}, Options{}, []brief{{E, CodeDuplicateRetry, "/trials/0/attempts/1/retry"}}},
		{"duplicate dir", func(p map[string]any) {
			attempt(p, 0, 1)["dir"] = "j/a0"
		}, Options{}, []brief{{E, CodeDuplicateDir, "/trials/0/attempts/1/dir"}}},
		{"duplicate dir after cleaning", func(p map[string]any) {
			attempt(p, 0, 1)["dir"] = "j//a0"
		}, Options{}, []brief{{E, CodeDuplicateDir, "/trials/0/attempts/1/dir"}, {E, CodePathUnclean, "/trials/0/attempts/1/dir"}}},
		{"duplicate dir across trials", func(p map[string]any) {
			trial(p, 1)["attempts"] = []any{map[string]any{"retry": 0, "dir": "j/a0/"}}
		}, Options{}, []brief{{E, CodeDuplicateDir, "/trials/1/attempts/0/dir"}, {E, CodePathUnclean, "/trials/1/attempts/0/dir"}}},
		{"path absolute", func(p map[string]any) {
			attempt(p, 0, 0)["dir"] = "/tmp/x"
		}, Options{}, []brief{{E, CodePathAbsolute, "/trials/0/attempts/0/dir"}}},
		{"path traversal", func(p map[string]any) {
			attempt(p, 0, 0)["dir"] = "j/../../x"
		}, Options{}, []brief{{E, CodePathTraversal, "/trials/0/attempts/0/dir"}}},
		{"path backslash", func(p map[string]any) {
			attempt(p, 0, 0)["dir"] = `j\a0`
		}, Options{}, []brief{{E, CodePathUnclean, "/trials/0/attempts/0/dir"}}},
		{"path dot segment", func(p map[string]any) {
			attempt(p, 0, 0)["dir"] = "./j/a0"
		}, Options{}, []brief{{E, CodePathUnclean, "/trials/0/attempts/0/dir"}}},
		{"path empty", func(p map[string]any) {
			attempt(p, 0, 0)["dir"] = ""
		}, Options{}, []brief{{E, CodePathUnclean, "/trials/0/attempts/0/dir"}}},
		{"negative repeat", func(p map[string]any) {
			trial(p, 1)["repeat"] = -1
		}, Options{}, []brief{{E, CodeSchema, "/trials/1/repeat"}}},
		{"negative retry", func(p map[string]any) {
			attempt(p, 0, 1)["retry"] = -1
		}, Options{}, []brief{{E, CodeSchema, "/trials/0/attempts/1/retry"}}},
		{"fractional repeat", func(p map[string]any) {
			trial(p, 1)["repeat"] = 1.5
		}, Options{}, []brief{{E, CodeSchema, "/trials/1/repeat"}}},
		{"unknown top-level field", func(p map[string]any) {
			p["trails"] = []any{}
		}, Options{}, []brief{{E, CodeUnknownField, "/trails"}}},
		{"unknown nested field", func(p map[string]any) {
			attempt(p, 0, 0)["directory"] = "x"
		}, Options{}, []brief{{E, CodeUnknownField, "/trials/0/attempts/0/directory"}}},
		{"execution refused by default", func(p map[string]any) {
			p["execution"] = map[string]any{"agent": "oracle"}
		}, Options{}, []brief{{E, CodeUnknownField, "/execution"}}},
		{"execution allowed", func(p map[string]any) {
			p["execution"] = map[string]any{"agent": "oracle"}
		}, Options{AllowExecution: true}, []brief{}},
		{"secret top level", func(p map[string]any) {
			p["api_key"] = "sk"
		}, Options{}, []brief{{E, CodeSecretField, "/api_key"}, {E, CodeUnknownField, "/api_key"}}},
		{"secret in settings", func(p map[string]any) {
			p["settings"].(map[string]any)["auth"] = map[string]any{"hfToken": "x", "Password": "y", "max_tokens": 5}
		}, Options{}, []brief{{E, CodeSecretField, "/settings/auth/Password"}, {E, CodeSecretField, "/settings/auth/hfToken"}}},
		{"secret in execution", func(p map[string]any) {
			p["execution"] = map[string]any{"env": map[string]any{"OPENAI_API_KEY": "x"}}
		}, Options{AllowExecution: true}, []brief{{E, CodeSecretField, "/execution/env/OPENAI_API_KEY"}}},
		{"settings incomplete", func(p map[string]any) {
			p["settings"] = map[string]any{"temperature": 0}
		}, Options{}, []brief{{W, CodeSettingsIncomplete, "/settings"}}},
		{"settings absent", func(p map[string]any) {
			delete(p, "settings")
		}, Options{}, []brief{{W, CodeSettingsIncomplete, ""}}},
		{"settings incomplete strict", func(p map[string]any) {
			p["settings"] = map[string]any{"generation": map[string]any{}, "context": 1, "repeats": 1, "runtime": 1}
		}, Options{Strict: true}, []brief{{E, CodeSettingsIncomplete, "/settings"}}},
		{"settings number out of range", func(p map[string]any) {
			p["settings"].(map[string]any)["seed"] = json.Number("1e999")
		}, Options{}, []brief{{E, CodeSchema, "/settings/seed"}}},
		{"missing required", func(p map[string]any) {
			delete(p, "name")
			delete(trial(p, 1), "repeat")
		}, Options{}, []brief{{E, CodeSchema, "/name"}, {E, CodeSchema, "/trials/1/repeat"}}},
		{"wrong version and format", func(p map[string]any) {
			p["version"] = 2
			p["source"].(map[string]any)["format"] = "openai-evals"
		}, Options{}, []brief{{E, CodeSchema, "/source/format"}, {E, CodeSchema, "/version"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := basePlan()
			tc.mutate(p)
			_, fs := Parse(mustJSON(t, p), "plan.json", tc.opts)
			if diff := cmp.Diff(tc.want, briefs(fs)); diff != "" {
				t.Errorf("findings mismatch (-want +got):\n%s\nall: %+v", diff, fs)
			}
			for _, f := range fs {
				if f.Line == 0 || f.Message == "" || f.Hint == "" {
					t.Errorf("finding not located or not explained: %+v", f)
				}
				if strings.HasSuffix(f.Message, ".") || f.Message[:1] != strings.ToLower(f.Message[:1]) {
					t.Errorf("message style (lowercase, no trailing period): %q", f.Message)
				}
			}
		})
	}
}

func TestSyntax(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []brief
		line, col int
		msg       string
	}{
		{"empty", "", []brief{{SeverityError, CodeJSONSyntax, ""}}, 1, 1, "plan is empty"},
		{"blank", " \n\t", []brief{{SeverityError, CodeJSONSyntax, ""}}, 1, 1, "plan is empty"},
		{"not json", "hello", []brief{{SeverityError, CodeJSONSyntax, ""}}, 1, 1, "invalid JSON"},
		{"trailing garbage", "{}\n}", []brief{{SeverityError, CodeJSONSyntax, ""}}, 2, 1, "unexpected data after"},
		{"two objects", "{} {}", []brief{{SeverityError, CodeJSONSyntax, ""}}, 1, 4, "unexpected data after"},
		{"unterminated", "{\"a\": [1, 2", []brief{{SeverityError, CodeJSONSyntax, "/a"}}, 1, 12, "unexpected end"},
		{"bad token in trials", "{\"trials\": [\n  {\"task\": tru}]}", []brief{{SeverityError, CodeJSONSyntax, "/trials/0/task"}}, 2, 15, "invalid JSON"},
		{"invalid utf-8", "{\"name\": \"a\xffb\"}", []brief{{SeverityError, CodeJSONSyntax, ""}}, 1, 12, "not valid UTF-8"},
		{"deep nesting", strings.Repeat("[", 200), []brief{{SeverityError, CodeJSONSyntax, "/0" + strings.Repeat("/0", 63)}}, 1, 65, "deeper than 64"},
		{"array", "[]", []brief{{SeverityError, CodeSchema, ""}}, 1, 1, "holds a JSON array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, fs := Parse([]byte(tc.in), "plan.json", Options{})
			if p != nil {
				t.Errorf("plan = %+v, want nil", p)
			}
			if diff := cmp.Diff(tc.want, briefs(fs)); diff != "" {
				t.Fatalf("findings mismatch (-want +got):\n%s", diff)
			}
			f := fs[0]
			if f.Line != tc.line || f.Column != tc.col || !strings.Contains(f.Message, tc.msg) {
				t.Errorf("got %d:%d %q, want %d:%d containing %q", f.Line, f.Column, f.Message, tc.line, tc.col, tc.msg)
			}
		})
	}
}

func TestDuplicateKeysLocated(t *testing.T) {
	in := "{\n \"name\": \"a\",\n \"trials\": [{\"task\": \"t\", \"repeat\": 0, \"repeat\": 1}],\n \"name\": \"b\"\n}"
	_, fs := Parse([]byte(in), "plan.json", Options{})
	type loc struct {
		Code, Pointer string
		Line, Column  int
	}
	var got []loc
	for _, f := range fs {
		if f.Code == CodeDuplicateKey {
			got = append(got, loc{f.Code, f.Pointer, f.Line, f.Column})
		}
	}
	want := []loc{{CodeDuplicateKey, "/name", 4, 2}, {CodeDuplicateKey, "/trials/0/repeat", 3, 40}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("duplicate keys mismatch (-want +got):\n%s", diff)
	}
}

func TestPositionsOfSemanticFindings(t *testing.T) {
	in := "{\"version\": 1,\n \"trials\": [\n  {\"task\": \"é\", \"repeat\": 0, \"attempts\": [{\"retry\": 0, \"dir\": \"/abs\"}]}\n ]}"
	_, fs := Parse([]byte(in), "plan.json", Options{})
	for _, f := range fs {
		if f.Code == CodePathAbsolute {
			// Column counts characters: é is one column though two bytes.
			if f.Line != 3 || f.Column != 56 {
				t.Errorf("path_absolute at %d:%d, want 3:56", f.Line, f.Column)
			}
			return
		}
	}
	t.Fatalf("no path_absolute finding in %+v", fs)
}

func TestCheckFilesystem(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"j/ok", "real/x/y", "j/file-parent"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "j/afile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Symlinks at the first, a middle and the last component.
	for link, target := range map[string]string{"top": "real", "j/mid": "../real", "j/last": "../real/x"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{"j/ok", "top/x/y", "j/mid/x/y", "j/last", "j/missing", "nope/a/b", "j/afile", "j/afile/sub", "../escape"}
	p := &Plan{}
	for i, d := range dirs {
		p.Trials = append(p.Trials, Trial{Task: "t", Repeat: i, Attempts: []Attempt{{Retry: 0, Dir: d}}})
	}
	got := briefs(Check(p, Options{Root: root}))
	E, W := SeverityError, SeverityWarning
	want := []brief{
		{E, CodeSymlink, "/trials/1/attempts/0/dir"},
		{E, CodeSymlink, "/trials/2/attempts/0/dir"},
		{E, CodeSymlink, "/trials/3/attempts/0/dir"},
		{W, CodeDirMissing, "/trials/4/attempts/0/dir"},
		{W, CodeDirMissing, "/trials/5/attempts/0/dir"},
		{E, CodeNotDir, "/trials/6/attempts/0/dir"},
		{E, CodeNotDir, "/trials/7/attempts/0/dir"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check mismatch (-want +got):\n%s", diff)
	}
	if fs := Check(p, Options{}); fs != nil {
		t.Errorf("Check without root = %+v, want nil", fs)
	}
	if got := briefs(Check(p, Options{Root: filepath.Join(root, "absent")})); !cmp.Equal(got, []brief{{E, CodeRootInvalid, ""}}) {
		t.Errorf("bad root: %+v", got)
	}
	strict := briefs(Check(p, Options{Root: root, Strict: true}))
	if strict[3].Severity != E {
		t.Errorf("strict did not promote dir_missing: %+v", strict[3])
	}
}

func TestLoadTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: past the cap in size, no disk and no read.
	if err := f.Truncate(MaxPlanSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	p, rep, err := Load(path, Options{})
	if err != nil || p != nil {
		t.Fatalf("Load = %v, %v; want a report", p, err)
	}
	if diff := cmp.Diff([]brief{{SeverityError, CodePlanTooLarge, ""}}, briefs(rep.Findings)); diff != "" || rep.Valid {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Load(filepath.Join(dir, "absent.json"), Options{}); err == nil || !strings.Contains(err.Error(), "failed to open plan") {
		t.Errorf("missing file: err = %v", err)
	}
	if _, _, err := Load(dir, Options{}); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("folder: err = %v", err)
	}
}

func TestSortFindings(t *testing.T) {
	fs := []Finding{
		{Code: "b", Pointer: "/trials/10"},
		{Code: "z", Pointer: "/trials/2/attempts/0"},
		{Code: "a", Pointer: "/trials/2"},
		{Code: "b", Pointer: "/trials/2"},
		{Code: "x", Pointer: ""},
		{Code: "c", Pointer: "/protocol"},
	}
	SortFindings(fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.Pointer+" "+f.Code)
	}
	want := []string{" x", "/protocol c", "/trials/2 a", "/trials/2 b", "/trials/2/attempts/0 z", "/trials/10 b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order mismatch (-want +got):\n%s", diff)
	}
}

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "apiKey": true, "OPENAI_API_KEY": true, "apikey": true, "token": true,
		"hf_token": true, "hfToken": true, "password": true, "db-passwd": true, "secret": true,
		"client_secret": true, "credentials": true, "aws_access_key_id": true, "private_key": true,
		"max_tokens": false, "max_new_tokens": false, "tokenizer": false, "temperature": false,
		"keyword": false, "monkey": false, "author": false, "dir": false, "task": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestAllowedFields keeps the unknown_field hints in step with the schema.
func TestAllowedFields(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "schemas", schemaFile))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"properties"`
		Defs map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	var top []string
	for k := range s.Properties {
		top = append(top, k)
	}
	sorted := cmp.Transformer("sort", func(in []string) []string {
		out := append([]string(nil), in...)
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j] < out[i] {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	})
	for kind, got := range map[string][]string{
		"plan":       top,
		"source":     keys(s.Properties["source"].Properties),
		"checkpoint": keys(s.Properties["checkpoint"].Properties),
		"protocol":   keys(s.Properties["protocol"].Properties),
		"trial":      keys(s.Defs["trial"].Properties),
		"attempt":    keys(s.Defs["attempt"].Properties),
	} {
		if diff := cmp.Diff(allowedFields[kind], got, sorted); diff != "" {
			t.Errorf("%s: allowedFields differ from the schema (-code +schema):\n%s", kind, diff)
		}
	}
	if _, err := compiledSchema(); err != nil {
		t.Errorf("embedded schema does not compile: %v", err)
	}
}

// TestBundledExample checks the repository's example: it is valid with
// --root, its digests are the SHA-256 of the protocol files the docs name,
// and each trial's task is the task_name of the result.json in its folder.
func TestBundledExample(t *testing.T) {
	root := filepath.Join("..", "testdata", "example")
	files := map[string]map[string]string{
		"import-plan.json":         {"dataset_digest": "dataset.json"},
		"import-plan-v0.22.0.json": {"dataset_digest": "dataset-v0.22.0.json"},
	}
	for plan, ds := range files {
		t.Run(plan, func(t *testing.T) {
			p, rep, err := Load(filepath.Join(root, plan), Options{Root: root, Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Valid || len(rep.Findings) != 0 {
				t.Fatalf("bundled plan not clean: %+v", rep.Findings)
			}
			sum := func(name string) string {
				b, err := os.ReadFile(filepath.Join(root, "protocol", name))
				if err != nil {
					t.Fatal(err)
				}
				h := sha256.Sum256(b)
				return hex.EncodeToString(h[:])
			}
			got := map[string]string{
				"dataset_digest": p.Protocol.DatasetDigest, "verifier_digest": p.Protocol.VerifierDigest,
				"environment_digest": p.Protocol.EnvironmentDigest, "harness_digest": p.Protocol.HarnessDigest,
			}
			want := map[string]string{
				"dataset_digest": sum(ds["dataset_digest"]), "verifier_digest": sum("verifier.json"),
				"environment_digest": sum("environment.lock"), "harness_digest": sum("harness.json"),
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("digests differ from the protocol files (-files +plan):\n%s", diff)
			}
			missing := 0
			for _, tr := range p.Trials {
				if len(tr.Attempts) == 0 {
					missing++
				}
				for _, a := range tr.Attempts {
					b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(a.Dir), "result.json"))
					if err != nil {
						t.Fatal(err)
					}
					var r struct {
						TaskName string `json:"task_name"`
					}
					if err := json.Unmarshal(b, &r); err != nil {
						t.Fatal(err)
					}
					if r.TaskName != tr.Task {
						t.Errorf("%s: task %q, but result.json says %q", a.Dir, tr.Task, r.TaskName)
					}
				}
			}
			if plan == "import-plan.json" && missing == 0 {
				t.Error("the example must plan at least one trial with no attempts")
			}
		})
	}
}

// TestNormalizedJSON pins the normalized form (golden) and checks that
// member order, spacing, trial order and attempt order do not change it.
func TestNormalizedJSON(t *testing.T) {
	p, rep, err := Load(filepath.Join("..", "testdata", "example", "import-plan.json"), Options{})
	if err != nil || !rep.Valid {
		t.Fatalf("load: %v %+v", err, rep)
	}
	got, err := p.NormalizedJSON()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "normalized.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.TrimSuffix(string(want), "\n"), string(got)); diff != "" {
		t.Errorf("normalized plan mismatch (-want +got):\n%s", diff)
	}

	// Same content, shuffled and re-spaced.
	m := basePlan()
	trials := m["trials"].([]any)
	trials[0], trials[1] = trials[1], trials[0]
	a := trial(m, 1)["attempts"].([]any)
	a[0], a[1] = a[1], a[0]
	p1, _ := Parse(mustJSON(t, basePlan()), "a", Options{})
	raw, _ := json.Marshal(m)
	p2, fs := Parse(raw, "b", Options{})
	if len(fs) != 0 {
		t.Fatalf("shuffled plan findings: %+v", fs)
	}
	n1, _ := p1.NormalizedJSON()
	n2, _ := p2.NormalizedJSON()
	if string(n1) != string(n2) {
		t.Errorf("normalized form depends on order:\n%s\n%s", n1, n2)
	}
	// Normalizing must not reorder the caller's plan (pointers refer to it).
	if p2.Trials[0].Repeat != 1 {
		t.Errorf("Normalized modified the original plan")
	}
	if !strings.Contains(string(n1), `"attempts":[]`) {
		t.Errorf("trial without attempts must normalize to []: %s", n1)
	}
}

// TestSchemaViewAgrees pins the fast path of schema validation: trials
// that are not surely valid go through the full validator, so findings
// are the same either way.
func TestSchemaViewAgrees(t *testing.T) {
	for _, trial := range []string{
		`{"task":"t","repeat":0}`,
		`{"task":"t","repeat":0,"attempts":[{"retry":0,"dir":"a"}]}`,
		`{"task":"t","repeat":1.0}`,
		`{"task":"","repeat":0}`,
		`{"task":"t","repeat":-1}`,
		`{"task":"t","repeat":1000001}`,
		`{"task":"t","repeat":0,"x":1}`,
		`{"task":"t","repeat":0,"attempts":[{"retry":0}]}`,
		`{"task":"t","repeat":0,"attempts":[{"retry":0,"dir":1}]}`,
		`{"task":"t","repeat":0,"attempts":[{"retry":0,"dir":"a","x":1}]}`,
		`{"task":"t","repeat":0,"attempts":{}}`,
		`{"repeat":0,"attempts":[]}`,
		`[]`,
	} {
		root, _, ok := decodeTree([]byte(`{"trials":[`+trial+`]}`), false)
		if !ok {
			t.Fatalf("bad test input %s", trial)
		}
		if diff := cmp.Diff(briefsOf(validateFull(root)), briefsOf(validateSchema(root))); diff != "" {
			t.Errorf("%s: fast path differs (-full +fast):\n%s", trial, diff)
		}
	}
}
