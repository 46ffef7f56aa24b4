package importer

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/internal/golden"
	"github.com/tuneplane/tpctl/snapshot"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const exampleRoot = "../testdata/example"

type judged struct {
	Status, Reason string
	Exception      string
}

func readObservations(t *testing.T, dir string) map[string]judged {
	t.Helper()
	got := map[string]judged{}
	err := snapshot.ReadObservations(dir, func(o snapshot.Observation) error {
		j := judged{Status: o.Status, Reason: o.Reason}
		if o.ExceptionType != nil {
			j.Exception = *o.ExceptionType
		}
		got[o.TrialID] = j
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func importExample(t *testing.T, plan, out string) *Result {
	t.Helper()
	res, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: filepath.Join(exampleRoot, plan), Root: exampleRoot, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestImportBundledExample pins the status of every trial of the bundled
// jobs, each traced to a row of the outcome table.
func TestImportBundledExample(t *testing.T) {
	tests := []struct {
		plan   string
		want   map[string]judged
		counts snapshot.Counts
	}{
		{
			plan: "import-plan.json",
			want: map[string]judged{
				"harbor/hello-world#0":  {"success", "reward_success", ""},
				"harbor/hello-world#1":  {"failure", "agent_timeout_scored", "AgentTimeoutError"},
				"harbor/hello-world#2":  {"success", "reward_success", ""},
				"harbor/hello-alpine#0": {"unscored", "verifier_error", "RewardFileNotFoundError"},
				"harbor/hello-alpine#1": {"success", "reward_success", ""},
				"harbor/hello-alpine#2": {"infra_error", "verifier_timeout", "VerifierTimeoutError"},
			},
			counts: snapshot.Counts{Expected: 8, Success: 3, Failure: 1, InfraError: 1, Unscored: 1, Missing: 2},
		},
		{
			plan: "import-plan-v0.22.0.json",
			want: map[string]judged{
				"harbor/hello-multi-step-full#0":         {"unscored", "reward_not_binary", "AgentTimeoutError"},
				"harbor/hello-world#0":                   {"success", "reward_success", ""},
				"harbor/separate-verifier-environment#0": {"success", "reward_success", ""},
			},
			counts: snapshot.Counts{Expected: 3, Success: 2, Unscored: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.plan, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "snap")
			res := importExample(t, tt.plan, out)
			if diff := cmp.Diff(tt.want, readObservations(t, out)); diff != "" {
				t.Errorf("observations mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.counts, res.Manifest.Counts); diff != "" {
				t.Errorf("counts mismatch (-want +got):\n%s", diff)
			}
			if rep, err := snapshot.Verify(out); err != nil || !rep.OK {
				t.Errorf("fresh import does not verify: %v %+v", err, rep)
			}
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(tt.plan, ".json"))
			for _, name := range []string{snapshot.ManifestFile, snapshot.ObservationsFile, snapshot.PlanFile} {
				compareGolden(t, filepath.Join(out, name), filepath.Join(golden, name))
			}
		})
	}
}

func compareGolden(t *testing.T, gotPath, goldenPath string) {
	t.Helper()
	got, err := os.ReadFile(gotPath)
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckFile(t, *update, got, goldenPath)
}

func TestImportDeterministic(t *testing.T) {
	base := t.TempDir()
	importExample(t, "import-plan.json", filepath.Join(base, "a"))
	importExample(t, "import-plan.json", filepath.Join(base, "b"))
	for _, name := range []string{snapshot.ManifestFile, snapshot.ObservationsFile, snapshot.PlanFile} {
		x, _ := os.ReadFile(filepath.Join(base, "a", name))
		y, _ := os.ReadFile(filepath.Join(base, "b", name))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two imports of the same inputs", name)
		}
	}
}

// writeJob makes a one-trial job whose result.json has the given bytes
// (nil: no result file; "-": no folder at all).
func writeJob(t *testing.T, result []byte, noDir bool) (root, plan string) {
	t.Helper()
	root = t.TempDir()
	if !noDir {
		if err := os.MkdirAll(filepath.Join(root, "job", "t__1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if result != nil {
			if err := os.WriteFile(filepath.Join(root, "job", "t__1", "result.json"), result, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	plan = filepath.Join(root, "plan.json")
	p := `{"version":1,"source":{"format":"harbor","revision":"5f5618b8f5419dde63f2df6d86706782e597e8a3"},
"name":"one","split":"train","trainable":true,
"checkpoint":{"ref":"hf://a/b@0123456789abcdef0123456789abcdef01234567","served_as":"x"},
"protocol":{"dataset_digest":"` + strings.Repeat("1", 64) + `","verifier_digest":"` + strings.Repeat("2", 64) + `",
"environment_digest":"` + strings.Repeat("3", 64) + `","harness_digest":"` + strings.Repeat("4", 64) + `"},
"settings":{"temperature":0,"context_window":1000,"repeats":1,"environment_type":"docker","network":"none"},
"trials":[{"task":"t","repeat":0,"attempts":[{"retry":0,"dir":"job/t__1"}]}]}`
	if err := os.WriteFile(plan, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, plan
}

func goodResult(reward string, exception string) []byte {
	return []byte(`{"id":"u","task_name":"t","trial_name":"t__1","trial_uri":"file:///x","task_id":{"path":"t"},
"source":null,"task_checksum":"abc","config":{},"agent_info":{"name":"a","version":"1","model_info":null},
"agent_result":null,"verifier_result":` + reward + `,"exception_info":` + exception + `,
"started_at":null,"finished_at":null,"environment_setup":null,"agent_setup":null,"agent_execution":null,"verifier":null}`)
}

// TestImportBadResults: every broken input gives a stated reason, the
// import still completes, and nothing panics.
func TestImportBadResults(t *testing.T) {
	huge := make([]byte, 0)
	tests := []struct {
		name   string
		result []byte
		noDir  bool
		status string
		reason string
	}{
		{"result missing", nil, false, "unscored", "result_missing"},
		{"empty", []byte{}, false, "unscored", "result_invalid"},
		{"truncated", goodResult(`{"rewards":{"reward":1}}`, "null")[:100], false, "unscored", "result_invalid"},
		{"not an object", []byte(`[1,2]`), false, "unscored", "result_invalid"},
		{"invalid utf8", append([]byte(`{"task_name":"`), 0xff, '"', '}'), false, "unscored", "result_invalid"},
		{"wrong type", []byte(`{"task_name": 5}`), false, "unscored", "result_invalid"},
		{"nan reward", goodResult(`{"rewards":{"reward":NaN}}`, "null"), false, "unscored", "reward_not_finite"},
		{"reward 0.5", goodResult(`{"rewards":{"reward":0.5}}`, "null"), false, "unscored", "reward_not_binary"},
		{"reward true", goodResult(`{"rewards":{"reward":true}}`, "null"), false, "unscored", "reward_not_binary"},
		{"reward string", goodResult(`{"rewards":{"reward":"1"}}`, "null"), false, "unscored", "reward_not_binary"},
		{"reward 1e400", goodResult(`{"rewards":{"reward":1e400}}`, "null"), false, "unscored", "reward_not_finite"},
		{"reward null", goodResult(`{"rewards":{"reward":null}}`, "null"), false, "unscored", "reward_missing"},
		{"rewards empty", goodResult(`{"rewards":{}}`, "null"), false, "unscored", "reward_missing"},
		{"several keys", goodResult(`{"rewards":{"a":1,"b":0}}`, "null"), false, "unscored", "reward_ambiguous"},
		{"unseen exception", goodResult(`{"rewards":{"reward":1}}`, `{"exception_type":"BrandNewError","exception_message":"","exception_traceback":"","occurred_at":"2026-01-01T00:00:00"}`), false, "unscored", "unknown_exception"},
		{"success int", goodResult(`{"rewards":{"reward":1}}`, "null"), false, "success", "reward_success"},
		{"legacy reward shape", goodResult(`{"reward":0.0}`, "null"), false, "failure", "reward_failure"},
	}
	_ = huge
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, plan := writeJob(t, tt.result, tt.noDir)
			out := filepath.Join(t.TempDir(), "snap")
			_, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			got := readObservations(t, out)["t#0"]
			if got.Status != tt.status || got.Reason != tt.reason {
				t.Errorf("got %s/%s; want %s/%s", got.Status, got.Reason, tt.status, tt.reason)
			}
		})
	}
}

// TestImportNoFolders: a --root under which not one of the plan's folders
// exists is refused (almost always the wrong --root), and nothing is
// written; the eval runner's ImportPlan still counts such trials.
func TestImportNoFolders(t *testing.T) {
	root, plan := writeJob(t, nil, true)
	out := filepath.Join(t.TempDir(), "snap")
	_, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out})
	var nf *NoFoldersError
	if !errors.As(err, &nf) || nf.Attempts != 1 || nf.Example != "job/t__1" {
		t.Fatalf("Import = %v; want a NoFoldersError for job/t__1", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out exists after the refusal: %v", err)
	}
}

func TestImportHugeResult(t *testing.T) {
	root, plan := writeJob(t, []byte("{}"), false)
	// A sparse 200 MB file: it must be refused by size, not read.
	if err := os.Truncate(filepath.Join(root, "job", "t__1", "result.json"), 200<<20); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "snap")
	if _, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out}); err != nil {
		t.Fatal(err)
	}
	if got := readObservations(t, out)["t#0"]; got.Reason != "result_invalid" {
		t.Errorf("200 MB result judged %+v; want result_invalid", got)
	}
}

