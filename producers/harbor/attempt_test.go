package harbor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestReadAttemptKeepsNothingOfTheDecoder reads many attempts in a row
// and checks that each is, after all the others were read, what it was
// when it was read: ReadAttempt decodes into a pooled decoder's own
// result (decodeForImport), and an attempt that kept a pointer into it
// (a usage count, a timing) would show the values of a later file.
func TestReadAttemptKeepsNothingOfTheDecoder(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/example/jobs/*/*/result.json")
	if err != nil || len(paths) < 10 {
		t.Fatalf("want the bundled example's results, found %d (%v)", len(paths), err)
	}
	files := memFiles{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.ToSlash(filepath.Dir(p))+"/"+ResultFile] = string(b)
	}
	var usages, timings int
	type read struct {
		dir  string
		json string
		a    any
	}
	var reads []read
	for _, p := range paths {
		dir := filepath.ToSlash(filepath.Dir(p))
		a := ReadAttempt(files, dir)
		if a.Usage != nil {
			usages++
		}
		if a.Timing != nil {
			timings++
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, read{dir, string(b), a})
	}
	if usages < 2 || timings < 2 {
		t.Fatalf("the example has %d attempts with usage and %d with timings; want a few of each", usages, timings)
	}
	for _, r := range reads {
		b, err := json.Marshal(r.a)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != r.json {
			t.Errorf("%s: the attempt changed after later reads:\nwas %s\nnow %s", r.dir, r.json, b)
		}
	}
}
