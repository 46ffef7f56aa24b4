package digest

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirFiles is the tree whose digest TestDir pins. The expected value was
// computed independently in Python from the rules in docs/digest-rules.md:
//
//	h = hashlib.sha256(b"tpctl-digest/1 dir\n")
//	for rel in sorted(files):  # code-point order of the slash paths
//	    h.update(rel.encode() + b"\0" + (b"x" if exe else b"-") + b"\0"
//	             + hashlib.sha256(content).hexdigest().encode() + b"\n")
//
// "a-b/x" sorts before "a/x" ('-' < '/'), which a depth-first walk would
// get wrong.
var dirFiles = map[string]string{"b.txt": "b\n", "a/run.sh*": "#!/bin/sh\n", "a-b/x": "x", "a/x": "y"}

const (
	dirWant      = "1ff38deffbc3305124f65e65c8b1fee86d97262c66e82652959f7c069aa30d4f"
	emptyDirWant = "1e3e67871b0fa8d1df02b1f2f1458b50ab73d53ca1b1f0e63cf9879b2e629066" // sha256 of the header line alone
)

func TestDir(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		opts  DirOptions
		want  string
	}{
		{"hand computed", func(t *testing.T, dir string) { mkfiles(t, dir, dirFiles) }, DirOptions{}, dirWant},
		{"empty folder", func(t *testing.T, dir string) {}, DirOptions{}, emptyDirWant},
		{"empty subfolders are not listed", func(t *testing.T, dir string) {
			mkfiles(t, dir, dirFiles)
			if err := os.MkdirAll(filepath.Join(dir, "e/f"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, DirOptions{}, dirWant},
		{"exclude by name at any depth", func(t *testing.T, dir string) {
			mkfiles(t, dir, dirFiles)
			mkfiles(t, dir, map[string]string{".git/HEAD": "ref", "a/.git/x": "y"})
			if err := os.Symlink("nowhere", filepath.Join(dir, ".git", "link")); err != nil {
				t.Fatal(err)
			}
		}, DirOptions{Exclude: []string{".git"}}, dirWant},
		{"exclude by path", func(t *testing.T, dir string) {
			mkfiles(t, dir, dirFiles)
			mkfiles(t, dir, map[string]string{"build/cache/o": "1"})
		}, DirOptions{Exclude: []string{"build/cache"}}, dirWant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			got, err := Dir(dir, tt.opts)
			if err != nil {
				t.Fatalf("Dir: %v", err)
			}
			if got.String() != tt.want {
				t.Errorf("Dir = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestDirSensitivity checks that each part of a line changes the digest.
func TestDirSensitivity(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, dir string)
	}{
		{"content", func(t *testing.T, dir string) { mkfiles(t, dir, map[string]string{"a/x": "z"}) }},
		{"executable bit", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "a/x"), 0o744) }},
		{"name", func(t *testing.T, dir string) { os.Rename(filepath.Join(dir, "b.txt"), filepath.Join(dir, "c.txt")) }},
		{"move between folders", func(t *testing.T, dir string) { os.Rename(filepath.Join(dir, "a-b/x"), filepath.Join(dir, "a-b/y")) }},
		{"new file", func(t *testing.T, dir string) { mkfiles(t, dir, map[string]string{"new": ""}) }},
		{"exclusion not matching a path component", func(t *testing.T, dir string) { mkfiles(t, dir, map[string]string{"x.git": ""}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mkfiles(t, dir, dirFiles)
			tt.mutate(t, dir)
			got, err := Dir(dir, DirOptions{Exclude: []string{".git"}})
			if err != nil {
				t.Fatal(err)
			}
			if got.String() == dirWant {
				t.Errorf("digest unchanged after changing the %s", tt.name)
			}
		})
	}
}

func TestDirRefusals(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, dir string) string // returns the root to digest
		opts     DirOptions
		wantType any
		wantIn   string
	}{
		{"symlink to file", func(t *testing.T, dir string) string {
			mkfiles(t, dir, dirFiles)
			os.Symlink("b.txt", filepath.Join(dir, "a", "link"))
			return dir
		}, DirOptions{}, &UnsupportedFileError{}, "a/link"},
		{"symlink to folder", func(t *testing.T, dir string) string {
			mkfiles(t, dir, dirFiles)
			os.Symlink("a", filepath.Join(dir, "dirlink"))
			return dir
		}, DirOptions{}, &UnsupportedFileError{}, "dirlink"},
		{"root is a symlink", func(t *testing.T, dir string) string {
			mkfiles(t, dir, dirFiles)
			l := filepath.Join(t.TempDir(), "root")
			os.Symlink(dir, l)
			return l
		}, DirOptions{}, &UnsupportedFileError{}, "root"},
		{"socket", func(t *testing.T, dir string) string {
			// Unix socket paths are limited to ~108 bytes; use a short dir.
			short, err := os.MkdirTemp("", "dg")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(short) })
			l, err := net.Listen("unix", filepath.Join(short, "sock"))
			if err != nil {
				t.Skipf("cannot create a unix socket: %v", err)
			}
			t.Cleanup(func() { l.Close() })
			return short
		}, DirOptions{}, &UnsupportedFileError{}, "a socket"},
		{"root is a file", func(t *testing.T, dir string) string {
			mkfiles(t, dir, dirFiles)
			return filepath.Join(dir, "b.txt")
		}, DirOptions{}, &KindError{}, "not a folder"},
		{"missing root", func(t *testing.T, dir string) string { return filepath.Join(dir, "nope") }, DirOptions{}, nil, "nope"},
		{"bad exclusion", func(t *testing.T, dir string) string { return dir }, DirOptions{Exclude: []string{"../x"}}, &ExcludeError{}, "../x"},
		{"empty exclusion", func(t *testing.T, dir string) string { return dir }, DirOptions{Exclude: []string{""}}, &ExcludeError{}, "invalid exclusion"},
		{"non-UTF-8 name", func(t *testing.T, dir string) string {
			mkfiles(t, dir, map[string]string{"bad\xffname": ""})
			return dir
		}, DirOptions{}, &NameError{}, "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.setup(t, t.TempDir())
			_, err := Dir(root, tt.opts)
			if err == nil {
				t.Fatal("Dir succeeded, want error")
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error %q does not contain %q", err, tt.wantIn)
			}
			switch tt.wantType.(type) {
			case *UnsupportedFileError:
				var e *UnsupportedFileError
				if !errors.As(err, &e) {
					t.Errorf("error %v is not *UnsupportedFileError", err)
				}
			case *KindError:
				var e *KindError
				if !errors.As(err, &e) {
					t.Errorf("error %v is not *KindError", err)
				}
			case *ExcludeError:
				var e *ExcludeError
				if !errors.As(err, &e) {
					t.Errorf("error %v is not *ExcludeError", err)
				}
			case *NameError:
				var e *NameError
				if !errors.As(err, &e) {
					t.Errorf("error %v is not *NameError", err)
				}
			case nil:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("error %v is not fs.ErrNotExist", err)
				}
			}
		})
	}
}
