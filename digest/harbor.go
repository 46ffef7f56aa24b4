package digest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// Harbor's task content hash (Packager.compute_content_hash, used for the
// "sha256:…" task digest in lock.json since Harbor 2026-06) covers these
// single files at the task root and every file below these folders.
var (
	harborSingleFiles = []string{"task.toml", "instruction.md", "README.md", "trajectory.json"}
	harborDirs        = []string{"environment", "tests", "solution", "steps"}
)

// HarborDefaultIgnores are the patterns Harbor applies when a task has no
// .gitignore. A task's .gitignore replaces them; it does not add to them.
var HarborDefaultIgnores = []string{"__pycache__/", "*.pyc", ".DS_Store", "*.swp", "*.swo", "*~"}

// maxGitignore caps the .gitignore read from an untrusted task folder.
const maxGitignore = 1 << 20

// HarborTask returns Harbor's content hash of the task folder dir: SHA-256
// over "<relpath>\x00<file sha256 hex>\n" lines, sorted by path, for
// task.toml, instruction.md, README.md, trajectory.json and every file
// under environment/, tests/, solution/ and steps/, minus the paths
// matched by the task's .gitignore (or, without one, by
// HarborDefaultIgnores). The value equals the hex after "sha256:" in the
// task digest of Harbor's lock.json.
//
// Where Harbor would follow a symlink or silently skip a socket or device,
// HarborTask refuses with *UnsupportedFileError: it either gives Harbor's
// value or no value.
func HarborTask(dir string) (Digest, error) {
	return HarborTaskContext(context.Background(), dir)
}

// HarborTaskContext is HarborTask that stops when ctx is cancelled.
func HarborTaskContext(ctx context.Context, dir string) (Digest, error) {
	files, err := harborTaskFiles(ctx, dir)
	if err != nil {
		return Digest{}, err
	}
	h := sha256.New()
	line := make([]byte, 0, 256)
	for _, rel := range files {
		fd, err := FileContext(ctx, filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return Digest{}, err
		}
		line = append(line[:0], rel...)
		line = append(line, 0)
		line = hex.AppendEncode(line, fd[:])
		line = append(line, '\n')
		h.Write(line)
	}
	var d Digest
	h.Sum(d[:0])
	return d, nil
}

// HarborTaskFiles lists, sorted, the slash paths relative to dir that
// HarborTask hashes. It is exported so a person can see why a digest
// differs from Harbor's.
func HarborTaskFiles(dir string) ([]string, error) {
	return harborTaskFiles(context.Background(), dir)
}

func harborTaskFiles(ctx context.Context, dir string) ([]string, error) {
	if err := checkRoot(dir); err != nil {
		return nil, err
	}
	spec, err := harborIgnoreSpec(dir)
	if err != nil {
		return nil, err
	}
	var cands []entry
	for _, name := range harborSingleFiles {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("failed to stat %q: %w", p, err)
		}
		if !fi.Mode().IsRegular() {
			// Harbor would hash a symlink's target or crash on a folder.
			return nil, &UnsupportedFileError{Path: p, Mode: fi.Mode()}
		}
		cands = append(cands, entry{rel: name, abs: p})
	}
	for _, name := range harborDirs {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("failed to stat %q: %w", p, err)
		}
		switch m := fi.Mode(); {
		case m.IsDir():
		case m.IsRegular():
			// Harbor's rglob over a file yields nothing: a file named
			// "tests" contributes nothing to the hash.
			continue
		default:
			return nil, &UnsupportedFileError{Path: p, Mode: m}
		}
		// Harbor lists files first and filters them after, so an ignored
		// folder is still walked: a symlink inside it is refused too.
		if err := walk(ctx, p, name, excluder{}, &cands); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, c := range cands {
		if spec.ignored(c.rel) {
			continue
		}
		out = append(out, c.rel)
	}
	slices.Sort(out)
	return out, nil
}

func harborIgnoreSpec(dir string) (ignoreSpec, error) {
	p := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return compileIgnore("(harbor default ignores)", HarborDefaultIgnores)
	}
	f, err := openRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := safefs.ReadCapped(f, p, maxGitignore)
	if err != nil {
		return nil, fmt.Errorf("failed to read %q: %w", p, err)
	}
	if !utf8.Valid(data) {
		return nil, &PatternError{File: p, Line: 0, Reason: "file is not valid UTF-8"}
	}
	return compileIgnore(p, pySplitLines(string(data)))
}
