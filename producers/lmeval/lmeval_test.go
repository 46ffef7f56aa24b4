package lmeval

// The fixtures under testdata/ are written by testdata/gen.py the way
// lm-eval writes its files (lm-eval itself cannot run here: it needs the
// `datasets` package, which neither Debian nor the offline mirror has);
// testdata/README.md says which lm-eval code each rule follows. Expected
// values below are derived independently: the samples files are re-read
// with encoding/json, not with this package's reader.

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	twoTasks   = "testdata/two-tasks/EleutherAI__pythia-160m"
	twoTS      = "2026-11-30T10-00-00.123456"
	pairedA    = "testdata/paired/EleutherAI__pythia-160m"
	pairedATS  = "2026-11-30T11-00-00.000001"
	pairedB    = "testdata/paired/EleutherAI__pythia-410m"
	pairedBTS  = "2026-11-30T12-00-00.000002"
	differs    = "testdata/config-differs/EleutherAI__pythia-410m"
	differsTS  = "2026-11-30T13-00-00.000003"
	limitedDir = "testdata/limited/EleutherAI__pythia-410m"
	limitedTS  = "2026-11-30T14-00-00.000004"
)

func readResults(t *testing.T, dir, ts string) *Results {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "results_"+ts+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := ReadResults(f, "results_"+ts+".json")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// jsonLines reads a samples file with encoding/json: the independent
// reading the tests compare with.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestReadResults(t *testing.T) {
	res := readResults(t, twoTasks, twoTS)
	if got := strings.Join(res.TaskNames(), ","); got != "arc_easy,gsm8k" {
		t.Fatalf("tasks = %s", got)
	}
	if res.Timestamp != twoTS || res.ModelName != "EleutherAI/pythia-160m" || res.ModelSource != "hf" ||
		res.LMEvalVersion != "0.4.13.dev0" || res.GitHash != "4e7e0d4" || res.ModelRevision != "main" ||
		res.ModelSHA != "50f5173d932e8e61f858120bcb800b97af589f46" || !res.TaskHashes {
		t.Errorf("top level = %+v", res)
	}
	if res.Checkpoint() != "EleutherAI/pythia-160m@50f5173d932e8e61f858120bcb800b97af589f46" || res.Revision() != "0.4.13.dev0+4e7e0d4" {
		t.Errorf("checkpoint %q revision %q", res.Checkpoint(), res.Revision())
	}
	arc, gsm := res.Task("arc_easy"), res.Task("gsm8k")
	if !arc.Counted || arc.Original != 2376 || arc.Effective != 10 || arc.Version != "1.0" || arc.Repeats != 1 ||
		arc.OutputType != "multiple_choice" || strings.Join(arc.MetricNames, ",") != "acc,acc_norm" ||
		strings.Join(arc.FilterNames, ",") != "none" || arc.NShot == nil || *arc.NShot != 0 {
		t.Errorf("arc_easy = %+v", arc)
	}
	if strings.Join(gsm.FilterNames, ",") != "strict-match,flexible-extract" || gsm.Effective != 8 || gsm.Original != 1319 || !gsm.Limited() {
		t.Errorf("gsm8k = %+v", gsm)
	}
	var figs []string
	for _, f := range gsm.Figures {
		figs = append(figs, f.Metric+","+f.Filter+"="+f.Text()+"±"+text(f.Stderr))
	}
	if got := strings.Join(figs, " "); got != "exact_match,strict-match=0.5±0.1889822365046136 exact_match,flexible-extract=0.625±0.18298126367784995" {
		t.Errorf("figures = %s", got)
	}

	lim := readResults(t, limitedDir, limitedTS)
	if lim.ChatTemplateSHA == "" || lim.SystemInstructionSHA == "" {
		t.Errorf("chat template / system instruction digests not read: %+v", lim)
	}
}

func TestAggregateOnly(t *testing.T) {
	f, err := os.Open("testdata/aggregate-only/results_2023-06-01T00-00-00.000000.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := ReadResults(f, "results_2023-06-01T00-00-00.000000.json")
	if err != nil {
		t.Fatal(err)
	}
	task := res.Task("anagrams1")
	if task == nil || task.Counted || res.TaskHashes {
		t.Fatalf("aggregate-only read as %+v", task)
	}
	if fig, ok := task.Figure("acc", "none"); !ok || fig.Text() != "0.0" || text(fig.Stderr) != "0.0" {
		t.Errorf("old unfiltered figure: %+v %v", fig, ok)
	}
	_, err = PlanTask(res.File, task)
	var ae *AggregateOnlyError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "--log_samples") {
		t.Errorf("PlanTask = %v, want *AggregateOnlyError naming --log_samples", err)
	}
}

func TestResultsErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty file"},
		{"not an object", "[1]", "not a JSON object"},
		{"no results", `{"versions": {}}`, "/results: missing or not an object"},
		{"truncated", `{"results": {"a": {`, "truncated JSON"},
		{"key twice", `{"results": {}, "results": {}}`, `key "results" appears twice`},
		{"trailing", `{"results": {}} x`, "data after the JSON object"},
		{"bad count", `{"results": {"a": {}}, "n-samples": {"a": {"original": 3, "effective": "x"}}}`, "/n-samples/a/effective: not a count"},
		{"negative count", `{"results": {"a": {}}, "n-samples": {"a": {"original": -1, "effective": 1}}}`, "/n-samples/a/original: not a count"},
		{"bad repeats", `{"results": {"a": {}}, "configs": {"a": {"repeats": 0}}}`, "/configs/a/repeats: not a positive count"},
		{"model not a string", `{"results": {}, "model_name": 3}`, "/model_name: not a string"},
		{"deep", `{"results": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, "nesting deeper than 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResults([]byte(tc.in), "results_x.json")
			var re *ResultsError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "results_x.json: ") {
				t.Errorf("err = %v, want a *ResultsError naming the file and %q", err, tc.want)
			}
		})
	}
	// NaN is what Python writes for a non-finite aggregate: read, not refused.
	res, err := ParseResults([]byte(`{"results": {"a": {"mcc,none": NaN}}, "n-samples": {"a": {"original": 1, "effective": 1}}}`), "r.json")
	if err != nil || res.Task("a").Figures[0].Text() != "NaN" {
		t.Errorf("NaN aggregate: %v", err)
	}
	big := strings.NewReader(`{"results": {}, "pad": "` + strings.Repeat("x", MaxResultsBytes) + `"}`)
	var tl *TooLargeError
	if _, err := ReadResults(big, "big.json"); !errors.As(err, &tl) {
		t.Errorf("over the cap: %v", err)
	}
}

func TestGroupsAreNotTasks(t *testing.T) {
	in := `{"results": {"mmlu": {"acc,none": 0.5}, "mmlu_a": {"acc,none": 0.4}},
	 "group_subtasks": {"mmlu": ["mmlu_a"], "mmlu_a": []},
	 "configs": {"mmlu_a": {"task": "mmlu_a"}},
	 "n-samples": {"mmlu_a": {"original": 5, "effective": 5}}}`
	res, err := ParseResults([]byte(in), "r.json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.TaskNames(), ",") != "mmlu_a" || strings.Join(res.Groups, ",") != "mmlu" {
		t.Errorf("tasks %v groups %v", res.TaskNames(), res.Groups)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name     string
		task, ts string
		ok       bool
	}{
		{"samples_arc_easy_2026-11-30T10-00-00.123456.jsonl", "arc_easy", "2026-11-30T10-00-00.123456", true},
		{"samples_mmlu_high_school_x_2026-11-30T10-00-00.jsonl", "mmlu_high_school_x", "2026-11-30T10-00-00", true},
		{"samples_arc_easy_notadate.jsonl", "", "", false},
		{"samples__2026-11-30T10-00-00.jsonl", "", "", false},
		{"results_2026-11-30T10-00-00.1.json", "", "", false},
	} {
		task, ts, ok := SamplesName(tc.name)
		if task != tc.task || ts != tc.ts || ok != tc.ok {
			t.Errorf("SamplesName(%s) = %q %q %v", tc.name, task, ts, ok)
		}
	}
	for _, tc := range []struct {
		name, ts string
		ok       bool
	}{
		{"results_2026-11-30T10-00-00.123456.json", "2026-11-30T10-00-00.123456", true},
		{"out_2026-11-30T10-00-00.json", "2026-11-30T10-00-00", true},
		{"results.json", "", false},
		{"results_2026-11-30T10:00:00.json", "", false},
		{"samples_a_2026-11-30T10-00-00.json", "", false},
	} {
		ts, ok := ResultsTimestamp(tc.name)
		if ts != tc.ts || ok != tc.ok {
			t.Errorf("ResultsTimestamp(%s) = %q %v", tc.name, ts, ok)
		}
	}
}

func TestScan(t *testing.T) {
	l, err := Scan("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range l.Runs {
		got = append(got, r.Dir+" "+r.Timestamp+" "+strings.Join(sortedKeys(r.Samples), ","))
	}
	want := []string{
		"aggregate-only 2023-06-01T00-00-00.000000 ",
		"config-differs/EleutherAI__pythia-410m 2026-11-30T13-00-00.000003 arc_easy",
		"limited/EleutherAI__pythia-410m 2026-11-30T14-00-00.000004 arc_easy",
		"paired/EleutherAI__pythia-160m 2026-11-30T11-00-00.000001 arc_easy",
		"paired/EleutherAI__pythia-410m 2026-11-30T12-00-00.000002 arc_easy",
		"two-tasks/EleutherAI__pythia-160m 2026-11-30T10-00-00.123456 arc_easy",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(l.Orphans) != 0 {
		t.Errorf("orphans %v", l.Orphans)
	}
	r := l.Runs[5]
	if r.SamplesPath("gsm8k") != "" || r.SamplesPath("arc_easy") != "two-tasks/EleutherAI__pythia-160m/samples_arc_easy_"+twoTS+".jsonl" {
		t.Errorf("samples paths %q %q", r.SamplesPath("gsm8k"), r.SamplesPath("arc_easy"))
	}
	res, err := OpenResults("testdata", r)
	if err != nil || res.ModelName != "EleutherAI/pythia-160m" {
		t.Errorf("OpenResults: %v", err)
	}

	// A samples file whose results file is missing is an orphan.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "samples_t_2026-01-01T00-00-00.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = Scan(dir)
	if err != nil || len(l.Runs) != 0 || len(l.Orphans) != 1 {
		t.Errorf("orphan scan: %+v %v", l, err)
	}
	if _, err := Scan(filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing root scanned")
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestDocsInSync: docs/outcomes.md's lm-eval table lists the code's rules
// in order, and every reason code.
func TestDocsInSync(t *testing.T) {
	doc, err := os.ReadFile("../../docs/outcomes.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## lm-eval (`"+RulesVersion+"`)")
	if !ok {
		t.Fatalf("docs/outcomes.md has no section for %s", RulesVersion)
	}
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| L") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		rows = append(rows, strings.Trim(strings.TrimSpace(cells[2]), "`")+" "+strings.Trim(strings.TrimSpace(cells[3]), "`"))
	}
	var want []string
	for _, r := range Table() {
		want = append(want, string(r.Status)+" "+r.Reason)
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/outcomes.md's lm-eval table:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}
