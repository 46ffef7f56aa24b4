package inspect

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var writeExample = flag.Bool("example", false, "rewrite the README's example Inspect logs in testdata/inspect/logs")

// exampleDir is the README's folder of Inspect logs.
const exampleDir = "../../testdata/inspect/logs"

// The README's example logs are synthetic, written here from Inspect's
// models (EvalLog, EvalSample, EvalRetryError, EvalSampleLimit, Score in
// src/inspect_ai/log/_log.py and scorer/_metric.py at the validated
// commit): an arithmetic task run on two models, one as an .eval (6 of the
// dataset's 40 samples × 2 epochs, with a retried error, a limit, a
// provider failure, Score.unscored and a sample that never ran) and one as
// a .json log.

func exampleHeader(model, status, results string, epochs int) string {
	return `{
  "version": 2,
  "status": "` + status + `",
  "eval": {
    "eval_id": "ex-` + strings.ReplaceAll(model, "/", "-") + `",
    "run_id": "run-example",
    "created": "2026-05-01T10:00:00+00:00",
    "task": "arith",
    "task_id": "arith-1",
    "task_version": 1,
    "task_file": "arith.py",
    "task_args": {},
    "dataset": {"name": "arith", "location": "arith.jsonl", "samples": 40, "sample_ids": [1, 2, 3, 4, 5, 6], "shuffled": false},
    "model": "` + model + `",
    "model_generate_config": {"temperature": 0.0, "max_tokens": 256},
    "model_args": {},
    "config": {"limit": 6, "epochs": ` + fmt.Sprint(epochs) + `, "epochs_reducer": ["mean"], "retry_on_error": 1, "token_limit": 2000, "fail_on_error": false},
    "packages": {"inspect_ai": "0.3.260"},
    "scorers": [{"name": "match", "options": {}, "metrics": [{"name": "inspect_ai/accuracy", "options": {}}], "metadata": {}}]
  },
  "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {}},
  ` + results + `
  "stats": {"started_at": "2026-05-01T10:00:00+00:00", "completed_at": "2026-05-01T10:03:00+00:00", "model_usage": {}}
}`
}

func exampleSample(id, epoch int, q, a, rest string) string {
	return fmt.Sprintf(`{
  "id": %d,
  "epoch": %d,
  "input": %q,
  "target": %q,
  "messages": [
    {"role": "system", "content": "Answer with a number."},
    {"role": "user", "content": %q, "source": "input"},
    {"role": "assistant", "content": %q, "source": "generate"}
  ],
  "output": {"model": "m", "choices": []},
  "metadata": {},
  "store": {},
  "events": [],
  "model_usage": {"m": {"input_tokens": 30, "output_tokens": 4, "total_tokens": 34}},
  "total_time": 1.5,
  "working_time": 1.2,
  "uuid": "u-%d-%d",
  "attachments": {}%s
}`, id, epoch, q, a, q, a, id, epoch, rest)
}

const exampleTraceback = "Traceback (most recent call last):\n  File \"/site-packages/openai/_base_client.py\", line 1, in request\nopenai.RateLimitError: Error code: 429\n"

