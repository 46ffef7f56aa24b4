package plandraft

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers/harbor"
)

// maxDraftDepth bounds the folder walk below --root.
const maxDraftDepth = 6

// DraftSkip is a folder with a result.json that could not be used.
type DraftSkip struct {
	Dir    string `json:"dir"`
	Reason string `json:"reason"`
}

// TrialRootError means --root is itself a trial folder (it holds a trial's
// result.json), not the job folder above it.
type TrialRootError struct {
	Root string
}

func (e *TrialRootError) Error() string {
	return fmt.Sprintf("--root %q is a trial folder (its result.json is one trial's); give the job folder that holds the trial folders, e.g. %q", e.Root, filepath.Dir(filepath.Clean(e.Root)))
}

type found struct {
	dir, task, started string
}

// draftLoose walks root for Harbor trial folders (folders holding a
// TrialResult result.json) and drafts a plan. Task identity comes only
// from each result's task_name, never from folder names. Repeats are
// numbered per task in the order of (started_at, folder path), so
// re-running the draft on the same folder gives the same plan. Symlinks
// and `.sources` caches are not followed.
func draftLoose(root string) (*Draft, error) {
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--root %q is not a readable folder", root)
	}
	var trials []found
	d := &Draft{Skipped: []DraftSkip{}}
	revision := ""
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !e.IsDir() {
			return nil
		}
		if e.Name() == ".sources" || strings.Count(rel, "/") >= maxDraftDepth {
			return filepath.SkipDir
		}
		if revision == "" {
			revision = lockRevision(filepath.Join(p, "lock.json"))
		}
		resPath := filepath.Join(p, "result.json")
		if _, err := os.Lstat(resPath); err != nil {
			return nil
		}
		b, err := safefs.ReadFileCapped(resPath, harbor.MaxResultSize)
		if err != nil {
			d.Skipped = append(d.Skipped, DraftSkip{rel, err.Error()})
			return nil
		}
		if rel == "." && !isJobResult(b) {
			// A plan's dir must name a folder below --root; a draft with
			// "dir": "." could never pass plan check.
			return &TrialRootError{Root: root}
		}
		r, err := harbor.DecodeTrialResultBytes(b)
		if err != nil || r.TaskName == "" {
			if isJobResult(b) {
				return nil // a job-level result.json; its trials are below
			}
			reason := "result.json has no task_name"
			if err != nil {
				reason = err.Error()
			}
			d.Skipped = append(d.Skipped, DraftSkip{rel, reason + "; add this trial by hand if it belongs to the plan"})
			return nil
		}
		started := ""
		if r.StartedAt != nil {
			started = *r.StartedAt
		}
		trials = append(trials, found{dir: rel, task: r.TaskName, started: started})
		return nil
	})
	var tre *TrialRootError
	if errors.As(err, &tre) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("failed to walk %q: %w", root, err)
	}
	slices.SortFunc(trials, func(a, b found) int {
		return cmp.Or(strings.Compare(a.task, b.task), strings.Compare(a.started, b.started), strings.Compare(a.dir, b.dir))
	})
	if revision == "" {
		revision = planfile.PlaceholderRevision
	}
	p := &planfile.Plan{
		Version:    1,
		Source:     planfile.Source{Format: "harbor", Revision: revision},
		Name:       filepath.Base(filepath.Clean(root)),
		Split:      planfile.PlaceholderSplit,
		Trainable:  false,
		Checkpoint: planfile.Checkpoint{Ref: planfile.PlaceholderCheckpoint},
		Protocol: planfile.Protocol{
			DatasetDigest:     planfile.PlaceholderDataset,
			VerifierDigest:    planfile.PlaceholderVerifier,
			EnvironmentDigest: planfile.PlaceholderEnvironment,
			HarnessDigest:     planfile.PlaceholderHarness,
		},
		Settings: map[string]any{},
		Trials:   []planfile.Trial{},
	}
	repeat := map[string]int{}
	for _, t := range trials {
		p.Trials = append(p.Trials, planfile.Trial{Task: t.task, Repeat: repeat[t.task], Attempts: []planfile.Attempt{{Retry: 0, Dir: t.dir}}})
		repeat[t.task]++
	}
	d.Plan = p
	return d, nil
}

// isJobResult recognises Harbor's JobResult (job-level result.json).
func isJobResult(b []byte) bool {
	var probe struct {
		Stats    json.RawMessage `json:"stats"`
		NTotal   json.RawMessage `json:"n_total_trials"`
		TaskName json.RawMessage `json:"task_name"`
	}
	if json.Unmarshal(b, &probe) != nil {
		return false
	}
	return probe.TaskName == nil && (probe.Stats != nil || probe.NTotal != nil)
}

// lockRevision reads a v0.22.0 lock.json's harbor version or commit and
// maps it to a validated revision, or returns "".
func lockRevision(path string) string {
	b, err := safefs.ReadFileCapped(path, 16<<20)
	if err != nil {
		return ""
	}
	var lock struct {
		Harbor struct {
			Version   string `json:"version"`
			GitCommit string `json:"git_commit_hash"`
		} `json:"harbor"`
	}
	if json.Unmarshal(b, &lock) != nil {
		return ""
	}
	for _, r := range formats.Harbor {
		if lock.Harbor.GitCommit == r.Commit || (lock.Harbor.Version != "" && r.Name == "v"+lock.Harbor.Version) {
			return r.Commit
		}
	}
	return ""
}
