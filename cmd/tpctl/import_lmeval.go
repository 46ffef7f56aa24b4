package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/producers/lmeval"
	"github.com/tuneplane/tpctl/snapshot"
)

// lmevalTraceDefault is an lm-eval import's default --trace-limit when
// none was given: the seed's rule (every body of a run of at most 128
// trials, 32 of a larger one, TUNEPLANE_JOB_VAL_UPLOAD_SAMPLES overriding,
// 0 off), applied only through a redactor the user named. note says what
// was decided and why ("" when the plan is not lm-eval's).
func lmevalTraceDefault(planPath string, redactors []string) (limit int, note string, err error) {
	format, trials := peekPlan(planPath)
	if format != lmeval.Format || trials < 0 {
		return 0, "", nil // not lm-eval's, or unreadable: the import says so
	}
	val, set := os.LookupEnv(lmeval.SamplesVar)
	d, err := lmeval.TraceDefault(trials, val, set)
	if err != nil {
		return 0, "", usageErr(err, "set "+lmeval.SamplesVar+" to a whole number, or pass --trace-limit N")
	}
	if d.N == 0 {
		return 0, "transcripts off: " + d.Why, nil
	}
	if len(redactors) == 0 {
		return 0, fmt.Sprintf("transcripts off: lm-eval's default would keep %d bodies (%s), but bodies stay off without a redactor: add --redactor builtin:secrets", d.N, d.Why), nil
	}
	return d.N, fmt.Sprintf("transcripts: up to %d bodies (%s)", d.N, d.Why), nil
}

// peekPlan reads a plan's source.format and, for an lm-eval plan, its
// number of trials, streamed: a plan of a million trials is never held
// (the import reads it again, with every check). It stops at source.format
// unless the format is lm-eval's; trials is -1 when not counted or the
// plan cannot be read.
func peekPlan(path string) (format string, trials int) {
	f, err := safefs.OpenRegular(path)
	if err != nil {
		return "", -1
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 64<<10))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", -1
	}
	trials = -1
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", -1
		}
		switch key {
		case "source":
			var src struct {
				Format string `json:"format"`
			}
			if dec.Decode(&src) != nil {
				return "", -1
			}
			if format = src.Format; format != lmeval.Format {
				return format, -1
			}
		case "trials":
			if trials = countArray(dec); trials < 0 {
				return "", -1
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return "", -1
			}
		}
		if format != "" && trials >= 0 {
			return format, trials
		}
	}
	return format, trials
}

// countArray counts the elements of the array dec is at, one element in
// memory at a time; -1 when it is not an array.
func countArray(dec *json.Decoder) int {
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return -1
	}
	n := 0
	for dec.More() {
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return -1
		}
		n++
	}
	if _, err := dec.Token(); err != nil {
		return -1
	}
	return n
}

// besider is a producer's own figures about its run that can be set
// beside tpctl's counts (lm-eval's *lmeval.RunFacts).
type besider interface {
	Beside(snapshot.Counts) []string
}
