package snapshot

import (
	"encoding/json"
	"testing"
)

// TestDatasetScope: one reader of settings.dataset for every producer and
// one wording of it (docs/plan-format.md, "Which part of the dataset").
func TestDatasetScope(t *testing.T) {
	for _, c := range []struct {
		name, settings string
		want           string // "" for no scope
		json           string
	}{
		{"harbor records none", `{"timeout_multiplier": 1}`, "", ""},
		{"no settings", ``, "", ""},
		{"inspect limited", `{"dataset": {"planned_samples": 3, "samples": 2376}}`,
			"3 of 2,376 samples of the dataset", `{"planned_samples":3,"samples":2376}`},
		{"inspect whole", `{"dataset": {"planned_samples": 10, "samples": 10}}`, "all 10 samples of the dataset", ""},
		{"one sample", `{"dataset": {"planned_samples": 1, "samples": 1}}`, "all 1 sample of the dataset", ""},
		{"lm-eval limited", `{"dataset": {"planned_samples": 10, "samples": 2376, "item": "document", "whole": "split"}}`,
			"10 of 2,376 documents of the split", `{"planned_samples":10,"samples":2376,"item":"document","whole":"split"}`},
		{"lm-eval whole", `{"dataset": {"planned_samples": 1319, "samples": 1319, "item": "document", "whole": "split"}}`,
			"all 1,319 documents of the split", ""},
		{"control text in a noun is not shown", `{"dataset": {"planned_samples": 2, "samples": 5, "item": "doc\u001b[31m", "whole": "Split"}}`,
			"2 of 5 samples of the dataset", `{"planned_samples":2,"samples":5}`},
		{"an overlong noun", `{"dataset": {"planned_samples": 2, "samples": 5, "item": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}`,
			"2 of 5 samples of the dataset", ""},
		{"only the planned count", `{"dataset": {"planned_samples": 3}}`, "", ""},
		{"a negative size", `{"dataset": {"planned_samples": 3, "samples": -1}}`, "", ""},
		{"not a number", `{"dataset": {"planned_samples": "3", "samples": 5}}`, "", ""},
		{"not an object", `{"dataset": 5}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &PlanSummary{Settings: json.RawMessage(c.settings)}
			d := p.DatasetScope()
			if got := d.String(); got != c.want {
				t.Errorf("String() = %q, want %q", got, c.want)
			}
			if (d == nil) != (c.want == "") {
				t.Errorf("DatasetScope() = %+v", d)
			}
			if c.json != "" {
				b, _ := json.Marshal(d)
				if string(b) != c.json {
					t.Errorf("JSON %s, want %s", b, c.json)
				}
			}
		})
	}
	var nilPlan *PlanSummary
	if nilPlan.DatasetScope() != nil {
		t.Error("a nil plan has a scope")
	}
}
