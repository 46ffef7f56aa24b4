package planfile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestNormalizedJSONPaths checks that the direct canonical writer gives
// the bytes (or the failure) of encoding/json + RFC 8785 for plans with
// every kind of value it handles or hands back: escapes, HTML-sensitive
// and line-separator characters, invalid UTF-8, huge integers, unsorted
// trials and attempts, absent defaults, settings numbers and execution.
func TestNormalizedJSONPaths(t *testing.T) {
	base := func() *Plan {
		return &Plan{
			Source:     Source{Format: "harbor", Revision: "r"},
			Name:       "n <&> \u2028 \"q\" \\ \t é 😀 \x01",
			Split:      "test",
			Checkpoint: Checkpoint{Ref: "m@x"},
			Protocol:   Protocol{DatasetDigest: "d", VerifierDigest: "v", EnvironmentDigest: "e", HarnessDigest: "h"},
			Trials: []Trial{
				{Task: "b", Repeat: 1, Attempts: []Attempt{{Retry: 2, Dir: "x/2"}, {Retry: 0, Dir: "x/0"}, {Retry: 1, Dir: "x/1"}}},
				{Task: "a", Repeat: 3},
				{Task: "b", Repeat: 0, Attempts: []Attempt{}},
				{Task: "a", Repeat: 1, Attempts: []Attempt{{Retry: 0, Dir: "y"}}},
			},
		}
	}
	tests := map[string]func(p *Plan){
		"plain":     func(p *Plan) {},
		"served_as": func(p *Plan) { p.Checkpoint.ServedAs = "s" },
		"version 1": func(p *Plan) { p.Version = 1 },
		"settings": func(p *Plan) {
			p.Settings = map[string]any{"t": json.Number("1.50"), "z": []any{nil, true, "x"}, "a": map[string]any{"b": json.Number("1e2")}}
		},
		"settings empty":    func(p *Plan) { p.Settings = map[string]any{} },
		"settings bad":      func(p *Plan) { p.Settings = map[string]any{"n": json.Number("1e999")} },
		"execution":         func(p *Plan) { p.Execution = json.RawMessage(`{ "b": 1.0, "a": [ ] }`) },
		"execution null":    func(p *Plan) { p.Execution = json.RawMessage(`null`) },
		"execution invalid": func(p *Plan) { p.Execution = json.RawMessage(`{`) },
		"invalid utf-8":     func(p *Plan) { p.Trials[0].Task = "a\xffb" },
		"invalid utf-8 dir": func(p *Plan) { p.Trials[1].Attempts = []Attempt{{Dir: "\xfe\xff"}} },
		"huge repeat":       func(p *Plan) { p.Trials[1].Repeat = 1<<53 + 1 },
		"negative retry":    func(p *Plan) { p.Trials[3].Attempts[0].Retry = -5 },
		"no trials":         func(p *Plan) { p.Trials = nil },
	}
	for name, edit := range tests {
		p := base()
		edit(p)
		got, err := p.NormalizedJSON()
		want, werr := p.normalizedJSONSlow()
		if (err != nil) != (werr != nil) || string(got) != string(want) {
			t.Errorf("%s:\n got  %s (%v)\n want %s (%v)", name, got, err, want, werr)
		}
		if _, ok, _ := p.appendCanonical(nil); name == "plain" && !ok {
			t.Errorf("plain plan did not take the direct path")
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "testdata", "example", "import-plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Parse(b, "import-plan.json", Options{})
	got, _ := p.NormalizedJSON()
	want, _ := p.normalizedJSONSlow()
	if string(got) != string(want) {
		t.Errorf("bundled example:\n got  %s\n want %s", got, want)
	}
}

// BenchmarkNormalizedJSON compares the direct writer with encoding/json +
// RFC 8785 on a 10,000-trial plan.
func BenchmarkNormalizedJSON(b *testing.B) {
	plan, _ := writeBenchPlan(b, 10000)
	data, err := os.ReadFile(plan)
	if err != nil {
		b.Fatal(err)
	}
	p, _ := Parse(data, "plan.json", Options{})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.NormalizedJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.normalizedJSONSlow(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
