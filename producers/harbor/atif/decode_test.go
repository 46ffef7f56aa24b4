package atif

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tuneplane/tpctl/internal/fixtures"
)

func ptr[T any](v T) *T { return &v }

func TestDecodeOwnFiles(t *testing.T) {
	got, err := DecodeFile("testdata/valid/v1.2-tools.json", Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &Trajectory{
		SchemaVersion: "ATIF-v1.2",
		SessionID:     "sess-tools-0001",
		Agent:         Agent{Name: "demo-agent", Version: "0.1.0", ModelName: "demo-model"},
		StepCount:     4,
		Steps: []*Step{
			{StepID: 1, Timestamp: "2026-01-02T03:04:05Z", Source: "system", Message: "You are a careful shell assistant."},
			{StepID: 2, Source: "user", Message: `Create hello.txt containing "Hello" & check it.`},
			{
				StepID: 3, Source: "agent", ModelName: "demo-model",
				Message:          "I will write the file, then read it back.",
				ReasoningContent: "Two calls are needed.",
				ToolCalls: []ToolCall{
					{ID: "call_1", FunctionName: "bash", Arguments: `{"command":"printf 'Hello' > hello.txt","timeout":10}`},
					{ID: "call_2", FunctionName: "bash", Arguments: `{"command":"cat hello.txt"}`},
				},
				Observation: []ObservationResult{
					{SourceCallID: ptr("call_1"), Content: ""},
					{SourceCallID: ptr("call_2"), Content: "Hello"},
				},
				Metrics: &Metrics{PromptTokens: ptr[int64](120), CompletionTokens: ptr[int64](31), CachedTokens: ptr[int64](20), DurationMS: ptr[int64](850)},
			},
			{StepID: 4, Source: "agent", Message: "Done: hello.txt holds Hello. ✓",
				Metrics: &Metrics{PromptTokens: ptr[int64](160), CompletionTokens: ptr[int64](9)}},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("v1.2-tools mismatch (-want +got):\n%s", d)
	}
}

func TestDecodeMultimodalAndRefs(t *testing.T) {
	got, err := DecodeFile("testdata/valid/v1.6-multimodal.json", Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("What is in this picture?\n[image: image/png]", got.Steps[0].Message); d != "" {
		t.Errorf("multimodal message (-want +got):\n%s", d)
	}
	// The machine path of the image must not survive: only the media type.
	obs := got.Steps[1].Observation
	if d := cmp.Diff([]ObservationResult{
		{SourceCallID: ptr("tc-9"), Content: "A red square.\n[image: image/jpeg]"},
		{Content: "terminal idle"},
	}, obs); d != "" {
		t.Errorf("observation (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]SubagentRef{{SessionID: "sub-1", TrajectoryPath: "trajectory.summarization-1-summary.json"}},
		got.Steps[2].Observation[0].SubagentRefs); d != "" {
		t.Errorf("subagent refs (-want +got):\n%s", d)
	}
	if got.UnknownFields != 0 {
		t.Errorf("UnknownFields = %d, want 0 (%v)", got.UnknownFields, got.UnknownFieldPaths)
	}
}

func TestDecodeUnknownFieldsCounted(t *testing.T) {
	got, err := DecodeFile("testdata/valid/v1.7-unknown-fields.json", Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantPaths := []string{"/agent/shiny_new_field", "/future_root_field", "/steps/*/mood",
		"/steps/*/tool_calls/*/priority", "/steps/*/observation/results/*/latency", "/steps/*/metrics/new_metric"}
	if d := cmp.Diff(wantPaths, got.UnknownFieldPaths); d != "" {
		t.Errorf("unknown field paths (-want +got):\n%s", d)
	}
	if got.UnknownFields != 6 {
		t.Errorf("UnknownFields = %d, want 6", got.UnknownFields)
	}
	if got.EmbeddedSubagents != 1 || got.StepCount != 2 || got.ContinuedTrajectoryRef != "trajectory.cont-1.json" {
		t.Errorf("embedded=%d steps=%d cont=%q", got.EmbeddedSubagents, got.StepCount, got.ContinuedTrajectoryRef)
	}
	if d := cmp.Diff(`{"deep":{"er":[{"est":null}]},"flag":false}`, got.Steps[1].ToolCalls[0].Arguments); d != "" {
		t.Errorf("arguments (-want +got):\n%s", d)
	}
}

// TestDecodeHarborFixtures decodes every real ATIF file Harbor ships in its
// tests. They are valid under Harbor's own validator, so none may have an
// unknown field: a count above zero means tpctl's schema knowledge is stale.
func TestDecodeHarborFixtures(t *testing.T) {
	root := fixtures.Harbor(t)
	want := map[string]struct {
		version string
		steps   int
	}{
		"atif/golden/openhands/hello-world.trajectory.json":                                                          {"ATIF-v1.5", 6},
		"atif/golden/openhands/hello-world.trajectory.no_function_calling.json":                                      {"ATIF-v1.5", 4},
		"atif/golden/terminus_2/hello-world-context-summarization-linear-history.trajectory.cont-1.json":             {"ATIF-v1.6", 8},
		"atif/golden/terminus_2/hello-world-context-summarization-linear-history.trajectory.json":                    {"ATIF-v1.6", 5},
		"atif/golden/terminus_2/hello-world-context-summarization.trajectory.json":                                   {"ATIF-v1.6", 10},
		"atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-answers.json":           {"ATIF-v1.6", 7},
		"atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-questions.json":         {"ATIF-v1.6", 2},
		"atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-summary.json":           {"ATIF-v1.6", 5},
		"atif/golden/terminus_2/hello-world-invalid-json.trajectory.json":                                            {"ATIF-v1.6", 5},
		"atif/golden/terminus_2/hello-world-timeout.trajectory.json":                                                 {"ATIF-v1.6", 4},
		"atif/rfc-0001/rfc-section-IV-example.json":                                                                  {"ATIF-v1.5", 3},
		"v0.22.0/atif/atif2otel/trajectory_fail.json":                                                                {"ATIF-v1.7", 40},
		"v0.22.0/atif/atif2otel/trajectory_pass.json":                                                                {"ATIF-v1.7", 12},
		"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization-linear-history.trajectory.cont-1.json":     {"ATIF-v1.7", 8},
		"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization-linear-history.trajectory.json":            {"ATIF-v1.7", 5},
		"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization.trajectory.json":                           {"ATIF-v1.7", 10},
		"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-answers.json":   {"ATIF-v1.7", 7},
		"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-questions.json": {"ATIF-v1.7", 2},
		"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-summary.json":   {"ATIF-v1.7", 5},
		"v0.22.0/atif/golden/terminus_2/hello-world-invalid-json.trajectory.json":                                    {"ATIF-v1.7", 5},
		"v0.22.0/atif/golden/terminus_2/hello-world-timeout.trajectory.json":                                         {"ATIF-v1.6", 4},
		"v0.22.0/atif/task-level/hello-load-atif-trajectory-task-level/trajectory.json":                              {"ATIF-v1.7", 3},
	}
	seen := 0
	for _, dir := range []string{"atif", "v0.22.0/atif"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, de os.DirEntry, err error) error {
			if err != nil || de.IsDir() || !strings.HasSuffix(p, ".json") {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			t.Run(rel, func(t *testing.T) {
				got, err := DecodeFile(p, Options{}, nil)
				if rel == "v0.22.0/atif/rfc-0001/rfc-section-VII-context-management-step.json" {
					// A lone step from the RFC, not a trajectory.
					var u *UnsupportedFormatError
					if !errors.As(err, &u) {
						t.Fatalf("lone step: err = %v, want *UnsupportedFormatError", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				w, ok := want[rel]
				if !ok {
					t.Fatalf("fixture %s has no expectation in this table; add one", rel)
				}
				seen++
				if got.SchemaVersion != w.version || got.StepCount != w.steps || len(got.Steps) != w.steps {
					t.Errorf("version %s steps %d/%d, want %s %d", got.SchemaVersion, got.StepCount, len(got.Steps), w.version, w.steps)
				}
				if got.UnknownFields != 0 {
					t.Errorf("UnknownFields = %d %v, want 0", got.UnknownFields, got.UnknownFieldPaths)
				}
				for i, s := range got.Steps {
					if s.StepID != int64(i+1) {
						t.Errorf("step %d has step_id %d", i, s.StepID)
					}
				}
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen != len(want) {
		t.Errorf("decoded %d fixture trajectories, want %d", seen, len(want))
	}
}

func TestUnsupportedFormats(t *testing.T) {
	tests := []struct {
		name, path, format string
	}{
		{"litellm by name", "testdata/unsupported/litellm-lines.jsonl", "JSON Lines"},
		{"litellm content under an ATIF name", "testdata/unsupported/trajectory-litellm-content.json", "litellm-trajectory.jsonl"},
		{"claude-code content under an ATIF name", "testdata/unsupported/trajectory-claude-content.json", "claude-code session JSONL"},
	}
	root, ok := fixtures.HarborDir()
	if ok {
		n := filepath.Join(root, "native-trajectories/rfc-0001")
		tests = append(tests,
			struct{ name, path, format string }{"gemini-cli native", filepath.Join(n, "gemini-cli-trajectory.json"), "Gemini CLI native session"},
			struct{ name, path, format string }{"mini-swe-agent native", filepath.Join(n, "mini-swe-agent-trajectory.json"), "mini-swe-agent native trajectory"},
			struct{ name, path, format string }{"openhands native", filepath.Join(n, "openhands_trajectory.json"), "JSON array (an agent's native event list, e.g. OpenHands)"},
		)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeFile(tt.path, Options{}, nil)
			var u *UnsupportedFormatError
			if !errors.As(err, &u) {
				t.Fatalf("err = %v, want *UnsupportedFormatError", err)
			}
			if u.Format != tt.format {
				t.Errorf("Format = %q, want %q", u.Format, tt.format)
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), "ATIF") {
				t.Errorf("message should name the file and ATIF: %v", err)
			}
		})
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		path   string
		format string // "" means accepted
	}{
		{"job/trial/agent/trajectory.json", ""},
		{"job/trial/agent/trajectory.cont-1.json", ""},
		{"job/trial/agent/litellm-trajectory.jsonl", "litellm-trajectory.jsonl"},
		{"job/trial/agent/hermes-session.jsonl", "Hermes native session JSONL"},
		{"job/trial/agent/sessions/abc/x.jsonl", "claude-code session JSONL"},
		{"job/trial/agent/codex.jsonl", "JSON Lines"},
		{"job/trial/agent/mini-swe-agent.trajectory.json", "mini-swe-agent native trajectory"},
		{"job/trial/agent/openhands.trajectory.json", "OpenHands native event list"},
		{"job/trial/agent/swe-agent.trajectory.json", "SWE-agent native trajectory"},
		{"job/trial/agent/gemini-cli.trajectory.json", "Gemini CLI native session"},
	}
	for _, tt := range tests {
		err := CheckName(tt.path)
		got := ""
		var u *UnsupportedFormatError
		if errors.As(err, &u) {
			got = u.Format
		} else if err != nil {
			t.Errorf("%s: unexpected error type %T", tt.path, err)
		}
		if got != tt.format {
			t.Errorf("CheckName(%q) format = %q, want %q", tt.path, got, tt.format)
		}
	}
}

func deepArgs(depth int) string {
	return `{"schema_version":"ATIF-v1.6","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"agent","message":"","tool_calls":[{"tool_call_id":"c","function_name":"f","arguments":` +
		strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + `}]}]}`
}

func TestBadInputs(t *testing.T) {
	const ok = `{"schema_version":"ATIF-v1.6","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":"hi"}]}`
	tests := []struct {
		name    string
		in      string
		opts    Options
		errType string // "syntax", "unsupported", "limit"
		msg     string
	}{
		{"empty", "", Options{}, "syntax", "file is empty"},
		{"invalid json", `{"schema_version": "ATIF-v1.6", "steps": [}`, Options{}, "syntax", "/steps (near byte"},
		{"truncated", ok[:60], Options{}, "syntax", "unexpected end of file"},
		{"wrong schema_version", strings.Replace(ok, "ATIF-v1.6", "ATIF-v2.0", 1), Options{}, "unsupported", `"ATIF-v2.0": unknown schema_version; tpctl reads ATIF-v1.0, ATIF-v1.1`},
		{"schema_version number", strings.Replace(ok, `"ATIF-v1.6"`, `1.6`, 1), Options{}, "syntax", "/schema_version (near byte"},
		{"missing schema_version", strings.Replace(ok, `"schema_version":"ATIF-v1.6",`, ``, 1), Options{}, "syntax", "/schema_version (near byte 91): missing; tpctl reads ATIF-v1.0 … ATIF-v1.7"},
		{"no steps", `{"schema_version":"ATIF-v1.6","agent":{"name":"a","version":"1"}}`, Options{}, "syntax", "/steps (near byte"},
		{"empty steps", `{"schema_version":"ATIF-v1.6","steps":[]}`, Options{}, "syntax", "is empty"},
		{"bad source", strings.Replace(ok, `"user"`, `"robot"`, 1), Options{}, "syntax", `/steps/0/source (near byte`},
		{"step_id string", strings.Replace(ok, `"step_id":1`, `"step_id":"1"`, 1), Options{}, "syntax", "/steps/0/step_id"},
		{"step not object", `{"schema_version":"ATIF-v1.6","steps":[42]}`, Options{}, "syntax", "/steps/0 (near byte"},
		{"message number", strings.Replace(ok, `"hi"`, `7`, 1), Options{}, "syntax", "/steps/0/message"},
		{"bad part type", strings.Replace(ok, `"hi"`, `[{"type":"audio"}]`, 1), Options{}, "syntax", `content part type must be "text" or "image"`},
		{"trailing garbage", ok + " xyz", Options{}, "syntax", "unexpected data after the trajectory object"},
		{"top-level string", `"ATIF"`, Options{}, "syntax", "must be an object"},
		{"deep arguments", deepArgs(100_000), Options{}, "limit", "more than 128 nesting levels"},
		{"deep extra", `{"extra":` + strings.Repeat("[", 1_000_000), Options{}, "limit", "/extra: more than 128 nesting levels"},
		{"steps over cap", `{"schema_version":"ATIF-v1.6","steps":[` + strings.Repeat(`{"source":"user","message":""},`, 10) + `{"source":"user","message":""}]}`, Options{MaxSteps: 10}, "limit", "/steps: more than 10 steps"},
		{"bytes over cap", ok, Options{MaxSize: 50}, "limit", "over the 50-byte limit"},
		{"lone step", `{"step_id":1,"source":"user","message":"x"}`, Options{}, "unsupported", "no schema_version and no steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tt.in), tt.opts, nil)
			if err == nil {
				t.Fatal("Decode succeeded, want an error")
			}
			var (
				se *SyntaxError
				ue *UnsupportedFormatError
				le *LimitError
			)
			switch tt.errType {
			case "syntax":
				if !errors.As(err, &se) {
					t.Errorf("err %T %v, want *SyntaxError", err, err)
				}
			case "unsupported":
				if !errors.As(err, &ue) {
					t.Errorf("err %T %v, want *UnsupportedFormatError", err, err)
				}
			case "limit":
				if !errors.As(err, &le) {
					t.Errorf("err %T %v, want *LimitError", err, err)
				}
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
}

// TestHugeFileRefusedByStat makes a sparse 2 GB trajectory: OpenFile must
// refuse it from the stat size alone, before reading anything.
func TestHugeFileRefusedByStat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trajectory.json")
	if err := os.WriteFile(p, []byte(`{"schema_version":"ATIF-v1.6","steps":[`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 2<<30); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	_, err := DecodeFile(p, Options{}, func(*Step) error {
		t.Fatal("a step was decoded from a file over the cap")
		return nil
	})
	var le *LimitError
	if !errors.As(err, &le) || le.Size != 2<<30 || le.Limit != MaxTrajectorySize {
		t.Fatalf("err = %v, want LimitError{Size: 2 GiB, Limit: %d}", err, MaxTrajectorySize)
	}
	if !strings.Contains(err.Error(), p) {
		t.Errorf("error should name the file: %v", err)
	}
}

// endless yields the same bytes forever, like a pipe or a growing file.
type endless struct {
	b   []byte
	off int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.b[e.off:])
		n += c
		e.off = (e.off + c) % len(e.b)
	}
	return n, nil
}

func TestReaderCapped(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"schema_version":"ATIF-v1.6","steps":[`),
		&endless{b: []byte(`{"source":"user","message":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},`)})
	_, err := Decode(r, Options{MaxSize: 1 << 20}, func(*Step) error { return nil })
	var le *LimitError
	if !errors.As(err, &le) || le.What != "bytes" {
		t.Fatalf("err = %v, want a byte LimitError", err)
	}
}

func manySteps(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema_version":"ATIF-v1.6","agent":{"name":"a","version":"1"},"steps":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"step_id":%d,"source":"agent","message":"step %d"}`, i+1, i+1)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func TestManyStepsStreamed(t *testing.T) {
	in := manySteps(100_000)
	n := 0
	got, err := Decode(bytes.NewReader(in), Options{}, func(s *Step) error {
		n++
		if s.StepID != int64(n) {
			return fmt.Errorf("step %d out of order", s.StepID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 100_000 || got.StepCount != 100_000 || len(got.Steps) != 0 {
		t.Errorf("callback saw %d, StepCount %d, retained %d", n, got.StepCount, len(got.Steps))
	}
	stop := errors.New("stop")
	if _, err := Decode(bytes.NewReader(in), Options{}, func(*Step) error { return stop }); err != stop {
		t.Errorf("a callback error must come back as is, got %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, glob := range []string{"testdata/valid/*.json", "testdata/unsupported/*"} {
		files, _ := filepath.Glob(glob)
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(deepArgs(200)))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"schema_version":"ATIF-v1.6","steps":[{"source":"user","message":[{"type":"image","source":{"media_type":"image/png"}}]}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		opts := Options{MaxSize: 1 << 20, MaxSteps: 1000}
		got, err := Decode(bytes.NewReader(in), opts, nil)
		if err != nil {
			var (
				se *SyntaxError
				ue *UnsupportedFormatError
				le *LimitError
			)
			if !errors.As(err, &se) && !errors.As(err, &ue) && !errors.As(err, &le) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if got.StepCount != len(got.Steps) || got.StepCount == 0 || !versionSupported(got.SchemaVersion) {
			t.Fatalf("inconsistent result: %d steps, %d kept, version %q", got.StepCount, len(got.Steps), got.SchemaVersion)
		}
		for _, s := range got.Steps {
			if s.Source != "system" && s.Source != "user" && s.Source != "agent" {
				t.Fatalf("bad source %q accepted", s.Source)
			}
		}
		// Decoding is deterministic.
		again, err := Decode(bytes.NewReader(in), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(got, again); d != "" {
			t.Fatalf("second decode differs:\n%s", d)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	in := manySteps(20_000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(in), Options{}, func(*Step) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
