package safefs

import (
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
// untouched. It returns the number of bytes written.
func WriteFileFrom(path string, perm fs.FileMode, write func(io.Writer) error) (n int64, err error) {
	CleanFileLeftovers(path)
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	pid := os.Getpid()
	start, _ := processStart(pid)
	f, err := os.CreateTemp(dir, fmt.Sprintf(".%s.tmp-%d-%d-*", base, pid, start))
	if err != nil {
		return 0, fmt.Errorf("failed to create temporary file for %q: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	cw := &countWriter{w: f}
	if err = write(cw); err != nil {
		return 0, err
	}
	if err = f.Chmod(perm); err != nil {
		return 0, fmt.Errorf("failed to set mode of %q: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return 0, fmt.Errorf("failed to sync %q: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return 0, fmt.Errorf("failed to close %q: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return 0, fmt.Errorf("failed to rename into %q: %w", path, err)
	}
	return cw.n, SyncDir(dir)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil {
		return n, fmt.Errorf("failed to write: %w", err)
	}
	return n, nil
}
