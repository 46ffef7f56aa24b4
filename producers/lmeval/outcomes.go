package lmeval

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/jsonscan"
	"github.com/tuneplane/tpctl/outcome"
)

// RulesVersion names lm-eval's outcome table. It is recorded in every
// snapshot it judged; any change to the status or reason a given sample
// line gets must bump it.
const RulesVersion = "lm-eval-outcomes/1"

// Statuses, as tpctl's model names them; Missing is a planned document
// with no sample line (the plan gives it no attempt).
const (
	StatusSuccess  = "success"
	StatusFailure  = "failure"
	StatusUnscored = "unscored"
	StatusMissing  = "missing"
)

// Reason codes of lm-eval-outcomes/1. They are part of the snapshot and
// upload contract: never rename one. result_missing and result_invalid are
// the codes every producer shares.
const (
	ReasonResultMissing   = "result_missing"
	ReasonResultInvalid   = "result_invalid"
	ReasonMetricSuccess   = "metric_success"
	ReasonMetricFailure   = "metric_failure"
	ReasonMetricAbsent    = "metric_absent"
	ReasonMetricNotFinite = "metric_not_finite"
	ReasonMetricNotBinary = "metric_not_binary"
	ReasonMetricNotNumber = "metric_not_a_number"
	ReasonNoSampleLine    = "no_sample_line"
)

// Rule is one row of the outcome table, in the order the judge applies
// them (the first that matches decides): outcome.Rule, whose status is
// "missing" on the row of a planned document with no attempt.
type Rule = outcome.Rule

var rules = []Rule{
	outcome.Row("planned document (doc_id 0 … n-samples.effective−1) with no line for the plan's filter in the task's samples file, or no samples file at all (lm-eval ran without --log_samples, or stopped before writing it): no attempt", StatusMissing, ReasonNoSampleLine),
	outcome.Row("the samples file the plan names is gone at import", StatusUnscored, ReasonResultMissing),
	outcome.Row("the document's line (or the file before it) cannot be read: not JSON, not one of lm-eval's records, over the size cap, or cut short (the error is kept in detail)", StatusUnscored, ReasonResultInvalid),
	outcome.Row("the line has no value for the plan's metric", StatusUnscored, ReasonMetricAbsent),
	outcome.Row("the metric's value is exactly 1 as a double, or true (acc, acc_norm and exact_match write 1.0; ifeval's prompt-level metrics write true)", StatusSuccess, ReasonMetricSuccess),
	outcome.Row("the metric's value is exactly 0 as a double (0, 0.0, -0.0), or false", StatusFailure, ReasonMetricFailure),
	outcome.Row("the metric's value is NaN, Infinity, -Infinity or too large for a double", StatusUnscored, ReasonMetricNotFinite),
	outcome.Row("the metric's value is another number (a per-document f1, bleu or pass@k fraction such as 0.5)", StatusUnscored, ReasonMetricNotBinary),
	outcome.Row("the metric's value is not a number: a string, null, a list (ifeval's instruction-level lists) or an object", StatusUnscored, ReasonMetricNotNumber),
}

// Table returns every rule in order. The caller may modify the slice.
func Table() []Rule { return append([]Rule(nil), rules...) }

// Reasons returns every reason code once, in table order.
func Reasons() []string { return (*Producer)(nil).Outcomes().Reasons() }

// Verdict is the judgement of one document's line.
type Verdict struct {
	Status string
	Reason string
	// Reward is the metric's value when it is a finite number (kept when
	// unscored, e.g. 0.5).
	Reward *float64
	// Detail says why in words; "" where it would only repeat the reason.
	Detail string
}

// Score is the metric and filter a plan judges a task by.
type Score struct {
	Metric, Filter string
}

// Judge judges one sample line by score's metric (the line is already the
// score's filter's).
func Judge(s *Sample, score Score) Verdict {
	v, ok := s.Values[score.Metric]
	if !ok {
		d := fmt.Sprintf("the line has no %q value", score.Metric)
		if len(s.Metrics) > 0 {
			d += " (it lists " + strings.Join(s.Metrics, ", ") + ")"
		}
		return Verdict{Status: StatusUnscored, Reason: ReasonMetricAbsent, Detail: d}
	}
	return JudgeValue(v)
}

