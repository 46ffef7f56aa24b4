package planfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckFileLocator: a "path#fragment" dir names an attempt inside a file
// (an Inspect log, an lm-eval samples file), so its leaf must be a regular
// file, while a plain dir must still be a folder.
func TestCheckFileLocator(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "logs", "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "logs", "run.eval"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir, code string
	}{
		{"logs/run.eval#1/epoch/1", ""},
		{"logs/adir#1", CodeNotFile},
		{"logs/none.eval#1", CodeDirMissing},
		{"logs/run.eval", CodeNotDir},
		{"logs/run.eval/x#1", CodeNotDir},
		{"logs/adir", ""},
	} {
		p := &Plan{Trials: []Trial{{Task: "t", Attempts: []Attempt{{Dir: tc.dir}}}}}
		got := Check(p, Options{Root: root})
		code := ""
		if len(got) > 0 {
			code = got[0].Code
		}
		if code != tc.code {
			t.Errorf("dir %q: finding %q, want %q (%+v)", tc.dir, code, tc.code, got)
		}
		f, bad := NewDirChecker(root).Check(tc.dir)
		if bad != (tc.code != "") || (bad && f.Code != tc.code) {
			t.Errorf("DirChecker(%q) = %q %v, want %q", tc.dir, f.Code, bad, tc.code)
		}
	}
}
