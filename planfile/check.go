package planfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// Check applies the filesystem rules under opts.Root: every component of
// every attempt folder is lstat'ed; a symlink anywhere is an error, a
// component that is not a folder is not_dir, and a missing folder is a
// dir_missing warning (the attempt will be unscored, result_missing).
// A dir of the form "path#fragment" is a file locator (a producer whose
// attempts live inside one file, such as an Inspect log or an lm-eval
// samples file): the path's leaf must then be a regular file, and the
// fragment is the producer's own business (docs/plan-format.md).
// Folders whose form is already wrong (see Parse) are skipped. With an
// empty Root, Check returns nil. Findings carry pointers but no line or
// column (Load adds them); they are sorted by pointer then code.
func Check(p *Plan, opts Options) []Finding {
	if p == nil || opts.Root == "" {
		return nil
	}
	var out []Finding
	fi, err := os.Stat(opts.Root)
	if err != nil || !fi.IsDir() {
		msg := fmt.Sprintf("root %q is not a readable folder", opts.Root)
		if err != nil {
			msg = fmt.Sprintf("cannot use root %q: %v", opts.Root, err)
		}
		return []Finding{{Severity: SeverityError, Code: CodeRootInvalid, Pointer: "", Message: msg,
			Hint: "pass --root the folder the plan's dir paths are relative to"}}
	}
	w := &walker{root: opts.Root, prefixes: make(map[string]prefixState)}
	for i, t := range p.Trials {
		for j, a := range t.Attempts {
			rel, file := LocatorPath(a.Dir)
			if safefs.CheckRel(rel) != nil {
				continue
			}
			if f, bad := w.check(rel, file); bad {
				f.Pointer = "/trials/" + strconv.Itoa(i) + "/attempts/" + strconv.Itoa(j) + "/dir"
				out = append(out, f)
			}
		}
	}
	if opts.Strict {
		promote(out)
	}
	SortFindings(out)
	return out
}

// prefixState caches what lstat said about a parent folder. Attempt
// folders of one job share their parents (jobs/<job>/), so caching them
// turns 3–4 lstat calls per attempt into about one.
type prefixState struct {
	code string // "" when it is a real folder
	err  error
}

type walker struct {
	root     string
	prefixes map[string]prefixState
}

// LocatorPath splits an attempt's dir into the path it names under the
// root and whether that path is a file (a "path#fragment" locator) rather
// than a trial folder.
func LocatorPath(dir string) (rel string, file bool) {
	if i := strings.IndexByte(dir, '#'); i >= 0 {
		return dir[:i], true
	}
	return dir, false
}

func (w *walker) stat(rel string, leafFile bool) prefixState {
	fi, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel)))
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return prefixState{code: CodeDirMissing}
	case err != nil:
		return prefixState{code: CodeDirUnreadable, err: err}
	case fi.Mode()&fs.ModeSymlink != 0:
		return prefixState{code: CodeSymlink}
	case leafFile && !fi.Mode().IsRegular():
		return prefixState{code: CodeNotFile}
	case !leafFile && !fi.IsDir():
		return prefixState{code: CodeNotDir}
	}
	return prefixState{}
}

// check walks rel one component at a time, as safefs.Resolve does, and
// returns a finding for the first bad component.
func (w *walker) check(rel string, file bool) (Finding, bool) {
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) && rel[i] != '/' {
			continue
		}
		at := rel[:i]
		var st prefixState
		if i == len(rel) {
			st = w.stat(at, file)
		} else if c, ok := w.prefixes[at]; ok {
			st = c
		} else {
			st = w.stat(at, false)
			w.prefixes[at] = st
		}
		if st.code != "" {
			return w.finding(rel, at, st), true
		}
	}
	return Finding{}, false
}

func (w *walker) finding(rel, at string, st prefixState) Finding {
	where := ""
	if at != rel {
		where = fmt.Sprintf(" (at %q)", at)
	}
	switch st.code {
	case CodeNotFile:
		return Finding{Severity: SeverityError, Code: CodeNotFile,
			Message: fmt.Sprintf("%q is not a regular file%s", rel, where),
			Hint:    "a dir of the form path#fragment names an attempt inside a file (an Inspect log, an lm-eval samples file); point it at that file"}
	case CodeDirMissing:
		return Finding{Severity: SeverityWarning, Code: CodeDirMissing,
			Message: fmt.Sprintf("folder %q does not exist under the root%s", rel, where),
			Hint:    "check --root and the path; if the attempt never ran, remove it from attempts (a listed attempt without a folder is counted as unscored)"}
	case CodeSymlink:
		return Finding{Severity: SeverityError, Code: CodeSymlink,
			Message: fmt.Sprintf("folder %q goes through a symlink%s", rel, where),
			Hint:    "point the plan at the real folder (tpctl never follows symlinks, so a job cannot pull in files from elsewhere)"}
	case CodeNotDir:
		return Finding{Severity: SeverityError, Code: CodeNotDir,
			Message: fmt.Sprintf("%q is not a folder%s", rel, where),
			Hint:    "dir must name a trial folder (the one holding result.json)"}
	}
	msg := fmt.Sprintf("cannot inspect folder %q%s", rel, where)
	if st.err != nil {
		msg += ": " + strings.TrimSpace(st.err.Error())
	}
	return Finding{Severity: SeverityError, Code: CodeDirUnreadable, Message: msg,
		Hint: "check the permissions of the folder and its parents"}
}
