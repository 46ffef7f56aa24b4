// Package outcome holds the neutral words of a verdict on one attempt,
// whatever produced it (SPEC §2): the four statuses, the outcome with its
// reason code, and a producer's versioned outcome table. Judging by a
// table is each producer's own (producers/harbor for Harbor); this
// package knows no producer, so the model (importer, snapshot, round, …)
// speaks one set of words for all of them (docs/layout.md).
package outcome

import "slices"

// Status is the verdict for one attempt.
type Status string

// The four statuses. Only Success and Failure are scored (they enter the
// success rate and may be trainable).
const (
	Success    Status = "success"
	Failure    Status = "failure"
	InfraError Status = "infra_error"
	Unscored   Status = "unscored"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case Success, Failure, InfraError, Unscored:
		return true
	}
	return false
}

// Scored reports whether s counts toward the success rate.
func (s Status) Scored() bool { return s == Success || s == Failure }

// The reason codes every producer shares: the attempt's native record is
// not there, or is there and cannot be read as the producer's format.
// Every other code is a producer's own, in its table. Codes are part of
// the snapshot and upload contract: never rename one.
const (
	ReasonResultMissing = "result_missing"
	ReasonResultInvalid = "result_invalid"
)

// Outcome is the verdict for one attempt.
type Outcome struct {
	Status Status `json:"status"`
	Reason string `json:"reason"`
	// Reward is the score tpctl looked at, when it is a finite number
	// (kept even when unscored, e.g. 0.5).
	Reward *float64 `json:"reward"`
	// ExceptionType is the class of the error or exception that decided
	// the attempt, as the producer names it (Harbor's
	// exception_info.exception_type).
	ExceptionType *string `json:"exception_type"`
	// Detail says in words why; it never contains machine paths unless the
	// error the producer met did.
	Detail string `json:"detail"`
}

// Rule is one row of an outcome table, in the order the producer applies
// them (the first that matches decides).
type Rule struct {
	Situation string `json:"situation"`
	Status    Status `json:"status"`
	Reason    string `json:"reason"`
}

// Row is one Rule, for tables written a row a line.
func Row(situation string, status Status, reason string) Rule {
	return Rule{Situation: situation, Status: status, Reason: reason}
}

// Table is a producer's versioned outcome table: the rules its judge
// applies, printed by `tpctl explain outcomes` and named in every
// snapshot it judged (outcome_rules).
type Table struct {
	// Producer is the producer's format name (plan.source.format).
	Producer string `json:"producer"`
	// Version names the rule set; any change to the verdict a given input
	// gets must change it.
	Version string `json:"outcome_rules"`
	Rules   []Rule `json:"rules"`
}

// Reasons returns every reason code of the table once, in table order.
func (t Table) Reasons() []string {
	var out []string
	for _, r := range t.Rules {
		if !slices.Contains(out, r.Reason) {
			out = append(out, r.Reason)
		}
	}
	return out
}
