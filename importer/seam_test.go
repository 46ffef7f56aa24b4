package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tuneplane/tpctl/attempt"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/transcript"
)

// toy is a producer that is not Harbor: an attempt is a folder holding
// score.txt ("1", "0" or anything else) and maybe transcript.txt (one
// message a line). It proves the importer reads attempts, judges them,
// names their rules and builds their transcripts through the producer it
// is given and nothing else.
type toy struct {
	reads atomic.Int64
	job   *producers.JobCheck
}

func (*toy) Format() string { return "toy" }
func (*toy) Name() string   { return "Toy" }
func (*toy) Outcomes() outcome.Table {
	return outcome.Table{Producer: "toy", Version: "toy-outcomes/1", Rules: []outcome.Rule{
		{Situation: "score.txt is 1", Status: outcome.Success, Reason: "toy_one"},
		{Situation: "score.txt is 0", Status: outcome.Failure, Reason: "toy_zero"},
		{Situation: "anything else", Status: outcome.Unscored, Reason: "toy_other"},
	}}
}
func (*toy) Detect(string) bool { return false }
func (*toy) Draft(context.Context, string, producers.DraftOptions) (*producers.Draft, error) {
	return nil, errors.New("toy drafts nothing")
}
func (p *toy) ReadAttempt(files producers.Files, loc string) attempt.Attempt {
	p.reads.Add(1)
	a := attempt.Attempt{Record: loc + "/score.txt", Task: "toy/" + filepath.Base(loc)}
	b, err := files.ReadFile(a.Record, 64)
	switch {
	case err != nil:
		a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultMissing, Detail: err.Error()}
	case string(b) == "1":
		a.Outcome = outcome.Outcome{Status: outcome.Success, Reason: "toy_one"}
	case string(b) == "0":
		a.Outcome = outcome.Outcome{Status: outcome.Failure, Reason: "toy_zero"}
	default:
		a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: "toy_other", Detail: "score.txt says " + strconv.Quote(string(b))}
		a.Identity = []attempt.Field{{Name: "score", Value: string(b)}}
	}
	return a
}
func (*toy) Transcript(root, loc string) ([]transcript.Part, []producers.Note, error) {
	path := filepath.Join(root, filepath.FromSlash(loc), "transcript.txt")
	if _, err := os.Stat(path); err != nil {
		return nil, nil, nil
	}
	read := func(ctx context.Context, body *transcript.Body) (transcript.SourceInfo, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return transcript.SourceInfo{}, err
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		for _, l := range lines {
			if err := body.Add(ctx, transcript.Message{Role: "user", Content: l}); err != nil {
				return transcript.SourceInfo{}, err
			}
		}
		return transcript.SourceInfo{SchemaVersion: "toy-1", Steps: len(lines)}, nil
	}
	return []transcript.Part{{Path: path, Read: read}}, []producers.Note{{Code: "toy_note", Message: "read from transcript.txt"}}, nil
}
func (p *toy) CheckJob(string, producers.PlannedSet) (*producers.JobCheck, error) { return p.job, nil }

