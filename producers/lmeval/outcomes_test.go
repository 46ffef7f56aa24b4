package lmeval

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

func TestJudgeValue(t *testing.T) {
	for _, tc := range []struct {
		kind           jsonscan.Kind
		raw            string
		status, reason string
		reward         string
	}{
		{jsonscan.Number, "1.0", StatusSuccess, ReasonMetricSuccess, "1"},
		{jsonscan.Number, "1", StatusSuccess, ReasonMetricSuccess, "1"},
		{jsonscan.Number, "1e0", StatusSuccess, ReasonMetricSuccess, "1"},
		{jsonscan.True, "true", StatusSuccess, ReasonMetricSuccess, "1"},
		{jsonscan.Number, "0.0", StatusFailure, ReasonMetricFailure, "0"},
		{jsonscan.Number, "-0.0", StatusFailure, ReasonMetricFailure, "0"},
		{jsonscan.Number, "0", StatusFailure, ReasonMetricFailure, "0"},
		{jsonscan.Number, "1e-400", StatusFailure, ReasonMetricFailure, "0"},
		{jsonscan.False, "false", StatusFailure, ReasonMetricFailure, "0"},
		{jsonscan.Number, "NaN", StatusUnscored, ReasonMetricNotFinite, "-"},
		{jsonscan.Number, "Infinity", StatusUnscored, ReasonMetricNotFinite, "-"},
		{jsonscan.Number, "-Infinity", StatusUnscored, ReasonMetricNotFinite, "-"},
		{jsonscan.Number, "1e400", StatusUnscored, ReasonMetricNotFinite, "-"},
		{jsonscan.Number, "0.5", StatusUnscored, ReasonMetricNotBinary, "0.5"},
		{jsonscan.Number, "2", StatusUnscored, ReasonMetricNotBinary, "2"},
		{jsonscan.Number, "0.9999999999999999", StatusUnscored, ReasonMetricNotBinary, "0.9999999999999999"},
		{jsonscan.String, "1.0", StatusUnscored, ReasonMetricNotNumber, "-"},
		{jsonscan.Null, "null", StatusUnscored, ReasonMetricNotNumber, "-"},
		{jsonscan.BeginArray, "", StatusUnscored, ReasonMetricNotNumber, "-"},
		{jsonscan.BeginObject, "", StatusUnscored, ReasonMetricNotNumber, "-"},
	} {
		v := JudgeValue(Value{Kind: tc.kind, Raw: tc.raw})
		reward := "-"
		if v.Reward != nil {
			reward = fmt.Sprint(*v.Reward)
		}
		if v.Status != tc.status || v.Reason != tc.reason || reward != tc.reward {
			t.Errorf("%v %q: %s %s %s, want %s %s %s", tc.kind, tc.raw, v.Status, v.Reason, reward, tc.status, tc.reason, tc.reward)
		}
	}
	v := Judge(&Sample{Metrics: []string{"acc"}, Values: map[string]Value{}}, Score{Metric: "f1", Filter: "none"})
	if v.Reason != ReasonMetricAbsent || !strings.Contains(v.Detail, `no "f1" value (it lists acc)`) {
		t.Errorf("absent metric: %+v", v)
	}
	// Every reason of the table is reachable and listed once.
	if got := strings.Join(Reasons(), ","); got != "no_sample_line,result_missing,result_invalid,metric_absent,metric_success,metric_failure,metric_not_finite,metric_not_binary,metric_not_a_number" {
		t.Errorf("reasons %s", got)
	}
}

func TestChoose(t *testing.T) {
	res := readResults(t, twoTasks, twoTS)
	arc, gsm := res.Task("arc_easy"), res.Task("gsm8k")
	for _, tc := range []struct {
		task           *Task
		metric, filter string
		want           string
	}{
		{arc, "", "", "task arc_easy has 2 metrics (acc, acc_norm): pick one with --metric NAME"},
		{arc, "acc", "", "acc/none"},
		{arc, "acc_norm", "none", "acc_norm/none"},
		{arc, "f1", "", `task arc_easy has no metric "f1" (it has acc, acc_norm)`},
		{gsm, "", "", "task gsm8k has 2 filters (strict-match, flexible-extract): pick one with --filter NAME"},
		{gsm, "", "flexible-extract", "exact_match/flexible-extract"},
		{gsm, "exact_match", "loose", `task gsm8k has no filter "loose" (it has strict-match, flexible-extract)`},
	} {
		sc, err := Choose(tc.task, tc.metric, tc.filter)
		got := sc.Metric + "/" + sc.Filter
		if err != nil {
			got = err.Error()
			var ce *ChoiceError
			if !errors.As(err, &ce) {
				t.Errorf("untyped %T", err)
			}
		}
		if got != tc.want {
			t.Errorf("Choose(%s, %q, %q) = %s, want %s", tc.task.Name, tc.metric, tc.filter, got, tc.want)
		}
	}
	lower := false
	tk := &Task{Name: "ppl", MetricNames: []string{"perplexity"}, FilterNames: []string{"none"}, HigherIsBetter: map[string]*bool{"perplexity": &lower}}
	if _, err := Choose(tk, "", ""); err == nil || !strings.Contains(err.Error(), "lower is better") {
		t.Errorf("lower-is-better metric: %v", err)
	}
}

func judgeFixture(t *testing.T, dir, ts, task, metric, filter string) (*Results, *Outcomes) {
	t.Helper()
	res := readResults(t, dir, ts)
	tk := res.Task(task)
	p, err := PlanTask(res.File, tk)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Choose(tk, metric, filter)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, SamplesFile(task, ts))
	var o *Outcomes
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		o, err = JudgeTask(p, sc, f, filepath.Base(path), Limits{})
		if err != nil {
			t.Fatal(err)
		}
	} else {
		o, err = JudgeTask(p, sc, nil, "", Limits{})
		if err != nil {
			t.Fatal(err)
		}
	}
	return res, o
}

