package plandraft

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/planfile"
)

// copyJob copies a job folder Harbor's own models wrote into a new
// folder, for a test to change as Harbor would have.
func copyJob(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// rerun makes the folder Harbor writes when it runs a trial again under a
// new name: the same lock.json (Harbor writes the job lock's TrialLock),
// and config.json and result.json as the original's with the new
// trial_name (and trial_uri); withResult false leaves it running (no
// result.json yet).
func rerun(t *testing.T, job, old, name string, withResult bool) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(job, name), 0o755); err != nil {
		t.Fatal(err)
	}
	files := []string{"lock.json", "config.json"}
	if withResult {
		files = append(files, "result.json")
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(job, old, f))
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.ReplaceAll(string(b), old, name))
		if err := os.WriteFile(filepath.Join(job, name, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumedJob (issue 31 part 3): Harbor, resuming a job
// (Job._maybe_init_existing_job), skips a trial folder whose result.json
// is empty or does not parse as a TrialResult — logging "Skipping existing
// trial directory … because result.json …" — keeps it on disk, and runs
// the trial again under a new name. The job here is the v0.22.0 job
// Harbor's own models wrote (testdata/harbor-v0.22.0), changed exactly so:
// terminus-2's finished hello-world__pmtszBJ gets a result.json cut in
// half (or emptied), and its rerun hello-world__Rr5sMx2 is a copy of the
// folder under the new name, as Harbor's TrialConfig and TrialResult
// would be written. plan init used to refuse it ("a folder Harbor did not
// plan", exit 2); the folder whose result parses — or, while the rerun
// runs, the rerun — takes the slot, the other is listed as skipped with
// Harbor's reason.
func TestResumedJob(t *testing.T) {
	const old, rr = "hello-world__pmtszBJ", "hello-world__Rr5sMx2"
	for _, tt := range []struct {
		name       string
		broken     string
		withResult bool
		why        string
		counts     Counts
		rerunName  string
	}{
		{"unparsable, rerun finished", `{"id": "9f1c2d3e-`, true, "result.json could not be parsed: ", Counts{Finished: 4, Interrupted: 1, NeverStarted: 1}, rr},
		{"empty, rerun finished", "\n", true, "result.json is empty", Counts{Finished: 4, Interrupted: 1, NeverStarted: 1}, rr},
		{"unparsable, rerun running", `{"id": "9f1c2d3e-`, false, "result.json could not be parsed: ", Counts{Finished: 3, Interrupted: 2, NeverStarted: 1}, rr},
		// The rerun's folder sorts after the skipped one: it takes the
		// slot the skipped folder was given first.
		{"rerun sorts last", `{"id": "9f1c2d3e-`, true, "result.json could not be parsed: ", Counts{Finished: 4, Interrupted: 1, NeverStarted: 1}, "hello-world__zQ7kW3e"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rr := tt.rerunName
			job := copyJob(t, harborJob)
			rerun(t, job, old, rr, tt.withResult)
			if err := os.WriteFile(filepath.Join(job, old, "result.json"), []byte(tt.broken), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := FromJob(job, Options{Model: "gpt-5.4"})
			if err != nil {
				t.Fatalf("FromJob: %v", err)
			}
			if d.Counts != tt.counts || len(d.Plan.Trials) != 6 {
				t.Errorf("counts %+v of %d trials, want %+v of 6", d.Counts, len(d.Plan.Trials), tt.counts)
			}
			var dirs []string
			for _, tr := range d.Plan.Trials {
				for _, a := range tr.Attempts {
					dirs = append(dirs, a.Dir)
				}
			}
			if !strings.Contains(strings.Join(dirs, " "), rr) || strings.Contains(strings.Join(dirs, " "), old) {
				t.Errorf("planned folders %v: want the rerun %s, not %s", dirs, rr, old)
			}
			if len(d.Skipped) != 1 || d.Skipped[0].Dir != old ||
				!strings.HasPrefix(d.Skipped[0].Reason, "Harbor skipped it when it resumed the job ("+tt.why) ||
				!strings.HasSuffix(d.Skipped[0].Reason, ") and ran the trial again in a new folder; the draft takes the job's 2 planned trial(s) with these inputs from hello-world__FeH4E87, "+rr) {
				t.Errorf("skipped = %+v, want %s with Harbor's reason (%s…)", d.Skipped, old, tt.why)
			}
		})
	}

	// Two folders whose results both parse are still two folders for one
	// planned trial: refused, as before.
	job := copyJob(t, harborJob)
	rerun(t, job, old, rr, true)
	_, err := FromJob(job, Options{Model: "gpt-5.4"})
	var lm *LockMismatchError
	if !errors.As(err, &lm) || !strings.Contains(lm.Reason, "a folder Harbor did not plan") {
		t.Errorf("err = %v, want the folder Harbor did not plan", err)
	}

	// The draft of the unchanged job is the same with or without the
	// rule (the folders sort the same way).
	d1, err := FromJob(harborJob, Options{Model: "gpt-5.4"})
	if err != nil {
		t.Fatal(err)
	}
	d2, err := FromJob(copyJob(t, harborJob), Options{Model: "gpt-5.4"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d1.Plan.Trials, d2.Plan.Trials, cmp.Comparer(func(a, b planfile.Attempt) bool { return a == b })); diff != "" {
		t.Errorf("copied job drafts differently:\n%s", diff)
	}
}