// toyJob writes one folder per score under a new root and the plan
// listing them (task toy/aN, repeat 0).
func toyJob(t *testing.T, scores ...string) (string, *planfile.Plan) {
	t.Helper()
	root := t.TempDir()
	plan := &planfile.Plan{Version: 1, Source: planfile.Source{Format: "toy", Revision: "1.0"}, Name: "toy", Split: "test",
		Checkpoint: planfile.Checkpoint{Ref: "hf://acme/m@" + strings.Repeat("a", 40)},
		Protocol: planfile.Protocol{DatasetDigest: strings.Repeat("1", 64), VerifierDigest: strings.Repeat("2", 64),
			EnvironmentDigest: strings.Repeat("3", 64), HarnessDigest: strings.Repeat("4", 64)},
		Settings: map[string]any{"temperature": 0.0}}
	for i, s := range scores {
		dir := "a" + strconv.Itoa(i)
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if s != "" {
			if err := os.WriteFile(filepath.Join(root, dir, "score.txt"), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		plan.Trials = append(plan.Trials, planfile.Trial{Task: "toy/" + dir, Attempts: []planfile.Attempt{{Retry: 0, Dir: dir}}})
	}
	return root, plan
}

// TestImportThroughProducer: a plan of another producer is judged by that
// producer's reader and table, not Harbor's.
func TestImportThroughProducer(t *testing.T) {
	p := &toy{job: &producers.JobCheck{Facts: map[string]int{"declared": 4}, Differs: "toy planned 4"}}
	reg, err := producers.NewRegistry(testProducers.All()[0], p)
	if err != nil {
		t.Fatal(err)
	}
	root, plan := toyJob(t, "1", "0", "maybe", "")
	if err := os.WriteFile(filepath.Join(root, "a0", "transcript.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "snap")
	res, err := ImportPlan(context.Background(), plan, Options{Producers: reg, Root: root, Out: out, AllowUnverifiedFormat: true,
		Transcripts: &TranscriptOptions{Limit: 4, Redactors: []string{"builtin:secrets"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.reads.Load(); got != 4 {
		t.Errorf("the toy producer read %d attempts, want 4", got)
	}
	if res.Manifest.OutcomeRules != "toy-outcomes/1" {
		t.Errorf("outcome_rules %q, want the toy producer's table", res.Manifest.OutcomeRules)
	}
	got := map[string]string{}
	err = snapshot.ReadObservations(out, func(o snapshot.Observation) error {
		got[o.Task] = o.Status + " " + o.Reason + " " + o.AttemptOutcomes[0].Detail
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"toy/a0": "success toy_one ", "toy/a1": "failure toy_zero ", "toy/a2": `unscored toy_other score.txt says "maybe"`}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if !strings.HasPrefix(got["toy/a3"], "unscored result_missing ") {
		t.Errorf("toy/a3: %q, want result_missing from the producer", got["toy/a3"])
	}
	var warned []string
	for _, w := range res.Warnings {
		warned = append(warned, w.Code+": "+w.Message)
	}
	joined := strings.Join(warned, "\n")
	for _, w := range []string{"revision_unverified: Toy revision 1.0 is not a validated format", "plan_differs_from_job: toy planned 4"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
	if m, ok := res.Job.(map[string]int); !ok || m["declared"] != 4 {
		t.Errorf("Job = %#v, want the producer's own facts", res.Job)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Code != "toy_note" || !strings.HasPrefix(res.Skipped[0].Message, "toy/a0#0 retry 0: ") {
		t.Errorf("skipped = %+v, want the producer's note on toy/a0", res.Skipped)
	}
	if res.Manifest.Trajectories.Count != 1 {
		t.Errorf("%d trajectories, want 1", res.Manifest.Trajectories.Count)
	}

	// The identity values a producer names go through the secret gate.
	root, plan = toyJob(t, "ghp_"+strings.Repeat("A", 36))
	_, err = ImportPlan(context.Background(), plan, Options{Producers: reg, Root: root, Out: filepath.Join(t.TempDir(), "snap"), AllowUnverifiedFormat: true})
	var ie *redact.IdentityError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "score") || strings.Contains(err.Error(), "AAAA") {
		t.Errorf("err = %v, want an identity error naming the field, not the value", err)
	}

	// A plan of a format no registered producer reads is refused.
	_, err = ImportPlan(context.Background(), plan, Options{Producers: testProducers, Root: root, Out: filepath.Join(t.TempDir(), "snap"), AllowUnverifiedFormat: true})
	var ue *producers.UnknownFormatError
	if !errors.As(err, &ue) || ue.Format != "toy" {
		t.Errorf("err = %v, want *producers.UnknownFormatError for toy", err)
	}
}

// TestFileLocatorsThroughProducer: attempts that live inside one file
// ("path#fragment" locators) reach the producer whole, and count as
// present when the file exists (not a --root with none of the plan's
// folders).
func TestFileLocatorsThroughProducer(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "log.txt"), []byte("1\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, plan := toyJob(t)
	plan.Trials = []planfile.Trial{
		{Task: "toy/a", Attempts: []planfile.Attempt{{Dir: "log.txt#1"}}},
		{Task: "toy/b", Attempts: []planfile.Attempt{{Dir: "log.txt#2"}}},
	}
	p := &lineProducer{}
	reg, err := producers.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "snap")
	opts := Options{Producers: reg, Root: root, Out: out, AllowUnverifiedFormat: true}
	opts.requireFolders = true // as the CLI's Import
	res, err := ImportPlan(context.Background(), plan, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Manifest.Counts; c.Success != 1 || c.Failure != 1 {
		t.Errorf("counts %+v, want one success and one failure read from the lines", c)
	}
}

// lineProducer is toy with attempts as lines of one file: "FILE#N".
type lineProducer struct{ toy }

func (p *lineProducer) ReadAttempt(files producers.Files, loc string) attempt.Attempt {
	path, frag, _ := strings.Cut(loc, "#")
	a := attempt.Attempt{Record: loc}
	b, err := files.ReadFile(path, 1<<10)
	n, _ := strconv.Atoi(frag)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	switch {
	case err != nil || n < 1 || n > len(lines):
		a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultMissing, Detail: "no such line"}
	case lines[n-1] == "1":
		a.Outcome = outcome.Outcome{Status: outcome.Success, Reason: "toy_one"}
	default:
		a.Outcome = outcome.Outcome{Status: outcome.Failure, Reason: "toy_zero"}
	}
	return a
}

// tasksToy is a toy whose job check reads the plan's tasks, as Harbor's
// does when its job declares its trials, or fails on its own files.
type tasksToy struct {
	toy
	own error
}

func (p *tasksToy) CheckJob(_ string, plan producers.PlannedSet) (*producers.JobCheck, error) {
	if p.own != nil {
		return nil, p.own
	}
	return nil, plan.Tasks(func(producers.PlannedTask) bool { return true })
}

// TestJobUnreadableNamesTheFile: a job check that could not run says
// which read failed: the producer's own files, or the plan's trials read
// again from the snapshot's plan.json.
func TestJobUnreadableNamesTheFile(t *testing.T) {
	_, plan := toyJob(t, "1")
	for _, tc := range []struct {
		name  string
		prod  *tasksToy
		again error
		want  string
	}{
		{"own files", &tasksToy{own: errors.New("config.json: permission denied")}, nil,
			"the Toy job's own files could not be read, so the plan was not compared with them: config.json: permission denied"},
		{"plan again", &tasksToy{}, errors.New("unexpected EOF"),
			"the plan's trials could not be read again from the snapshot's plan.json, so the plan was not compared with the Toy job's own files: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRun(Options{}, tc.prod, plan, true, nil, nil)
			r.again = func(each func(planfile.Trial) error) error {
				if err := each(plan.Trials[0]); err != nil {
					return err
				}
				return tc.again
			}
			ws, err := r.jobCheck(&Result{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ws) != 1 || ws[0].Code != "job_unreadable" || ws[0].Message != tc.want {
				t.Errorf("warnings %+v; want job_unreadable %q", ws, tc.want)
			}
		})
	}
}
