// Package golden compares a test's output with its golden file,
// testdata/golden/NAME, and rewrites the file when the package's -update
// flag is set (each test package keeps its own flag, so `go test ./x
// -update` rewrites only x's files). Test support only: no command
// imports it.
package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check fails t when got differs from testdata/golden/name, showing the
// difference; with update it first writes got there. Read every
// rewritten file before accepting it.
func Check(t testing.TB, update bool, got []byte, name string) {
	t.Helper()
	CheckFile(t, update, got, filepath.Join("testdata", "golden", name))
}

// CheckFile is Check for a golden file at any path.
func CheckFile(t testing.TB, update bool, got []byte, path string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
