package inspect

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

var writeSeeds = flag.Bool("seeds", false, "rewrite the fuzz seeds in testdata/fuzz from the synthetic logs")

// fuzzLimits keep each fuzz input cheap.
var fuzzLimits = Limits{Member: 1 << 20, Document: 1 << 20, Members: 64, Nodes: 1 << 14}

// checkLog reads the whole log and judges it: never a panic, and every
// verdict is a row of the table.
func checkLog(t *testing.T, data []byte) {
	l, _, err := readAll(data, fuzzLimits)
	if err != nil {
		return
	}
	s, err := Summarize(l, "")
	if err != nil {
		return
	}
	if len(s.Trials) != len(s.Plan.Trials) {
		t.Fatalf("%d trials for %d planned", len(s.Trials), len(s.Plan.Trials))
	}
	reasons := Reasons()
	for _, tr := range s.Trials {
		for _, v := range tr.Judgement.Attempts {
			if !slices.Contains(reasons, v.Reason) {
				t.Fatalf("reason %q is not in the table", v.Reason)
			}
		}
	}
	_ = SettingsInputs(&l.Header)
	_ = DatasetInputs(&l.Header, s.Plan)
	_ = l.Samples(SampleOptions{Messages: true}, func(s *Sample) error {
		_, err := s.Messages()
		return err
	})
}

func seedLogs(t testing.TB) map[string][]byte {
	h := []byte(synthHeader("2", synthResults))
	return map[string][]byte{
		"synthetic-eval": synthEval(t),
		"synthetic-json": append(bytes.TrimSuffix(bytes.TrimSpace(h), []byte("}")),
			[]byte(`, "samples": [`+string(synthSample("1", 1, `"scores": {"match": {"value": "C"}}`))+`]}`)...),
		"version-3":   []byte(synthHeader("3", "")),
		"header-only": evalZip(t, member{"header.json", h}),
	}
}

func seeds(f *testing.F, name string) {
	logs := seedLogs(f)
	if *writeSeeds {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			f.Fatal(err)
		}
		for k, v := range logs {
			body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(v)) + ")\n"
			if err := os.WriteFile(filepath.Join(dir, k), []byte(body), 0o644); err != nil {
				f.Fatal(err)
			}
		}
	}
	for _, v := range logs {
		f.Add(v)
	}
}

// FuzzReadEval fuzzes the .eval reader (zip archives).
func FuzzReadEval(f *testing.F) {
	seeds(f, "FuzzReadEval")
	f.Fuzz(func(t *testing.T, data []byte) { checkLog(t, data) })
}

// FuzzReadJSON fuzzes the .json reader: inputs that are not zip archives.
func FuzzReadJSON(f *testing.F) {
	seeds(f, "FuzzReadJSON")
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.HasPrefix(data, []byte("PK")) {
			data = data[2:]
		}
		checkLog(t, data)
	})
}

// FuzzValueToFloat: never a panic; a converted value is what Python's
// float() would make of the same digits.
func FuzzValueToFloat(f *testing.F) {
	for _, s := range []string{`"C"`, `"1_0"`, `" 2.5 "`, `"١٢"`, `1e400`, `NaN`, `[1]`, `"yes"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, ok := ValueToFloat(raw)
		if !ok && v != 0 {
			t.Fatalf("not converted but %v", v)
		}
		_ = fmt.Sprint(v)
	})
}
