// Command gen writes a synthetic Harbor job of N trials in the real format,
// with an import plan, for benchmarks: go run ./internal/gen -n 10000 -out DIR
// (-indent writes the plan indented, -shuffle its trials in a shuffled order).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tuneplane/tpctl/internal/harborgen"
)

func main() {
	n := flag.Int("n", 10000, "number of trials")
	out := flag.String("out", "", "new folder to write the job into")
	indent := flag.Bool("indent", false, "write the plan indented")
	shuffle := flag.Bool("shuffle", false, "write the plan's trials in a shuffled order (not canonical)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gen: -out is required")
		os.Exit(2)
	}
	job, err := harborgen.WriteWith(*out, *n, harborgen.Options{IndentPlan: *indent, ShufflePlan: *shuffle})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s %d\n", job.Root, job.PlanPath, job.Trials)
}
