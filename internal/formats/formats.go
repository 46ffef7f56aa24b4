// Package formats lists the native output formats tpctl imports (one per
// producer, named as plan.source.format names it) and, for each, the
// revisions whose on-disk format tpctl was validated against, with
// fixtures for each. It is what a snapshot's source.format_verified
// means: the producers' wings (producers/harbor, …), the plan checks
// (planfile) and the snapshot's verification all read this one list, so it
// sits below them. A new producer adds its format to byFormat.
package formats

import (
	"slices"
	"strconv"
	"strings"
)

// HarborFormat is the source format name of Harbor job folders.
const HarborFormat = "harbor"

// Revision is a commit of a native format's producer whose on-disk output
// tpctl was validated against.
type Revision struct {
	Commit  string `json:"commit"`
	Name    string `json:"name"`
	Date    string `json:"date"`
	ATIF    string `json:"atif"`
	Summary string `json:"summary"`
}

// Harbor lists the validated Harbor revisions, oldest first.
var Harbor = []Revision{
	{
		Commit:  "5f5618b8f5419dde63f2df6d86706782e597e8a3",
		Name:    "upstream 2026-04",
		Date:    "2026-04-08",
		ATIF:    "ATIF-v1.0 … v1.6",
		Summary: "single-step trials; verifier_result.rewards; exception_info",
	},
	{
		Commit:  "4407eb5227a2ff4f0d3f16b2eb48849382fdf276",
		Name:    "v0.22.0",
		Date:    "2026-08",
		ATIF:    "ATIF-v1.0 … v1.7",
		Summary: "multi-step trials (step_results), verifier_environment_mode, ATIF v1.7",
	},
}

// InspectFormat is the source format name of Inspect AI logs.
const InspectFormat = "inspect"

// Inspect is the Inspect AI release range whose logs (log format version
// 2, .eval and .json) tpctl was validated against: the shared fixtures run
// from 0.3.41 to 0.3.154, and the models were read at the commit of
// 0.3.260. A plan's source.revision is the Inspect version the log
// records (eval.packages.inspect_ai), validated when it falls in
// [InspectMin, InspectMax] by its release numbers (a dev or local suffix
// counts as its release).
var Inspect = []Revision{
	{
		Commit:  "499e6152e7b8fc8cbd8ac5283536572aa6e4ab17",
		Name:    InspectMin + " … " + InspectMax,
		Date:    "2026-08-22",
		Summary: "log format version 2: .eval (zip) and .json logs; eval.dataset.sample_ids; error_retries; Score.unscored",
	},
}

// The Inspect release range of Inspect's validated revisions.
const (
	InspectMin = "0.3.41"
	InspectMax = "0.3.260"
)

// LMEvalFormat is the source format name of lm-evaluation-harness
// output folders (results_*.json with samples_<task>_*.jsonl).
const LMEvalFormat = "lm-eval"

// LMEval lists the lm-eval code tpctl's reader was written against. A
// plan's source.revision is lm-eval's version as the results file records
// it (lm_eval_version, then "+" and its git_hash); it is validated when the
// version's release is LMEvalRelease (a .devN or .postN suffix counts as
// its release).
var LMEval = []Revision{
	{
		Commit:  "4e7e0d47f33bc71070c1d38394bafbb52b117163",
		Name:    "0.4.13.dev0",
		Date:    "2026-08-21",
		Summary: "plans name lm_eval_version 0.4.13.x (+git_hash); results_<ts>.json (n-samples, configs, task_hashes, model_name); samples_<task>_<ts>.jsonl (doc_id, filter, metrics, doc/prompt/target hashes)",
	},
}

// LMEvalRelease is the release of lm-eval's validated revision.
const LMEvalRelease = "0.4.13"

// byFormat is the validated revisions of each format tpctl imports.
var byFormat = map[string][]Revision{
	HarborFormat:  Harbor,
	InspectFormat: Inspect,
	LMEvalFormat:  LMEval,
}

// Revisions returns the validated revisions of format, oldest first, or
// nil for a format tpctl does not know.
func Revisions(format string) []Revision { return byFormat[format] }

// Known reports whether tpctl knows format, so that a revision of it is
// verified or not by this list rather than by what a file claims.
func Known(format string) bool { return Revisions(format) != nil }

// Validated reports whether commit is a validated revision of format (for
// Inspect, a version in the validated release range).
func Validated(format, commit string) bool {
	if format == InspectFormat {
		v, ok := release(commit)
		lo, _ := release(InspectMin)
		hi, _ := release(InspectMax)
		return ok && slices.Compare(v, lo) >= 0 && slices.Compare(v, hi) <= 0
	}
	if format == LMEvalFormat {
		return lmevalValidated(commit)
	}
	return slices.ContainsFunc(Revisions(format), func(r Revision) bool { return r.Commit == commit })
}

// release reads the release numbers of a Python package version
// ("0.3.58.dev16+g6a87748b" is 0.3.58): exactly three dot-separated
// numbers, then nothing, or a ".devN", "aN", "bN", "rcN", ".postN" or "+local"
// suffix.
func release(v string) ([]int, bool) {
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i]
	}
	parts := strings.SplitN(v, ".", 4)
	if len(parts) < 3 {
		return nil, false
	}
	if len(parts) == 4 && !strings.HasPrefix(parts[3], "dev") && !strings.HasPrefix(parts[3], "post") {
		return nil, false
	}
	last := parts[2]
	for _, pre := range []string{"rc", "a", "b"} {
		if i := strings.Index(last, pre); i > 0 {
			last = last[:i]
			break
		}
	}
	parts[2] = last
	out := make([]int, 3)
	for i := range 3 {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 || strconv.Itoa(n) != parts[i] {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// lmevalValidated reports whether an lm-eval revision ("0.4.13.dev0+4e7e0d4",
// "0.4.13") is of the validated release.
func lmevalValidated(rev string) bool {
	v, _, _ := strings.Cut(rev, "+")
	rest, ok := strings.CutPrefix(v, LMEvalRelease)
	return ok && (rest == "" || strings.HasPrefix(rest, ".dev") || strings.HasPrefix(rest, ".post"))
}
