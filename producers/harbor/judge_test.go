package harbor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/outcome"
)

// resultsDir holds the Harbor-format result files (hand-written cases and
// the synthetic fixtures); they belong to the harbor package's testdata.
const resultsDir = "testdata"

func judgeFile(t *testing.T, path string) outcome.Outcome {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := DecodeTrialResult(f)
	if err != nil {
		return Invalid(err)
	}
	return Judge(r)
}

// verdict is the part of an outcome.Outcome each rule pins.
type verdict struct {
	Status        outcome.Status
	Reason        string
	Reward        *float64
	ExceptionType *string
}

func verdictOf(o outcome.Outcome) verdict {
	return verdict{o.Status, o.Reason, o.Reward, o.ExceptionType}
}

func f64(v float64) *float64 { return &v }
func str(s string) *string   { return &s }

func TestJudgeFiles(t *testing.T) {
	tests := []struct {
		file string
		want verdict
	}{
		// rewards, no exception
		{"cases/success-float", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/success-int", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/success-1e0", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/success-10e-1", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/failure-float", verdict{outcome.Failure, ReasonRewardFailure, f64(0), nil}},
		{"cases/failure-int", verdict{outcome.Failure, ReasonRewardFailure, f64(0), nil}},
		{"cases/failure-neg-zero", verdict{outcome.Failure, ReasonRewardFailure, f64(math.Copysign(0, -1)), nil}},
		{"cases/reward-half", verdict{outcome.Unscored, ReasonRewardNotBinary, f64(0.5), nil}},
		// judged on the double, as Harbor's Python reads it: 1.0000000000000001 is 1
		{"cases/reward-near-one", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"own/reward-just-below-one", verdict{outcome.Unscored, ReasonRewardNotBinary, f64(0.9999999999999999), nil}},
		{"own/reward-tiny-zero", verdict{outcome.Failure, ReasonRewardFailure, f64(0), nil}},
		{"cases/reward-true", verdict{outcome.Unscored, ReasonRewardNotBinary, nil, nil}},
		{"cases/reward-string-one", verdict{outcome.Unscored, ReasonRewardNotBinary, nil, nil}},
		{"cases/reward-1e400", verdict{outcome.Unscored, ReasonRewardNotFinite, nil, nil}},
		{"cases/reward-nan", verdict{outcome.Unscored, ReasonRewardNotFinite, nil, nil}},
		{"cases/reward-infinity", verdict{outcome.Unscored, ReasonRewardNotFinite, nil, nil}},
		{"cases/reward-neg-infinity", verdict{outcome.Unscored, ReasonRewardNotFinite, nil, nil}},
		{"cases/reward-null", verdict{outcome.Unscored, ReasonRewardMissing, nil, nil}},
		{"cases/reward-object", verdict{outcome.Unscored, ReasonRewardNotBinary, nil, nil}},
		{"cases/rewards-empty", verdict{outcome.Unscored, ReasonRewardMissing, nil, nil}},
		{"cases/rewards-null", verdict{outcome.Unscored, ReasonRewardMissing, nil, nil}},
		{"cases/rewards-several-keys", verdict{outcome.Unscored, ReasonRewardAmbiguous, nil, nil}},
		{"cases/rewards-several-with-reward", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/rewards-single-other-key", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/rewards-llm-judge", verdict{outcome.Unscored, ReasonRewardNotBinary, f64(7), nil}},
		{"cases/verifier-result-null", verdict{outcome.Unscored, ReasonRewardMissing, nil, nil}},
		{"cases/legacy-reward-one", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/legacy-reward-null", verdict{outcome.Unscored, ReasonRewardMissing, nil, nil}},
		{"cases/both-reward-shapes", verdict{outcome.Unscored, ReasonRewardAmbiguous, nil, nil}},
		{"cases/legacy-5f5618b8-success", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/provider-null", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/separate-mode", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/unknown-fields", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/nan-outside-reward", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},

		// exceptions
		{"cases/verifier-timeout", verdict{outcome.InfraError, ReasonVerifierTimeout, nil, str("VerifierTimeoutError")}},
		{"cases/environment-start-timeout", verdict{outcome.InfraError, ReasonInfraException, nil, str("EnvironmentStartTimeoutError")}},
		{"cases/sandbox-build-failed", verdict{outcome.InfraError, ReasonInfraException, nil, str("SandboxBuildFailedError")}},
		{"cases/healthcheck-error", verdict{outcome.InfraError, ReasonInfraException, nil, str("HealthcheckError")}},
		{"cases/agent-timeout-success", verdict{outcome.Success, ReasonAgentTimeoutScored, f64(1), str("AgentTimeoutError")}},
		{"cases/agent-timeout-failure", verdict{outcome.Failure, ReasonAgentTimeoutScored, f64(0), str("AgentTimeoutError")}},
		{"cases/agent-timeout-no-reward", verdict{outcome.Unscored, ReasonAgentTimeoutUnscored, nil, str("AgentTimeoutError")}},
		{"cases/agent-timeout-half", verdict{outcome.Unscored, ReasonAgentTimeoutUnscored, f64(0.5), str("AgentTimeoutError")}},
		{"cases/api-rate-limit-failure", verdict{outcome.Failure, ReasonAgentErrorScored, f64(0), str("ApiRateLimitError")}},
		{"cases/api-rate-limit-success", verdict{outcome.Success, ReasonAgentErrorScored, f64(1), str("ApiRateLimitError")}},
		{"cases/api-rate-limit-no-reward", verdict{outcome.Unscored, ReasonAgentErrorUnscored, nil, str("ApiRateLimitError")}},
		{"cases/nonzero-exit-failure", verdict{outcome.Failure, ReasonAgentErrorScored, f64(0), str("NonZeroAgentExitCodeError")}},
		{"cases/cancelled", verdict{outcome.Unscored, ReasonCancelled, nil, str("CancelledError")}},
		{"cases/cancelled-with-reward", verdict{outcome.Unscored, ReasonCancelled, f64(1), str("CancelledError")}},
		{"cases/reward-file-not-found", verdict{outcome.Unscored, ReasonVerifierError, nil, str("RewardFileNotFoundError")}},
		{"cases/unseen-exception-with-reward", verdict{outcome.Unscored, ReasonUnknownException, f64(1), str("QuantumFluxCapacitorError")}},
		{"cases/runtime-error", verdict{outcome.Unscored, ReasonUnknownException, nil, str("RuntimeError")}},
		// the vibe agent's connection error is an agent API error
		{"own/api-connection-error-success", verdict{outcome.Success, ReasonAgentErrorScored, f64(1), str("ApiConnectionError")}},
		{"own/api-connection-error-no-reward", verdict{outcome.Unscored, ReasonAgentErrorUnscored, nil, str("ApiConnectionError")}},
		// Harbor's own environment start failures, recorded as RuntimeError
		// before agent setup began
		{"own/docker-compose-build-failed", verdict{outcome.InfraError, ReasonEnvironmentStart, nil, str("RuntimeError")}},
		{"own/docker-compose-up-failed-5f5618b8", verdict{outcome.InfraError, ReasonEnvironmentStart, nil, str("RuntimeError")}},
		{"own/dind-compose-up-failed", verdict{outcome.InfraError, ReasonEnvironmentStart, nil, str("RuntimeError")}},
		{"own/apple-container-build-failed", verdict{outcome.InfraError, ReasonEnvironmentStart, nil, str("RuntimeError")}},
		// ... but not the same text once the agent was set up, nor another
		// RuntimeError during environment start
		{"own/docker-compose-failed-after-agent-setup", verdict{outcome.Unscored, ReasonUnknownException, nil, str("RuntimeError")}},
		{"own/runtime-error-during-environment-start", verdict{outcome.Unscored, ReasonUnknownException, nil, str("RuntimeError")}},
		// agent command failures while installing the agent: it never ran
		{"own/agent-install-failed", verdict{outcome.InfraError, ReasonAgentSetupFailed, nil, str("NonZeroAgentExitCodeError")}},
		{"own/agent-install-network-error", verdict{outcome.InfraError, ReasonAgentSetupFailed, nil, str("NetworkConnectionError")}},
		{"own/agent-install-failed-5f5618b8", verdict{outcome.InfraError, ReasonAgentSetupFailed, nil, str("NonZeroAgentExitCodeError")}},
		{"own/user-agent-install-failed", verdict{outcome.InfraError, ReasonAgentSetupFailed, nil, str("NonZeroAgentExitCodeError")}},
		// ... but a failure of the agent's run with the verifier disabled is
		// still the agent's
		{"own/nonzero-exit-verifier-disabled", verdict{outcome.Unscored, ReasonAgentErrorUnscored, nil, str("NonZeroAgentExitCodeError")}},
		// a bare TimeoutError is the verifier timeout only on a step
		{"cases/bare-timeout-trial-level", verdict{outcome.Unscored, ReasonUnknownException, f64(1), str("TimeoutError")}},

		// multi-step
		{"cases/multistep-all-pass", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"cases/multistep-all-fail", verdict{outcome.Failure, ReasonRewardFailure, f64(0), nil}},
		{"cases/multistep-mean-half", verdict{outcome.Unscored, ReasonRewardNotBinary, f64(0.5), nil}},
		{"cases/multistep-crash-derived-one", verdict{outcome.Unscored, ReasonStepException, f64(1), str("RuntimeError")}},
		{"cases/multistep-step-verifier-timeout", verdict{outcome.InfraError, ReasonStepException, f64(1), str("TimeoutError")}},
		{"cases/multistep-step-no-verifier", verdict{outcome.Unscored, ReasonStepUnscored, f64(1), nil}},
		{"cases/multistep-unscored-then-infra", verdict{outcome.InfraError, ReasonStepException, nil, str("HealthcheckError")}},
		{"cases/multistep-step-agent-timeout-scored", verdict{outcome.Success, ReasonAgentTimeoutScored, f64(1), str("AgentTimeoutError")}},
		{"own/multistep-step-api-error-scored", verdict{outcome.Success, ReasonAgentErrorScored, f64(1), str("ApiRateLimitError")}},
		{"cases/multistep-step-agent-timeout-unscored", verdict{outcome.Unscored, ReasonStepException, f64(1), str("AgentTimeoutError")}},
		{"cases/multistep-trial-cancelled", verdict{outcome.Unscored, ReasonCancelled, nil, str("CancelledError")}},
		{"cases/multistep-env-start-before-steps", verdict{outcome.InfraError, ReasonInfraException, nil, str("EnvironmentStartTimeoutError")}},
		{"cases/multistep-no-steps-ran", verdict{outcome.Unscored, ReasonRewardMissing, nil, nil}},

		// the synthetic fixtures of both validated revisions
		{"synthetic/5f5618b8/hello-world__8ZRP9RZ", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"synthetic/5f5618b8/hello-world__VRJndPc", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"synthetic/5f5618b8/hello-alpine__2hvTLoF", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"synthetic/5f5618b8/hello-world__ivaTpL8", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"synthetic/5f5618b8/hello-world__wfQvhMr", verdict{outcome.Failure, ReasonAgentTimeoutScored, f64(0), str("AgentTimeoutError")}},
		{"synthetic/5f5618b8/hello-alpine__S59E569", verdict{outcome.Unscored, ReasonVerifierError, nil, str("RewardFileNotFoundError")}},
		{"synthetic/5f5618b8/hello-alpine__RiTu8nJ", verdict{outcome.InfraError, ReasonVerifierTimeout, nil, str("VerifierTimeoutError")}},
		{"synthetic/5f5618b8/hello-world__4Bfpt9b", verdict{outcome.Unscored, ReasonCancelled, nil, str("CancelledError")}},
		{"synthetic/v0.22.0/hello-world__Pq4rSt6", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"synthetic/v0.22.0/separate-verifier-environment__Xy7kLm2", verdict{outcome.Success, ReasonRewardSuccess, f64(1), nil}},
		{"synthetic/v0.22.0/hello-world__Hk8mNw3", verdict{outcome.Failure, ReasonAgentErrorScored, f64(0), str("ApiRateLimitError")}},
		{"synthetic/v0.22.0/hello-multi-step-advanced__Ab3dE5f", verdict{outcome.Unscored, ReasonRewardNotBinary, f64(0.5), str("AgentTimeoutError")}},
		{"synthetic/v0.22.0/multistep-top-separate-mixed__R4tYu9c", verdict{outcome.InfraError, ReasonStepException, f64(1), str("TimeoutError")}},
	}
	covered := map[string]bool{}
	golden := map[string]outcome.Outcome{}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(resultsDir, tt.file+".json")
			if name, ok := strings.CutPrefix(tt.file, "own/"); ok {
				path = filepath.Join("testdata", "outcome", "cases", name+".json")
			}
			got := judgeFile(t, path)
			if diff := cmp.Diff(tt.want, verdictOf(got)); diff != "" {
				t.Errorf("Judge(%s) mismatch (-want +got):\n%s\ndetail: %s", tt.file, diff, got.Detail)
			}
			if got.Detail == "" {
				t.Errorf("Judge(%s) has no detail", tt.file)
			}
			covered[got.Reason] = true
			golden[tt.file] = got
		})
	}
	// Every hand-written case file is in the table above.
	files, _ := filepath.Glob(filepath.Join(resultsDir, "cases", "*.json"))
	for _, f := range files {
		name := "cases/" + strings.TrimSuffix(filepath.Base(f), ".json")
		if _, ok := golden[name]; !ok {
			t.Errorf("case file %s has no expectation in TestJudgeFiles", name)
		}
	}
	own, _ := filepath.Glob(filepath.Join("testdata", "outcome", "cases", "*.json"))
	for _, f := range own {
		name := "own/" + strings.TrimSuffix(filepath.Base(f), ".json")
		if _, ok := golden[name]; !ok {
			t.Errorf("case file %s has no expectation in TestJudgeFiles", name)
		}
	}
	// Every reason except the two that need no result.json is exercised by a
	// real-format file.
	for _, r := range Reasons() {
		if r != outcome.ReasonResultMissing && r != outcome.ReasonResultInvalid && !covered[r] {
			t.Errorf("reason %s is not exercised by any result file", r)
		}
	}
	checkGolden(t, "testdata/outcome/judge.golden.json", golden)
}

