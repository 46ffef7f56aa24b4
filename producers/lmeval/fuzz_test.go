package lmeval

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hashString is lm-eval's utils.py hash_string.
func hashString(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// FuzzReadResults: any bytes are read or refused with an error, never a
// panic; what is read is consistent (tasks named, counts non-negative).
func FuzzReadResults(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*/results_*.json")
	more, _ := filepath.Glob("testdata/*/results_*.json")
	for _, p := range append(files, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"results": {"a": {"acc,none": NaN}}, "n-samples": {"a": {"original": 1e3, "effective": 2.0}}, "configs": {"a": {"repeats": 3, "metric_list": [{}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ParseResults(data, "results_x.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "results_x.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, tk := range res.Tasks {
			if tk.Name == "" && len(res.Tasks) > 1 && res.Task("") != tk {
				t.Fatal("task lookup")
			}
			if tk.Original < 0 || tk.Effective < 0 || tk.Repeats < 1 || len(tk.FilterNames) == 0 && tk.Config != nil {
				t.Fatalf("task %+v", tk)
			}
			_ = SettingsDigest(res, tk)
			if p, err := PlanTask(res.File, tk); err == nil {
				_ = p.DocumentsText()
			}
			_, _ = Choose(tk, "", "")
		}
	})
}

// FuzzReadSamples: any bytes are read or refused with a located error,
// never a panic; documents are unique per filter and transcripts build.
func FuzzReadSamples(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*/samples_*.jsonl")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(line0 + "\n" + line0 + "\n"))
	f.Add([]byte(`{"doc_id": 0, "acc": Infinity, "metrics": ["acc"]}` + "\n" + `{"doc_id": 1, "filter": "x", "arguments": {"gen_args_1": {"arg_0": 3}}, "resps": [[[1]]], "filtered_resps": {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		seen := map[docKey]bool{}
		_, err := ReadSamples(strings.NewReader(string(data)), "s.jsonl", Limits{Line: 1 << 16, File: 1 << 20}, true, func(s *Sample) error {
			k := docKey{s.DocID, s.Filter}
			if seen[k] || s.DocID < 0 || s.Filter == "" {
				t.Fatalf("sample %+v", s)
			}
			seen[k] = true
			_, _ = Transcript(s)
			for _, v := range s.Values {
				_ = JudgeValue(v)
			}
			return nil
		})
		if err != nil && !strings.HasPrefix(err.Error(), "s.jsonl: ") {
			t.Fatalf("error does not name the file: %v", err)
		}
		p := Planned{Task: "t", Documents: 4, Original: 4, Repeats: 1}
		if o, err := JudgeTask(p, Score{"acc", "none"}, strings.NewReader(string(data)), "s.jsonl", Limits{Line: 1 << 16, File: 1 << 20}); err == nil {
			c := o.Counts
			if c.Success+c.Failure+c.Unscored+c.Missing != 4 {
				t.Fatalf("counts %+v", c)
			}
			_ = o.Beside(&Task{Name: "t"})
		}
	})
}

// FuzzLocator: an attempt locator either parses into a file, a document
// and a score that Locator writes back byte for byte, or is refused.
func FuzzLocator(f *testing.F) {
	f.Add("m/samples_t_2026-01-01T00-00-00.jsonl#3/acc/none")
	f.Add("m/s.jsonl#0/exact_match/strict~1match")
	f.Add("m/s.jsonl#12/a~0b/maj@64")
	f.Add("m/s.jsonl#x//")
	f.Fuzz(func(t *testing.T, loc string) {
		file, doc, sc, err := ParseLocator(loc)
		if err != nil {
			return
		}
		if back := Locator(file, doc, sc); back != loc {
			// Only a non-canonical escape ("~2", a lone "~") may differ.
			if _, d2, sc2, err := ParseLocator(back); err != nil || d2 != doc || sc2 != sc {
				t.Fatalf("%q → %q, %d, %+v → %q", loc, file, doc, sc, back)
			}
		}
	})
}
