package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rootTree builds a folder with every kind of component ReadFile must
// tell apart.
func rootTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "job/real/deep"), 0o755))
	must(t, os.MkdirAll(filepath.Join(root, "job/nofile"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "job/real/result.json"), []byte(`{"a":1}`), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "job/real/deep/result.json"), []byte("deep"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "job/real/empty.json"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(root, "job/real/big.json"), []byte(strings.Repeat("x", 100)), 0o644))
	must(t, os.Symlink(filepath.Join(root, "job/real"), filepath.Join(root, "job/link")))
	must(t, os.Symlink(filepath.Join(root, "job/real/result.json"), filepath.Join(root, "job/real/linked.json")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(root, "job/real/passwd.json")))
	must(t, os.WriteFile(filepath.Join(root, "job/file"), nil, 0o644))
	must(t, syscall.Mkfifo(filepath.Join(root, "job/real/fifo.json"), 0o644))
	must(t, os.Mkdir(filepath.Join(root, "job/real/dir.json"), 0o755))
	return root
}

// outcome summarises a ReadFile result for comparison.
func outcome(data []byte, err error) string {
	var pe *PathError
	var tl *TooLargeError
	switch {
	case err == nil:
		return "ok " + string(data)
	case errors.As(err, &pe):
		return pe.Code + " " + pe.At
	case errors.As(err, &tl):
		return "too_large"
	case errors.Is(err, fs.ErrNotExist):
		return "not_exist"
	}
	return "other"
}

var rootCases = []struct{ rel, want string }{
	{"job/real/result.json", `ok {"a":1}`},
	{"job/real/deep/result.json", "ok deep"},
	{"job/real/empty.json", "ok "},
	{"job/real/big.json", "too_large"},
	{"job/link/result.json", "symlink job/link"},
	{"job/link/deep/result.json", "symlink job/link"},
	{"job/real/linked.json", "symlink "},
	{"job/real/passwd.json", "symlink "},
	{"job/missing/result.json", "dir_missing job/missing"},
	{"job/nofile/result.json", "not_exist"},
	{"job/real/nofile.json", "not_exist"},
	{"nofile.json", "not_exist"},
	{"job/link/nofile.json", "symlink job/link"},
	{"job/missing/deeper/result.json", "dir_missing job/missing"},
	{"job/file/nofile.json", "other"},
	// As with Resolve then OpenRegular: the open fails with ENOTDIR.
	{"job/file/result.json", "other"},
	{"job/real/fifo.json", "special_file "},
	{"job/real/dir.json", "special_file "},
	{"../x/result.json", "path_traversal "},
	{"/etc/passwd", "path_absolute "},
	{"job//real/result.json", "path_unclean "},
}

// TestRootReadFile pins what ReadFile reports for each kind of path; each
// case fails if the fast path accepted what the slow path refuses.
func TestRootReadFile(t *testing.T) {
	root := rootTree(t)
	r, err := OpenRoot(root)
	must(t, err)
	defer r.Close()
	got := map[string]string{}
	want := map[string]string{}
	buf := make([]byte, 0, 4)
	for _, c := range rootCases {
		data, err := r.ReadFile(c.rel, buf, 50)
		got[c.rel], want[c.rel] = outcome(data, err), c.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestReadIntoCap refuses a file that is larger than
// the limit when read, even if it was small when its size was checked.
func TestReadIntoCap(t *testing.T) {
	chunks := []string{"abc", "def", "ghi"}
	read := func(b []byte) (int, error) {
		if len(chunks) == 0 {
			return 0, nil
		}
		n := copy(b, chunks[0])
		chunks[0] = chunks[0][n:]
		if chunks[0] == "" {
			chunks = chunks[1:]
		}
		return n, nil
	}
	if _, err := readInto(nil, 2, 5, "f", read); outcome(nil, err) != "too_large" {
		t.Fatalf("got %v; want too large", err)
	}
	chunks = []string{"abc", "def"}
	data, err := readInto(make([]byte, 0, 1), 1, 10, "f", read)
	if err != nil || string(data) != "abcdef" {
		t.Fatalf("got %q, %v", data, err)
	}
}

func TestOpenRootNotAFolder(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	must(t, os.WriteFile(f, nil, 0o644))
	if _, err := OpenRoot(f); err == nil {
		t.Fatal("OpenRoot of a file succeeded")
	}
}

// BenchmarkRootReadFile compares one openat2 per file with the portable
// lstat-per-component path.
func BenchmarkRootReadFile(b *testing.B) {
	root := b.TempDir()
	for i := range 100 {
		d := filepath.Join(root, "jobs", "j", "t"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "result.json"), make([]byte, 3000), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	rels, _ := filepath.Glob(filepath.Join(root, "jobs/j/*/result.json"))
	for i := range rels {
		rels[i], _ = filepath.Rel(root, rels[i])
		rels[i] = filepath.ToSlash(rels[i])
	}
	r, err := OpenRoot(root)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := 0; b.Loop(); i++ {
			if buf, err = r.ReadFile(rels[i%len(rels)], buf, 1<<20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("slow", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := 0; b.Loop(); i++ {
			if buf, err = r.readSlow(rels[i%len(rels)], buf, 1<<20); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestReadCappedRegularFile covers the pre-sized path for regular files:
// exactly at the limit is read whole, one byte over is refused.
func TestReadCappedRegularFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 10, 11} {
		p := filepath.Join(dir, "f")
		must(t, os.WriteFile(p, []byte(strings.Repeat("a", n)), 0o644))
		f, err := os.Open(p)
		must(t, err)
		b, err := ReadCapped(f, "f", 10)
		f.Close()
		switch {
		case n <= 10 && (err != nil || len(b) != n):
			t.Errorf("%d bytes: got %d, %v", n, len(b), err)
		case n > 10 && outcome(nil, err) != "too_large":
			t.Errorf("%d bytes: got %v; want too large", n, err)
		}
	}
}
