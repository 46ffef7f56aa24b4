package digest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// dirHeader starts every folder listing so that the rules version is part
// of the hashed bytes and a folder digest can never be mistaken for the
// digest of some file's bytes.
const dirHeader = Rules + " dir\n"

// DirOptions changes what Dir lists. The zero value lists everything.
type DirOptions struct {
	// Exclude names entries to leave out, with everything under them.
	// An entry without a slash (".git") matches a file or folder of that
	// exact name at any depth; an entry with a slash ("build/cache")
	// matches exactly that path relative to the root. No wildcards: an
	// exclusion is part of how a digest was made and must be easy to
	// repeat. Excluded entries are skipped before their type is checked,
	// so an excluded symlink is not an error.
	Exclude []string
}

// NameError is a file name that cannot be hashed portably.
type NameError struct {
	Path   string
	Reason string
}

func (e *NameError) Error() string { return fmt.Sprintf("%q: %s", e.Path, e.Reason) }

// ExcludeError is an unusable DirOptions.Exclude entry.
type ExcludeError struct {
	Entry string
	Err   error
}

func (e *ExcludeError) Error() string {
	return fmt.Sprintf("invalid exclusion %q: %v; give a name such as .git or a clean relative path such as build/cache", e.Entry, e.Err)
}

func (e *ExcludeError) Unwrap() error { return e.Err }

// entry is one regular file in a listing.
type entry struct {
	rel  string // slash-separated path relative to the root
	abs  string
	exec bool
}

// Dir returns the SHA-256 of root's canonical listing (rules in
// docs/digest-rules.md): a header line, then for each regular file in
// byte order of its slash path, "<path>\x00<x|->\x00<file sha256 hex>\n".
// Empty folders do not appear. A symlink, socket, device or named pipe
// anywhere below root fails with *UnsupportedFileError naming it.
func Dir(root string, opts DirOptions) (Digest, error) {
	return DirContext(context.Background(), root, opts)
}

// DirContext is Dir that stops when ctx is cancelled.
func DirContext(ctx context.Context, root string, opts DirOptions) (Digest, error) {
	ex, err := newExcluder(opts.Exclude)
	if err != nil {
		return Digest{}, err
	}
	if err := checkRoot(root); err != nil {
		return Digest{}, err
	}
	var files []entry
	if err := walk(ctx, root, "", ex, &files); err != nil {
		return Digest{}, err
	}
	sortEntries(files)
	h := sha256.New()
	h.Write([]byte(dirHeader))
	line := make([]byte, 0, 256)
	for _, e := range files {
		fd, err := FileContext(ctx, e.abs)
		if err != nil {
			return Digest{}, err
		}
		mode := byte('-')
		if e.exec {
			mode = 'x'
		}
		line = append(line[:0], e.rel...)
		line = append(line, 0, mode, 0)
		line = hex.AppendEncode(line, fd[:])
		line = append(line, '\n')
		h.Write(line)
	}
	var d Digest
	h.Sum(d[:0])
	return d, nil
}

// checkRoot requires root to be a real folder, not a symlink to one.
func checkRoot(root string) error {
	fi, err := os.Lstat(root)
	if err != nil {
		return fmt.Errorf("failed to open folder %q: %w", root, err)
	}
	m := fi.Mode()
	switch {
	case m.IsDir():
		return nil
	case m.IsRegular():
		return &KindError{Path: root, Mode: m, Want: "folder"}
	}
	return &UnsupportedFileError{Path: root, Mode: m}
}

// walk appends every regular file under dir (relative path prefix rel) to
// files. os.ReadDir returns names sorted, so the first problem reported is
// the same on every run.
func walk(ctx context.Context, dir, rel string, ex excluder, files *[]entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("failed to list folder %q: %w", dir, err)
	}
	for _, de := range des {
		name := de.Name()
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		if ex.match(name, r) {
			continue
		}
		abs := filepath.Join(dir, name)
		if !utf8.ValidString(name) {
			return &NameError{Path: abs, Reason: "file name is not valid UTF-8; rename it so that every implementation lists the same path"}
		}
		switch t := de.Type(); {
		case t.IsDir():
			if err := walk(ctx, abs, r, ex, files); err != nil {
				return err
			}
		case t.IsRegular():
			fi, err := de.Info()
			if err != nil {
				return fmt.Errorf("failed to stat %q: %w", abs, err)
			}
			*files = append(*files, entry{rel: r, abs: abs, exec: fi.Mode().Perm()&0o100 != 0})
		default:
			return &UnsupportedFileError{Path: abs, Mode: t}
		}
	}
	return nil
}

// sortEntries orders by the bytes of the slash path. This is not the order
// of a depth-first walk ("a-b/x" sorts before "a/x" because '-' < '/'),
// and it equals code-point order, which is what Python's sorted() gives.
func sortEntries(files []entry) {
	slices.SortFunc(files, func(a, b entry) int { return strings.Compare(a.rel, b.rel) })
}

type excluder struct {
	names map[string]bool
	paths map[string]bool
}

func newExcluder(list []string) (excluder, error) {
	ex := excluder{names: map[string]bool{}, paths: map[string]bool{}}
	for _, e := range list {
		if err := safefs.CheckRel(e); err != nil {
			return ex, &ExcludeError{Entry: e, Err: err}
		}
		if strings.Contains(e, "/") {
			ex.paths[e] = true
		} else {
			ex.names[e] = true
		}
	}
	return ex, nil
}

func (ex excluder) match(name, rel string) bool { return ex.names[name] || ex.paths[rel] }
