package lmeval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/snapshot"
)

// dirFiles reads under a root as the importer does (safefs, capped) and
// counts reads.
type dirFiles struct {
	root  string
	reads atomic.Int64
}

func (f *dirFiles) ReadFile(rel string, max int64) ([]byte, error) {
	f.reads.Add(1)
	p, err := safefs.Resolve(f.root, rel)
	if err != nil {
		return nil, err
	}
	return safefs.ReadFileCapped(p, max)
}

func TestLocator(t *testing.T) {
	for _, sc := range []Score{{"acc", "none"}, {"exact_match", "strict/match~1"}, {"a/b", "maj@64"}} {
		loc := Locator("m/samples_t_2026-01-01T00-00-00.jsonl", 12, sc)
		file, doc, got, err := ParseLocator(loc)
		if err != nil || file != "m/samples_t_2026-01-01T00-00-00.jsonl" || doc != 12 || got != sc {
			t.Errorf("%s: %q %d %+v %v", loc, file, doc, got, err)
		}
	}
	for _, bad := range []string{"m/s.jsonl", "m/s.jsonl#", "m/s.jsonl#1/acc", "m/s.jsonl#x/acc/none", "m/s.jsonl#01/acc/none", "m/s.jsonl#-1/acc/none", "m/s.jsonl#1/acc/none/x"} {
		if _, _, _, err := ParseLocator(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestReadAttempt(t *testing.T) {
	root := "testdata/two-tasks"
	rel := "EleutherAI__pythia-160m/" + SamplesFile("arc_easy", twoTS)
	lines := jsonLines(t, filepath.Join(root, rel))
	raw, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	line1 := strings.SplitN(string(raw), "\n", 3)[1]
	sum := sha256.Sum256([]byte(line1))

	p := New()
	files := &dirFiles{root: root}
	// Every document, from several goroutines: one read of the file.
	var wg sync.WaitGroup
	got := make([]string, 10)
	for doc := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := p.ReadAttempt(files, Locator(rel, doc, Score{"acc", "none"}))
			got[doc] = string(a.Outcome.Status) + " " + a.Outcome.Reason
		}()
	}
	wg.Wait()
	if files.reads.Load() != 1 {
		t.Errorf("%d reads of one samples file, want 1", files.reads.Load())
	}
	for doc := range 10 {
		want := "unscored result_missing"
		if doc < len(lines) {
			want = "failure metric_failure"
			if lines[doc]["acc"].(float64) == 1 {
				want = "success metric_success"
			}
		}
		if got[doc] != want {
			t.Errorf("doc %d: %s, want %s", doc, got[doc], want)
		}
	}
	a := p.ReadAttempt(files, Locator(rel, 1, Score{"acc_norm", "none"}))
	if a.Task != "arc_easy/1" || a.Record != rel || a.Evidence.ResultSHA256 == nil || *a.Evidence.ResultSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("attempt %+v", a)
	}
	if len(a.Scores) != 2 || a.Scores[0].Name != "acc" || a.Scores[1].Name != "acc_norm" || a.Scores[1].Value == nil || a.Scores[1].Raw != "1.0" {
		t.Errorf("scores %+v", a.Scores)
	}
	if a := p.ReadAttempt(files, Locator(rel, 1, Score{"f1", "none"})); a.Outcome.Reason != ReasonMetricAbsent || !strings.Contains(a.Outcome.Detail, "line 2: ") {
		t.Errorf("absent metric: %+v", a.Outcome)
	}
	if a := p.ReadAttempt(files, Locator(rel, 8, Score{"acc", "none"})); !strings.Contains(a.Outcome.Detail, "has no line for document 8 under filter none") {
		t.Errorf("no line: %+v", a.Outcome)
	}
	if a := p.ReadAttempt(files, "no-fragment.jsonl"); a.Outcome.Reason != outcome.ReasonResultInvalid {
		t.Errorf("bad locator: %+v", a.Outcome)
	}
	if a := p.ReadAttempt(files, "gone/samples_x_2026-01-01T00-00-00.jsonl#0/acc/none"); a.Outcome.Reason != outcome.ReasonResultMissing {
		t.Errorf("gone file: %+v", a.Outcome)
	}

	// A file with a document listed twice: every attempt of it is invalid.
	dir := t.TempDir()
	dup := `{"doc_id": 0, "acc": 1.0}` + "\n" + `{"doc_id": 0, "acc": 0.0}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "samples_t_2026-01-01T00-00-00.jsonl"), []byte(dup), 0o644); err != nil {
		t.Fatal(err)
	}
	a = p.ReadAttempt(&dirFiles{root: dir}, "samples_t_2026-01-01T00-00-00.jsonl#0/acc/none")
	if a.Outcome.Reason != outcome.ReasonResultInvalid || !strings.Contains(a.Outcome.Detail, "listed twice, on line 1 and line 2") {
		t.Errorf("duplicate: %+v", a.Outcome)
	}
}

// TestCacheEndsWithImport: CheckJob (called once per import, after every
// attempt) drops the parsed files, so a second import re-reads them.
func TestCacheEndsWithImport(t *testing.T) {
	dir := t.TempDir()
	name := "samples_t_2026-01-01T00-00-00.jsonl"
	write := func(v string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"doc_id": 0, "acc": `+v+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := New()
	write("1.0")
	if a := p.ReadAttempt(&dirFiles{root: dir}, name+"#0/acc/none"); a.Outcome.Status != outcome.Success {
		t.Fatalf("%+v", a.Outcome)
	}
	if _, err := p.CheckJob(dir, producers.PlannedSet{Sample: []string{name + "#0/acc/none"}, Trials: 1}); err != nil {
		t.Fatal(err)
	}
	write("0.0")
	if a := p.ReadAttempt(&dirFiles{root: dir}, name+"#0/acc/none"); a.Outcome.Status != outcome.Failure {
		t.Errorf("the second import saw the first's file: %+v", a.Outcome)
	}
}

