package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
)

// importOne imports one attempt's result.json (nil: none) and returns its
// attempt outcome and the observations file's bytes.
func importOne(t *testing.T, result []byte, env []string) (snapshot.AttemptOutcome, string) {
	t.Helper()
	root, plan := writeJob(t, result, false)
	out := filepath.Join(t.TempDir(), "snap")
	if _, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out, Environ: env}); err != nil {
		t.Fatal(err)
	}
	var a snapshot.AttemptOutcome
	if err := snapshot.ReadObservations(out, func(o snapshot.Observation) error { a = o.AttemptOutcomes[0]; return nil }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, snapshot.ObservationsFile))
	if err != nil {
		t.Fatal(err)
	}
	return a, string(b)
}

func exceptionJSON(typ, msg string) string {
	return `{"exception_type":"` + typ + `","exception_message":"` + msg + `","exception_traceback":"Traceback…","occurred_at":"2026-01-01T00:00:00"}`
}

// TestImportKeepsDetail: the judge's detail is saved for every verdict but
// a plain reward, in one masked line of at most MaxDetailLen bytes.
func TestImportKeepsDetail(t *testing.T) {
	const secret = "s3cr3t-VALUE-for-the-gate"
	env := []string{"MY_PASSWORD=" + secret}
	long := strings.Repeat("é", 300)
	tests := []struct {
		name   string
		result []byte
		want   string // the detail (prefix when it ends in …)
	}{
		{"plain success", goodResult(`{"rewards":{"reward":1}}`, "null"), ""},
		{"plain failure", goodResult(`{"rewards":{"reward":0}}`, "null"), ""},
		{"docker", goodResult("null", exceptionJSON("RuntimeError", `Docker compose command failed for environment hello-world.\nCommand: docker compose up`)),
			`exception RuntimeError: Docker compose command failed for environment hello-world. …; "RuntimeError" is not in tpctl's exception table, so the attempt is not scored even with a reward`},
		{"secret masked", goodResult("null", exceptionJSON("EnvironmentStartTimeoutError", "login with "+secret+" timed out")),
			"exception EnvironmentStartTimeoutError: login with [REDACTED:env:MY_PASSWORD] timed out"},
		{"corrupt", []byte(`{"id": "u", "task_name": tru`), "job/t__1/result.json: "},
		{"missing", nil, "result.json is missing"},
		{"long", goodResult("null", exceptionJSON("EnvironmentStartTimeoutError", long)), "exception EnvironmentStartTimeoutError: éé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, file := importOne(t, tt.result, env)
			if strings.Contains(file, secret) {
				t.Fatalf("observations.jsonl holds the secret: %s", file)
			}
			switch {
			case tt.want == "" && a.Detail != "":
				t.Errorf("detail %q, want none", a.Detail)
			case !strings.HasPrefix(a.Detail, tt.want):
				t.Errorf("detail %q, want %q…", a.Detail, tt.want)
			case len(a.Detail) > snapshot.MaxDetailLen || strings.ContainsAny(a.Detail, "\n\r\t"):
				t.Errorf("detail %q is not one bounded line", a.Detail)
			}
		})
	}
}

// TestImportKeepsTimingUsageAgent: phase durations, token and cost counts
// and the agent come from result.json when it has them.
func TestImportKeepsTimingUsageAgent(t *testing.T) {
	res := strings.NewReplacer(
		`"environment_setup":null`, `"environment_setup":{"started_at":"2026-08-22T10:01:02.958210Z","finished_at":"2026-08-22T10:01:05.477102Z"}`,
		`"agent_execution":null`, `"agent_execution":{"started_at":"2026-08-22T10:01:07Z","finished_at":null}`,
		`"verifier":null`, `"verifier":{"started_at":7,"finished_at":"x"}`,
		`"agent_result":null`, `"agent_result":{"n_input_tokens":3954,"n_cache_tokens":2816,"n_output_tokens":"231","cost_usd":0.00602}`,
		`"model_info":null`, `"model_info":{"name":"gpt-5.4","provider":"openai"}`,
	).Replace(string(goodResult(`{"rewards":{"reward":1}}`, "null")))
	a, _ := importOne(t, []byte(res), nil)
	if a.Status != snapshot.StatusSuccess {
		t.Fatalf("status %s: timings and usage must never judge", a.Status)
	}
	if a.Timing == nil || a.Timing.EnvironmentSetup == nil || *a.Timing.EnvironmentSetup != 2.519 || a.Timing.AgentExecution != nil || a.Timing.Verifier != nil || a.Timing.AgentSetup != nil {
		t.Errorf("timing %+v", a.Timing)
	}
	if u := a.Usage; u == nil || *u.InputTokens != 3954 || *u.CacheTokens != 2816 || u.OutputTokens != nil || *u.CostUSD != 0.00602 {
		t.Errorf("usage %+v", a.Usage)
	}
	if ag := a.Agent; ag == nil || ag.Name != "a" || ag.Model == nil || *ag.Model != "gpt-5.4" {
		t.Errorf("agent %+v", a.Agent)
	}
}

// TestImportRefusesSecretAgent: the agent and model are saved as they
// are, so a secret in them refuses the import.
func TestImportRefusesSecretAgent(t *testing.T) {
	const secret = "s3cr3t-VALUE-for-the-gate"
	res := strings.Replace(string(goodResult(`{"rewards":{"reward":1}}`, "null")), `"model_info":null`, `"model_info":{"name":"m-`+secret+`","provider":null}`, 1)
	root, plan := writeJob(t, []byte(res), false)
	_, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: filepath.Join(t.TempDir(), "snap"), Environ: []string{"MY_PASSWORD=" + secret}})
	var ie *redact.IdentityError
	if !errors.As(err, &ie) || ie.Field != "agent_info.model_info.name" {
		t.Fatalf("error %v, want an IdentityError for agent_info.model_info.name", err)
	}
}
