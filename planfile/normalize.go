package planfile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tuneplane/tpctl/internal/jcs"
)

// Normalized returns a copy of the plan in its normalized form: defaults
// filled (settings {} and attempts [] instead of absent), trials sorted by
// (task, repeat) and each trial's attempts by retry. Call it only on a
// plan without errors. The import writes it as plan.json and hashes its
// canonical JSON (NormalizedJSON) into the round ID.
func (p *Plan) Normalized() *Plan {
	n := *p
	if n.Version == 0 {
		n.Version = 1
	}
	if n.Settings == nil {
		n.Settings = map[string]any{}
	}
	n.Trials = make([]Trial, len(p.Trials))
	for i, t := range p.Trials {
		t.Attempts = slices.Clone(t.Attempts)
		if t.Attempts == nil {
			t.Attempts = []Attempt{}
		}
		slices.SortStableFunc(t.Attempts, func(a, b Attempt) int { return cmp.Compare(a.Retry, b.Retry) })
		n.Trials[i] = t
	}
	slices.SortStableFunc(n.Trials, func(a, b Trial) int {
		return cmp.Or(cmp.Compare(a.Task, b.Task), cmp.Compare(a.Repeat, b.Repeat))
	})
	return &n
}

// NormalizedJSON returns the RFC 8785 canonical JSON of Normalized():
// members sorted, no white space, numbers in ECMAScript form. It is
// deterministic: the same plan content gives the same bytes on any
// machine, whatever the member order, spacing or trial order in the file.
// $schema is not part of it, and no path or time is added.
func (p *Plan) NormalizedJSON() ([]byte, error) {
	b, err := json.Marshal(p.Normalized())
	if err != nil {
		return nil, fmt.Errorf("failed to encode normalized plan: %w", err)
	}
	c, err := jcs.Transform(b)
	if err != nil {
		return nil, fmt.Errorf("failed to canonicalize normalized plan: %w", err)
	}
	return c, nil
}
