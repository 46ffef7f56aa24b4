package lmeval

import (
	"fmt"
	"strconv"
	"strings"
)

// SamplesVar is the environment variable of the seed's lm-eval
// integration that caps how many sample bodies a validation job uploads.
const SamplesVar = "TUNEPLANE_JOB_VAL_UPLOAD_SAMPLES"

// Trace limits: tpctl's --trace-limit ceiling, and the seed's defaults
// (every body for runs of at most SmallRun trials, LargeRunBodies for
// larger ones).
const (
	MaxTraceLimit  = 128
	SmallRun       = 128
	LargeRunBodies = 32
)

// TraceLimit is the default --trace-limit of an lm-eval import and why.
type TraceLimit struct {
	// N is the number of transcripts to keep; 0 is bodies off.
	N   int
	Why string
}

// TraceDefault applies the seed's rule to a run of trials planned trials.
// value and set are SamplesVar as the caller read it from the environment
// (this package never reads it): set, not empty and a whole number ≥ 0 overrides the
// default, 0 turning bodies off; anything else is an error naming the
// variable. A value above tpctl's ceiling keeps MaxTraceLimit.
func TraceDefault(trials int, value string, set bool) (TraceLimit, error) {
	v := strings.TrimSpace(value)
	if set && v != "" { // set but empty is unset, as shells mean it
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return TraceLimit{}, fmt.Errorf("%s=%q is not a whole number ≥ 0 (0 turns transcript bodies off)", SamplesVar, value)
		}
		switch {
		case n == 0:
			return TraceLimit{N: 0, Why: SamplesVar + "=0 turns transcript bodies off"}, nil
		case n > MaxTraceLimit:
			return TraceLimit{N: MaxTraceLimit, Why: fmt.Sprintf("%s=%d, capped at tpctl's ceiling of %d", SamplesVar, n, MaxTraceLimit)}, nil
		}
		return TraceLimit{N: min(n, max(trials, 0)), Why: fmt.Sprintf("%s=%d", SamplesVar, n)}, nil
	}
	if trials <= SmallRun {
		return TraceLimit{N: max(trials, 0), Why: fmt.Sprintf("every body of a run of at most %d trials (%s unset)", SmallRun, SamplesVar)}, nil
	}
	return TraceLimit{N: LargeRunBodies, Why: fmt.Sprintf("%d bodies for a run of more than %d trials (%s unset)", LargeRunBodies, SmallRun, SamplesVar)}, nil
}