func checkGolden(t *testing.T, path string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./producers/harbor -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got; run with -update if intended):\n%s", path, diff)
	}
}

// TestExceptionTable judges every known exception type with a binary
// reward, no reward, and on a step, so each entry of the table is pinned.
func TestExceptionTable(t *testing.T) {
	one := &VerifierResult{HasRewards: true, Rewards: []Reward{{Key: "reward", Value: Value{Kind: KindNumber, Raw: "1.0"}}}}
	for _, e := range Exceptions() {
		t.Run(e.Type, func(t *testing.T) {
			exc := &ExceptionInfo{Type: e.Type}
			var got, gotNoReward outcome.Outcome
			if e.Scope == ScopeStep {
				// Only recognised on a step: judge through a multi-step trial.
				r := &TrialResult{MultiStep: true, Verifier: one, Steps: []StepResult{{Name: "s", Exception: exc, Verifier: one}}}
				got = Judge(r)
				if got.Status != e.Status || got.Reason != ReasonStepException {
					t.Errorf("step %s: got %s/%s, want %s/%s", e.Type, got.Status, got.Reason, e.Status, ReasonStepException)
				}
				top := Judge(&TrialResult{Exception: exc, Verifier: one})
				if top.Reason != ReasonUnknownException {
					t.Errorf("trial-level %s: got reason %s, want %s", e.Type, top.Reason, ReasonUnknownException)
				}
				return
			}
			got = Judge(&TrialResult{Exception: exc, Verifier: one})
			gotNoReward = Judge(&TrialResult{Exception: exc})
			if e.ScoreStands() {
				if got.Status != outcome.Success {
					t.Errorf("%s with reward 1: got %s, want success (score stands)", e.Type, got.Status)
				}
			} else if got.Status != e.Status || got.Reason != e.Reason {
				t.Errorf("%s with reward 1: got %s/%s, want %s/%s", e.Type, got.Status, got.Reason, e.Status, e.Reason)
			}
			if gotNoReward.Status != e.Status || gotNoReward.Reason != e.Reason {
				t.Errorf("%s without reward: got %s/%s, want %s/%s", e.Type, gotNoReward.Status, gotNoReward.Reason, e.Status, e.Reason)
			}
			if got.ExceptionType == nil || *got.ExceptionType != e.Type {
				t.Errorf("%s: exception type not kept: %v", e.Type, got.ExceptionType)
			}
			// The same name on a step gives the same step verdict.
			st := Judge(&TrialResult{MultiStep: true, Verifier: one, Steps: []StepResult{{Name: "s", Exception: exc}}})
			if st.Status != e.Status {
				t.Errorf("step %s without reward: got %s, want %s", e.Type, st.Status, e.Status)
			}
		})
	}
}