func TestDraft(t *testing.T) {
	p := New()
	ctx := context.Background()
	d, err := p.Draft(ctx, "testdata/two-tasks", producers.DraftOptions{Task: "arc_easy", Metric: "acc"})
	if err != nil {
		t.Fatal(err)
	}
	pl := d.Plan
	if pl.Source.Format != "lm-eval" || pl.Source.Revision != "0.4.13.dev0+4e7e0d4" || len(pl.Trials) != 10 ||
		pl.Checkpoint.Ref != "hf://EleutherAI/pythia-160m@50f5173d932e8e61f858120bcb800b97af589f46" || pl.Split != "REPLACE_SPLIT" {
		t.Errorf("plan %+v", pl)
	}
	with := 0
	for i, tr := range pl.Trials {
		if tr.Task != TrialTask("arc_easy", i) || tr.Repeat != 0 {
			t.Errorf("trial %d: %+v", i, tr)
		}
		if len(tr.Attempts) == 1 {
			with++
			if tr.Attempts[0].Dir != Locator("EleutherAI__pythia-160m/"+SamplesFile("arc_easy", twoTS), i, Score{"acc", "none"}) {
				t.Errorf("trial %d dir %s", i, tr.Attempts[0].Dir)
			}
		}
	}
	res := readResults(t, twoTasks, twoTS)
	if with != 6 || pl.Protocol.DatasetDigest != res.Task("arc_easy").TaskHash || len(d.Proposed) != 2 ||
		pl.Settings["metric"] != "acc" || pl.Settings["filter"] != "none" || !reflect.DeepEqual(pl.Settings["dataset"], map[string]any{"planned_samples": 10, "samples": 2376, "item": "document", "whole": "split"}) {
		t.Errorf("draft: %d with attempts, proposed %+v, settings %v", with, d.Proposed, pl.Settings)
	}
	if !strings.Contains(strings.Join(d.Warnings, "\n"), "does not reproduce lm-eval's task_hashes[arc_easy]") {
		t.Errorf("warnings %v", d.Warnings)
	}

	_, err = p.Draft(ctx, "testdata/two-tasks", producers.DraftOptions{})
	var re *RunsError
	if !errors.As(err, &re) || len(re.Candidates) != 2 || !strings.Contains(re.Hint(), "--task arc_easy") {
		t.Errorf("two tasks: %v", err)
	}
	_, err = p.Draft(ctx, "testdata/paired", producers.DraftOptions{Metric: "acc"})
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "--task arc_easy --model EleutherAI/pythia-160m") {
		t.Errorf("two models: %v", err)
	}
	_, err = p.Draft(ctx, "testdata/two-tasks", producers.DraftOptions{Task: "mmlu"})
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "no lm-eval task under testdata/two-tasks matches --task mmlu (tasks: arc_easy, gsm8k)") {
		t.Errorf("unknown task: %v", err)
	}
	if _, err := p.Draft(ctx, t.TempDir(), producers.DraftOptions{}); err == nil || !strings.Contains(err.Error(), "no lm-eval results file") {
		t.Errorf("empty root: %v", err)
	}
	if p.Detect(t.TempDir()) || !p.Detect("testdata/two-tasks") {
		t.Error("Detect")
	}
}

func TestCheckJob(t *testing.T) {
	p := New()
	// Through a samples locator: lm-eval's figure for the plan's metric.
	rel := "EleutherAI__pythia-160m/" + SamplesFile("arc_easy", twoTS)
	c, err := p.CheckJob("testdata/two-tasks", producers.PlannedSet{Sample: []string{Locator(rel, 0, Score{"acc", "none"})}, Trials: 10})
	if err != nil || c == nil || c.Differs != "" {
		t.Fatalf("%+v %v", c, err)
	}
	lines := c.Facts.(*RunFacts).Beside(snapshot.Counts{Expected: 10, Success: 4, Failure: 2, Missing: 4})
	if lines[0] != "lm-eval says acc 0.6 over 10 documents (10 of 2,376 documents of the split); tpctl: 4 of 6 scored, 4 missing" {
		t.Errorf("beside %q", lines)
	}
	// No attempt at all (no samples file): found by the task, judged by
	// the plan's settings.
	c, err = p.CheckJob("testdata/two-tasks", producers.PlannedSet{Trials: 9, Tasks: producers.TaskList(producers.PlannedTask{Name: "gsm8k/0", Trials: 1}),
		Settings: map[string]any{"metric": "exact_match", "filter": "flexible-extract"}})
	if err != nil || c == nil {
		t.Fatalf("%+v %v", c, err)
	}
	lines = c.Facts.(*RunFacts).Beside(snapshot.Counts{Expected: 9, Missing: 9})
	if lines[0] != "lm-eval says exact_match (flexible-extract) 0.625 over 8 documents (8 of 1,319 documents of the split); tpctl: 0 of 0 scored, 9 missing" ||
		!strings.Contains(c.Differs, "the plan lists 9 trials but lm-eval's n-samples.effective for gsm8k is 8") {
		t.Errorf("beside %q differs %q", lines, c.Differs)
	}
	if c, err := p.CheckJob(t.TempDir(), producers.PlannedSet{Tasks: producers.TaskList(producers.PlannedTask{Name: "x/0", Trials: 1})}); c != nil || err != nil {
		t.Errorf("no run: %+v %v", c, err)
	}
}
