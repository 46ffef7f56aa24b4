package safefs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileFrom: the content appears whole at path only when write
// succeeds; a failed write leaves neither the file nor a temporary.
func TestWriteFileFrom(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "page.html")
	n, err := WriteFileFrom(path, 0o644, func(w io.Writer) error {
		for _, s := range []string{"one ", "two ", "three"} {
			if _, err := io.WriteString(w, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || n != 13 {
		t.Fatalf("WriteFileFrom = %d, %v; want 13 bytes", n, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "one two three" {
		t.Fatalf("the file holds %q, %v", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
	}
	boom := errors.New("boom")
	_, err = WriteFileFrom(path, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half a page")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("a failed write returned %v, want its error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one two three" {
		t.Errorf("a failed write changed the file to %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %d entries, want the file alone", len(entries))
	}
}