func TestSpecInfraNames(t *testing.T) {
	// SPEC §2 names these explicitly; losing one from the table is a bug.
	for _, name := range []string{"VerifierTimeoutError", "EnvironmentStartTimeoutError", "AgentSetupTimeoutError",
		"SandboxBuildFailedError", "HealthcheckError", "DownloadVerifierDirError", "AddTestsDirError"} {
		found := false
		for _, e := range InfraExceptions() {
			found = found || e.Type == name
		}
		if !found {
			t.Errorf("%s is missing from InfraExceptions()", name)
		}
	}
	seen := map[string]bool{}
	for _, e := range Exceptions() {
		if seen[e.Type+e.Scope] {
			t.Errorf("exception %s listed twice", e.Type)
		}
		seen[e.Type+e.Scope] = true
		if e.Source == "" || !e.Status.Valid() {
			t.Errorf("exception %s: incomplete rule %+v", e.Type, e)
		}
	}
}

func TestMissingInvalidNil(t *testing.T) {
	tests := []struct {
		name string
		got  outcome.Outcome
		want verdict
	}{
		{"missing", Missing(), verdict{outcome.Unscored, outcome.ReasonResultMissing, nil, nil}},
		{"invalid", Invalid(errors.New("at byte 3: boom")), verdict{outcome.Unscored, outcome.ReasonResultInvalid, nil, nil}},
		{"invalid nil error", Invalid(nil), verdict{outcome.Unscored, outcome.ReasonResultInvalid, nil, nil}},
		{"nil result", Judge(nil), verdict{outcome.Unscored, outcome.ReasonResultInvalid, nil, nil}},
		{"empty result", Judge(&TrialResult{}), verdict{outcome.Unscored, ReasonRewardMissing, nil, nil}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, verdictOf(tt.got)); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
	if got := Invalid(errors.New("at byte 3: boom")).Detail; got != "at byte 3: boom" {
		t.Errorf("Invalid detail = %q, want the parse error", got)
	}
}

func TestTable(t *testing.T) {
	known := map[string]bool{}
	for _, r := range Table() {
		if !r.Status.Valid() || r.Situation == "" || !regexp.MustCompile(`^[a-z_]+$`).MatchString(r.Reason) {
			t.Errorf("bad rule %+v", r)
		}
		known[r.Reason] = true
	}
	for _, e := range Exceptions() {
		if !known[e.Reason] {
			t.Errorf("exception %s uses reason %s that has no table row", e.Type, e.Reason)
		}
	}
	// Reason constants declared in outcomes.go all appear in the table.
	src, err := os.ReadFile("outcomes.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s+Reason\w+\s+= "([a-z_]+)"`).FindAllSubmatch(src, -1) {
		if !known[string(m[1])] {
			t.Errorf("reason constant %q has no row in Table()", m[1])
		}
	}
	if RulesVersion != "tpctl-outcomes/2" {
		t.Errorf("RulesVersion = %q", RulesVersion)
	}
}

// TestDocsInSync fails when docs/outcomes.md misses a reason code, a status
// or a known exception name.
func TestDocsInSync(t *testing.T) {
	doc, err := os.ReadFile("../../docs/outcomes.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Reasons() {
		if !bytes.Contains(doc, []byte("`"+r+"`")) {
			t.Errorf("docs/outcomes.md does not mention reason `%s`", r)
		}
	}
	for _, e := range Exceptions() {
		if !bytes.Contains(doc, []byte("`"+e.Type+"`")) {
			t.Errorf("docs/outcomes.md does not mention exception `%s`", e.Type)
		}
	}
	// The numbered table lists the same (status, reason) rows in order.
	var docRows, codeRows []string
	for _, m := range regexp.MustCompile("(?m)^\\| \\d+ \\|.*\\| `([a-z_]+)` \\| `([a-z_]+)` \\|$").FindAllSubmatch(doc, -1) {
		docRows = append(docRows, string(m[1])+" "+string(m[2]))
	}
	for _, r := range Table() {
		codeRows = append(codeRows, string(r.Status)+" "+r.Reason)
	}
	if diff := cmp.Diff(codeRows, docRows); diff != "" {
		t.Errorf("docs/outcomes.md table differs from Table() (-code +doc):\n%s", diff)
	}
	if !bytes.Contains(doc, []byte(RulesVersion)) {
		t.Errorf("docs/outcomes.md does not name %s", RulesVersion)
	}
}

func TestStatusJSON(t *testing.T) {
	b, err := json.Marshal(outcome.Outcome{Status: outcome.InfraError, Reason: ReasonVerifierTimeout})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"infra_error","reason":"verifier_timeout","reward":null,"exception_type":null,"detail":""}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("Outcome JSON mismatch (-want +got):\n%s", diff)
	}
}

