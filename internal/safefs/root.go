package safefs

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
)

// Root reads many files below one folder with the guarantees of Resolve
// and OpenRegular (no symlink in any component, intermediate components
// are folders, the file is regular, its size is capped) at the cost of one
// open per file where the kernel allows it. It is safe for concurrent use.
type Root struct {
	path string
	sys  rootSys // platform part: an open folder handle on Linux
}

// OpenRoot opens the folder that relative paths are resolved under. The
// folder itself may be reached through a symlink, as with Resolve: only
// components below it are checked.
func OpenRoot(path string) (*Root, error) {
	r := &Root{path: path}
	if err := r.sys.open(path); err != nil {
		return nil, fmt.Errorf("failed to open root folder %q: %w", path, err)
	}
	return r, nil
}

// Close releases the folder handle.
func (r *Root) Close() error { return r.sys.close() }

// ReadFile reads the regular file at the slash-separated relative path rel
// into buf (reused when large enough; the result may alias it) and returns
// its content. Errors are those of Resolve (a *PathError; a missing
// folder has CodeMissing), of OpenRegular on the file (fs.ErrNotExist
// when it is absent, CodeSymlink, CodeSpecial) or a *TooLargeError past
// limit bytes, in which case nothing beyond the size check is read.
func (r *Root) ReadFile(rel string, buf []byte, limit int64) ([]byte, error) {
	if err := CheckRel(rel); err != nil {
		return nil, err
	}
	if data, ok, err := r.sys.readFast(rel, buf, limit); ok {
		return data, err
	}
	return r.readSlow(rel, buf, limit)
}

// readSlow is the portable path and the one that explains failures: it
// lstats each folder component (Resolve) and opens the file without
// following a final symlink (OpenRegular).
func (r *Root) readSlow(rel string, buf []byte, limit int64) ([]byte, error) {
	dir, name := filepath.Split(filepath.FromSlash(rel))
	p := filepath.Join(r.path, name)
	if dir != "" {
		d, err := Resolve(r.path, filepath.ToSlash(filepath.Clean(dir)))
		if err != nil {
			return nil, err
		}
		p = filepath.Join(d, name)
	}
	f, err := OpenRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: rel, Limit: limit}
	}
	return readInto(buf, fi.Size(), limit, rel, f.Read)
}

// readInto reads until EOF with read into buf, sized for size bytes plus
// one so that a file that grew after the size check is noticed; past
// limit it fails with TooLargeError.
func readInto(buf []byte, size, limit int64, name string, read func([]byte) (int, error)) ([]byte, error) {
	want := int(min(size, limit)) + 1
	if cap(buf) < want {
		buf = make([]byte, 0, want)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, &TooLargeError{Path: name, Limit: limit}
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := read(buf[len(buf):cap(buf)])
		if n > 0 {
			buf = buf[:len(buf)+n]
		}
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{Path: name, Limit: limit}
		}
		if n == 0 && err == nil {
			// A read of zero bytes without error is end of file for the
			// raw system call.
			return buf, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return buf, nil
			}
			return nil, fmt.Errorf("failed to read %s: %w", name, err)
		}
	}
}
