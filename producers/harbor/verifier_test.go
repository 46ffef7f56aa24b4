package harbor

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// memFiles is producers.Files over a map, with a cap as the importer's.
type memFiles map[string]string

func (m memFiles) ReadFile(rel string, max int64) ([]byte, error) {
	s, ok := m[rel]
	if !ok {
		return nil, fs.ErrNotExist
	}
	if int64(len(s)) > max {
		return nil, fmt.Errorf("%s is over %d bytes", rel, max)
	}
	return []byte(s), nil
}

func TestVerifierWords(t *testing.T) {
	ctrfJSON := `{"results":{"tool":{"name":"pytest"},"tests":[
		{"name":"test_output_matches_golden","status":"failed","message":"AssertionError: expected 42, got 41"},
		{"name":"test_file_exists","status":"passed"},
		{"name":"test_format","status":"failed","message":"ValueError: bad"}]}}`
	var out strings.Builder
	for i := range 30 {
		fmt.Fprintf(&out, "line %d\n", i)
	}
	out.WriteString("E   assert 41 == 42\n\n\n")
	tests := []struct {
		name         string
		files        memFiles
		source, text string
		line         string
	}{
		{"ctrf first", memFiles{"t/" + VerifierCTRF: ctrfJSON, "t/" + VerifierStdout: "ignored"}, VerifierCTRF,
			"2 of 3 tests failed:\ntest_output_matches_golden — AssertionError: expected 42, got 41\ntest_format — ValueError: bad",
			"2 of 3 tests failed: test_output_matches_golden — AssertionError: expected 42, got 41; test_format — ValueError: bad"},
		{"stdout tail", memFiles{"t/" + VerifierStdout: out.String()}, VerifierStdout,
			strings.Join(func() []string {
				var l []string
				for i := 11; i < 30; i++ {
					l = append(l, fmt.Sprintf("line %d", i))
				}
				return append(l, "E   assert 41 == 42")
			}(), "\n"),
			"the verifier's output ends: E   assert 41 == 42"},
		{"ctrf with no failure falls back to stdout", memFiles{"t/" + VerifierCTRF: `{"results":{"tests":[{"name":"a","status":"passed"}]}}`, "t/" + VerifierStdout: "reward 0: timeout\n"},
			VerifierStdout, "reward 0: timeout", "the verifier's output ends: reward 0: timeout"},
		{"broken ctrf falls back", memFiles{"t/" + VerifierCTRF: `{"results":`, "t/" + VerifierReward: `{"reward": 0, "style": 0.5}`},
			VerifierReward, `{"reward": 0, "style": 0.5}`, `verifier/reward.json holds {"reward": 0, "style": 0.5}`},
		{"too large stdout is passed over", memFiles{"t/" + VerifierStdout: strings.Repeat("x", maxStdoutRead+1)}, "", "", ""},
		{"nothing", memFiles{"t/verifier/reward.txt": "0"}, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, line := verifierWords(tc.files, "t")
			if tc.source == "" {
				if v != nil || line != "" {
					t.Fatalf("got %+v %q, want none", v, line)
				}
				return
			}
			if v == nil || v.Source != tc.source || v.Text != tc.text || line != tc.line {
				t.Fatalf("got %+v\nline %q\nwant %s %q\nline %q", v, line, tc.source, tc.text, tc.line)
			}
		})
	}
}

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		in         string
		lines, max int
		want       string
	}{
		{"a\nb\nc\n", 2, 100, "b\nc"},
		{"a\x1b[31mred\r\n\tb\n", 5, 100, "a [31mred \n b"},
		{"one\n" + strings.Repeat("é", 100) + "\n", 5, 20, "…" + strings.Repeat("é", 8)},
		{"aaaa\nbbbb\ncccc", 5, 10, "bbbb\ncccc"},
		{"\xff\xfe ok", 5, 100, "\uFFFD ok"},
	} {
		got := Tail([]byte(tc.in), tc.lines, tc.max)
		if got != tc.want || len(got) > tc.max || !utf8.ValidString(got) {
			t.Errorf("Tail(%q, %d, %d) = %q, want %q", tc.in, tc.lines, tc.max, got, tc.want)
		}
	}
}

// FuzzTail: any bytes give valid UTF-8 within the bounds, no control
// character but a line feed.
func FuzzTail(f *testing.F) {
	f.Add([]byte("a\nb\n"), 2, 10)
	f.Add([]byte("\x00\xff\n\n\n"), 1, 4)
	f.Fuzz(func(t *testing.T, b []byte, lines, max int) {
		if lines < 1 || lines > 50 || max < 8 || max > 4096 {
			return
		}
		s := Tail(b, lines, max)
		if !utf8.ValidString(s) || len(s) > max || strings.Count(s, "\n") >= lines {
			t.Fatalf("Tail(%q, %d, %d) = %q", b, lines, max, s)
		}
		for _, r := range s {
			if r != '\n' && (r < 0x20 || r == 0x7f) {
				t.Fatalf("control %q in %q", r, s)
			}
		}
	})
}

// countFiles is memFiles over a real folder's rules for a missing folder:
// a file under a folder the map holds nothing under is a *safefs.PathError
// with CodeMissing, as safefs.Root gives; it counts the reads.
type countFiles struct {
	memFiles
	reads int
}

func (c *countFiles) ReadFile(rel string, max int64) ([]byte, error) {
	c.reads++
	dir := path.Dir(rel)
	for k := range c.memFiles {
		if strings.HasPrefix(k, dir+"/") {
			return c.memFiles.ReadFile(rel, max)
		}
	}
	return nil, &safefs.PathError{Rel: dir, Code: safefs.CodeMissing, At: dir, Err: fs.ErrNotExist}
}

// TestVerifierWordsNoFolder: a verifier that left no folder costs one
// read, not one per file it might have written; a folder missing one file
// still has the others read.
func TestVerifierWordsNoFolder(t *testing.T) {
	none := &countFiles{memFiles: memFiles{"t/result.json": "{}"}}
	if v, line := verifierWords(none, "t"); v != nil || line != "" || none.reads != 1 {
		t.Errorf("no folder: %+v %q after %d reads", v, line, none.reads)
	}
	some := &countFiles{memFiles: memFiles{"t/" + VerifierReward: `{"reward": 0}`}}
	if v, _ := verifierWords(some, "t"); v == nil || v.Source != VerifierReward || some.reads != 3 {
		t.Errorf("reward only: %+v after %d reads", v, some.reads)
	}
}