func BenchmarkJudge(b *testing.B) {
	f, err := os.Open(filepath.Join(resultsDir, "synthetic/v0.22.0/hello-multi-step-advanced__Ab3dE5f.json"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r, err := DecodeTrialResult(f)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if o := Judge(r); o.Status != outcome.Unscored {
			b.Fatal(o)
		}
	}
}

// TestHarborExceptionsPerRevision enumerates every exception class in
// Harbor's source at each validated revision (testdata/harbor-exceptions,
// derived from the source as its README says) against the table: each is
// judged with that revision's class statement, or unjudged with a reason,
// and every definition the table cites is in the list.
func TestHarborExceptionsPerRevision(t *testing.T) {
	type def struct{ name, loc string }
	cited := map[def]bool{} // every (revision-qualified) definition the code cites
	known := map[string]bool{}
	add := func(typ string, defs []Definition) {
		known[typ] = true
		for _, d := range defs {
			cited[def{d.Revision + " " + typ, fmt.Sprintf("%s:%d", d.File, d.Line)}] = true
		}
	}
	for _, e := range Exceptions() {
		add(e.Type, e.Defined)
		if len(e.Defined) == 0 && !strings.Contains(e.Source, "builtin") && !strings.Contains(e.Source, "asyncio") && !strings.Contains(e.Source, "historical") {
			t.Errorf("%s has no Harbor definition and does not say it is a builtin or historical", e.Type)
		}
	}
	for _, u := range UnjudgedExceptions() {
		if known[u.Type] {
			t.Errorf("%s is both judged and unjudged", u.Type)
		}
		if u.Why == "" || len(u.Defined) == 0 {
			t.Errorf("unjudged %s needs a reason and a definition", u.Type)
		}
		add(u.Type, u.Defined)
	}
	listed := map[def]bool{}
	for _, rev := range []string{Rev5f5618b8, RevV0220} {
		data, err := os.ReadFile(filepath.Join("testdata", "outcome", "harbor-exceptions", rev+".tsv"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Split(line, "\t")
			if len(f) != 3 {
				t.Fatalf("%s.tsv:%d: want 3 tab-separated fields, got %q", rev, i+1, line)
			}
			n++
			d := def{rev + " " + f[0], "src/" + f[1]}
			listed[d] = true
			if !cited[d] {
				t.Errorf("%s: Harbor defines %s at %s, but the table neither judges it there nor lists it as unjudged", rev, f[0], d.loc)
			}
		}
		if n < 15 {
			t.Errorf("%s.tsv lists only %d classes", rev, n)
		}
	}
	for d := range cited {
		if !listed[d] {
			t.Errorf("the table cites %s at %s, which is not in Harbor's list for that revision", d.name, d.loc)
		}
	}
	// Each message rule cites Harbor lines at a validated revision.
	for _, m := range MessageRules() {
		if m.Prefix == "" || len(m.Raised) == 0 || m.Reason != ReasonEnvironmentStart {
			t.Errorf("bad message rule %+v", m)
		}
	}
}
