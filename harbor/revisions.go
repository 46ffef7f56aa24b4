package harbor

import "slices"

// Revision is a Harbor commit whose on-disk output format tpctl was
// validated against, with fixtures for each.
type Revision struct {
	Commit  string `json:"commit"`
	Name    string `json:"name"`
	Date    string `json:"date"`
	ATIF    string `json:"atif"`
	Summary string `json:"summary"`
}

// Revisions lists the validated Harbor revisions, oldest first.
var Revisions = []Revision{
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

// IsValidated reports whether commit is one of Revisions.
func IsValidated(commit string) bool {
	return slices.ContainsFunc(Revisions, func(r Revision) bool { return r.Commit == commit })
}
