package lmeval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readSamplesFile(t *testing.T, path string, bodies bool) ([]*Sample, *SamplesSummary) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []*Sample
	sum, err := ReadSamples(f, filepath.Base(path), Limits{}, bodies, func(s *Sample) error {
		got = append(got, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, sum
}

// TestReadSamplesAgrees reads every fixture samples file with ReadSamples
// and with encoding/json, and compares what each line says.
func TestReadSamplesAgrees(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*/samples_*.jsonl")
	if len(files) < 5 {
		t.Fatalf("fixtures: %v", files)
	}
	for _, path := range files {
		got, sum := readSamplesFile(t, path, false)
		want := jsonLines(t, path)
		if len(got) != len(want) || sum.Lines != len(want) {
			t.Fatalf("%s: %d samples, %d lines, want %d", path, len(got), sum.Lines, len(want))
		}
		for i, w := range want {
			s := got[i]
			if fmt.Sprint(w["doc_id"]) != fmt.Sprint(s.DocID) || w["filter"] != s.Filter || w["doc_hash"] != s.DocHash ||
				w["prompt_hash"] != s.PromptHash || w["target_hash"] != s.TargetHash || s.Line != i+1 {
				t.Errorf("%s line %d: %+v vs %v", path, i+1, s, w)
			}
			for _, m := range w["metrics"].([]any) {
				if v, ok := s.Values[m.(string)]; !ok || fmt.Sprint(w[m.(string)]) != fmt.Sprint(mustFloat(t, v.Raw)) {
					t.Errorf("%s line %d: metric %s = %+v, want %v", path, i+1, m, v, w[m.(string)])
				}
			}
			if s.Arguments != nil || s.Resps != nil {
				t.Errorf("bodies kept without asking")
			}
		}
	}
}

func mustFloat(t *testing.T, raw string) float64 {
	f, ok := pythonFloat(raw)
	if !ok {
		t.Fatalf("not a float: %s", raw)
	}
	return f
}

// TestTaskHash: a samples file written whole reproduces lm-eval's
// task_hashes entry; one cut short does not.
func TestTaskHash(t *testing.T) {
	for _, tc := range []struct {
		dir, ts string
		want    bool
	}{
		{pairedA, pairedATS, true},
		{pairedB, pairedBTS, true},
		{differs, differsTS, true},
		{limitedDir, limitedTS, true},
		{twoTasks, twoTS, false}, // 6 of 10 lines
	} {
		res := readResults(t, tc.dir, tc.ts)
		_, sum := readSamplesFile(t, filepath.Join(tc.dir, SamplesFile("arc_easy", tc.ts)), false)
		p := ProposeDataset(res.Task("arc_easy"), sum)
		if p.Value != res.Task("arc_easy").TaskHash || p.Reproduced == nil || *p.Reproduced != tc.want {
			t.Errorf("%s: proposal %+v, want reproduced=%v", tc.dir, p, tc.want)
		}
		// Independently: SHA-256 of the concatenated hashes, as lm-eval.
		h := sha256.New()
		for _, m := range jsonLines(t, filepath.Join(tc.dir, SamplesFile("arc_easy", tc.ts))) {
			io.WriteString(h, m["doc_hash"].(string)+m["prompt_hash"].(string)+m["target_hash"].(string))
		}
		if hex.EncodeToString(h.Sum(nil)) != sum.TaskHash {
			t.Errorf("%s: recomputed task hash differs", tc.dir)
		}
	}
	// No task hash without --log_samples: a placeholder, never invented.
	p := ProposeDataset(&Task{Name: "x"}, nil)
	if p.Value != "" || !strings.Contains(p.Note, "placeholder") {
		t.Errorf("no hash: %+v", p)
	}
}

const line0 = `{"doc_id": 0, "doc": {"q": "a"}, "target": "1", "arguments": {"gen_args_0": {"arg_0": "Q?", "arg_1": " a"}}, "resps": [[["-1.0", "False"]]], "filtered_resps": [["-1.0", "False"]], "filter": "none", "metrics": ["acc"], "doc_hash": "d", "prompt_hash": "p", "target_hash": "t", "acc": 1.0}`

func TestReadSamplesErrors(t *testing.T) {
	dup := line0 + "\n" + strings.Replace(line0, `"doc_id": 0`, `"doc_id": 1`, 1) + "\n" + line0 + "\n"
	for _, tc := range []struct {
		name, in string
		lim      Limits
		line     int
		want     string
	}{
		{"duplicate", dup, Limits{}, 3, "document 0 (filter none) is listed twice, on line 1 and line 3"},
		{"not json", line0 + "\n{oops\n", Limits{}, 2, "not JSON"},
		{"not an object", "[1]\n", Limits{}, 1, "not a JSON object"},
		{"no doc id", `{"filter": "none"}` + "\n", Limits{}, 1, "/doc_id: missing"},
		{"doc id text", `{"doc_id": "3"}` + "\n", Limits{}, 1, "/doc_id: not a document id"},
		{"doc id negative", `{"doc_id": -1}` + "\n", Limits{}, 1, "/doc_id: not a document id: -1"},
		{"doc id fraction", `{"doc_id": 1.5}` + "\n", Limits{}, 1, "not a document id: 1.5"},
		{"metrics not list", `{"doc_id": 1, "metrics": "acc"}` + "\n", Limits{}, 1, "/metrics: not a list"},
		{"key twice", `{"doc_id": 1, "doc_id": 2}` + "\n", Limits{}, 1, `key "doc_id" appears twice`},
		{"cut short", line0 + "\n" + line0[:60], Limits{}, 2, "the last line has no newline"},
		{"line cap", line0 + "\n", Limits{Line: 100}, 1, "line 1 is larger than 100 bytes"},
		{"file cap", line0 + "\n" + line0 + "\n", Limits{File: int64(len(line0)) + 10}, 0, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSamples(strings.NewReader(tc.in), "s.jsonl", tc.lim, false, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "s.jsonl: ") {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			var le *LineError
			var de *DuplicateError
			var te *TooLargeError
			switch {
			case errors.As(err, &le):
				if le.Line != tc.line {
					t.Errorf("line %d, want %d", le.Line, tc.line)
				}
			case errors.As(err, &de):
				if de.Second != tc.line || de.First != 1 {
					t.Errorf("lines %d,%d", de.First, de.Second)
				}
			case errors.As(err, &te):
				if te.Line != tc.line {
					t.Errorf("line %d, want %d", te.Line, tc.line)
				}
			default:
				t.Errorf("untyped error %T", err)
			}
		})
	}

	// The same document under two filters is two records, not a duplicate;
	// blank lines and CRLF are tolerated; a last line without newline that
	// parses is kept; an old record without filter is filter "none".
	two := line0 + "\r\n\n" + strings.Replace(line0, `"filter": "none"`, `"filter": "strict"`, 1) + "\n" + `{"doc_id": 5, "acc": 0}`
	var got []string
	sum, err := ReadSamples(strings.NewReader(two), "s.jsonl", Limits{}, false, func(s *Sample) error {
		got = append(got, fmt.Sprintf("%d:%d/%s", s.Line, s.DocID, s.Filter))
		return nil
	})
	if err != nil || strings.Join(got, " ") != "1:0/none 3:0/strict 4:5/none" || sum.Documents != 2 ||
		strings.Join(sum.Filters, ",") != "none,strict" || sum.TaskHash != "" {
		t.Errorf("got %v %+v %v", got, sum, err)
	}
	// visit's error stops the read and comes back as is.
	stop := errors.New("stop")
	if _, err := ReadSamples(strings.NewReader(line0+"\n"+line0), "s", Limits{}, false, func(*Sample) error { return stop }); err != stop {
		t.Errorf("visit error: %v", err)
	}
	// A long line (over the reader's buffer) within the cap is read.
	long := strings.Replace(line0, `"q": "a"`, `"q": "`+strings.Repeat("x", 200<<10)+`"`, 1)
	if _, err := ReadSamples(strings.NewReader(long+"\n"), "s", Limits{}, false, nil); err != nil {
		t.Errorf("long line: %v", err)
	}
}
