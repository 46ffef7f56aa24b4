package importer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
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
			res, err := Import(context.Background(), Options{PlanPath: plan, Root: root, Out: out,
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

// TestTranscriptsStepTrajectory: a multi-step attempt's trajectory under
// steps/<name>/agent/ is found when it is a real folder.
func TestTranscriptsStepTrajectory(t *testing.T) {
	root, plan := writeJob(t, goodResult(`{"rewards":{"reward":1}}`, "null"), false)
	agent := filepath.Join(root, "job", "t__1", "steps", "a-step", "agent")
	mkdir(t, agent)
	if err := os.WriteFile(filepath.Join(agent, "trajectory.json"), []byte(outsideTrajectory), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Import(context.Background(), Options{PlanPath: plan, Root: root, Out: filepath.Join(t.TempDir(), "snap"),
		Transcripts: &TranscriptOptions{Limit: 4, Redactors: []string{"builtin:secrets"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Trajectories.Count != 1 || len(res.Skipped) != 0 {
		t.Errorf("count %d, skipped %+v; want the step's trajectory", res.Manifest.Trajectories.Count, res.Skipped)
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
