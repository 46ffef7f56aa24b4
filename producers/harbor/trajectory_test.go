package harbor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/tuneplane/tpctl/internal/fixtures"
	"github.com/tuneplane/tpctl/producers/harbor/atif"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/transcript"
)

// structure is what the fixture table pins for third-party files: counts,
// not text, so no third-party content is copied into the repository.
type structure struct {
	System, User, Assistant, Tool int
	ToolCalls                     int // assistant messages with a call_id
	PairedResults                 int // tool messages whose call_id matches a call
	UnpairedResults               int // tool messages without a call_id
	Total                         int
	WithTokens                    int
	Truncated                     bool
}

func summarize(t *transcript.Trajectory) structure {
	var s structure
	calls := map[string]bool{}
	for _, m := range t.Messages {
		switch m.Role {
		case "system":
			s.System++
		case "user":
			s.User++
		case "assistant":
			s.Assistant++
			if m.CallID != nil {
				s.ToolCalls++
				calls[*m.CallID] = true
			}
		case "tool":
			s.Tool++
			if m.CallID == nil {
				s.UnpairedResults++
			} else if calls[*m.CallID] {
				s.PairedResults++
			}
		}
		if m.PromptTokens != nil || m.CompletionTokens != nil {
			s.WithTokens++
		}
	}
	s.Total = t.TotalMessages
	s.Truncated = t.Truncated
	return s
}

func summaryLit(s structure) string { return fmt.Sprintf("%#v", s) }

// checkInvariants holds for every built trajectory.
func checkInvariants(t *testing.T, tr *transcript.Trajectory, lim transcript.Limits) {
	t.Helper()
	if tr.Scope != transcript.Scope || tr.CapturePolicy != transcript.CapturePolicy || tr.Complete {
		t.Errorf("labels: scope %q capture %q complete %t", tr.Scope, tr.CapturePolicy, tr.Complete)
	}
	if len(tr.Messages) > tr.TotalMessages || (len(tr.Messages) < tr.TotalMessages) != tr.Truncated && !tr.Truncated {
		t.Errorf("kept %d of %d, truncated %t", len(tr.Messages), tr.TotalMessages, tr.Truncated)
	}
	if len(tr.Messages) > lim.MaxMessages {
		t.Errorf("kept %d messages, limit %d", len(tr.Messages), lim.MaxMessages)
	}
	// Every tool result that names a call answers a call made before it.
	calls := map[string]bool{}
	for i, m := range tr.Messages {
		if !utf8.ValidString(m.Content) {
			t.Errorf("message %d content is not valid UTF-8", i)
		}
		switch m.Role {
		case "system", "user":
		case "assistant":
			if m.CallID != nil {
				calls[*m.CallID] = true
				if m.ToolName == nil {
					t.Errorf("message %d: tool call %q without tool_name", i, *m.CallID)
				}
			}
		case "tool":
			if m.CallID != nil && !calls[*m.CallID] {
				t.Errorf("message %d: result for call %q that was never made", i, *m.CallID)
			}
		default:
			t.Errorf("message %d: role %q", i, m.Role)
		}
	}
	full := *tr
	full.RoundID = "native:" + strings.Repeat("f", 64)
	full.TrialID = strings.Repeat("t", 200)
	full.TrialAttempt = 99
	b, err := transcript.Encode(&full)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > lim.MaxBytes-transcript.Headroom+71+200+2 {
		t.Errorf("encoded %d bytes with IDs, over the %d limit", len(b), lim.MaxBytes)
	}
}

func build(t *testing.T, path string, r redact.Redactor, lim transcript.Limits) (*transcript.Trajectory, error) {
	t.Helper()
	return buildATIF(context.Background(), path, r, redact.NewScanner(nil), lim)
}

