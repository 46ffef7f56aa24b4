package snapshot

import (
	"cmp"
	"slices"
)

// Triage gathers a round's non-success trials into groups of one status,
// reason and exception type, keeping the first few of each as examples
// with their detail: the "why" the terminal prints after a round's
// summary (tpctl import, tpctl snapshot show DIR). Its memory grows with
// the number of groups, not of trials. The zero value is empty; Add every
// planned trial in canonical order.
type Triage struct {
	// Examples is how many trials each group keeps (0: 3).
	Examples int
	groups   map[triageKey]*FailureGroup
	order    []triageKey
	total    int
}

// FailureGroup is the non-success trials of one status, reason and
// exception type.
type FailureGroup struct {
	Status        string           `json:"status"`
	Reason        string           `json:"reason"`
	ExceptionType string           `json:"exception_type"`
	Count         int              `json:"count"`
	Examples      []FailureExample `json:"examples"`
}

// FailureExample is one trial of a group with the detail of its deciding
// attempt ("" when it has none).
type FailureExample struct {
	TrialID string `json:"trial_id"`
	Detail  string `json:"detail"`
}

type triageKey struct{ status, reason, exc string }

// Add counts one planned trial; a success adds nothing.
func (t *Triage) Add(p PlannedTrial) {
	k := triageKey{status: StatusMissing}
	detail := ""
	if o := p.Observation; o != nil {
		if o.Status == StatusSuccess {
			return
		}
		k = triageKey{status: o.Status, reason: o.Reason}
		if o.ExceptionType != nil {
			k.exc = *o.ExceptionType
		}
		if n := len(o.AttemptOutcomes); n > 0 {
			detail = o.AttemptOutcomes[n-1].Detail
		}
	}
	if t.groups == nil {
		t.groups = map[triageKey]*FailureGroup{}
	}
	g := t.groups[k]
	if g == nil {
		g = &FailureGroup{Status: k.status, Reason: k.reason, ExceptionType: k.exc}
		t.groups[k] = g
		t.order = append(t.order, k)
	}
	g.Count++
	t.total++
	n := t.Examples
	if n <= 0 {
		n = 3
	}
	if len(g.Examples) < n {
		g.Examples = append(g.Examples, FailureExample{TrialID: TrialID(p.Task, p.Repeat), Detail: detail})
	}
}

// Total is the number of non-success trials added.
func (t *Triage) Total() int { return t.total }

// triageRank orders the statuses of the triage: a scored failure first
// (the model's), then the trials the round could not score.
var triageRank = []string{StatusFailure, StatusInfraError, StatusUnscored, StatusMissing}

// Groups returns the groups, failures first, then infra errors, unscored
// and missing trials; the largest group first within a status, then by
// reason and exception type.
func (t *Triage) Groups() []FailureGroup {
	out := make([]FailureGroup, 0, len(t.order))
	for _, k := range t.order {
		out = append(out, *t.groups[k])
	}
	slices.SortStableFunc(out, func(a, b FailureGroup) int {
		return cmp.Or(cmp.Compare(slices.Index(triageRank, a.Status), slices.Index(triageRank, b.Status)),
			cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.ExceptionType, b.ExceptionType))
	})
	return out
}
