package lmeval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// Run is one lm-eval run found under a root: its results file and the
// samples files of the same date id beside it.
type Run struct {
	// Dir is the folder holding the files, slash-separated and relative
	// to the root ("." for the root itself). lm-eval writes into
	// OUTPUT_PATH/<sanitized model name>/.
	Dir string
	// Results is the results file's name in Dir; Timestamp its date id.
	Results, Timestamp string
	// Samples maps a task to its samples file's name in Dir.
	Samples map[string]string
}

// ResultsPath and SamplesPath are the run's files relative to the root.
func (r Run) ResultsPath() string { return path.Join(r.Dir, r.Results) }

// SamplesPath is task's samples file relative to the root, "" when the
// run has none for it.
func (r Run) SamplesPath(task string) string {
	if f, ok := r.Samples[task]; ok {
		return path.Join(r.Dir, f)
	}
	return ""
}

// Listing is what Scan found under a root.
type Listing struct {
	Runs []Run
	// Orphans are samples files with no results file of their date id
	// beside them (a run that never finished writing its results).
	Orphans []string
}

// Scan bounds: lm-eval's layout is two levels deep; a root that is a whole
// home folder is not walked forever.
const (
	scanDepth   = 4
	scanEntries = 200_000
)

// Scan lists the lm-eval runs under root, sorted by folder and date id.
// Symbolic links are not followed.
func Scan(root string) (*Listing, error) {
	l := &Listing{}
	seen := 0
	var walk func(dir string, depth int) error
	walk = func(rel string, depth int) error {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			if rel == "." {
				return err
			}
			return nil // an unreadable subfolder holds nothing we can read
		}
		seen += len(entries)
		if seen > scanEntries {
			return fmt.Errorf("%s: more than %d entries; point --root at lm-eval's --output_path", root, scanEntries)
		}
		runs := map[string]*Run{}
		samples := map[string]map[string]string{} // ts → task → file
		for _, e := range entries {
			name := e.Name()
			if e.Type().IsDir() {
				if depth < scanDepth {
					if err := walk(path.Join(rel, name), depth+1); err != nil {
						return err
					}
				}
				continue
			}
			if !e.Type().IsRegular() {
				continue
			}
			if task, ts, ok := SamplesName(name); ok {
				if samples[ts] == nil {
					samples[ts] = map[string]string{}
				}
				samples[ts][task] = name
				continue
			}
			if ts, ok := ResultsTimestamp(name); ok {
				runs[ts] = &Run{Dir: rel, Results: name, Timestamp: ts, Samples: map[string]string{}}
			}
		}
		for ts, tasks := range samples {
			r := runs[ts]
			for task, f := range tasks {
				if r == nil {
					l.Orphans = append(l.Orphans, path.Join(rel, f))
					continue
				}
				r.Samples[task] = f
			}
		}
		for _, r := range runs {
			l.Runs = append(l.Runs, *r)
		}
		return nil
	}
	if err := walk(".", 0); err != nil {
		return nil, err
	}
	slices.SortFunc(l.Runs, func(a, b Run) int {
		if a.Dir != b.Dir {
			if a.Dir < b.Dir {
				return -1
			}
			return 1
		}
		if a.Timestamp < b.Timestamp {
			return -1
		}
		if a.Timestamp > b.Timestamp {
			return 1
		}
		return 0
	})
	slices.Sort(l.Orphans)
	return l, nil
}

// OpenResults reads the run's results file under root (no symlinks, capped).
func OpenResults(root string, r Run) (*Results, error) {
	p, err := safefs.Resolve(root, r.ResultsPath())
	if err != nil {
		return nil, err
	}
	data, err := safefs.ReadFileCapped(p, MaxResultsBytes)
	if err != nil {
		var tl *safefs.TooLargeError
		if errors.As(err, &tl) {
			return nil, &TooLargeError{File: r.ResultsPath(), Limit: MaxResultsBytes}
		}
		return nil, err
	}
	return ParseResults(data, r.ResultsPath())
}

// OpenSamples opens task's samples file of the run under root, refusing a
// symlink; (nil, nil) when the run has none. The caller closes it.
func OpenSamples(root string, r Run, task string) (fs.File, error) {
	rel := r.SamplesPath(task)
	if rel == "" {
		return nil, nil
	}
	p, err := safefs.Resolve(root, rel)
	if err != nil {
		return nil, err
	}
	return safefs.OpenRegular(p)
}