// TestGolden converts tpctl's own ATIF test files and compares the encoded
// bytes with testdata/trajectory (go test -update rewrites them).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("atif/testdata/valid/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no input files: %v", err)
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			tr, err := build(t, p, redact.Secrets(), transcript.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, tr, transcript.DefaultLimits)
			tr.RoundID, tr.TrialID, tr.TrialAttempt = "native:golden", "demo__trial", 1
			got, err := transcript.Encode(tr)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata/trajectory", strings.TrimSuffix(filepath.Base(p), ".json")+".trajectory.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./transcript -update)", err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("golden mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestFixtureStructure(t *testing.T) {
	root := fixtures.Harbor(t)
	want := map[string]structure{}
	for _, row := range fixtureTable {
		want[row.path] = row.s
	}
	seen := 0
	for _, dir := range []string{"atif", "v0.22.0/atif"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, de os.DirEntry, err error) error {
			if err != nil || de.IsDir() || strings.Contains(p, "section-VII") {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			t.Run(rel, func(t *testing.T) {
				tr, err := build(t, p, redact.Secrets(), transcript.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				checkInvariants(t, tr, transcript.DefaultLimits)
				w, ok := want[rel]
				if !ok {
					t.Fatalf("no expectation for %s; add %s", rel, summaryLit(summarize(tr)))
				}
				seen++
				if d := cmp.Diff(w, summarize(tr)); d != "" {
					t.Errorf("structure mismatch (-want +got):\n%s", d)
				}
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen != len(want) {
		t.Errorf("checked %d fixtures, table has %d", seen, len(want))
	}
}

var fixtureTable = []struct {
	path string
	s    structure
}{
	{"atif/golden/openhands/hello-world.trajectory.json", structure{System: 3, User: 1, Assistant: 4, Tool: 1, ToolCalls: 2, PairedResults: 1, UnpairedResults: 0, Total: 9, WithTokens: 2, Truncated: false}},
	{"atif/golden/openhands/hello-world.trajectory.no_function_calling.json", structure{System: 1, User: 1, Assistant: 2, Tool: 1, ToolCalls: 0, PairedResults: 0, UnpairedResults: 1, Total: 5, WithTokens: 2, Truncated: false}},
	{"atif/golden/terminus_2/hello-world-context-summarization-linear-history.trajectory.cont-1.json", structure{System: 0, User: 3, Assistant: 5, Tool: 4, ToolCalls: 0, PairedResults: 0, UnpairedResults: 4, Total: 12, WithTokens: 4, Truncated: false}},
	{"atif/golden/terminus_2/hello-world-context-summarization-linear-history.trajectory.json", structure{System: 1, User: 1, Assistant: 3, Tool: 4, ToolCalls: 0, PairedResults: 0, UnpairedResults: 4, Total: 9, WithTokens: 3, Truncated: false}},
	{"atif/golden/terminus_2/hello-world-context-summarization.trajectory.json", structure{System: 1, User: 2, Assistant: 14, Tool: 8, ToolCalls: 7, PairedResults: 0, UnpairedResults: 8, Total: 25, WithTokens: 7, Truncated: false}},
	{"atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-answers.json", structure{System: 0, User: 3, Assistant: 6, Tool: 2, ToolCalls: 2, PairedResults: 0, UnpairedResults: 2, Total: 11, WithTokens: 1, Truncated: false}},
	{"atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-questions.json", structure{System: 0, User: 1, Assistant: 1, Tool: 0, ToolCalls: 0, PairedResults: 0, UnpairedResults: 0, Total: 2, WithTokens: 1, Truncated: false}},
	{"atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-summary.json", structure{System: 0, User: 2, Assistant: 5, Tool: 2, ToolCalls: 2, PairedResults: 0, UnpairedResults: 2, Total: 9, WithTokens: 1, Truncated: false}},
	{"atif/golden/terminus_2/hello-world-invalid-json.trajectory.json", structure{System: 0, User: 1, Assistant: 7, Tool: 4, ToolCalls: 3, PairedResults: 0, UnpairedResults: 4, Total: 12, WithTokens: 4, Truncated: false}},
	{"atif/golden/terminus_2/hello-world-timeout.trajectory.json", structure{System: 0, User: 1, Assistant: 6, Tool: 3, ToolCalls: 3, PairedResults: 0, UnpairedResults: 3, Total: 10, WithTokens: 3, Truncated: false}},
	{"atif/rfc-0001/rfc-section-IV-example.json", structure{System: 0, User: 1, Assistant: 4, Tool: 2, ToolCalls: 2, PairedResults: 2, UnpairedResults: 0, Total: 7, WithTokens: 2, Truncated: false}},
	{"v0.22.0/atif/atif2otel/trajectory_fail.json", structure{System: 0, User: 1, Assistant: 65, Tool: 46, ToolCalls: 46, PairedResults: 46, UnpairedResults: 0, Total: 112, WithTokens: 39, Truncated: false}},
	{"v0.22.0/atif/atif2otel/trajectory_pass.json", structure{System: 0, User: 1, Assistant: 17, Tool: 12, ToolCalls: 12, PairedResults: 12, UnpairedResults: 0, Total: 30, WithTokens: 11, Truncated: false}},
	{"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization-linear-history.trajectory.cont-1.json", structure{System: 0, User: 3, Assistant: 5, Tool: 4, ToolCalls: 0, PairedResults: 0, UnpairedResults: 4, Total: 12, WithTokens: 4, Truncated: false}},
	{"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization-linear-history.trajectory.json", structure{System: 1, User: 1, Assistant: 3, Tool: 4, ToolCalls: 0, PairedResults: 0, UnpairedResults: 4, Total: 9, WithTokens: 3, Truncated: false}},
	{"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization.trajectory.json", structure{System: 1, User: 2, Assistant: 14, Tool: 8, ToolCalls: 7, PairedResults: 5, UnpairedResults: 3, Total: 25, WithTokens: 7, Truncated: false}},
	{"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-answers.json", structure{System: 0, User: 3, Assistant: 6, Tool: 2, ToolCalls: 2, PairedResults: 2, UnpairedResults: 0, Total: 11, WithTokens: 1, Truncated: false}},
	{"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-questions.json", structure{System: 0, User: 1, Assistant: 1, Tool: 0, ToolCalls: 0, PairedResults: 0, UnpairedResults: 0, Total: 2, WithTokens: 1, Truncated: false}},
	{"v0.22.0/atif/golden/terminus_2/hello-world-context-summarization.trajectory.summarization-1-summary.json", structure{System: 0, User: 2, Assistant: 5, Tool: 2, ToolCalls: 2, PairedResults: 2, UnpairedResults: 0, Total: 9, WithTokens: 1, Truncated: false}},
	{"v0.22.0/atif/golden/terminus_2/hello-world-invalid-json.trajectory.json", structure{System: 0, User: 1, Assistant: 7, Tool: 4, ToolCalls: 3, PairedResults: 1, UnpairedResults: 3, Total: 12, WithTokens: 4, Truncated: false}},
	{"v0.22.0/atif/golden/terminus_2/hello-world-timeout.trajectory.json", structure{System: 0, User: 1, Assistant: 6, Tool: 3, ToolCalls: 3, PairedResults: 0, UnpairedResults: 3, Total: 10, WithTokens: 3, Truncated: false}},
	{"v0.22.0/atif/task-level/hello-load-atif-trajectory-task-level/trajectory.json", structure{System: 0, User: 1, Assistant: 2, Tool: 1, ToolCalls: 1, PairedResults: 1, UnpairedResults: 0, Total: 4, WithTokens: 2, Truncated: false}},
}

// noop is a redactor that changes nothing: it stands for a user's redactor
// that misses a secret.
func noop(t *testing.T) redact.Redactor {
	t.Helper()
	p := filepath.Join(t.TempDir(), "noop.yaml")
	if err := os.WriteFile(p, []byte("rules:\n  - pattern: 'no such text ever'\n    replacement: ''\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := redact.Open(context.Background(), "rules:"+p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeATIF(t *testing.T, steps ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "trajectory.json")
	doc := `{"schema_version":"ATIF-v1.6","agent":{"name":"a","version":"1"},"steps":[` + strings.Join(steps, ",") + `]}`
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Fake credentials are assembled at run time (no secret-looking literals).
var (
	fakeGitHub = "gh" + "p_" + strings.Repeat("a1B2", 9)
	fakeJob    = "tpjob-" + strings.Repeat("7Kq", 6)
)

func toolStep(args string) string {
	return `{"step_id":1,"source":"agent","message":"running","tool_calls":[{"tool_call_id":"c1","function_name":"bash","arguments":` + args + `}],` +
		`"observation":{"results":[{"source_call_id":"c1","content":"ok"}]}}`
}

// TestRedactionApplied fails if redaction were switched off: the key would
// reach the output (or the scan would abort the build).
func TestRedactionApplied(t *testing.T) {
	p := writeATIF(t, toolStep(`{"cmd":"git clone https://x:`+fakeGitHub+`@github.com/o/r"}`),
		`{"step_id":2,"source":"user","message":`+jsonStr("token "+fakeGitHub)+`}`)
	tr, err := build(t, p, redact.Secrets(), transcript.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := transcript.Encode(tr)
	if bytes.Contains(b, []byte(fakeGitHub)) {
		t.Fatalf("key survived redaction:\n%s", b)
	}
	if n := bytes.Count(b, []byte("[REDACTED:github_token]")); n != 2 {
		t.Errorf("%d redaction markers, want 2 (tool arguments and message):\n%s", n, b)
	}
}

// TestScanCatchesWhatRedactorMissed fails if the scan were switched off.
func TestScanCatchesWhatRedactorMissed(t *testing.T) {
	tests := []struct {
		name, args, detector string
		environ              []string
	}{
		{"job token in tool argument", `{"cmd":"curl -H 'Authorization: ` + fakeJob + `' x"}`, "env:TUNEPLANE_JOB_TOKEN", []string{"TUNEPLANE_JOB_TOKEN=" + fakeJob}},
		{"provider key in tool argument", `{"cmd":"export GH=` + fakeGitHub + `"}`, "pattern:github_token", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeATIF(t, toolStep(tt.args))
			_, err := buildATIF(context.Background(), p, noop(t), redact.NewScanner(tt.environ), transcript.Limits{})
			var sf *redact.SecretFoundError
			if !errors.As(err, &sf) {
				t.Fatalf("err = %v, want *redact.SecretFoundError", err)
			}
			var skip *transcript.SkipError
			if errors.As(err, &skip) {
				t.Error("a secret must abort, not skip")
			}
			if sf.Detector != tt.detector || sf.Count != 1 || !strings.Contains(sf.Where, "message 1 content") {
				t.Errorf("got %+v", sf)
			}
			if strings.Contains(err.Error(), fakeJob) || strings.Contains(err.Error(), fakeGitHub) {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

// failing is a redactor that fails after n calls.
type failing struct{ n int }

func (f *failing) Name() string { return "failing" }
func (f *failing) Close() error { return nil }
func (f *failing) Redact(_ context.Context, s string) (string, error) {
	if f.n--; f.n < 0 {
		return "", &redact.Error{Redactor: "exec:scrub", Err: errors.New("closed its output")}
	}
	return s, nil
}

func TestRedactorFailureAborts(t *testing.T) {
	p := writeATIF(t, toolStep(`{"a":1}`))
	_, err := build(t, p, &failing{n: 1}, transcript.Limits{})
	var re *redact.Error
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want the redactor's error", err)
	}
	var skip *transcript.SkipError
	if errors.As(err, &skip) {
		t.Error("a redactor failure must abort, not skip")
	}
	if _, err := buildATIF(context.Background(), p, nil, nil, transcript.Limits{}); err == nil {
		t.Error("Build without a redactor succeeded")
	}
}

func TestSkips(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := write("huge/trajectory.json", `{"schema_version":"ATIF-v1.6","steps":[`)
	if err := os.Truncate(huge, 2<<30); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link/trajectory.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(write("real.json", "{}"), link); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, reason string }{
		{"2 GB sparse file", huge, "over a limit: file is 2147483648 bytes, over the 67108864-byte limit"},
		{"invalid JSON", write("bad/trajectory.json", `{"schema_version":"ATIF-v1.6","steps":[{]}`), "malformed: /steps/0 (near byte"},
		{"wrong schema_version", write("v2/trajectory.json", `{"schema_version":"ATIF-v2.0","steps":[{"source":"user","message":""}]}`), `unsupported trajectory format "ATIF-v2.0": unknown schema_version; tpctl reads ATIF-v1.0`},
		{"deep arguments", write("deep/trajectory.json", `{"schema_version":"ATIF-v1.6","steps":[{"source":"agent","message":"","tool_calls":[{"tool_call_id":"c","function_name":"f","arguments":`+strings.Repeat(`[`, 50_000)+`]}]}]}`), "over a limit: /steps/0/tool_calls/0/arguments: more than 128 nesting levels"},
		{"litellm", write("agent/litellm-trajectory.jsonl", `{"request_body":{},"response_body":{}}`), "unsupported trajectory format litellm-trajectory.jsonl: the legacy per-LLM-call log"},
		{"symlink", link, "goes through a symlink"},
		{"missing", filepath.Join(dir, "nope/trajectory.json"), "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := build(t, tt.path, redact.Secrets(), transcript.Limits{})
			var skip *transcript.SkipError
			if !errors.As(err, &skip) {
				t.Fatalf("err = %v, want *transcript.SkipError", err)
			}
			if skip.Path != tt.path || !strings.Contains(skip.Reason, tt.reason) {
				t.Errorf("skip %q: %q\nwant reason containing %q", skip.Path, skip.Reason, tt.reason)
			}
		})
	}
}

func TestManySteps(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"schema_version":"ATIF-v1.6","agent":{"name":"a","version":"1"},"steps":[`)
	for i := 0; i < 100_000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"step_id":%d,"source":"agent","message":"step %d"}`, i+1, i+1)
	}
	b.WriteString("]}")
	p := filepath.Join(t.TempDir(), "trajectory.json")
	os.WriteFile(p, []byte(b.String()), 0o644)
	tr, err := build(t, p, redact.Secrets(), transcript.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr, transcript.DefaultLimits)
	if len(tr.Messages) != 1024 || tr.TotalMessages != 100_000 || !tr.Truncated || tr.Messages[1023].Content != "step 1024" {
		t.Errorf("kept %d of %d, truncated %t", len(tr.Messages), tr.TotalMessages, tr.Truncated)
	}
}

// TestCountPastCap: steps past the message cap are skimmed, not decoded,
// yet counted exactly as FromStep would have made them, and still checked:
// a malformed step after the cap skips the file as before.
func TestCountPastCap(t *testing.T) {
	steps := []string{
		`{"step_id":1,"source":"user","message":"kept"}`,
		`{"step_id":2,"source":"agent","message":""}`,
		`{"step_id":3,"source":"agent","message":"","tool_calls":[{"tool_call_id":"a","function_name":"f","arguments":{"x":[1,{"y":"z"}]}},{"tool_call_id":"b","function_name":"g","arguments":"{}"}]}`,
		`{"step_id":4,"source":"agent","message":"m","observation":{"results":[{"source_call_id":"a","content":"out"},{"content":[{"type":"text","text":""}],"subagent_trajectory_ref":[{"session_id":"s"}]}]}}`,
		`{"step_id":5,"source":"user","message":[]}`,
		`{"step_id":6,"source":"user","message":[{"type":"text","text":""}],"observation":{"results":[]}}`,
		`{"step_id":7,"source":"user","message":[{"type":"text","text":""},{"type":"text","text":""}],"observation":{"results":[{"content":null}]}}`,
		`{"step_id":8,"source":"system","message":[{"type":"image","source":{"media_type":"image/png"}}],"tool_calls":[{"tool_call_id":"c","function_name":"h","arguments":null}]}`,
		`{"step_id":9,"source":"agent","message":"\u00e9","observation":null,"tool_calls":null}`,
	}
	p := writeATIF(t, steps...)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := 0
	if _, err := atif.Decode(f, atif.Options{}, func(s *atif.Step) error {
		want += len(FromStep(s))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tr, err := build(t, p, redact.Secrets(), transcript.Limits{MaxMessages: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Messages) != 1 || tr.TotalMessages != want || tr.Source.SubagentRefs != 1 {
		t.Errorf("kept %d of %d (want %d), %d subagent refs", len(tr.Messages), tr.TotalMessages, want, tr.Source.SubagentRefs)
	}
	for _, bad := range []struct{ step, reason string }{
		{`{"step_id":2,"source":"robot","message":"x"}`, `/steps/1/source (near byte 150): must be "system", "user" or "agent", got "robot"`},
		{`{"step_id":2,"source":"user","message":[{"type":"video","text":"x"}]}`, `content part type must be "text" or "image", got "video"`},
		{`{"step_id":2,"source":"user","message":"a\x"}`, `invalid JSON: invalid character 'x' in string escape code`},
		{`{"step_id":2,"message":"x"}`, `step has no source`},
		{`{"step_id":2.5,"source":"user"}`, `must be an integer, got 2.5`},
	} {
		p := writeATIF(t, steps[0], bad.step)
		_, err := build(t, p, redact.Secrets(), transcript.Limits{MaxMessages: 1})
		var skip *transcript.SkipError
		if !errors.As(err, &skip) || !strings.Contains(skip.Reason, bad.reason) {
			t.Errorf("%s: got %v, want a skip containing %q", bad.step, err, bad.reason)
		}
	}
}

// TestHugeMessageCut: one 5 MB message of multi-byte characters is cut to
// fit 1 MiB, on a character boundary.
func TestHugeMessageCut(t *testing.T) {
	big := strings.Repeat("héllo wörld ✓ 𝄞 \"q\"\n", 220_000) // ~5 MB, 1-4 byte characters and escapes
	p := writeATIF(t, `{"step_id":1,"source":"user","message":"first"}`,
		`{"step_id":2,"source":"agent","message":`+jsonStr(big)+`}`,
		`{"step_id":3,"source":"agent","message":"never kept"}`)
	tr, err := build(t, p, redact.Secrets(), transcript.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr, transcript.DefaultLimits)
	if len(tr.Messages) != 2 || tr.TotalMessages != 3 || !tr.Truncated {
		t.Fatalf("kept %d of %d, truncated %t", len(tr.Messages), tr.TotalMessages, tr.Truncated)
	}
	cut := tr.Messages[1].Content
	if !strings.HasPrefix(big, cut) || !utf8.ValidString(cut) || len(cut) < 900_000 {
		t.Errorf("cut message: %d bytes, valid %t", len(cut), utf8.ValidString(cut))
	}
	tr.RoundID, tr.TrialID = "native:"+strings.Repeat("a", 64), "hello-world__AbCdEf1"
	b, _ := transcript.Encode(tr)
	if len(b) > transcript.DefaultLimits.MaxBytes || len(b) < transcript.DefaultLimits.MaxBytes-transcript.Headroom-64 {
		t.Errorf("encoded %d bytes; want just under %d", len(b), transcript.DefaultLimits.MaxBytes)
	}
}

// TestBuildParts: several files make one body in the given order, each
// after its marker; markers are redacted and counted; the byte limit
// applies to the whole; a part that must be skipped skips the body.
func TestBuildParts(t *testing.T) {
	user := func(id int, msg string) string {
		return fmt.Sprintf(`{"step_id":%d,"source":"user","message":%s}`, id, jsonStr(msg))
	}
	a := writeATIF(t, user(1, "first"), user(2, "second"))
	b := writeATIF(t, user(1, "third "+strings.Repeat("x", 3000)))
	parts := []transcript.Part{ATIFPart("step 1 "+fakeGitHub, a), ATIFPart("step 2", b)}

	tr, err := transcript.BuildParts(context.Background(), parts, redact.Secrets(), redact.NewScanner(nil), transcript.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range tr.Messages {
		got = append(got, m.Role+":"+m.Content[:min(len(m.Content), 12)])
	}
	want := []string{"system:step 1 [REDA", "user:first", "user:second", "system:step 2", "user:third xxxxxx"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if tr.TotalMessages != 5 || tr.Truncated || tr.Source.Steps != 3 {
		t.Errorf("total %d truncated %v steps %d", tr.TotalMessages, tr.Truncated, tr.Source.Steps)
	}

	// 2,500 bytes for the whole body: the third message is cut, declared.
	tr, err = transcript.BuildParts(context.Background(), parts, redact.Secrets(), redact.NewScanner(nil), transcript.Limits{MaxBytes: 2500 + transcript.Headroom})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := transcript.Encode(tr)
	if !tr.Truncated || tr.TotalMessages != 5 || len(body) > 2500 {
		t.Errorf("truncated %v total %d size %d; want a declared cut under 2500 bytes", tr.Truncated, tr.TotalMessages, len(body))
	}

	bad := filepath.Join(t.TempDir(), "trajectory.json")
	if err := os.WriteFile(bad, []byte(`{"schema_version":"ATIF-v9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = transcript.BuildParts(context.Background(), []transcript.Part{ATIFPart("", a), ATIFPart("step 2", bad)}, redact.Secrets(), redact.NewScanner(nil), transcript.Limits{})
	var skip *transcript.SkipError
	if !errors.As(err, &skip) || skip.Path != bad {
		t.Errorf("err = %v, want a *transcript.SkipError for %s", err, bad)
	}
}

// buildATIF is the body of one ATIF file, as the importer builds a
// single-step attempt's.
func buildATIF(ctx context.Context, path string, r redact.Redactor, sc *redact.Scanner, lim transcript.Limits) (*transcript.Trajectory, error) {
	return transcript.BuildParts(ctx, []transcript.Part{ATIFPart("", path)}, r, sc, lim)
}
