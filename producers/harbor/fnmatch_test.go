package harbor

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// TestFnMatchAsPython: testdata/fnmatch.jsonl holds [name, pattern,
// match] for 20 patterns × 20 names, recorded once by CPython 3.11's
// fnmatch.fnmatchcase (what fnmatch.fnmatch does on POSIX, Harbor's task
// filter); FnMatch must agree on every one.
func TestFnMatchAsPython(t *testing.T) {
	f, err := os.Open("testdata/fnmatch.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var row [3]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		name, pat, want := row[0].(string), row[1].(string), row[2].(bool)
		if got := FnMatch(name, pat); got != want {
			t.Errorf("FnMatch(%q, %q) = %v, Python says %v", name, pat, got, want)
		}
		n++
	}
	if n != 400 {
		t.Fatalf("read %d cases, want 400", n)
	}
}

func FuzzFnMatch(f *testing.F) {
	f.Add("hello-world", "h[!a]llo-*")
	f.Add("[", "[")
	f.Fuzz(func(t *testing.T, name, pat string) {
		_ = FnMatch(name, pat) // never panics
		if !IsPattern(pat) && FnMatch(name, pat) != (name == pat) {
			t.Fatalf("a pattern without special characters matches only itself: %q %q", name, pat)
		}
	})
}
