package harbor

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func decodeFile(t testing.TB, path string) (*TrialResult, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return DecodeTrialResult(f)
}

func sp(s string) *string { return &s }

// resultFiles lists every Harbor-format trial result file in testdata.
func resultFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, g := range []string{"testdata/cases/*.json", "testdata/synthetic/*/*.json"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d result files found", len(files))
	}
	return files
}

func TestDecodeSynthetic(t *testing.T) {
	type summary struct {
		Task, Trial, Checksum, TaskName string
		Source, Mode                    *string
		HasMode, MultiStep              bool
		Steps                           []string
		Exception                       string
		Provider                        *string
		Rewards                         []Reward
	}
	tests := []struct {
		file string
		want summary
	}{
		{"5f5618b8/hello-world__wfQvhMr", summary{
			Task: "harbor/hello-world", Trial: "hello-world__wfQvhMr", Checksum: "afa27b44d43b02a9fea41d13cedc2e4016cfcf87c5dbf990e593669aa8ce286d",
			TaskName: "hello-world", Source: sp("tasks"), Exception: "AgentTimeoutError", Provider: sp("openai"),
			Rewards: []Reward{{"reward", Value{KindNumber, "0.0"}}},
		}},
		{"5f5618b8/hello-world__ivaTpL8", summary{
			Task: "harbor/hello-world", Trial: "hello-world__ivaTpL8", Checksum: "afa27b44d43b02a9fea41d13cedc2e4016cfcf87c5dbf990e593669aa8ce286d",
			TaskName: "hello-world", Rewards: []Reward{{"reward", Value{KindNumber, "1.0"}}},
		}},
		{"v0.22.0/separate-verifier-environment__Xy7kLm2", summary{
			Task: "harbor/separate-verifier-environment", Trial: "separate-verifier-environment__Xy7kLm2",
			Checksum: "b81f04d9c2e6a7538f1d0c4b9e2a6f7d3c5e8b1a0f2d4c6e8a9b1d3f5c7e9a0b", TaskName: "separate-verifier-environment",
			Source: sp("tasks"), Mode: sp("separate"), HasMode: true, Rewards: []Reward{{"reward", Value{KindNumber, "1.0"}}},
		}},
		{"v0.22.0/multistep-top-separate-mixed__R4tYu9c", summary{
			Task: "harbor/verifier-mode-multistep-top-separate-mixed", Trial: "multistep-top-separate-mixed__R4tYu9c",
			Checksum: "9a1c3e5f7b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d0f1a", TaskName: "multistep-top-separate-mixed",
			HasMode: true, MultiStep: true, Steps: []string{"separate-inherited", "shared-override"},
			Rewards: []Reward{{"reward", Value{KindNumber, "1.0"}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := decodeFile(t, filepath.Join("testdata/synthetic", tt.file+".json"))
			if err != nil {
				t.Fatal(err)
			}
			got := summary{Task: r.TaskName, Trial: r.TrialName, Checksum: r.TaskChecksum, TaskName: r.TaskID.DisplayName(),
				Source: r.Source, Mode: r.VerifierEnvironmentMode, HasMode: r.HasVerifierEnvironmentMode, MultiStep: r.MultiStep}
			for _, s := range r.Steps {
				got.Steps = append(got.Steps, s.Name)
			}
			if r.Exception != nil {
				got.Exception = r.Exception.Type
			}
			if r.Agent != nil {
				got.Provider = r.Agent.ModelProvider
			}
			if r.Verifier != nil {
				got.Rewards = r.Verifier.Rewards
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decode mismatch (-want +got):\n%s", diff)
			}
			if r.UnknownFields != 0 {
				t.Errorf("UnknownFields = %d (%v), want 0 for a validated revision", r.UnknownFields, r.UnknownFieldPointers)
			}
		})
	}
}

// TestDecodeGolden pins the full decoded form of every result file.
func TestDecodeGolden(t *testing.T) {
	got := map[string]any{}
	for _, f := range resultFiles(t) {
		r, err := decodeFile(t, f)
		name := filepath.ToSlash(strings.TrimPrefix(f, "testdata/"))
		if err != nil {
			got[name] = map[string]string{"error": err.Error()}
			continue
		}
		got[name] = r
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	const golden = "testdata/decode.golden.json"
	if *update {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./harbor -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(b)); diff != "" {
		t.Errorf("%s mismatch (-want +got; run with -update if intended):\n%s", golden, diff)
	}
}

func TestUnknownFieldsCounted(t *testing.T) {
	r, err := decodeFile(t, "testdata/cases/unknown-fields.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/verifier_result/attestation", "/future_top_level"}
	if diff := cmp.Diff(want, r.UnknownFieldPointers); diff != "" || r.UnknownFields != 2 {
		t.Errorf("unknown fields = %d, mismatch (-want +got):\n%s", r.UnknownFields, diff)
	}
}

func TestNaNTokens(t *testing.T) {
	r, err := decodeFile(t, "testdata/cases/nan-outside-reward.json")
	if err != nil {
		t.Fatal(err)
	}
	// The same text inside a string is left alone.
	if r.Agent == nil || r.Agent.Version != "NaN Infinity -Infinity" {
		t.Errorf("agent version = %+v, want the string untouched", r.Agent)
	}
	for _, tt := range []struct {
		file string
		raw  string
		inf  int // 0 NaN, ±1 Inf
	}{{"reward-nan", "NaN", 0}, {"reward-infinity", "Infinity", 1}, {"reward-neg-infinity", "-Infinity", -1}, {"reward-1e400", "1e400", 1}} {
		r, err := decodeFile(t, "testdata/cases/"+tt.file+".json")
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		v := r.Verifier.Rewards[0].Value
		f, ok := v.Float()
		if v.Raw != tt.raw || !ok || (tt.inf == 0 && !math.IsNaN(f)) || (tt.inf != 0 && !math.IsInf(f, tt.inf)) {
			t.Errorf("%s: value %+v float %v %v", tt.file, v, f, ok)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	valid, err := os.ReadFile("testdata/cases/success-float.json")
	if err != nil {
		t.Fatal(err)
	}
	minimal := `{"task_name":"t","trial_name":"t__1","task_checksum":"c"`
	tests := []struct {
		name    string
		in      string
		pointer string
		reason  string
	}{
		{"empty", "", "", "empty input"},
		{"whitespace", " \n\t ", "", "empty input"},
		{"not an object: array", "[]", "", "expected a JSON object"},
		{"not an object: string", `"result"`, "", "expected a JSON object"},
		{"not an object: null", "null", "", "expected a JSON object"},
		{"not an object: number", "1", "", "expected a JSON object"},
		{"not JSON", "hello", "", "expected a JSON value"},
		{"byte order mark", "\uFEFF{}", "", "byte order mark"},
		{"truncated", string(valid[:len(valid)/2]), "/config", "truncated"},
		{"trailing data", minimal + `} {}`, "", `unexpected "{" after the top-level object`},
		{"invalid utf-8", minimal + `,"source":"caf` + "\xe9" + `"}`, "", "invalid UTF-8"},
		{"control char in string", minimal + ",\"source\":\"a\x01b\"}", "/source", "control character"},
		{"bad escape", minimal + `,"source":"a\qb"}`, "/source", "invalid escape"},
		{"bad unicode escape", minimal + `,"source":"\u12G4"}`, "/source", `invalid \u escape`},
		{"missing task_name", `{"trial_name":"t__1","task_checksum":"c"}`, "", `missing required field "task_name"`},
		{"missing task_checksum", `{"task_name":"t","trial_name":"t__1"}`, "", `missing required field "task_checksum"`},
		{"job result.json", `{"id":"x","started_at":null,"n_total_trials":1,"stats":{}}`, "", `missing required field "task_name"`},
		{"duplicate key", minimal + `,"task_name":"u"}`, "", `duplicate key "task_name"`},
		{"duplicate reward key", minimal + `,"verifier_result":{"rewards":{"reward":1,"reward":0}}}`, "/verifier_result/rewards", `duplicate key "reward"`},
		// Past 16 keys the duplicate check moves from a slice to a map.
		{"duplicate key among many", minimal + `,"verifier_result":{"rewards":{"k00":0,"k01":1,"k02":2,"k03":3,"k04":4,"k05":5,"k06":6,"k07":7,"k08":8,"k09":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k03":0}}}`, "/verifier_result/rewards", `duplicate key "k03"`},
		{"duplicate key after the 16th", minimal + `,"verifier_result":{"rewards":{"k00":0,"k01":1,"k02":2,"k03":3,"k04":4,"k05":5,"k06":6,"k07":7,"k08":8,"k09":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k19":0}}}`, "/verifier_result/rewards", `duplicate key "k19"`},
		{"exception without type", minimal + `,"exception_info":{"exception_message":"x"}}`, "/exception_info", "no exception_type"},
		{"step without name", minimal + `,"step_results":[{"verifier_result":null}]}`, "/step_results/0", "no step_name"},
		{"step not an object", minimal + `,"step_results":[1]}`, "/step_results/0", "expected a step result object, found a number"},
		{"deep nesting", minimal + `,"config":` + strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1) + "}", "/config", "nesting deeper"},
		{"deep arrays in unknown", minimal + `,"x":` + strings.Repeat("[", 100000) + "}", "/x", "nesting deeper"},
		{"leading zero", minimal + `,"verifier_result":{"rewards":{"reward":01}}}`, "/verifier_result/rewards/reward", "invalid literal"},
		{"bare minus", minimal + `,"verifier_result":{"rewards":{"reward":-}}}`, "/verifier_result/rewards/reward", "invalid number"},
		{"dot without digits", minimal + `,"verifier_result":{"rewards":{"reward":1.}}}`, "/verifier_result/rewards/reward", "after '.'"},
		{"NaN glued", minimal + `,"verifier_result":{"rewards":{"reward":NaNa}}}`, "/verifier_result/rewards/reward", "invalid literal"},
		{"lowercase nan", minimal + `,"verifier_result":{"rewards":{"reward":nan}}}`, "/verifier_result/rewards/reward", `expected "null"`},
		{"trailing comma", minimal + `,}`, "", "expected a quoted object key"},
		{"too many top-level keys", minimal + manyKeys(maxMembers) + "}", "", "more than 4096 keys"},
		{"too many reward keys", minimal + `,"verifier_result":{"rewards":{` + manyKeys(maxMembers + 1)[1:] + "}}}", "/verifier_result/rewards", "more than 4096 keys"},
		{"too many steps", minimal + `,"step_results":[` + strings.Repeat(`{"step_name":"s"},`, maxMembers) + `{"step_name":"s"}]}`, "/step_results/4096", "more than 4096 step results"},
		{"unquoted key", `{task_name:"t"}`, "", "expected a quoted object key"},
		{"missing colon", `{"task_name" "t"}`, "", "expected ':'"},
		{"truncated literal", minimal + `,"source":nul`, "/source", "truncated"},
		{"truncated in key", `{"task_na`, "", "truncated"},
		{"key with slash in pointer", minimal + `,"verifier_result":{"rewards":{"a/b~c":1,"a/b~c":2}}}`, "/verifier_result/rewards", `duplicate key "a/b~c"`},
		{"wrong type under escaped key", minimal + `,"step_results":[{"step_name":"s","verifier_result":{"rewards":[]}}]}`, "/step_results/0/verifier_result/rewards", "expected an object of reward values or null, found an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeTrialResult(strings.NewReader(tt.in))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got result %+v, error %v; want a *DecodeError", r, err)
			}
			if de.Pointer != tt.pointer || !strings.Contains(de.Reason, tt.reason) {
				t.Errorf("got pointer %q reason %q; want pointer %q reason containing %q", de.Pointer, de.Reason, tt.pointer, tt.reason)
			}
			if de.Offset < 0 || de.Offset > int64(len(tt.in)) {
				t.Errorf("offset %d outside the input", de.Offset)
			}
		})
	}
}

// manyKeys renders n distinct members, each with a leading comma.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`,"k`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`":0`)
	}
	return b.String()
}

