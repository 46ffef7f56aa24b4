package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/internal/harborgen"
	"github.com/tuneplane/tpctl/producers/harbor"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/transcript"
)

const outsideTrajectory = `{"schema_version":"ATIF-v1.5","steps":[{"source":"user","message":"OUTSIDE-THE-JOB"}]}`

// TestTranscriptsRefuseSymlinks: a trajectory is never read through a
// symlink below the attempt's folder (the agent folder, a step folder or
// the file itself), even when it points at a valid ATIF file outside the
// job; the attempt is skipped with the reason instead.
func TestTranscriptsRefuseSymlinks(t *testing.T) {
	tests := []struct {
		name string
		link func(t *testing.T, attempt, outside string)
		want string
	}{
		{"agent folder", func(t *testing.T, attempt, outside string) {
			symlink(t, filepath.Join(outside, "agent"), filepath.Join(attempt, "agent"))
		}, `t#0 retry 0: path "job/t__1/agent/trajectory.json" goes through a symlink (at "job/t__1/agent")`},
		{"trajectory file", func(t *testing.T, attempt, outside string) {
			mkdir(t, filepath.Join(attempt, "agent"))
			symlink(t, filepath.Join(outside, "agent", "trajectory.json"), filepath.Join(attempt, "agent", "trajectory.json"))
		}, `t#0 retry 0: path "job/t__1/agent/trajectory.json" goes through a symlink`},
		{"step folder", func(t *testing.T, attempt, outside string) {
			mkdir(t, filepath.Join(attempt, "steps"))
			symlink(t, outside, filepath.Join(attempt, "steps", "s1"))
		}, `t#0 retry 0: path "job/t__1/steps/s1/agent/trajectory.json" goes through a symlink (at "job/t__1/steps/s1")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, plan := writeJob(t, goodResult(`{"rewards":{"reward":1}}`, "null"), false)
			outside := t.TempDir()
			mkdir(t, filepath.Join(outside, "agent"))
			if err := os.WriteFile(filepath.Join(outside, "agent", "trajectory.json"), []byte(outsideTrajectory), 0o644); err != nil {
				t.Fatal(err)
			}
			tt.link(t, filepath.Join(root, "job", "t__1"), outside)
			out := filepath.Join(t.TempDir(), "snap")
			res, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out,
				Transcripts: &TranscriptOptions{Limit: 4, Redactors: []string{"builtin:secrets"}}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Manifest.Trajectories.Count != 0 {
				t.Errorf("%d trajectories exported through a symlink", res.Manifest.Trajectories.Count)
			}
			var got []string
			for _, w := range res.Skipped {
				got = append(got, w.Code+": "+w.Message)
			}
			if d := cmp.Diff([]string{"trajectory_skipped: " + tt.want}, got); d != "" {
				t.Errorf("skipped (-want +got):\n%s", d)
			}
		})
	}
}

// multiStepResult is a result.json whose step_results run the named steps
// in the given order.
func multiStepResult(steps ...string) []byte {
	var b strings.Builder
	for i, n := range steps {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"step_name":%q,"verifier_result":{"rewards":{"reward":1.0}},"exception_info":null,"agent_execution":null,"verifier":null}`, n)
	}
	r := goodResult(`{"rewards":{"reward":1.0}}`, "null")
	return append(r[:len(r)-1], []byte(`,"step_results":[`+b.String()+`]}`)...)
}

