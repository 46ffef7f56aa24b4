package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/internal/ui"
)

// writeGate is the terminal view of a gate verdict: the verdict, then one
// line per rule with its numbers, then the quarantine, wrapped to width.
func writeGate(w io.Writer, width int, mask func(string) string, v *gate.Verdict) error {
	var b strings.Builder
	verdict := "PASS"
	if !v.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "gate %s: %s (%s)", verdict, ui.Printable(v.Candidate.Dir), ui.Printable(v.Candidate.Checkpoint.Ref))
	if v.Baseline != nil {
		fmt.Fprintf(&b, " against baseline %s (%s)", ui.Printable(v.Baseline.Dir), ui.Printable(v.Baseline.Checkpoint.Ref))
	}
	fmt.Fprintf(&b, ", policy %s\n", ui.Printable(v.Policy))
	if d := v.Candidate.Dataset; d != nil {
		// A limited run says so: the rates judged are over these samples.
		fmt.Fprintf(&b, "  rates over %s\n", sideScope(d))
	}
	for _, r := range v.Rules {
		mark := "ok  "
		if !r.Passed() {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "  %s %s\n", mark, ui.Printable(r.Message))
	}
	if len(v.Quarantined) > 0 {
		var qs []string
		for _, q := range v.Quarantined {
			qs = append(qs, fmt.Sprintf("%s (%s)", ui.Printable(q.Task), ui.Plural(q.Trials, "trial")))
		}
		slices.Sort(qs)
		fmt.Fprintf(&b, "  quarantined, left out of every rule: %s\n", strings.Join(qs, ", "))
	}
	_, err := io.WriteString(w, ui.Wrap(b.String(), width, mask))
	return err
}