// TestEveryPrefix cuts a real result at every byte: each prefix must be
// refused with a DecodeError, never a panic or a silent partial result.
func TestEveryPrefix(t *testing.T) {
	data, err := os.ReadFile("testdata/synthetic/v0.22.0/hello-multi-step-advanced__Ab3dE5f.json")
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(data, '}')
	for i := 0; i <= end; i++ {
		_, err := DecodeTrialResult(bytes.NewReader(data[:i]))
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("prefix of %d bytes: got %v, want a *DecodeError", i, err)
		}
	}
	if _, err := DecodeTrialResult(bytes.NewReader(data[:end+1])); err != nil {
		t.Fatalf("whole file: %v", err)
	}
}

// TestWrongTypes puts a value of the wrong JSON type into every field the
// decoder reads and expects a DecodeError naming that field.
func TestWrongTypes(t *testing.T) {
	data, err := os.ReadFile("testdata/synthetic/v0.22.0/hello-multi-step-advanced__Ab3dE5f.json")
	if err != nil {
		t.Fatal(err)
	}
	fields := []struct {
		path  []string
		wrong any
	}{
		{[]string{"id"}, 1},
		{[]string{"task_name"}, nil},
		{[]string{"trial_name"}, []any{}},
		{[]string{"trial_uri"}, false},
		{[]string{"task_checksum"}, 3.5},
		{[]string{"task_id"}, "examples/tasks/x"},
		{[]string{"task_id", "path"}, 1},
		{[]string{"source"}, 1},
		{[]string{"config"}, nil},
		{[]string{"agent_info"}, "terminus-2"},
		{[]string{"agent_info", "name"}, nil},
		{[]string{"agent_info", "version"}, 2},
		{[]string{"agent_info", "model_info"}, "gpt"},
		{[]string{"agent_info", "model_info", "name"}, nil},
		{[]string{"agent_info", "model_info", "provider"}, 1},
		{[]string{"agent_result"}, "x"},
		{[]string{"verifier_result"}, 1.0},
		{[]string{"verifier_result", "rewards"}, []any{1.0}},
		{[]string{"verifier_environment_mode"}, true},
		{[]string{"exception_info"}, "AgentTimeoutError"},
		{[]string{"started_at"}, 1},
		{[]string{"finished_at"}, map[string]any{}},
		{[]string{"environment_setup"}, []any{}},
		{[]string{"agent_setup"}, 1},
		{[]string{"agent_execution"}, "x"},
		{[]string{"verifier"}, true},
		{[]string{"step_results"}, map[string]any{}},
		{[]string{"step_results", "0"}, "scaffold"},
		{[]string{"step_results", "0", "step_name"}, nil},
		{[]string{"step_results", "0", "verifier_result"}, 1},
		{[]string{"step_results", "0", "verifier_result", "rewards"}, "1"},
		{[]string{"step_results", "0", "exception_info"}, []any{}},
		{[]string{"step_results", "1", "exception_info", "exception_type"}, nil},
		{[]string{"step_results", "1", "exception_info", "exception_message"}, 1},
		{[]string{"step_results", "1", "exception_info", "exception_traceback"}, 1},
		{[]string{"step_results", "1", "exception_info", "occurred_at"}, 1},
		{[]string{"step_results", "0", "agent_result"}, 1},
		{[]string{"step_results", "0", "agent_execution"}, "x"},
		{[]string{"step_results", "0", "verifier"}, false},
	}
	for _, f := range fields {
		ptr := "/" + strings.Join(f.path, "/")
		t.Run(ptr, func(t *testing.T) {
			var doc any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			setPath(t, doc, f.path, f.wrong)
			b, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeTrialResult(bytes.NewReader(b))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want a *DecodeError", err)
			}
			if de.Pointer != ptr || !strings.HasPrefix(de.Reason, "expected ") {
				t.Errorf("got %q at %q, want an 'expected …' error at %q", de.Reason, de.Pointer, ptr)
			}
		})
	}
	// exception_info on the trial level too (the fixture has it null).
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["exception_info"] = map[string]any{"exception_type": 7}
	b, _ := json.Marshal(doc)
	var de *DecodeError
	if _, err := DecodeTrialResult(bytes.NewReader(b)); !errors.As(err, &de) || de.Pointer != "/exception_info/exception_type" {
		t.Errorf("wrong exception_type type: got %v", err)
	}
}