func stepTrajectory(texts ...string) string {
	var b strings.Builder
	b.WriteString(`{"schema_version":"ATIF-v1.6","steps":[`)
	for i, tx := range texts {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"step_id":%d,"source":"user","message":%q}`, i+1, tx)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestTranscriptsMultiStep: a multi-step attempt's body holds every step's
// trajectory in execution order (step_results, not folder names), each
// behind a step boundary message, with the limits applied to the whole and
// the cut declared; without a step order the folders are taken by name and
// a warning says so.
func TestTranscriptsMultiStep(t *testing.T) {
	steps := map[string][]string{"zeta": {"z1", "z2"}, "alpha": {"a1"}, "mid": {"m1", "m2", "m3"}}
	mark := func(i, n int, name string) string {
		return fmt.Sprintf("%sstep %d of %d: %q", harbor.StepMarkerPrefix, i, n, name)
	}
	tests := []struct {
		name      string
		result    []byte
		limit     int
		want      []string
		total     int
		truncated bool
		warning   string
	}{
		{"execution order", multiStepResult("zeta", "alpha", "mid"), 0,
			[]string{mark(1, 3, "zeta"), "z1", "z2", mark(2, 3, "alpha"), "a1", mark(3, 3, "mid"), "m1", "m2", "m3"}, 9, false, ""},
		{"a step without a trajectory is left out", multiStepResult("zeta", "gone", "alpha"), 0,
			[]string{mark(1, 3, "zeta"), "z1", "z2", mark(3, 3, "alpha"), "a1"}, 5, false, ""},
		{"limits apply to the whole body", multiStepResult("zeta", "alpha", "mid"), 4,
			[]string{mark(1, 3, "zeta"), "z1", "z2", mark(2, 3, "alpha")}, 9, true, ""},
		{"no step order: folder names, said", goodResult(`{"rewards":{"reward":1}}`, "null"), 0,
			[]string{mark(1, 3, "alpha"), "a1", mark(2, 3, "mid"), "m1", "m2", "m3", mark(3, 3, "zeta"), "z1", "z2"}, 9, false,
			"trajectory_step_order: t#0 retry 0: result.json gives no step order (step_results), so the steps are in folder-name order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, plan := writeJob(t, tt.result, false)
			for name, texts := range steps {
				agent := filepath.Join(root, "job", "t__1", "steps", name, "agent")
				mkdir(t, agent)
				if err := os.WriteFile(filepath.Join(agent, "trajectory.json"), []byte(stepTrajectory(texts...)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(t.TempDir(), "snap")
			res, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out,
				Transcripts: &TranscriptOptions{Limit: 4, Redactors: []string{"builtin:secrets"}, Limits: transcript.Limits{MaxMessages: tt.limit}}})
			if err != nil {
				t.Fatal(err)
			}
			var warnings []string
			for _, w := range res.Skipped {
				warnings = append(warnings, w.Code+": "+w.Message)
			}
			var wantW []string
			if tt.warning != "" {
				wantW = []string{tt.warning}
			}
			if d := cmp.Diff(wantW, warnings); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
			if res.Manifest.Trajectories.Count != 1 {
				t.Fatalf("%d trajectories, want the attempt's one body", res.Manifest.Trajectories.Count)
			}
			b, err := os.ReadFile(filepath.Join(out, "trajectories", "0001.json"))
			if err != nil {
				t.Fatal(err)
			}
			var body transcript.Trajectory
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range body.Messages {
				got = append(got, m.Content)
				if strings.HasPrefix(m.Content, harbor.StepMarkerPrefix) && m.Role != "system" {
					t.Errorf("marker %q has role %q", m.Content, m.Role)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
			if body.TotalMessages != tt.total || body.Truncated != tt.truncated || body.Complete {
				t.Errorf("total_messages %d truncated %v complete %v; want %d %v false", body.TotalMessages, body.Truncated, body.Complete, tt.total, tt.truncated)
			}
		})
	}
}

// TestTranscriptsBadStepName: a step_name that is not one folder name is
// never used as a path.
func TestTranscriptsBadStepName(t *testing.T) {
	root, plan := writeJob(t, multiStepResult("../../elsewhere"), false)
	res, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: filepath.Join(t.TempDir(), "snap"),
		Transcripts: &TranscriptOptions{Limit: 4, Redactors: []string{"builtin:secrets"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Trajectories.Count != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Message, `step name "../../elsewhere" is not a folder name`) {
		t.Errorf("count %d, skipped %+v", res.Manifest.Trajectories.Count, res.Skipped)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot create symlinks here: %v", err)
	}
}

// TestTranscriptsParallelSameAsSerial: building trajectories on several
// goroutines writes the same snapshot, byte for byte, with the same skips
// in the same order, and fails with the same first error, as building
// them one at a time: a job with unreadable trajectories among good ones,
// a limit below the number of candidates, cuts, and (second case) two
// trajectories holding a known secret.
func TestTranscriptsParallelSameAsSerial(t *testing.T) {
	const secret = "hunter2-correct-horse-battery"
	job, err := harborgen.WriteWith(t.TempDir(), 30, harborgen.Options{Trajectories: 24, TrajectoryBytes: 48 << 10})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(job.Root, "jobs", "*", "*", "agent", "trajectory.json"))
	if len(files) != 24 {
		t.Fatalf("%d trajectories, want 24", len(files))
	}
	for _, i := range []int{2, 3, 11} {
		if err := os.WriteFile(files[i], []byte(`{"schema_version":"ATIF-v1.6","steps":[`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, workers int, sc *redact.Scanner) (map[string]string, []Warning, error) {
		t.Helper()
		defer func(w int) { exportWorkers = w }(exportWorkers)
		exportWorkers = workers
		out := filepath.Join(t.TempDir(), "snap")
		res, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: job.PlanPath, Root: job.Root, Out: out, Scanner: sc,
			Transcripts: &TranscriptOptions{Limit: 17, Redactors: []string{"builtin:secrets"}, Limits: transcript.Limits{MaxMessages: 40, MaxBytes: 64 << 10}}})
		if err != nil {
			return nil, nil, err
		}
		got := map[string]string{}
		err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(out, p)
			got[rel] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, res.Skipped, nil
	}
	t.Run("snapshot", func(t *testing.T) {
		want, wantSkipped, err := run(t, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(wantSkipped); n != 3 {
			t.Fatalf("serial export skipped %d trajectories, want 3: %v", n, wantSkipped)
		}
		if _, ok := want[filepath.Join("trajectories", "0017.json")]; !ok {
			t.Fatal("serial export wrote fewer than 17 trajectories")
		}
		for _, w := range []int{2, 3, 8} {
			got, skipped, err := run(t, w, nil)
			if err != nil {
				t.Fatalf("%d workers: %v", w, err)
			}
			if d := cmp.Diff(wantSkipped, skipped); d != "" {
				t.Errorf("%d workers: skipped (-serial +parallel):\n%s", w, d)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%d workers: snapshot files differ (-serial +parallel):\n%.2000s", w, d)
			}
		}
	})
	t.Run("first secret", func(t *testing.T) {
		for _, i := range []int{6, 14} {
			if err := os.WriteFile(files[i], []byte(stepTrajectory("the password is "+secret)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sc := redact.NewScanner([]string{"DB_PASSWORD=" + secret})
		_, _, want := run(t, 1, sc)
		var found *redact.SecretFoundError
		if !errors.As(want, &found) {
			t.Fatalf("serial export: %v, want a SecretFoundError", want)
		}
		for _, w := range []int{2, 8} {
			if _, _, err := run(t, w, sc); err == nil || err.Error() != want.Error() {
				t.Errorf("%d workers: error %v, want %v", w, err, want)
			}
		}
	})
}
