package plandraft

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/planfile"
)

func TestDraftFromJob(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	result := func(task, started string) string {
		return `{"task_name":"` + task + `","trial_name":"x","task_checksum":"abc","started_at":"` + started + `","verifier_result":null,"exception_info":null}`
	}
	// Folder names disagree with task names on purpose: identity comes
	// from result.json only.
	write("result.json", `{"id":"j","started_at":null,"stats":{"n_trials":3}}`)
	write("zzz__1/result.json", result("org/alpha", "2026-01-01T00:00:02Z"))
	write("aaa__2/result.json", result("org/alpha", "2026-01-01T00:00:01Z"))
	write("beta__3/result.json", result("org/beta", "2026-01-01T00:00:00Z"))
	write("broken__4/result.json", `{"task_name": `)
	write("empty__5/.keep", "")
	if err := os.Symlink(filepath.Join(root, "beta__3"), filepath.Join(root, "link__6")); err != nil {
		t.Fatal(err)
	}

	d, err := FromJob(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []planfile.Trial{
		{Task: "org/alpha", Repeat: 0, Attempts: []planfile.Attempt{{Retry: 0, Dir: "aaa__2"}}},
		{Task: "org/alpha", Repeat: 1, Attempts: []planfile.Attempt{{Retry: 0, Dir: "zzz__1"}}},
		{Task: "org/beta", Repeat: 0, Attempts: []planfile.Attempt{{Retry: 0, Dir: "beta__3"}}},
	}
	if diff := cmp.Diff(want, d.Plan.Trials); diff != "" {
		t.Errorf("trials mismatch (-want +got):\n%s", diff)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].Dir != "broken__4" {
		t.Errorf("skipped = %+v; want broken__4 only", d.Skipped)
	}
	b, err := planfile.DraftJSON(d.Plan)
	if err != nil {
		t.Fatal(err)
	}
	_, fs := planfile.Parse(b, "draft.json", planfile.Options{})
	codes := map[string]bool{}
	for _, f := range fs {
		codes[f.Code] = true
	}
	for _, c := range []string{"digest_placeholder", "checkpoint_unpinned", "revision_unverified", "placeholder"} {
		if !codes[c] {
			t.Errorf("draft does not fail with %s: %v", c, fs)
		}
	}
	if _, err := FromJob(filepath.Join(root, "nope"), Options{}); err == nil {
		t.Error("draft of a missing folder succeeded")
	}
}

// TestDraftFromTrialFolder: --root naming a trial folder instead of its
// job folder is refused with the job folder named, instead of a draft
// whose "dir": "." could never pass plan check.
func TestDraftFromTrialFolder(t *testing.T) {
	job := t.TempDir()
	trial := filepath.Join(job, "hello__1")
	if err := os.Mkdir(trial, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(trial, "result.json"), []byte(`{"task_name":"org/hello","trial_name":"hello__1","task_checksum":"abc","started_at":null,"verifier_result":null,"exception_info":null}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := FromJob(trial, Options{})
	var tre *TrialRootError
	if !errors.As(err, &tre) || !strings.Contains(err.Error(), job) {
		t.Fatalf("DraftFromJob(trial folder) = %v; want a TrialRootError naming %q", err, job)
	}
	d, err := FromJob(job, Options{})
	if err != nil || len(d.Plan.Trials) != 1 || d.Plan.Trials[0].Attempts[0].Dir != "hello__1" {
		t.Errorf("FromJob(job, Options{}) = %+v, %v", d, err)
	}
}