func setPath(t *testing.T, doc any, path []string, v any) {
	t.Helper()
	for i, p := range path {
		last := i == len(path)-1
		switch n := doc.(type) {
		case map[string]any:
			if _, ok := n[p]; !ok {
				t.Fatalf("fixture has no %v", path[:i+1])
			}
			if last {
				n[p] = v
				return
			}
			doc = n[p]
		case []any:
			idx := int(p[0] - '0')
			if last {
				n[idx] = v
				return
			}
			doc = n[idx]
		default:
			t.Fatalf("cannot descend into %v at %v", doc, path[:i+1])
		}
	}
}

// TestValueFloat pins the double each number literal reads as, the way
// Python's float() reads it: the outcome rules judge that double.
func TestValueFloat(t *testing.T) {
	tests := []struct {
		raw  string
		kind Kind
		want float64
		ok   bool
	}{
		{"1", KindNumber, 1, true}, {"1.0", KindNumber, 1, true}, {"10e-1", KindNumber, 1, true},
		{"1.0000000000000001", KindNumber, 1, true}, {"0.9999999999999999", KindNumber, 0.9999999999999999, true},
		{"-0.0", KindNumber, math.Copysign(0, -1), true}, {"1e-400", KindNumber, 0, true},
		{"1e400", KindNumber, math.Inf(1), true}, {"1e99999999999999999999", KindNumber, math.Inf(1), true},
		{"Infinity", KindNumber, math.Inf(1), true}, {"-Infinity", KindNumber, math.Inf(-1), true},
		{"true", KindBool, 0, false}, {`"1"`, KindString, 0, false},
	}
	for _, tt := range tests {
		got, ok := Value{Kind: tt.kind, Raw: tt.raw}.Float()
		if got != tt.want || ok != tt.ok || math.Signbit(got) != math.Signbit(tt.want) {
			t.Errorf("Float(%s) = %v, %v; want %v, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
	if f, ok := (Value{Kind: KindNumber, Raw: "NaN"}).Float(); !ok || !math.IsNaN(f) {
		t.Errorf("Float(NaN) = %v, %v", f, ok)
	}
}

func TestTaskIDDisplayName(t *testing.T) {
	cases := map[string]TaskID{
		"hello-world": {Kind: "local", Path: "examples/tasks/hello-world/"},
		"x":           {Kind: "git", GitURL: "https://example.com/r.git", Path: "tasks/x"},
		"acme/solver": {Kind: "package", Org: "acme", Name: "solver", Ref: "sha256:00"},
		"":            {},
	}
	for want, id := range cases {
		if got := id.DisplayName(); got != want {
			t.Errorf("DisplayName(%+v) = %q, want %q", id, got, want)
		}
	}
	var v struct{ TaskID TaskID }
	r, err := DecodeTrialResult(strings.NewReader(`{"task_name":"a","trial_name":"b","task_checksum":"c","task_id":{"org":"acme","name":"solver","ref":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	v.TaskID = r.TaskID
	if diff := cmp.Diff(TaskID{Kind: "package", Org: "acme", Name: "solver"}, v.TaskID); diff != "" {
		t.Errorf("package task id mismatch (-want +got):\n%s", diff)
	}
}

// bigReader yields a JSON-looking stream of n bytes without storing it.
type bigReader struct{ n, off int64 }

func (b *bigReader) Read(p []byte) (int, error) {
	if b.off >= b.n {
		return 0, io.EOF
	}
	k := int64(len(p))
	if k > b.n-b.off {
		k = b.n - b.off
	}
	for i := range p[:k] {
		p[i] = 'a'
	}
	if b.off == 0 && k > 0 {
		p[0] = '{'
	}
	b.off += k
	return int(k), nil
}

// TestTooLarge decodes a 200 MB result.json from disk and from a stream and
// checks that memory stays bounded by the cap, not by the input.
func TestTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MB file")
	}
	const size = 200 << 20
	path := filepath.Join(t.TempDir(), "result.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, &bigReader{n: size}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	check := func(name string, r io.Reader) {
		t.Helper()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := DecodeTrialResult(r)
		runtime.ReadMemStats(&after)
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.Limit != MaxResultSize {
			t.Fatalf("%s: got %v, want *TooLargeError", name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*MaxResultSize {
			t.Errorf("%s: allocated %d MiB reading a 200 MB input; want ≤ %d MiB", name, alloc>>20, 3*MaxResultSize>>20)
		}
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	check("file", fh)
	// A reader without Stat (pipe, network) is cut at the cap while reading.
	fh2, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh2.Close()
	check("stream", struct{ io.Reader }{fh2})
	// Exactly at the cap is still read (and then refused as bad JSON).
	_, err = DecodeTrialResult(&bigReader{n: MaxResultSize})
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Errorf("input of exactly MaxResultSize: got %v, want a *DecodeError", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadError(t *testing.T) {
	_, err := DecodeTrialResult(failingReader{})
	if err == nil || !strings.Contains(err.Error(), "failed to read result: disk on fire") {
		t.Errorf("got %v", err)
	}
}

func BenchmarkDecodeTrialResult(b *testing.B) {
	data, err := os.ReadFile("testdata/synthetic/v0.22.0/hello-world__Hk8mNw3.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTrialResult(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMemoryBoundedByCap decodes hostile inputs just under the cap and
// checks the decoder allocates at most a small multiple of the cap.
func TestMemoryBoundedByCap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 15 MiB inputs")
	}
	minimal := `{"task_name":"t","trial_name":"t__1","task_checksum":"c"`
	n := (MaxResultSize - 1<<20) / 2
	inputs := map[string]string{
		"huge reward value":  minimal + `,"verifier_result":{"rewards":{"reward":[` + strings.Repeat("0,", n/2) + "0]}}}",
		"huge unknown field": minimal + `,"x":[` + strings.Repeat("0,", n) + "0]}",
		"huge string":        minimal + `,"source":"` + strings.Repeat("a", 2*n) + `"}`,
		"many unknown keys":  `{"task_name":"t","trial_name":"t__1","task_checksum":"c","x":{` + manyKeys(n / 8)[1:] + "}}",
		"deep but allowed":   minimal + `,"x":` + strings.Repeat("[", maxDepth-2) + strings.Repeat("]", maxDepth-2) + "}",
	}
	for name, in := range inputs {
		if len(in) > MaxResultSize {
			t.Fatalf("%s: input of %d bytes is over the cap", name, len(in))
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := DecodeTrialResult(strings.NewReader(in))
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*MaxResultSize {
			t.Errorf("%s: allocated %d MiB for a %d MiB input", name, alloc>>20, len(in)>>20)
		}
	}
}

// BenchmarkDecodeBytes decodes from memory, as the importer does (Full:
// DecodeTrialResultBytes, Import: DecodeTrialResultForImport).
func BenchmarkDecodeBytes(b *testing.B) {
	data, err := os.ReadFile("testdata/synthetic/v0.22.0/hello-world__Hk8mNw3.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		decode func([]byte) (*TrialResult, error)
	}{{"Full", DecodeTrialResultBytes}, {"Import", DecodeTrialResultForImport}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestKnownKeyIndex checks the switch of knownKeyIndex against
// knownKeyNames: every name at its own index, distinct, within the bits
// of members.known, and any other key (a case or a byte off) -1.
func TestKnownKeyIndex(t *testing.T) {
	if len(knownKeyNames) > 64 {
		t.Fatalf("%d known keys do not fit members.known's 64 bits", len(knownKeyNames))
	}
	seen := map[string]bool{}
	for i, name := range knownKeyNames {
		if seen[name] {
			t.Errorf("%q is listed twice", name)
		}
		seen[name] = true
		if got := knownKeyIndex([]byte(name)); got != i {
			t.Errorf("knownKeyIndex(%q) = %d, want %d", name, got, i)
		}
		for _, other := range []string{strings.ToUpper(name), name + "_", name[1:], name[:len(name)-1], ""} {
			if got, want := knownKeyIndex([]byte(other)), slices.Index(knownKeyNames[:], other); got != want {
				t.Errorf("knownKeyIndex(%q) = %d, want %d", other, got, want)
			}
		}
	}
}
