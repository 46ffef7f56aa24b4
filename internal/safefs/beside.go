package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The one writer of the files tpctl puts beside snapshots (issue 35):
// report pages, trend pages, export folders, attestation bundles, plans
// and locks, and the snapshot folders import and eval run create. Each
// command used to check its --out its own way, and some not at all: trend
// wrote inside an input snapshot (which then failed verification) and
// replaced a device node under --force.

// SnapshotManifest is the file that makes a folder a snapshot
// (snapshot.ManifestFile is this name).
const SnapshotManifest = "snapshot.json"

// InsideSnapshotError means an output path lies inside a snapshot folder,
// where an unlisted file makes the snapshot fail verification.
type InsideSnapshotError struct {
	Path string // the output path as given
	Dir  string // the snapshot folder it lies in
}

func (e *InsideSnapshotError) Error() string {
	return fmt.Sprintf("%q lies inside a snapshot folder (%q); nothing was written there, since an unlisted file makes a snapshot fail verification", e.Path, e.Dir)
}

// NotRegularError means an output path exists and is not a regular file
// (a symbolic link, a folder, a FIFO, a device or a socket): tpctl never
// replaces one, even with --force, and never writes through a link.
type NotRegularError struct {
	Path string
	Kind string // "a symbolic link", "a folder", "a named pipe (FIFO)", …
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%q is %s, not a regular file; tpctl never replaces one, even with --force", e.Path, e.Kind)
}

// kindOf names a file mode for NotRegularError.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// CheckOutside refuses (*InsideSnapshotError) an output path that lies
// inside one of inputs (the command's input snapshots) or inside any
// folder that is a snapshot (holds SnapshotManifest), judged on the real
// path: a symbolic link in either cannot hide it. A path that is itself
// one of inputs counts as inside it. A parent folder that does not exist
// yet is fine (the callers make it).
func CheckOutside(path string, inputs ...string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("cannot resolve the output path %q: %w", path, err)
	}
	real := realPath(abs)
	for _, in := range inputs {
		d, err := filepath.Abs(in)
		if err != nil {
			continue
		}
		if within(abs, d) || within(real, realPath(d)) {
			return &InsideSnapshotError{Path: path, Dir: in}
		}
	}
	// Any folder up from the output that is a snapshot (the output
	// itself, when it is one, already exists: its writer says so).
	for d := filepath.Dir(real); ; {
		if fi, err := os.Lstat(filepath.Join(d, SnapshotManifest)); err == nil && fi.Mode().IsRegular() {
			return &InsideSnapshotError{Path: path, Dir: d}
		}
		up := filepath.Dir(d)
		if up == d {
			return nil
		}
		d = up
	}
}

// within reports whether p is d or lies below it.
func within(p, d string) bool {
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath is abs with symbolic links resolved in its longest existing
// prefix; the rest (not made yet) is kept as given.
func realPath(abs string) string {
	rest := ""
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		up := filepath.Dir(p)
		if up == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = up
	}
}

// CheckReplaceable refuses an existing path that is not a regular file
// (*NotRegularError: a symbolic link, a folder, a FIFO, a device, a
// socket), whatever force says, and an existing regular file unless
// force is set (*ExistsError). A missing path is fine.
func CheckReplaceable(path string, force bool) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("cannot check the output path %q: %w", path, err)
	case !fi.Mode().IsRegular():
		return &NotRegularError{Path: path, Kind: kindOf(fi.Mode())}
	case !force:
		return &ExistsError{Path: path}
	}
	return nil
}

// WriteBeside writes data to the file path beside snapshots: CheckOutside
// (inputs are the command's input snapshots), CheckReplaceable, then
// WriteFile (a temporary sibling renamed over path: the rename replaces
// the directory entry, never a link's target). Every file tpctl writes
// beside snapshots goes through it or, for a folder, through
// CheckOutside and PublishDir.
func WriteBeside(path string, data []byte, perm fs.FileMode, force bool, inputs ...string) error {
	if err := CheckOutside(path, inputs...); err != nil {
		return err
	}
	if err := CheckReplaceable(path, force); err != nil {
		return err
	}
	return WriteFile(path, data, perm)
}

// WriteBesideFrom is WriteBeside for content streamed by write
// (WriteFileFrom): the checks come first, and the file appears at path
// only once write returns nil. It returns the number of bytes written.
func WriteBesideFrom(path string, perm fs.FileMode, force bool, inputs []string, write func(io.Writer) error) (int64, error) {
	if err := CheckOutside(path, inputs...); err != nil {
		return 0, err
	}
	if err := CheckReplaceable(path, force); err != nil {
		return 0, err
	}
	return WriteFileFrom(path, perm, write)
}