// JudgeValue is tpctl's binary rule on one metric value.
func JudgeValue(v Value) Verdict {
	switch v.Kind {
	case jsonscan.True:
		one := 1.0
		return Verdict{Status: StatusSuccess, Reason: ReasonMetricSuccess, Reward: &one}
	case jsonscan.False:
		zero := 0.0
		return Verdict{Status: StatusFailure, Reason: ReasonMetricFailure, Reward: &zero}
	case jsonscan.Number:
		f, ok := pythonFloat(v.Raw)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return Verdict{Status: StatusUnscored, Reason: ReasonMetricNotFinite, Detail: "value " + v.Raw}
		}
		switch f {
		case 1:
			return Verdict{Status: StatusSuccess, Reason: ReasonMetricSuccess, Reward: &f}
		case 0:
			f = 0 // -0.0 is kept as 0
			return Verdict{Status: StatusFailure, Reason: ReasonMetricFailure, Reward: &f}
		}
		return Verdict{Status: StatusUnscored, Reason: ReasonMetricNotBinary, Reward: &f, Detail: "value " + v.Raw + " is neither 0 nor 1"}
	}
	what := map[jsonscan.Kind]string{
		jsonscan.String: "a string", jsonscan.Null: "null",
		jsonscan.BeginArray: "a list", jsonscan.BeginObject: "an object",
	}[v.Kind]
	d := "value is " + what
	if v.Kind == jsonscan.String {
		d += " " + strconv.Quote(clip(v.Raw, 40))
	}
	return Verdict{Status: StatusUnscored, Reason: ReasonMetricNotNumber, Detail: d}
}

// pythonFloat reads a number the way Python's json module does: a value
// below the smallest double is 0, one above the largest is infinite
// (false: not finite).
func pythonFloat(raw string) (float64, bool) {
	switch raw {
	case "NaN", "Infinity", "-Infinity":
		return 0, false
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange && !math.IsInf(f, 0) {
			return f, true // underflow: Python reads 1e-400 as 0.0
		}
		return f, false
	}
	return f, true
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// ChoiceError is a metric or filter a plan cannot be judged by: none
// named where the task has several, or one the task does not have.
type ChoiceError struct {
	Task string
	// What is "metric" or "filter"; Flag the flag that picks one.
	What, Flag string
	// Given is the name asked for, "" when none was.
	Given   string
	Options []string
	// Why, when not empty, says why Given cannot be used though it exists.
	Why string
}

func (e *ChoiceError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("task %s: %s %s: %s", e.Task, e.What, e.Given, e.Why)
	}
	if e.Given != "" {
		return fmt.Sprintf("task %s has no %s %q (it has %s)", e.Task, e.What, e.Given, strings.Join(e.Options, ", "))
	}
	if len(e.Options) == 0 {
		return fmt.Sprintf("task %s names no %s", e.Task, e.What)
	}
	return fmt.Sprintf("task %s has %d %ss (%s): pick one with %s NAME", e.Task, len(e.Options), e.What, strings.Join(e.Options, ", "), e.Flag)
}

// Choose picks the metric and filter a plan judges t by: the only one, or
// the one named. The candidates are what lm-eval computed (the task's
// figures, in order), else what its config lists.
func Choose(t *Task, metric, filter string) (Score, error) {
	var metrics, filters []string
	for _, f := range t.Figures {
		if !slices.Contains(metrics, f.Metric) {
			metrics = append(metrics, f.Metric)
		}
		fl := f.Filter
		if fl == "" {
			fl = "none"
		}
		if !slices.Contains(filters, fl) {
			filters = append(filters, fl)
		}
	}
	if len(metrics) == 0 {
		metrics = t.MetricNames
	}
	if len(filters) == 0 {
		filters = t.FilterNames
	}
	var sc Score
	var err error
	if sc.Metric, err = pick(t.Name, "metric", "--metric", metric, metrics); err != nil {
		return Score{}, err
	}
	if sc.Filter, err = pick(t.Name, "filter", "--filter", filter, filters); err != nil {
		return Score{}, err
	}
	if hib := t.HigherIsBetter[sc.Metric]; hib != nil && !*hib {
		return Score{}, &ChoiceError{Task: t.Name, What: "metric", Flag: "--metric", Given: sc.Metric, Options: metrics,
			Why: "lm-eval says lower is better, and tpctl counts 1 as a success"}
	}
	return sc, nil
}

func pick(task, what, flag, given string, options []string) (string, error) {
	if given != "" {
		if slices.Contains(options, given) {
			return given, nil
		}
		return "", &ChoiceError{Task: task, What: what, Flag: flag, Given: given, Options: options}
	}
	if len(options) == 1 {
		return options[0], nil
	}
	return "", &ChoiceError{Task: task, What: what, Flag: flag, Options: options}
}