func exampleEval(t testing.TB) []byte {
	score := func(v string) string {
		return `,
  "scores": {"match": {"value": ` + v + `, "answer": "x"}}`
	}
	retry := `,
  "error_retries": [{"message": "Error code: 429", "traceback": ` + fmt.Sprintf("%q", exampleTraceback) + `, "traceback_ansi": ""}]`
	infra := `,
  "error": {"message": "Error code: 429", "traceback": ` + fmt.Sprintf("%q", exampleTraceback) + `, "traceback_ansi": ""}`
	limit := `,
  "limit": {"type": "token", "limit": 2000}`
	results := `"results": {"total_samples": 12, "completed_samples": 10, "scores": [{"name": "match", "scorer": "match", "reducer": "mean", "params": {}, "metrics": {"accuracy": {"name": "accuracy", "value": 0.5, "params": {}}}}]},`
	samples := []member{
		{"samples/1_epoch_1.json", []byte(exampleSample(1, 1, "2+2?", "4", score(`"C"`)))},
		{"samples/1_epoch_2.json", []byte(exampleSample(1, 2, "2+2?", "4", score(`"C"`)))},
		{"samples/2_epoch_1.json", []byte(exampleSample(2, 1, "7*6?", "42", score(`"C"`)+retry))},
		{"samples/2_epoch_2.json", []byte(exampleSample(2, 2, "7*6?", "41", score(`"I"`)))},
		{"samples/3_epoch_1.json", []byte(exampleSample(3, 1, "9-10?", "1", score(`"I"`)))},
		{"samples/3_epoch_2.json", []byte(exampleSample(3, 2, "9-10?", "-1", score(`"C"`)+limit))},
		{"samples/4_epoch_1.json", []byte(exampleSample(4, 1, "3^3?", "", infra))},
		{"samples/4_epoch_2.json", []byte(exampleSample(4, 2, "3^3?", "27", score(`"C"`)))},
		{"samples/5_epoch_1.json", []byte(exampleSample(5, 1, "10/4?", "2.5", score(`NaN`)))},
		{"samples/5_epoch_2.json", []byte(exampleSample(5, 2, "10/4?", "2.5", score(`"C"`)))},
		{"samples/6_epoch_1.json", []byte(exampleSample(6, 1, "1+1?", "3", score(`"I"`)))},
	}
	all := append([]member{{"_journal/start.json", []byte(`{"version": 2}`)}}, samples...)
	all = append(all, member{"summaries.json", []byte("[]")}, member{"header.json", []byte(exampleHeader("openai/gpt-4o-mini", "success", results, 2))})
	return evalZip(t, all...)
}

func exampleJSON() []byte {
	results := `"results": {"total_samples": 6, "completed_samples": 6, "scores": [{"name": "match", "scorer": "match", "params": {}, "metrics": {"accuracy": {"name": "accuracy", "value": 0.8333333333333334, "params": {}}}}]},`
	h := exampleHeader("anthropic/claude-haiku-4-5", "success", results, 1)
	var samples []string
	for i, v := range []string{`"C"`, `"C"`, `"C"`, `"C"`, `"C"`, `"I"`} {
		samples = append(samples, exampleSample(i+1, 1, "q", "a", `,
  "scores": {"match": {"value": `+v+`}}`))
	}
	doc := strings.TrimSuffix(strings.TrimSpace(h), "}") + `,
  "samples": [` + strings.Join(samples, ",\n") + `]
}
`
	return []byte(doc)
}

// TestExampleLogs: the README's logs are what this file writes (-example
// rewrites them), and they read as the README says.
func TestExampleLogs(t *testing.T) {
	want := map[string][]byte{
		"2026-05-01T10-00-00_arith_gpt.eval":    exampleEval(t),
		"2026-05-01T10-05-00_arith_claude.json": exampleJSON(),
	}
	for name, b := range want {
		p := filepath.Join(exampleDir, name)
		if *writeExample {
			if err := os.MkdirAll(exampleDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s differs from what this test writes (go test ./producers/inspect -run TestExampleLogs -args -example)", p)
		}
	}
	l := openFile(t, filepath.Join(exampleDir, "2026-05-01T10-00-00_arith_gpt.eval"))
	s, err := Summarize(l, "")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Counts()
	if len(s.Trials) != 12 || c[Success] != 6 || c[Failure] != 3 || c[InfraError] != 1 || c[Unscored] != 2 || s.Missing() != 1 {
		t.Errorf("trials %d counts %v missing %d", len(s.Trials), c, s.Missing())
	}
	if len(s.Differences) != 1 || s.Differences[0].Field != "results.completed_samples" {
		t.Errorf("differences %v", s.Differences)
	}
}
