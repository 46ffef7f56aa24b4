package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/producers/lmeval"
	"github.com/tuneplane/tpctl/snapshot"
)

// maxPeekPlan caps the plan read to learn its producer before an import
// (the import itself reads the plan again, with every check).
const maxPeekPlan = 256 << 20

// lmevalTraceDefault is an lm-eval import's default --trace-limit when
// none was given: the seed's rule (every body of a run of at most 128
// trials, 32 of a larger one, TUNEPLANE_JOB_VAL_UPLOAD_SAMPLES overriding,
// 0 off), applied only through a redactor the user named. note says what
// was decided and why ("" when the plan is not lm-eval's).
func lmevalTraceDefault(planPath string, redactors []string) (limit int, note string, err error) {
	data, err := safefs.ReadFileCapped(planPath, maxPeekPlan)
	if err != nil {
		return 0, "", nil // the import reports an unreadable plan
	}
	var head struct {
		Source struct {
			Format string `json:"format"`
		} `json:"source"`
		Trials []json.RawMessage `json:"trials"`
	}
	if json.Unmarshal(data, &head) != nil || head.Source.Format != lmeval.Format {
		return 0, "", nil
	}
	val, set := os.LookupEnv(lmeval.SamplesVar)
	d, err := lmeval.TraceDefault(len(head.Trials), val, set)
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

// besider is a producer's own figures about its run that can be set
// beside tpctl's counts (lm-eval's *lmeval.RunFacts).
type besider interface {
	Beside(snapshot.Counts) []string
}
