// Package safefs reads and writes files the careful way: relative paths are
// checked component by component under a root (no symlinks, no escapes),
// reads are size-capped, and writes are atomic (temp file, fsync, rename,
// fsync of the folder) so a crash leaves the old state or the new, never half.
package safefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Path problem codes, shared with plan findings.
const (
	CodeAbsolute  = "path_absolute"
	CodeTraversal = "path_traversal"
	CodeUnclean   = "path_unclean"
	CodeSymlink   = "symlink"
	CodeMissing   = "dir_missing"
	CodeNotDir    = "not_dir"
	CodeSpecial   = "special_file"
)

// PathError says why a relative path was refused.
type PathError struct {
	Rel  string // the path as given
	Code string // one of the Code* constants
	At   string // the offending component prefix, when known
	Err  error
}

func (e *PathError) Error() string {
	msg := map[string]string{
		CodeAbsolute:  "is absolute; give a path relative to --root",
		CodeTraversal: "contains '..'; paths may not leave --root",
		CodeUnclean:   "is not clean (empty or '.' segment, backslash, or trailing slash)",
		CodeSymlink:   "goes through a symlink",
		CodeMissing:   "does not exist",
		CodeNotDir:    "is not a directory",
		CodeSpecial:   "is not a regular file",
	}[e.Code]
	s := fmt.Sprintf("path %q %s", e.Rel, msg)
	if e.At != "" && e.At != e.Rel {
		s += fmt.Sprintf(" (at %q)", e.At)
	}
	if e.Err != nil && e.Code != CodeMissing {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *PathError) Unwrap() error { return e.Err }

// CheckRel validates the form of a slash-separated relative path without
// touching the filesystem.
func CheckRel(rel string) error {
	switch {
	case rel == "":
		return &PathError{Rel: rel, Code: CodeUnclean}
	case strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) || (len(rel) >= 2 && rel[1] == ':'):
		return &PathError{Rel: rel, Code: CodeAbsolute}
	case strings.Contains(rel, "\\"):
		return &PathError{Rel: rel, Code: CodeUnclean}
	}
	for rest, more := rel, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		switch seg {
		case "..":
			return &PathError{Rel: rel, Code: CodeTraversal}
		case "", ".":
			return &PathError{Rel: rel, Code: CodeUnclean}
		}
	}
	if strings.ContainsRune(rel, 0) {
		return &PathError{Rel: rel, Code: CodeUnclean}
	}
	return nil
}

// Resolve checks rel with CheckRel, then lstats every component below root
// and refuses symlinks anywhere on the way. It returns the joined path. A
// missing component gives a PathError with CodeMissing wrapping
// fs.ErrNotExist.
func Resolve(root, rel string) (string, error) {
	if err := CheckRel(rel); err != nil {
		return "", err
	}
	cur := root
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		cur = filepath.Join(cur, seg)
		fi, err := os.Lstat(cur)
		at := strings.Join(segs[:i+1], "/")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", &PathError{Rel: rel, Code: CodeMissing, At: at, Err: fs.ErrNotExist}
			}
			return "", &PathError{Rel: rel, Code: CodeMissing, At: at, Err: err}
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", &PathError{Rel: rel, Code: CodeSymlink, At: at}
		}
		if i < len(segs)-1 && !fi.IsDir() {
			return "", &PathError{Rel: rel, Code: CodeNotDir, At: at}
		}
	}
	return cur, nil
}

// TooLargeError reports a file over its size cap.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than the %d-byte limit", e.Path, e.Limit)
}

// OpenRegular opens path for reading without following a final symlink and
// refuses anything but a regular file.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &PathError{Rel: path, Code: CodeSymlink}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &PathError{Rel: path, Code: CodeSpecial}
	}
	return f, nil
}