func TestImportRefusesOut(t *testing.T) {
	root, plan := writeJob(t, goodResult(`{"rewards":{"reward":1}}`, "null"), false)
	base := t.TempDir()
	empty := filepath.Join(base, "empty")
	os.Mkdir(empty, 0o755)
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	ro := filepath.Join(base, "ro")
	os.Mkdir(ro, 0o555)
	for _, out := range []string{empty, file, filepath.Join(ro, "snap"), filepath.Join(base, "no", "parent")} {
		if _, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out}); err == nil {
			if os.Geteuid() == 0 && strings.HasPrefix(out, ro) {
				continue // root ignores folder permissions
			}
			t.Errorf("import to %q succeeded", out)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "x" {
		t.Error("an existing file at --out was changed")
	}
}

func TestImportRefusesInvalidPlan(t *testing.T) {
	root, plan := writeJob(t, goodResult(`{"rewards":{"reward":1}}`, "null"), false)
	b, _ := os.ReadFile(plan)
	os.WriteFile(plan, bytes.Replace(b, []byte(strings.Repeat("1", 64)), []byte("REPLACE_DATASET_MANIFEST_SHA256"), 1), 0o644)
	out := filepath.Join(t.TempDir(), "snap")
	_, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out})
	var inv *PlanInvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v; want PlanInvalidError", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a snapshot was written for an invalid plan")
	}
}

