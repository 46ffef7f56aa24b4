package safefs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// faultFile is a real temporary file whose write fails with ENOSPC once
// half of what it was given is on disk, or whose fsync or close fails
// with EIO: the faults a full or failing disk gives, met mid-way.
type faultFile struct {
	*os.File
	at    string // "write", "sync" or "close"
	errno syscall.Errno
}

func (f *faultFile) Write(p []byte) (int, error) {
	if f.at != "write" {
		return f.File.Write(p)
	}
	n, err := f.File.Write(p[:len(p)/2])
	if err != nil {
		return n, err
	}
	return n, &fs.PathError{Op: "write", Path: f.Name(), Err: f.errno}
}

func (f *faultFile) Sync() error {
	if f.at == "sync" {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: f.errno}
	}
	return f.File.Sync()
}

func (f *faultFile) Close() error {
	err := f.File.Close()
	if f.at == "close" {
		return &fs.PathError{Op: "close", Path: f.Name(), Err: f.errno}
	}
	return err
}

// injectFault makes every temporary file the writers create a faultFile
// until the test ends. Not parallel: it replaces the package's seam.
func injectFault(t *testing.T, at string, errno syscall.Errno) {
	t.Helper()
	saved := createTemp
	createTemp = func(dir, pattern string) (tempFile, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		return &faultFile{File: f, at: at, errno: errno}, nil
	}
	t.Cleanup(func() { createTemp = saved })
}

// TestWritersUnderFaults: ENOSPC mid-write, EIO at fsync and at close, in
// each writer of files beside snapshots (WriteFile, WriteBeside,
// WriteBesideFrom). Every failed write leaves the folder as it was — no
// file at the path (or the old one, whole, under --force), no temporary —
// and its error names the path and the fault, and is an I/O error of the
// machine (IsIOError), which cmd/tpctl words as one to fix and retry.
func TestWritersUnderFaults(t *testing.T) {
	data := bytes.Repeat([]byte("page "), 4096)
	writers := []struct {
		name  string
		write func(path string, force bool) error
	}{
		{"WriteFile", func(path string, _ bool) error { return WriteFile(path, data, 0o644) }},
		{"WriteBeside", func(path string, force bool) error { return WriteBeside(path, data, 0o644, force) }},
		{"WriteBesideFrom", func(path string, force bool) error {
			_, err := WriteBesideFrom(path, 0o644, force, nil, func(w io.Writer) error {
				for range 4 { // streamed in parts, as a report page is
					if _, err := w.Write(data[:len(data)/4]); err != nil {
						return err
					}
				}
				return nil
			})
			return err
		}},
	}
	faults := []struct {
		at     string
		errno  syscall.Errno
		saying string
	}{
		{"write", syscall.ENOSPC, "no space left on device"},
		{"sync", syscall.EIO, "input/output error"},
		{"close", syscall.EIO, "input/output error"},
	}
	for _, w := range writers {
		for _, f := range faults {
			for _, replace := range []bool{false, true} {
				name := w.name + "/" + f.at + "/new"
				if replace {
					name = w.name + "/" + f.at + "/replace"
				}
				t.Run(name, func(t *testing.T) {
					dir := t.TempDir()
					path := filepath.Join(dir, "page.html")
					if replace {
						if err := os.WriteFile(path, []byte("old page"), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					injectFault(t, f.at, f.errno)
					err := w.write(path, true)
					if err == nil {
						t.Fatal("the write succeeded under the fault")
					}
					msg := err.Error()
					if !strings.Contains(msg, `"`+path+`"`) || !strings.Contains(msg, f.saying) {
						t.Errorf("error %q does not name the path %q and the fault %q", msg, path, f.saying)
					}
					if !errors.Is(err, f.errno) || !IsIOError(err) {
						t.Errorf("error %q is not %v, an I/O error of the machine", msg, f.errno)
					}
					entries, _ := os.ReadDir(dir)
					var names []string
					for _, e := range entries {
						names = append(names, e.Name())
					}
					got, rerr := os.ReadFile(path)
					switch {
					case !replace && len(entries) != 0:
						t.Errorf("the folder holds %q after a failed write, want nothing", names)
					case replace && (len(entries) != 1 || rerr != nil || string(got) != "old page"):
						t.Errorf("the folder holds %q and the old file reads %q (%v), want the old file alone and whole", names, got, rerr)
					}
				})
			}
		}
	}
}
