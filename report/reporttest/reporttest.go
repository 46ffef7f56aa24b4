// Package reporttest writes small saved snapshots, loaded as report rounds,
// for tests of the report package and of the tpctl commands that show
// them. It is test support: nothing in tpctl's own commands imports it.
package reporttest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/producers/harbor"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/transcript"
)

// Planted markup: it must stay text wherever it is shown.
const (
	XSSTask    = `<img src=x onerror="window.__xss=1">`
	XSSClose   = `</script><script>window.__xss=2</script>`
	XSSMessage = `<img src=x onerror="window.__xss=3"> and </script><b>bold</b> & ` + "\u2028 \u2029"
)

// Trial is one planned trial: its attempts' statuses in retry
// order (none: missing).
type Trial struct {
	Task     string
	Repeat   int
	Statuses []string
	Shared   bool
}

// Body is one exported trajectory.
type Body struct {
	TrialID  string
	Attempt  int
	Messages []transcript.Message
	Total    int
}

func outcomeOf(id string, retry int, status string) snapshot.AttemptOutcome {
	sha := digest.Bytes(fmt.Appendf(nil, "%s/%d/%s", id, retry, status)).String()
	a := snapshot.AttemptOutcome{Retry: retry, Status: status, ResultSHA256: &sha}
	switch status {
	case snapshot.StatusSuccess:
		r := 1.0
		a.Reason, a.Reward = "reward_success", &r
	case snapshot.StatusFailure:
		r := 0.0
		a.Reason, a.Reward = "reward_failure", &r
	case snapshot.StatusInfraError:
		e := "EnvironmentStartTimeoutError"
		a.Reason, a.ExceptionType = "infra_exception", &e
	default:
		e := XSSClose
		a.Reason, a.ExceptionType = "unknown_exception", &e
	}
	return a
}