func TestRoundIDFollowsRewards(t *testing.T) {
	ids := map[string]string{}
	for _, reward := range []string{"1", "0"} {
		root, plan := writeJob(t, goodResult(`{"rewards":{"reward":`+reward+`}}`, "null"), false)
		out := filepath.Join(t.TempDir(), "snap")
		res, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		ids[reward] = res.Manifest.RoundID
	}
	if ids["1"] == ids["0"] {
		t.Error("changing one reward kept the round ID")
	}
}

func TestRedactorLabel(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "my-rules.yaml")
	os.WriteFile(rules, []byte("rules: []\n"), 0o644)
	tests := map[string]string{
		"builtin:secrets":              "builtin:secrets",
		"rules:" + rules:               "rules:my-rules.yaml@sha256:1e0c9ba1b91ebc6f5a7d0a0ea1bcfd5e4a05ae0c3a5ac7cfba0b11f0fd0a0b8b",
		"exec:/usr/local/bin/scrub -v": "exec:scrub",
		"common.redact:clean":          "common.redact:clean",
	}
	for spec, want := range tests {
		got := redactorLabel(spec)
		if strings.HasPrefix(want, "rules:") {
			want = want[:strings.Index(want, "@sha256:")+len("@sha256:")]
			if !strings.HasPrefix(got, want) || len(got) != len(want)+64 {
				t.Errorf("redactorLabel(%q) = %q; want %s<64 hex>", spec, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("redactorLabel(%q) = %q; want %q", spec, got, want)
		}
		if strings.Contains(got, dir) {
			t.Errorf("label %q leaks the machine path", got)
		}
	}
}

// TestTranscriptsLegacyLitellm: an attempt whose only transcript is the
// legacy litellm JSONL is reported as skipped, with the reason.
func TestTranscriptsLegacyLitellm(t *testing.T) {
	root, plan := writeJob(t, goodResult(`{"rewards":{"reward":1}}`, "null"), false)
	agent := filepath.Join(root, "job", "t__1", "agent")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(agent, "litellm-trajectory.jsonl"), []byte(`{"messages":[]}`+"\n"), 0o644)
	out := filepath.Join(t.TempDir(), "snap")
	res, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out,
		Transcripts: &TranscriptOptions{Limit: 4, Redactors: []string{"builtin:secrets"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Message, "legacy litellm") {
		t.Errorf("skipped = %+v; want the legacy litellm reason", res.Skipped)
	}
	if res.Manifest.Trajectories.Count != 0 {
		t.Errorf("%d trajectories exported", res.Manifest.Trajectories.Count)
	}
}

// cancelAfter is a context whose Err reports cancellation from its n-th
// call on, so a test can cancel an import in the middle of a run
// deterministically.
type cancelAfter struct {
	context.Context
	calls atomic.Int64
	n     int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) >= c.n {
		return context.Canceled
	}
	return nil
}

