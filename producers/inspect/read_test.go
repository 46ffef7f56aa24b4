package inspect

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"github.com/tuneplane/tpctl/planfile"
	"hash/crc32"
	"io"
	"strings"
	"testing"
)

// member is one zip member of a synthetic .eval.
type member struct {
	name string
	body []byte
}

// evalZip writes a synthetic .eval: the members in order, deflated as
// Inspect writes them.
func evalZip(t testing.TB, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(m.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// synthHeader is a header written from Inspect's EvalLog model: version 2,
// a dataset of 50 samples of which the run planned 3 over 2 epochs, one
// scorer, score_on_error set.
func synthHeader(version string, results string) string {
	return `{"version": ` + version + `, "status": "error",
 "eval": {"eval_id": "e1", "run_id": "r1", "created": "2026-01-01T00:00:00+00:00", "task": "synthetic", "task_id": "t1",
  "task_version": 0, "task_args": {"level": 2},
  "dataset": {"name": "synthetic", "location": "synthetic.jsonl", "samples": 50, "sample_ids": [1, "b", 3], "shuffled": false},
  "model": "openai/gpt-x", "model_generate_config": {"temperature": 0.0},
  "config": {"epochs": 2, "score_on_error": true, "retry_on_error": 1, "message_limit": 30},
  "sandbox": {"type": "docker", "config": "compose.yaml"},
  "packages": {"inspect_ai": "0.3.260"},
  "scorers": [{"name": "match", "options": {}, "metrics": [], "metadata": {}}]},
 "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {}},
 ` + results + `
 "stats": {"started_at": "", "completed_at": ""}}`
}

const synthResults = `"results": {"total_samples": 6, "completed_samples": 5, "scores": [{"name": "match", "scorer": "match", "scored_samples": 4, "unscored_samples": 0, "params": {}, "metrics": {"accuracy": {"name": "accuracy", "value": 0.75, "params": {}}}}]},`

func synthSample(id string, epoch int, rest string) []byte {
	return []byte(fmt.Sprintf(`{"id": %s, "epoch": %d, "input": "q", "target": "a", "messages": [
  {"role": "system", "content": "be brief"},
  {"role": "user", "content": "attachment://abc"},
  {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "think"}, {"type": "text", "text": "calling"}], "tool_calls": [{"id": "call1", "function": "bash", "arguments": {"cmd": "ls"}, "type": "function"}]},
  {"role": "tool", "content": "a.txt", "tool_call_id": "call1", "function": "bash"},
  {"role": "assistant", "content": [{"type": "image", "image": "data:image/png;base64,AAAA"}]}
 ], "attachments": {"abc": "what files are here?"}, "events": [{"event": "model", "big": [1, 2, 3]}], %s}`, id, epoch, rest))
}

// synthEval is a synthetic log with the cases the shared logs lack,
// written from Inspect's models: an error then a retry that scored, a
// sample scored on error, Score.unscored (NaN), an operator limit, and
// one planned (sample, epoch) that never ran.
func synthEval(t testing.TB) []byte {
	return evalZip(t,
		member{"_journal/start.json", []byte(`{"version": 2, "eval": {}, "plan": {}}`)},
		member{"samples/1_epoch_1.json", synthSample(`1`, 1, `"scores": {"match": {"value": "C"}}, "error_retries": [{"message": "Error code: 429", "traceback": "Traceback:\nopenai.RateLimitError: Error code: 429\n", "traceback_ansi": ""}]`)},
		member{"samples/1_epoch_2.json", synthSample(`1`, 2, `"scores": {"match": {"value": "I"}}, "error": {"message": "tool crashed", "traceback": "Traceback:\nRuntimeError: tool crashed\n", "traceback_ansi": ""}`)},
		member{"samples/b_epoch_1.json", synthSample(`"b"`, 1, `"scores": {"match": {"value": NaN}}`)},
		member{"samples/b_epoch_2.json", synthSample(`"b"`, 2, `"scores": {"match": {"value": "C"}}, "limit": {"type": "operator", "limit": 0}`)},
		member{"samples/3_epoch_1.json", synthSample(`3`, 1, `"scores": {"match": {"value": 1}}, "limit": {"type": "message", "limit": 30}`)},
		member{"summaries.json", []byte(`[]`)},
		member{"header.json", []byte(synthHeader("2", synthResults))},
	)
}

func TestSyntheticEval(t *testing.T) {
	data := synthEval(t)
	l, err := Open(bytes.NewReader(data), int64(len(data)), "synthetic.eval", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Format != FormatEval || l.Header.InspectVersion != "0.3.260" || !l.Header.ScoreOnError || l.Header.Epochs != 2 {
		t.Fatalf("header %+v", l.Header)
	}
	s, err := Summarize(l, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key    string
		status Status
		reason string
	}{
		{"n:1#1", Success, ReasonScoreSuccess},
		{"n:1#2", Failure, ReasonErrorScored},
		{"s:b#1", Unscored, ReasonScoreUnscored},
		{"s:b#2", Unscored, ReasonOperatorLimit},
		{"n:3#1", Success, ReasonLimitScored},
		{"n:3#2", Unscored, ReasonResultMissing},
	}
	if len(s.Trials) != len(want) {
		t.Fatalf("%d trials, want %d", len(s.Trials), len(want))
	}
	for i, w := range want {
		tr := s.Trials[i]
		v := tr.Judgement.Final()
		if tr.Key() != w.key || v.Status != w.status || v.Reason != w.reason {
			t.Errorf("trial %d: %s %s/%s, want %s %s/%s", i, tr.Key(), v.Status, v.Reason, w.key, w.status, w.reason)
		}
	}
	if n := len(s.Trials[0].Judgement.Attempts); n != 2 {
		t.Errorf("sample 1 epoch 1: %d attempts, want 2 (a 429, then the scored run)", n)
	}
	if s.Plan.Scope() != "3 of 50 samples of the dataset" {
		t.Errorf("scope %q", s.Plan.Scope())
	}
	// Inspect's figures: 6 total (= planned), 5 completed (= held), 4
	// scored for match (the NaN is unscored in Inspect's count too, so
	// its 0 unscored differs from the body's 1).
	var fields []string
	for _, d := range s.Differences {
		fields = append(fields, d.Field)
	}
	if len(fields) != 0 {
		// epochs 2: per-score counts are not compared (reduced by Inspect).
		t.Errorf("differences %v", s.Differences)
	}
	// The settings and dataset inputs are data, deterministic.
	set := SettingsInputs(&l.Header)
	if set["epochs"].(fmt.Stringer).String() != "2" || set["sandbox"] == nil || set["task_args"] == nil {
		t.Errorf("settings inputs %v", set)
	}
	ds := DatasetInputs(&l.Header, s.Plan)
	if fmt.Sprint(ds["sample_ids"]) != "[1 b 3]" || ds["name"] != "synthetic" {
		t.Errorf("dataset inputs %v", ds)
	}
	// Messages: attachments resolved, calls with arguments, results, and
	// an image named, not inlined.
	sample, err := l.SampleAt("samples/1_epoch_1.json", SampleOptions{Messages: true})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := sample.Messages()
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(msgs)
	wantMsgs := "[{system be brief  } {user what files are here?  } {assistant think\n\ncalling  } {assistant {\"cmd\":\"ls\"} bash call1} {tool a.txt bash call1} {assistant [image]  }]"
	if got != wantMsgs {
		t.Errorf("messages\n%s\nwant\n%s", got, wantMsgs)
	}
	if _, err := l.SampleAt("samples/b_epoch_1.json", SampleOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestSyntheticJSON: the same log as one .json document reads the same.
func TestSyntheticJSON(t *testing.T) {
	zr, _ := zip.NewReader(bytes.NewReader(synthEval(t)), int64(len(synthEval(t))))
	var samples []string
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "samples/") {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			samples = append(samples, string(b))
		}
	}
	h := synthHeader("2", synthResults)
	doc := strings.TrimSuffix(strings.TrimSpace(h), "}") + `, "samples": [` + strings.Join(samples, ",") + `], "reductions": [{"scorer": "match", "samples": [{"value": 1.0, "sample_id": 1}]}]}`
	l, err := Open(strings.NewReader(doc), int64(len(doc)), "synthetic.json", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(l, "match")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Counts()
	if c[Success] != 2 || c[Failure] != 1 || c[Unscored] != 3 || s.Missing() != 1 {
		t.Errorf("counts %v missing %d", c, s.Missing())
	}
	red, err := l.Reductions()
	if err != nil || len(red) != 1 || red[0].Samples[0].Raw != "1.0" {
		t.Errorf("reductions %+v %v", red, err)
	}
}

// TestRefusals: what is refused, and that the refusal names it.
func TestRefusals(t *testing.T) {
	big := bytes.Repeat([]byte(" "), 3<<20)
	bomb := append(append([]byte(`{"id": 1, "epoch": 1,`), big...), '}')
	cases := []struct {
		name string
		data []byte
		lim  Limits
		want string
		as   any
	}{
		{"version 3 .json", []byte(synthHeader("3", "")), Limits{}, "version 3 is not supported", new(*VersionError)},
		{"version 1 .eval", evalZip(t, member{"header.json", []byte(synthHeader("1", ""))}), Limits{}, "version 1 is not supported", new(*VersionError)},
		{"version as a string", []byte(synthHeader(`"2"`, "")), Limits{}, `version "2" is not supported`, new(*VersionError)},
		{"zip bomb in a sample", evalZip(t, member{"header.json", []byte(synthHeader("2", ""))}, member{"samples/1_epoch_1.json", bomb}), Limits{Member: 1 << 20}, "samples/1_epoch_1.json: larger than the cap of 1048576 bytes", new(*TooLargeError)},
		{"zip bomb in the header", evalZip(t, member{"header.json", append([]byte(synthHeader("2", "")), big...)}), Limits{Member: 1 << 20}, "header.json: larger than the cap", new(*TooLargeError)},
		{".json log over its cap", append([]byte(synthHeader("2", "")), big...), Limits{Document: 1 << 20}, "larger than the cap of 1048576 bytes", new(*TooLargeError)},
		{"too many values", []byte(synthHeader("2", "")), Limits{Nodes: 10}, "JSON values", new(*TooLargeError)},
		{"not JSON", []byte("hello"), Limits{}, "not JSON", new(*Error)},
		{"an array", []byte("[1]"), Limits{}, "not a JSON object", new(*Error)},
		{"no eval", []byte(`{"version": 2}`), Limits{}, "no eval object", new(*Error)},
		{"a zip that is no log", evalZip(t, member{"a.txt", []byte("x")}), Limits{}, "not an Inspect .eval log", new(*Error)},
		{"a duplicate key", []byte(`{"version": 2, "version": 2}`), Limits{}, "version", new(*Error)},
		{"trailing data", []byte(synthHeader("2", "") + "{}"), Limits{}, "data after the JSON document", new(*Error)},
		{"a sample without epoch", evalZip(t, member{"header.json", []byte(synthHeader("2", ""))}, member{"samples/1_epoch_1.json", []byte(`{"id": 1}`)}), Limits{}, "samples/1_epoch_1.json: /epoch: the sample has no epoch", new(*Error)},
		{"a truncated sample", evalZip(t, member{"header.json", []byte(synthHeader("2", ""))}, member{"samples/1_epoch_1.json", []byte(`{"id": 1, "epoch": `)}), Limits{}, "samples/1_epoch_1.json", new(*Error)},
		{"a float sample id", []byte(`{"eval": {"task": "x", "dataset": {"sample_ids": [1.5]}}}`), Limits{}, "/eval/dataset/sample_ids/0: sample id 1.5", new(*Error)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readAll(c.data, c.lim)
			if err == nil {
				t.Fatal("read without error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
			if !errors.As(err, c.as) {
				t.Errorf("error %T %v is not a %T", err, err, c.as)
			}
		})
	}
}

// TestJournalHeader: a log still being written has no header.json; its
// start is read from the journal, and it is "started".
func TestJournalHeader(t *testing.T) {
	h := strings.Replace(synthHeader("2", ""), `"status": "error",`, "", 1)
	data := evalZip(t, member{"_journal/start.json", []byte(h)}, member{"samples/1_epoch_1.json", synthSample("1", 1, `"scores": {"match": {"value": "C"}}`)})
	l, _, err := readAll(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Header.Status != "started" || l.Header.HeaderMember != "_journal/start.json" || l.Header.Results != nil {
		t.Errorf("header %+v", l.Header)
	}
	s, err := Summarize(l, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Trials) != 6 || s.Missing() != 5 || len(s.Differences) != 0 {
		t.Errorf("trials %d missing %d differences %v", len(s.Trials), s.Missing(), s.Differences)
	}
}

// TestPlanned: duplicates refused; a log without sample ids planned from
// its samples, with a warning; the scorer choice.
func TestPlanned(t *testing.T) {
	h := &Header{Epochs: 1, Dataset: Dataset{Samples: 2376, HasSampleIDs: true, SampleIDs: []SampleID{{"1", true}, {"1", false}, {"1", true}}}}
	if _, err := PlannedSet("x", h, nil); err == nil || !strings.Contains(err.Error(), "lists sample 1 twice") {
		t.Errorf("duplicate ids: %v", err)
	}
	h.Dataset.SampleIDs = h.Dataset.SampleIDs[:2] // 1 and "1" are two samples
	p, err := PlannedSet("x", h, nil)
	if err != nil || len(p.Trials) != 2 || p.Scope() != "2 of 2,376 samples of the dataset" {
		t.Errorf("plan %+v %v", p, err)
	}
	h.Dataset = Dataset{Samples: -1}
	p, err = PlannedSet("x", h, []Planned{{SampleID{"b", false}, 1}, {SampleID{"10", true}, 2}, {SampleID{"9", true}, 1}, {SampleID{"9", true}, 1}})
	if err != nil || p.Source != PlanFromSamples || len(p.Warnings) != 1 || fmt.Sprint(p.Trials) != "[{9 1} {10 2} {b 1}]" || p.Epochs != 2 {
		t.Errorf("plan from samples %+v %v", p, err)
	}
	if p.Scope() != "3 samples (the log does not record the dataset's size)" {
		t.Errorf("scope %q", p.Scope())
	}
	if _, err := PlannedSet("x", h, nil); err == nil {
		t.Error("nothing to plan, no error")
	}
	if _, err := PrimaryScorer("x", []string{"a", "b"}, ""); err == nil || !strings.Contains(err.Error(), "--scorer NAME") {
		t.Errorf("two scorers: %v", err)
	}
	if s, err := PrimaryScorer("x", []string{"a", "b"}, "b"); s != "b" || err != nil {
		t.Errorf("chosen: %q %v", s, err)
	}
	if _, err := PrimaryScorer("x", []string{"a"}, "c"); err == nil || !strings.Contains(err.Error(), `no scorer named "c": the log's scorers are a`) {
		t.Errorf("unknown: %v", err)
	}
}

func TestManifest(t *testing.T) {
	m, err := ReadManifest([]byte(`{"eval_set_id": "s1", "tasks": [{"name": "a", "task_id": "t1", "task_args": {}, "model": "m", "model_args": {}, "sequence": 0}, {"name": "b", "task_id": "t2", "task_args": {}, "model": "m", "model_args": {}, "sequence": 1}]}`), ManifestName)
	if err != nil {
		t.Fatal(err)
	}
	un := m.Unlogged([]*Header{{TaskID: "t1", EvalSetID: "s1"}})
	if len(un) != 1 || un[0].TaskID != "t2" {
		t.Errorf("unlogged %+v", un)
	}
	if _, err := ReadManifest([]byte(`{"tasks": [{}]}`), ManifestName); err == nil {
		t.Error("a task with no id read")
	}
}

// TestLyingZipDirectory: a member whose directory entry declares a small
// size but inflates to more is refused, naming the member, whatever the
// directory says.
func TestLyingZipDirectory(t *testing.T) {
	body := append([]byte(`{"id": 1, "epoch": 1, "pad": "`), bytes.Repeat([]byte("a"), 3<<20)...)
	body = append(body, `"}`...)
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write(body)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	hw, _ := zw.Create("header.json")
	hw.Write([]byte(synthHeader("2", "")))
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "samples/1_epoch_1.json", Method: zip.Deflate,
		CRC32: crc32.ChecksumIEEE(body), CompressedSize64: uint64(comp.Len()), UncompressedSize64: 100})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	for _, lim := range []Limits{{}, {Member: 1 << 20}} {
		_, _, err := readAll(buf.Bytes(), lim)
		if err == nil || !strings.Contains(err.Error(), "samples/1_epoch_1.json") {
			t.Errorf("limits %+v: err %v, want a refusal naming the member", lim, err)
		}
	}
}

// TestSettingsPassPlanRules: the drafted settings hold no member the
// plan's secret-field rule refuses, whatever limits the log sets.
func TestSettingsPassPlanRules(t *testing.T) {
	h := strings.Replace(synthHeader("2", ""), `"message_limit": 30`, `"message_limit": 30, "token_limit": 2000, "token_limit_type": "total", "turn_limit": 5, "time_limit": 60, "working_limit": 50, "cost_limit": 1.5, "limit": 3`, 1)
	l, err := Open(strings.NewReader(h), int64(len(h)), "x.json", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlannedSet("x", &l.Header, nil)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(string, any)
	walk = func(at string, v any) {
		switch t2 := v.(type) {
		case map[string]any:
			for k, e := range t2 {
				if planfile.IsSecretName(k) {
					t.Errorf("settings member %s/%s reads as a credential", at, k)
				}
				walk(at+"/"+k, e)
			}
		case []any:
			for _, e := range t2 {
				walk(at, e)
			}
		}
	}
	s := Settings(&l.Header, p, "match")
	walk("", s)
	lim := s["runtime"].(map[string]any)["limits"].(map[string]any)
	if len(lim) != 8 || fmt.Sprint(lim["tokens"]) != "2000" {
		t.Errorf("limits %v", lim)
	}
}