// Write writes a snapshot folder at dir and returns it verified
// and loaded.
func Write(t testing.TB, dir string, trials []Trial, bodies []Body) *report.Round {
	t.Helper()
	type planAttempt struct {
		Retry int    `json:"retry"`
		Dir   string `json:"dir"`
	}
	type planTrial struct {
		Task     string        `json:"task"`
		Repeat   int           `json:"repeat"`
		Attempts []planAttempt `json:"attempts"`
	}
	pts := make([]planTrial, len(trials))
	for i, tr := range trials {
		pts[i] = planTrial{Task: tr.Task, Repeat: tr.Repeat, Attempts: []planAttempt{}}
		for r := range tr.Statuses {
			pts[i].Attempts = append(pts[i].Attempts, planAttempt{r, fmt.Sprintf("t%d-%d", i, r)})
		}
	}
	d := repeat64
	plan := map[string]any{
		"version":    1,
		"source":     map[string]string{"format": "harbor", "revision": "5f5618b8f5419dde63f2df6d86706782e597e8a3"},
		"name":       "nightly-coder-eval",
		"split":      "heldout",
		"checkpoint": map[string]string{"ref": "hf://acme/coder-7b@0123456789abcdef0123456789abcdef01234567", "served_as": "hosted_vllm/coder-7b"},
		"protocol":   map[string]string{"dataset_digest": d("1"), "verifier_digest": d("2"), "environment_digest": d("3"), "harness_digest": d("4")},
		"settings":   map[string]any{"temperature": 0},
		"trials":     pts,
	}
	planJSON, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	w, err := snapshot.Create(dir, planJSON, snapshot.Options{FormatVerified: true, OutcomeRules: harbor.RulesVersion})
	if err != nil {
		t.Fatal(err)
	}
	// Observations go in canonical order.
	sorted := make([]Trial, len(trials))
	copy(sorted, trials)
	sortTrials(sorted)
	for _, tr := range sorted {
		if len(tr.Statuses) == 0 {
			continue
		}
		id := snapshot.TrialID(tr.Task, tr.Repeat)
		o := snapshot.Observation{TrialID: id, Task: tr.Task, Repeat: tr.Repeat, Attempts: len(tr.Statuses)}
		for r, st := range tr.Statuses {
			o.AttemptOutcomes = append(o.AttemptOutcomes, outcomeOf(id, r, st))
		}
		cur := o.AttemptOutcomes[len(o.AttemptOutcomes)-1]
		o.TrialAttempt, o.Status, o.Reason, o.Reward, o.ExceptionType = cur.Retry, cur.Status, cur.Reason, cur.Reward, cur.ExceptionType
		sum := digest.Bytes([]byte("task " + tr.Task)).String()
		o.Evidence = snapshot.Evidence{ResultSHA256: cur.ResultSHA256, TaskChecksum: &sum}
		if tr.Shared {
			mode := "shared"
			o.Evidence.VerifierEnvironmentMode = &mode
		}
		if err := w.Add(&o); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	roundID, err := w.RoundID()
	if err != nil {
		w.Abort()
		t.Fatal(err)
	}
	for _, b := range bodies {
		tj := transcript.Trajectory{Scope: "evaluation", RoundID: roundID, TrialID: b.TrialID, TrialAttempt: b.Attempt,
			Messages: b.Messages, TotalMessages: max(b.Total, len(b.Messages)), Truncated: b.Total > len(b.Messages), CapturePolicy: "sampled"}
		data, err := json.Marshal(tj)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTrajectory(append(data, '\n'), tj.Truncated); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	w.SetRedactors([]string{"builtin:secrets"})
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	r, err := report.LoadRound(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func repeat64(c string) string {
	s := ""
	for len(s) < 64 {
		s += c
	}
	return s[:64]
}

func sortTrials(ts []Trial) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && snapshot.CompareTrials(ts[j].Task, ts[j].Repeat, ts[j-1].Task, ts[j-1].Repeat) < 0; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

func Ptr[T any](v T) *T { return &v }

// Conversation is a short agent run with two tool calls and their results.
func Conversation(n int) []transcript.Message {
	msgs := []transcript.Message{
		{Role: "system", Content: "You are a coding agent."},
		{Role: "user", Content: "Fix the failing test. " + XSSMessage, PromptTokens: Ptr[int64](812)},
		{Role: "assistant", Content: `{"cmd":"ls -la"}`, ToolName: Ptr("bash"), CallID: Ptr("call_1"), CompletionTokens: Ptr[int64](40), DurationMS: Ptr[int64](1250)},
		{Role: "tool", Content: "README.md\nmain.go\n" + XSSClose, ToolName: Ptr("bash"), CallID: Ptr("call_1")},
		{Role: "assistant", Content: `{"path":"main.go"}`, ToolName: Ptr("read_file"), CallID: Ptr("call_2")},
		{Role: "tool", Content: "package main\n\nfunc main() {}\n", ToolName: Ptr("read_file"), CallID: Ptr("call_2")},
	}
	for i := len(msgs); i < n; i++ {
		msgs = append(msgs, transcript.Message{Role: []string{"assistant", "user"}[i%2], Content: fmt.Sprintf("step %d of the agent's work", i+1)})
	}
	msgs = append(msgs, transcript.Message{Role: "assistant", Content: "Done: the test passes now."})
	return msgs
}

// SmallRound is the fixture most tests use: every status, retries, a
// missing trial, a shared verifier, planted markup, and bodies.
func SmallRound(t testing.TB, dir string) *report.Round {
	var trials []Trial
	st := []string{snapshot.StatusSuccess, snapshot.StatusFailure, snapshot.StatusSuccess, snapshot.StatusInfraError, snapshot.StatusUnscored}
	for i := range 40 {
		tr := Trial{Task: fmt.Sprintf("harbor/task-%02d", i/4), Repeat: i % 4, Statuses: []string{st[i%len(st)]}}
		if i%7 == 3 {
			tr.Statuses = []string{snapshot.StatusInfraError, snapshot.StatusInfraError, tr.Statuses[0]}
		}
		if i%11 == 5 {
			tr.Statuses = nil // missing
		}
		tr.Shared = i == 8
		trials = append(trials, tr)
	}
	trials = append(trials,
		Trial{Task: XSSTask, Repeat: 0, Statuses: []string{snapshot.StatusFailure}},
		Trial{Task: XSSClose, Repeat: 0, Statuses: []string{snapshot.StatusUnscored, snapshot.StatusSuccess}},
	)
	bodies := []Body{
		{TrialID: "harbor/task-00#0", Attempt: 0, Messages: Conversation(120), Total: 300},
		{TrialID: "harbor/task-00#3", Attempt: 0, Messages: Conversation(8)},
		{TrialID: "harbor/task-00#3", Attempt: 1, Messages: Conversation(10)},
		{TrialID: XSSTask + "#0", Attempt: 0, Messages: Conversation(6)},
	}
	return Write(t, filepath.Join(dir, "round"), trials, bodies)
}
