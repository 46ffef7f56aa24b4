package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckRel(t *testing.T) {
	tests := []struct {
		rel, code string
	}{
		{"job/a", ""},
		{"a", ""},
		{"", CodeUnclean},
		{"/etc", CodeAbsolute},
		{"C:/x", CodeAbsolute},
		{"a/../b", CodeTraversal},
		{"..", CodeTraversal},
		{"a//b", CodeUnclean},
		{"a/./b", CodeUnclean},
		{"a/", CodeUnclean},
		{`a\b`, CodeUnclean},
	}
	for _, tt := range tests {
		err := CheckRel(tt.rel)
		var pe *PathError
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("CheckRel(%q) = %v; want ok", tt.rel, err)
		case tt.code != "" && (!errors.As(err, &pe) || pe.Code != tt.code):
			t.Errorf("CheckRel(%q) = %v; want code %s", tt.rel, err, tt.code)
		}
	}
}

func TestResolve(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "job/real/deep"), 0o755))
	must(t, os.Symlink(filepath.Join(root, "job/real"), filepath.Join(root, "job/link")))
	must(t, os.WriteFile(filepath.Join(root, "job/file"), nil, 0o644))
	tests := []struct {
		rel, code string
	}{
		{"job/real/deep", ""},
		{"job/link", CodeSymlink},
		{"job/link/deep", CodeSymlink},
		{"job/missing", CodeMissing},
		{"job/file/x", CodeNotDir},
	}
	for _, tt := range tests {
		got, err := Resolve(root, tt.rel)
		var pe *PathError
		switch {
		case tt.code == "" && (err != nil || got != filepath.Join(root, tt.rel)):
			t.Errorf("Resolve(%q) = %q, %v", tt.rel, got, err)
		case tt.code != "" && (!errors.As(err, &pe) || pe.Code != tt.code):
			t.Errorf("Resolve(%q) = %v; want code %s", tt.rel, err, tt.code)
		}
	}
	if _, err := Resolve(root, "job/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing path error does not wrap fs.ErrNotExist: %v", err)
	}
}

func TestReadFileCapped(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	must(t, os.WriteFile(p, []byte(strings.Repeat("x", 100)), 0o644))
	if b, err := ReadFileCapped(p, 100); err != nil || len(b) != 100 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	var tl *TooLargeError
	if _, err := ReadFileCapped(p, 99); !errors.As(err, &tl) {
		t.Errorf("over the limit: %v; want TooLargeError", err)
	}
	must(t, os.Symlink(p, filepath.Join(dir, "l")))
	if _, err := ReadFileCapped(filepath.Join(dir, "l"), 100); err == nil {
		t.Error("read through a symlink succeeded")
	}
	if _, err := ReadFileCapped(dir, 100); err == nil {
		t.Error("read of a folder succeeded")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	must(t, WriteFile(p, []byte("one"), 0o644))
	must(t, WriteFile(p, []byte("two"), 0o600))
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two" {
		t.Fatalf("content %q, %v", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "no/such/dir/f"), nil, 0o644); err == nil {
		t.Error("write into a missing folder succeeded")
	}
}

func TestPublishDir(t *testing.T) {
	parent := t.TempDir()
	tmp := filepath.Join(parent, ".tmp")
	must(t, os.Mkdir(tmp, 0o755))
	final := filepath.Join(parent, "final")
	// An empty folder at the target must be refused: plain rename would
	// silently replace it on Linux.
	must(t, os.Mkdir(final, 0o755))
	if err := PublishDir(tmp, final); err == nil {
		t.Fatal("published over an existing empty folder")
	}
	must(t, os.Remove(final))
	must(t, PublishDir(tmp, final))
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary folder still there: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMustNotExist: every kind of existing entry (folder, empty folder,
// file, dangling symlink) is an *ExistsError matching fs.ErrExist, so the
// CLI can report it as a usage error; only a real absence passes.
func TestMustNotExist(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("nowhere", dangling); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, empty, dangling} {
		err := MustNotExist(p)
		var ee *ExistsError
		if !errors.As(err, &ee) || ee.Path != p || !errors.Is(err, fs.ErrExist) {
			t.Errorf("MustNotExist(%q) = %v; want *ExistsError matching fs.ErrExist", p, err)
		}
	}
	if err := MustNotExist(filepath.Join(dir, "new")); err != nil {
		t.Errorf("MustNotExist(new) = %v", err)
	}
}
