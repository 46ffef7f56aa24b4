package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileFrom is WriteFile for content written by write, streamed into
// the temporary file rather than held in memory: the file appears at path
// (fsynced, renamed into place, the folder fsynced) only when write
// returns nil; on an error the temporary is removed and path is
// untouched. It returns the number of bytes written. A write, fsync or
// close that fails (ENOSPC, EIO) is an error naming path and the fault.
func WriteFileFrom(path string, perm fs.FileMode, write func(io.Writer) error) (n int64, err error) {
	CleanFileLeftovers(path)
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// The temporary's name records its owner, like the snapshot folders'
	// (owner.go), so the next writer can tell a killed run's leftover
	// from a write in progress.
	pid := os.Getpid()
	start, _ := processStart(pid)
	f, err := createTemp(dir, fmt.Sprintf(".%s.tmp-%d-%d-*", base, pid, start))
	if err != nil {
		return 0, fmt.Errorf("failed to create temporary file for %q: %w", path, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	cw := &countWriter{w: f}
	if err = write(cw); err != nil {
		if cw.err != nil && errors.Is(err, cw.err) {
			// The disk failed, not the content: say which file.
			return 0, fmt.Errorf("failed to write %q: %w", path, cw.err)
		}
		return 0, err
	}
	if err = f.Chmod(perm); err != nil {
		return 0, fmt.Errorf("failed to set mode of %q: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return 0, fmt.Errorf("failed to sync %q: %w", path, err)
	}
	// Close before rename: some filesystems dislike renaming open files.
	closed = true
	if err = f.Close(); err != nil {
		return 0, fmt.Errorf("failed to close %q: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return 0, fmt.Errorf("failed to rename into %q: %w", path, err)
	}
	return cw.n, SyncDir(dir)
}

// tempFile is what the writers need of their temporary file.
type tempFile interface {
	io.Writer
	Chmod(fs.FileMode) error
	Sync() error
	Close() error
	Name() string
}

// createTemp creates the writers' temporary files: os.CreateTemp, which
// fault_test.go replaces to inject ENOSPC and EIO mid-way.
var createTemp = func(dir, pattern string) (tempFile, error) { return os.CreateTemp(dir, pattern) }

// countWriter counts what reaches the file and keeps its first error.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		return n, err
	}
	return n, nil
}