// TestTwoTasks is the folder: one task whose samples file holds
// part of its documents, one with none. Every planned document is counted.
func TestTwoTasks(t *testing.T) {
	res, arc := judgeFixture(t, twoTasks, twoTS, "arc_easy", "acc", "")
	// Independently: each line's acc by encoding/json; the rest missing.
	want := map[int]string{}
	for _, m := range jsonLines(t, filepath.Join(twoTasks, SamplesFile("arc_easy", twoTS))) {
		st := StatusFailure
		if m["acc"].(float64) == 1 {
			st = StatusSuccess
		}
		want[int(m["doc_id"].(float64))] = st
	}
	if len(want) != 6 || len(arc.Rows) != 10 {
		t.Fatalf("%d lines, %d rows", len(want), len(arc.Rows))
	}
	for _, r := range arc.Rows {
		w, ok := want[r.Doc]
		if !ok {
			w = StatusMissing
		}
		if r.Status != w {
			t.Errorf("doc %d: %s, want %s", r.Doc, r.Status, w)
		}
	}
	if arc.Counts != (Counts{Planned: 10, Success: 4, Failure: 2, Missing: 4}) {
		t.Errorf("arc counts %+v", arc.Counts)
	}
	if got := arc.Beside(res.Task("arc_easy")); got != "lm-eval says acc 0.6 over 10 documents; tpctl: 4 of 6 scored, 4 missing (the samples file holds 6 of 10 documents under filter none; lm-eval ran 10 of 2,376 documents of the split (--limit))" {
		t.Errorf("arc beside: %s", got)
	}

	_, gsm := judgeFixture(t, twoTasks, twoTS, "gsm8k", "", "strict-match")
	if gsm.Counts != (Counts{Planned: 8, Missing: 8}) || gsm.SamplesFile != "" {
		t.Errorf("gsm8k counts %+v", gsm.Counts)
	}
	if got := gsm.Beside(res.Task("gsm8k")); got != "lm-eval says exact_match (strict-match) 0.5 over 8 documents; tpctl: 0 of 0 scored, 8 missing (lm-eval wrote no samples file for the task (run with --log_samples), so no document can be checked; lm-eval ran 8 of 1,319 documents of the split (--limit))" {
		t.Errorf("gsm beside: %s", got)
	}
	var b bytes.Buffer
	if err := arc.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 11 || lines[1] != "0\tfailure\tmetric_failure\t0\t1\t" || lines[10] != "9\tmissing\tno_sample_line\t-\t-\t" {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestAgreesWithLMEval: where the samples file is whole, tpctl's rate is
// lm-eval's own figure.
func TestAgreesWithLMEval(t *testing.T) {
	for _, tc := range []struct{ dir, ts, want string }{
		{pairedA, pairedATS, "lm-eval says acc 0.75 over 20 documents; tpctl: 15 of 20 scored (lm-eval ran 20 of 2,376 documents of the split (--limit))"},
		{pairedB, pairedBTS, "lm-eval says acc 0.75 over 20 documents; tpctl: 15 of 20 scored (lm-eval ran 20 of 2,376 documents of the split (--limit))"},
	} {
		res, o := judgeFixture(t, tc.dir, tc.ts, "arc_easy", "acc", "")
		fig, _ := res.Task("arc_easy").Figure("acc", "none")
		if fmt.Sprint(float64(o.Counts.Success)/float64(o.Counts.Scored())) != fig.Text() {
			t.Errorf("%s: tpctl %d/%d, lm-eval %s", tc.dir, o.Counts.Success, o.Counts.Scored(), fig.Text())
		}
		if got := o.Beside(res.Task("arc_easy")); got != tc.want {
			t.Errorf("beside: %s", got)
		}
	}
}

func TestJudgeTaskLines(t *testing.T) {
	p := Planned{Task: "t", Documents: 3, Original: 3, Repeats: 1}
	in := strings.Join([]string{
		`{"doc_id": 0, "filter": "none", "acc": 0.5}`,
		`{"doc_id": 1, "filter": "none", "acc": [true]}`,
		`{"doc_id": 1, "filter": "other", "acc": 1.0}`,
		`{"doc_id": 7, "filter": "none", "acc": 1.0}`,
		`{"doc_id": 2, "filter": "none", "acc": NaN}`,
	}, "\n") + "\n"
	o, err := JudgeTask(p, Score{"acc", "none"}, strings.NewReader(in), "s.jsonl", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Counts != (Counts{Planned: 3, Unscored: 3}) || o.UnplannedLines != 1 || o.Unplanned[0] != 7 {
		t.Errorf("%+v", o)
	}
	if o.Rows[0].Reason != ReasonMetricNotBinary || o.Rows[1].Reason != ReasonMetricNotNumber || o.Rows[2].Reason != ReasonMetricNotFinite {
		t.Errorf("rows %+v", o.Rows)
	}
	if got := o.Beside(&Task{Name: "t", Effective: 3, Figures: []Figure{{Metric: "acc", Filter: "none", Value: Number("0.5")}}}); got != "lm-eval says acc 0.5 over 3 documents; tpctl: 0 of 0 scored, 3 unscored (3 documents had no 0 or 1 for acc; 1 line outside documents 0…2 was left out)" {
		t.Errorf("beside: %s", got)
	}
	dup := `{"doc_id": 0}` + "\n" + `{"doc_id": 0}` + "\n"
	if _, err := JudgeTask(p, Score{"acc", "none"}, strings.NewReader(dup), "s.jsonl", Limits{}); err == nil {
		t.Error("a duplicate was judged")
	}
}