// TestImportCancelledMidChunk: an interrupt while attempts are being read
// must end the import as cancelled (exit 130/143 in the CLI), not as an
// invalid observation built from attempts nobody judged, and must leave
// nothing at --out.
func TestImportCancelledMidChunk(t *testing.T) {
	out := filepath.Join(t.TempDir(), "snap")
	// Err calls 1 and 2 let the first trials be handed out and judged,
	// call 3 stops the run with the rest unjudged.
	ctx := &cancelAfter{Context: context.Background(), n: 3}
	_, err := Import(ctx, Options{Producers: testProducers, PlanPath: filepath.Join(exampleRoot, "import-plan.json"), Root: exampleRoot, Out: out, Workers: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("--out exists after a cancelled import: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".snap.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary folders left behind: %v", left)
	}
}

// TestImportInvalidResultWarns: SPEC §2 promises result_invalid "with the
// parse error"; observations carry only the code, so the import's
// warnings must name the trial, the file and what is wrong with it.
func TestImportInvalidResultWarns(t *testing.T) {
	root, plan := writeJob(t, goodResult(`{"rewards":{"reward":1}}`, "null")[:100], false)
	res, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: filepath.Join(t.TempDir(), "snap")})
	if err != nil {
		t.Fatal(err)
	}
	var got []Warning
	for _, w := range res.Warnings {
		if w.Code == "result_invalid" {
			got = append(got, w)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Message, "trial t#0 retry 0") ||
		!strings.Contains(got[0].Message, "job/t__1/result.json") || !strings.Contains(got[0].Message, "truncated") {
		t.Errorf("result_invalid warnings = %+v; want one naming trial t#0, its file and the parse error", got)
	}

	// A valid result gives no such warning.
	root, plan = writeJob(t, goodResult(`{"rewards":{"reward":1}}`, "null"), false)
	res, err = Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: filepath.Join(t.TempDir(), "snap")})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		if w.Code == "result_invalid" {
			t.Errorf("valid result warned: %+v", w)
		}
	}
}

// TestImportTaskMismatchWarns: the plan decides identity, but a result
// naming another task is pointed out.
func TestImportTaskMismatchWarns(t *testing.T) {
	root, plan := writeJob(t, []byte(strings.Replace(string(goodResult(`{"rewards":{"reward":1}}`, "null")), `"task_name":"t"`, `"task_name":"other"`, 1)), false)
	out := filepath.Join(t.TempDir(), "snap")
	res, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range res.Warnings {
		if w.Code == "task_mismatch" && strings.Contains(w.Message, `"other"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no task_mismatch warning in %+v", res.Warnings)
	}
	if got := readObservations(t, out)["t#0"]; got.Status != "success" {
		t.Errorf("the plan's identity must stand: %+v", got)
	}
}
