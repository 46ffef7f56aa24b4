//go:build !linux

package safefs

import "os"

// rootSys has no fast path outside Linux: every read takes the portable
// lstat-per-component path.
type rootSys struct{}

func (s *rootSys) open(path string) error {
	fi, err := os.Stat(path)
	if err == nil && !fi.IsDir() {
		return &PathError{Rel: path, Code: CodeNotDir}
	}
	return err
}

func (s *rootSys) close() error { return nil }

func (s *rootSys) readFast(string, []byte, int64) ([]byte, bool, error) { return nil, false, nil }
