package safefs

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteBeside: the one writer beside snapshots refuses a path inside
// an input snapshot or any snapshot folder (also through links), and
// never replaces what is not a regular file, even with force (issue 35
// finding 7); a regular file is replaced only with force.
func TestWriteBeside(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap")
	must(t, os.MkdirAll(filepath.Join(snap, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(snap, SnapshotManifest), []byte("{}"), 0o644))
	must(t, os.Symlink(snap, filepath.Join(dir, "link")))
	other := filepath.Join(dir, "input") // an input not yet holding a manifest
	must(t, os.Mkdir(other, 0o755))
	fifo := filepath.Join(dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	target := filepath.Join(dir, "target")
	must(t, os.WriteFile(target, []byte("keep"), 0o644))
	must(t, os.Symlink(target, filepath.Join(dir, "symlink")))
	existing := filepath.Join(dir, "existing.html")
	must(t, os.WriteFile(existing, []byte("old"), 0o644))

	inside := func(err error) bool { return errors.As(err, new(*InsideSnapshotError)) }
	notRegular := func(err error) bool { return errors.As(err, new(*NotRegularError)) }
	exists := func(err error) bool { return errors.As(err, new(*ExistsError)) }
	for _, tc := range []struct {
		name   string
		path   string
		force  bool
		inputs []string
		want   func(error) bool
	}{
		{"inside an input snapshot", filepath.Join(other, "x.html"), true, []string{other}, inside},
		{"inside any snapshot", filepath.Join(snap, "x.html"), true, nil, inside},
		{"nested in a snapshot, not made yet", filepath.Join(snap, "sub", "new", "x.html"), true, nil, inside},
		{"through a link to a snapshot", filepath.Join(dir, "link", "x.html"), true, nil, inside},
		{"the snapshot folder itself", snap, true, nil, notRegular},
		{"an input itself", snap, true, []string{snap}, inside},
		{"a FIFO, even with force", fifo, true, nil, notRegular},
		{"a socket", sock, true, nil, notRegular},
		{"a device", os.DevNull, true, nil, notRegular},
		{"a symbolic link", filepath.Join(dir, "symlink"), true, nil, notRegular},
		{"a folder", other, true, nil, notRegular},
		{"an existing file without force", existing, false, nil, exists},
		{"an existing file with force", existing, true, nil, nil},
		{"a new file", filepath.Join(dir, "new.html"), false, []string{snap}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteBeside(tc.path, []byte("page"), 0o644, tc.force, tc.inputs...)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(tc.path); string(b) != "page" {
					t.Errorf("content %q", b)
				}
				return
			}
			if !tc.want(err) {
				t.Fatalf("err = %v (%T)", err, err)
			}
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was replaced: %q", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
	entries, _ := os.ReadDir(snap)
	if len(entries) != 2 {
		t.Errorf("the snapshot folder changed: %v", entries)
	}
}