// ReadCapped reads all of r but fails with TooLargeError past limit bytes,
// never buffering more than limit+1 bytes.
// A regular file is read into one buffer sized from its length (plus one
// byte, to notice growth) instead of growing and copying as it goes, and one
// already bigger than limit is refused without reading a byte.
func ReadCapped(r io.Reader, name string, limit int64) ([]byte, error) {
	size := int64(512)
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			if fi.Size() > limit {
				return nil, &TooLargeError{Path: name, Limit: limit}
			}
			b, err := readInto(nil, fi.Size(), limit, name, r.Read)
			var tl *TooLargeError
			if err != nil && !errors.As(err, &tl) {
				return nil, errors.Unwrap(err) // as io.ReadAll reports it
			}
			return b, err
		}
	}
	if l, ok := r.(interface{ Len() int }); ok { // bytes.Reader, strings.Reader
		if int64(l.Len()) > limit {
			return nil, &TooLargeError{Path: name, Limit: limit}
		}
		size = int64(l.Len()) + 1
	}
	buf := make([]byte, 0, size)
	lr := io.LimitReader(r, limit+1)
	for {
		if len(buf) == cap(buf) {
			// Double up to the cap (+1 to detect overflow), so a stream
			// costs at most about twice the cap in allocations in total.
			next := max(2*int64(cap(buf)), 4096)
			if next >= limit {
				next = limit + 1
			}
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			buf = nb
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{Path: name, Limit: limit}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ReadFileCapped reads a regular file (no symlink) of at most limit bytes.
// The size is checked before reading so a huge file costs no memory.
func ReadFileCapped(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return ReadCapped(f, path, limit)
}

// WriteFile writes data to path atomically: a temp file in the same folder
// is written, fsynced, closed, renamed over path, and the folder fsynced to
// commit the rename (WriteFileFrom). A leftover of an earlier, killed
// write of path whose owner is gone is removed first; callers that report
// it call CleanFileLeftovers themselves, before.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	_, err := WriteFileFrom(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	return err
}

// CleanFileLeftovers removes the temporary files an earlier write of path
// left (killed between creating and renaming its temporary) whose owner is
// gone, and lists them with those of no recorded owner, which it leaves
// (Leftover.Message says what to do). A temporary whose owner still runs
// is never touched.
func CleanFileLeftovers(path string) []Leftover {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	return cleanTemps(dir, func(name string) bool { return strings.HasPrefix(name, "."+base+".tmp-") })
}

// WriteNew writes data to a new file in a folder being built (not yet
// visible), fsyncing it; the caller renames the folder and syncs its parent.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	return WriteNewParts(path, [][]byte{data}, perm)
}

// WriteNewParts is WriteNew for content given in parts, so that a caller
// need not copy a large buffer only to append a few bytes to it.
func WriteNewParts(path string, parts [][]byte, perm fs.FileMode) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	for _, data := range parts {
		if _, err = f.Write(data); err != nil {
			return fmt.Errorf("failed to write %q: %w", path, err)
		}
	}
	return f.Sync()
}

// SyncDir fsyncs a folder so that renames and creations in it are durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("failed to open folder %q to sync it: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("failed to sync folder %q: %w", dir, err)
	}
	return nil
}

// ExistsError means an output path that must be new already exists. It
// matches fs.ErrExist, so callers can report it as a usage error.
type ExistsError struct {
	Path string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%q already exists; choose a new output path (tpctl never overwrites or resumes one)", e.Path)
}

// Unwrap lets errors.Is(err, fs.ErrExist) recognise it.
func (e *ExistsError) Unwrap() error { return fs.ErrExist }

// MustNotExist returns an *ExistsError unless path is absent. Rename onto
// an empty folder succeeds on Linux, so "the output must be new" needs this
// check.
func MustNotExist(path string) error {
	_, err := os.Lstat(path)
	if err == nil {
		return &ExistsError{Path: path}
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot check output folder %q: %w", path, err)
	}
	return nil
}

// PublishDir renames a fully written temporary folder to its final name,
// refusing to replace anything that appeared meanwhile, and syncs the parent.
func PublishDir(tmp, final string) error {
	if err := MustNotExist(final); err != nil {
		return err
	}
	// renameat2(RENAME_NOREPLACE) closes the race between the check and the
	// rename; fall back to plain rename where the kernel lacks it.
	if err := renameNoReplace(tmp, final); err != nil {
		return fmt.Errorf("failed to move %q into place as %q: %w", tmp, final, err)
	}
	return SyncDir(filepath.Dir(final))
}

// LockSuffix ends the name of the file Lock locks beside a path.
const LockSuffix = ".lock"

// OpenContext is os.Open that gives up when ctx ends: opening a named
// pipe blocks until a writer opens it, and a signal must still stop tpctl
// promptly (issue 35: a plan that was a FIFO survived two SIGINTs). The
// open that was given up is finished and closed in the background.
func OpenContext(ctx context.Context, path string) (*os.File, error) {
	if ctx == nil || ctx.Done() == nil {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, fmt.Errorf("opening %q: %w", path, context.Cause(ctx))
	}
}
