package inspect

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/fixtures"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/producers"
)

// dirFiles is producers.Files over a folder, counting reads.
type dirFiles struct {
	root  string
	reads int
}

func (f *dirFiles) ReadFile(rel string, max int64) ([]byte, error) {
	f.reads++
	return os.ReadFile(filepath.Join(f.root, filepath.FromSlash(rel)))
}

func TestLocatorRoundTrip(t *testing.T) {
	for _, id := range []SampleID{{"1", true}, {"1", false}, {"a/b#c,d=e&f\"g", false}, {"-3", true}} {
		loc := Locator("logs/x.eval", id, 2, 1, "pkg/scorer,x")
		l, err := parseLocator(loc)
		if err != nil {
			t.Fatalf("%s: %v", loc, err)
		}
		if l.file != "logs/x.eval" || l.id != id || l.epoch != 2 || l.retry != 1 || l.scorer != "pkg/scorer,x" {
			t.Errorf("%s read back as %+v", loc, l)
		}
	}
	for _, bad := range []string{"x.eval", "x.eval#sample=1", "x.eval#sample=1,epoch=0,retry=0", "x.eval#sample=b,epoch=1,retry=0", "x.eval#sample=1,epoch=1,retry=-1", "x.eval#sample=1,sample=2,epoch=1,retry=0", "x.eval#junk"} {
		if _, err := parseLocator(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzParseLocator: never a panic, and what parses is written back the
// same way it reads.
func FuzzParseLocator(f *testing.F) {
	f.Add("x.eval#sample=1,epoch=1,retry=0,scorer=match")
	f.Add(`x.eval#sample=%22b%22,epoch=2,retry=1,scorer=`)
	f.Fuzz(func(t *testing.T, loc string) {
		l, err := parseLocator(loc)
		if err != nil {
			return
		}
		again, err := parseLocator(Locator(l.file, l.id, l.epoch, l.retry, l.scorer))
		if err != nil || again != l {
			t.Fatalf("%q: %+v, written back %+v (%v)", loc, l, again, err)
		}
	})
}

// TestReadAttemptThroughFiles: the synthetic log's attempts, read as the
// importer reads them; the log is read once for all of them.
func TestReadAttemptThroughFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.eval"), synthEval(t), 0o644); err != nil {
		t.Fatal(err)
	}
	p := New()
	files := &dirFiles{root: dir}
	for _, c := range []struct {
		id            SampleID
		epoch, retry  int
		status        outcome.Status
		reason, class string
	}{
		{SampleID{"1", true}, 1, 0, outcome.InfraError, ReasonInfraException, "openai.RateLimitError"},
		{SampleID{"1", true}, 1, 1, outcome.Success, ReasonScoreSuccess, ""},
		{SampleID{"1", true}, 2, 0, outcome.Failure, ReasonErrorScored, "RuntimeError"},
		{SampleID{"b", false}, 2, 0, outcome.Unscored, ReasonOperatorLimit, ""},
		{SampleID{"3", true}, 2, 0, outcome.Unscored, outcome.ReasonResultMissing, ""},
		{SampleID{"1", true}, 1, 5, outcome.Unscored, outcome.ReasonResultMissing, ""},
	} {
		a := p.ReadAttempt(files, Locator("s.eval", c.id, c.epoch, c.retry, "match"))
		got := ""
		if a.Outcome.ExceptionType != nil {
			got = *a.Outcome.ExceptionType
		}
		if a.Outcome.Status != c.status || a.Outcome.Reason != c.reason || got != c.class {
			t.Errorf("%s epoch %d retry %d: %+v", c.id, c.epoch, c.retry, a.Outcome)
		}
		if c.reason != outcome.ReasonResultMissing && (a.Evidence.ResultSHA256 == nil || a.Task != "synthetic/"+c.id.Text) {
			t.Errorf("%s: evidence %v task %q", c.id, a.Evidence.ResultSHA256, a.Task)
		}
	}
	if files.reads != 1 {
		t.Errorf("the log was read %d times for 6 attempts, want once", files.reads)
	}
	if a := p.ReadAttempt(files, "gone.eval#sample=1,epoch=1,retry=0,scorer=match"); a.Outcome.Reason != outcome.ReasonResultMissing {
		t.Errorf("a log that is not there: %+v", a.Outcome)
	}
	if a := p.ReadAttempt(files, "s.eval"); a.Outcome.Reason != outcome.ReasonResultInvalid {
		t.Errorf("a locator without a sample: %+v", a.Outcome)
	}
	// Transcript: the sample's messages from the log under root.
	parts, _, err := p.Transcript(dir, Locator("s.eval", SampleID{"1", true}, 1, 1, "match"))
	if err != nil || len(parts) != 1 {
		t.Fatalf("parts %v err %v", parts, err)
	}
}

// TestDraftFolder: a folder of several logs is refused naming each with
// its flag; --log picks one; a folder with none is refused.
func TestDraftFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.eval"), synthEval(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.json"), []byte(synthHeader("2", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := New()
	if !p.Detect(dir) || p.Detect(t.TempDir()) || p.Detect("../../testdata/example") {
		t.Error("Detect")
	}
	_, err := p.Draft(context.Background(), dir, producers.DraftOptions{})
	var le *LogsError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "--log other.json") || !strings.Contains(err.Error(), "--log s.eval") {
		t.Fatalf("several logs: %v", err)
	}
	d, err := p.Draft(context.Background(), dir, producers.DraftOptions{Log: "s.eval", Split: "heldout"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Plan.Trials) != 6 || d.Plan.Source.Revision != "0.3.260" || d.Plan.Split != "heldout" || len(d.Proposed) != 1 {
		t.Errorf("plan %+v", d.Plan)
	}
	if n := len(d.Plan.Trials[0].Attempts); n != 2 {
		t.Errorf("sample 1 epoch 1 has %d attempts, want 2 (the retried 429, then the sample)", n)
	}
	if len(d.Plan.Trials[5].Attempts) != 0 {
		t.Errorf("the missing pair has attempts %v", d.Plan.Trials[5].Attempts)
	}
	// An eval set's manifest naming a task the folder has no log of.
	if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"eval_set_id": "s1", "tasks": [{"name": "synthetic", "task_id": "t1", "model": "openai/gpt-x", "task_args": {}, "model_args": {}, "sequence": 0}, {"name": "other", "task_id": "t9", "model": "openai/gpt-x", "task_args": {}, "model_args": {}, "sequence": 1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err = p.Draft(context.Background(), dir, producers.DraftOptions{Log: "s.eval"})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(d.Warnings, "\n"); !strings.Contains(w, "planned task other with model openai/gpt-x (task_id t9)") || strings.Contains(w, "task_id t1") {
		t.Errorf("warnings %s", w)
	}
	var ne *NoLogError
	if _, err := p.Draft(context.Background(), t.TempDir(), producers.DraftOptions{}); !errors.As(err, &ne) {
		t.Errorf("an empty folder: %v", err)
	}
	if _, err := p.Draft(context.Background(), dir, producers.DraftOptions{Log: "s.eval", Scorer: "nope"}); err == nil {
		t.Error("an unknown scorer drafted")
	}
}

// TestDetectFixtures: the shared Inspect folders are Inspect's; the
// version-3 log alone is still detected (and refused by the draft).
func TestDetectFixtures(t *testing.T) {
	dir := fixtures.Inspect(t)
	p := New()
	for _, sub := range []string{"scorer/logs", "analysis/test_logs", "log/test_eval_log"} {
		if !p.Detect(filepath.Join(dir, sub)) {
			t.Errorf("Detect(%s) = false", sub)
		}
	}
	v3 := t.TempDir()
	b, err := os.ReadFile(filepath.Join(dir, "log/test_eval_log/log_message_deduplication.eval"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v3, "d.eval"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !p.Detect(v3) {
		t.Error("a version-3 log is not detected")
	}
	var ve *VersionError
	if _, err := p.Draft(context.Background(), v3, producers.DraftOptions{}); !errors.As(err, &ve) {
		t.Errorf("draft of a version-3 log: %v", err)
	}
}

// TestDraftIDCollision: the ids 1 and "1" are two samples to Inspect but
// would be one trial; the draft refuses rather than merge them.
func TestDraftIDCollision(t *testing.T) {
	dir := t.TempDir()
	h := strings.Replace(synthHeader("2", ""), `"sample_ids": [1, "b", 3]`, `"sample_ids": [1, "1"]`, 1)
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *TaskCollisionError
	if _, err := New().Draft(context.Background(), dir, producers.DraftOptions{}); !errors.As(err, &ce) || ce.Task != "synthetic/1" {
		t.Errorf("err %v", err)
	}
}

// TestCheckJobFindsTheLogByTasks: with no attempt of the plan present,
// the log compared is the one whose task names every planned trial's
// task, and none when no log or several do.
func TestCheckJobFindsTheLogByTasks(t *testing.T) {
	dir := t.TempDir()
	for name, task := range map[string]string{"a.json": "synthetic", "b.json": "other"} {
		h := strings.Replace(synthHeader("2", ""), `"task": "synthetic"`, `"task": "`+task+`"`, 1)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(h), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tasks := func(names ...string) producers.PlannedTasks {
		var ts []producers.PlannedTask
		for _, n := range names {
			ts = append(ts, producers.PlannedTask{Name: n, Trials: 2})
		}
		return producers.TaskList(ts...)
	}
	for _, tc := range []struct {
		tasks producers.PlannedTasks
		log   string
	}{
		{tasks("synthetic/1", "synthetic/b"), "a.json"},
		{tasks("other/1", "other/3"), "b.json"},
		{tasks("other/1", "synthetic/3"), ""},
		{tasks("synthetic/1", "zzz/1"), ""},
		{tasks(), ""},
		{nil, ""},
	} {
		c, err := New().CheckJob(dir, producers.PlannedSet{Trials: 4, Tasks: tc.tasks})
		if err != nil {
			t.Fatalf("%s: %v", tc.log, err)
		}
		got := ""
		if c != nil {
			got = c.Facts.(*Facts).Log
		}
		if got != tc.log {
			t.Errorf("log %q, want %q", got, tc.log)
		}
	}
}
