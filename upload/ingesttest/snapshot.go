package ingesttest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/snapshot"
)

// SnapshotSpec describes a synthetic snapshot for upload tests and
// benchmarks. The data are deterministic: the same spec gives the same
// round ID.
type SnapshotSpec struct {
	// Trials is the number of planned trials (tasks "task-NNNNN", two
	// repeats each; more digits past 200,000 trials, so that the names
	// still sort as the numbers do). The last one has no attempts (counted as missing).
	Trials int
	// Trajectories is how many of the first observed trials carry a
	// trajectory (at most Trials-1).
	Trajectories int
	// Messages is the number of messages per trajectory (default 4).
	Messages int
	// ChangedReward flips the reward of the second trial, which makes a
	// different round with otherwise identical data.
	ChangedReward bool
	// Redaction is placed in every trajectory message; two snapshots that
	// differ only in it share a round ID but not their trajectories.
	Redaction string
	// Name, CheckpointRef and ExceptionType (of the unscored trials)
	// replace the defaults when set: text a reader of the snapshot prints.
	Name, CheckpointRef, ExceptionType string
}

func ptr[T any](v T) *T { return &v }

// WriteSnapshot creates a snapshot at dir (which must not exist) from spec.
func WriteSnapshot(dir string, spec SnapshotSpec) (*snapshot.Manifest, error) {
	if spec.Trials < 2 || spec.Trials > 1_000_000 {
		return nil, fmt.Errorf("spec.Trials %d is outside 2…1000000", spec.Trials)
	}
	if spec.Trajectories < 0 || spec.Trajectories >= spec.Trials {
		return nil, fmt.Errorf("spec.Trajectories %d is outside 0…%d", spec.Trajectories, spec.Trials-1)
	}
	if spec.Messages <= 0 {
		spec.Messages = 4
	}
	type trial struct {
		Task     string           `json:"task"`
		Repeat   int              `json:"repeat"`
		Attempts []map[string]any `json:"attempts"`
	}
	trials := make([]trial, spec.Trials)
	width := max(5, len(strconv.Itoa((spec.Trials-1)/2)))
	for i := range trials {
		trials[i] = trial{Task: fmt.Sprintf("task-%0*d", width, i/2), Repeat: i % 2, Attempts: []map[string]any{}}
		if i < spec.Trials-1 {
			trials[i].Attempts = append(trials[i].Attempts, map[string]any{"retry": 0, "dir": fmt.Sprintf("t%d", i)})
			if i%17 == 5 {
				trials[i].Attempts = append(trials[i].Attempts, map[string]any{"retry": 1, "dir": fmt.Sprintf("t%d-r1", i)})
			}
		}
	}
	hex := func(c string) string { return strings.Repeat(c, 64) }
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	plan, err := json.Marshal(map[string]any{
		"version":    1,
		"source":     map[string]any{"format": "harbor", "revision": "5f5618b8f5419dde63f2df6d86706782e597e8a3"},
		"name":       or(spec.Name, "synthetic"),
		"split":      "train",
		"trainable":  true,
		"checkpoint": map[string]any{"ref": or(spec.CheckpointRef, "hf://acme/m@0123456789abcdef0123456789abcdef01234567"), "served_as": "hosted_vllm/m"},
		"protocol": map[string]any{
			"dataset_digest": hex("1"), "verifier_digest": hex("2"),
			"environment_digest": hex("3"), "harness_digest": hex("4"),
		},
		"settings": map[string]any{"temperature": 0, "repeats": 2},
		"trials":   trials,
	})
	if err != nil {
		return nil, err
	}
	w, err := snapshot.Create(dir, plan, snapshot.Options{FormatVerified: true, OutcomeRules: "tpctl-outcomes/1"})
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	var observed []snapshot.Observation
	for i, tr := range trials {
		if len(tr.Attempts) == 0 {
			continue
		}
		var outs []snapshot.AttemptOutcome
		if len(tr.Attempts) == 2 {
			outs = append(outs, snapshot.AttemptOutcome{Retry: 0, Status: snapshot.StatusInfraError, Reason: "infra_exception",
				ExceptionType: ptr("EnvironmentStartTimeoutError"), ResultSHA256: ptr(fmt.Sprintf("%064x", 2*i+1))})
		}
		last := snapshot.AttemptOutcome{Retry: len(outs), ResultSHA256: ptr(fmt.Sprintf("%064x", 2*i))}
		success := i%3 != 1
		if spec.ChangedReward && i == 1 {
			success = !success
		}
		switch {
		case i%29 == 7:
			last.Status, last.Reason, last.ExceptionType = snapshot.StatusUnscored, "unknown_exception", ptr(or(spec.ExceptionType, "WeirdError"))
		case success:
			last.Status, last.Reason, last.Reward = snapshot.StatusSuccess, "reward_success", ptr(1.0)
		default:
			last.Status, last.Reason, last.Reward = snapshot.StatusFailure, "reward_failure", ptr(0.0)
		}
		outs = append(outs, last)
		o := snapshot.Observation{
			TrialID: snapshot.TrialID(tr.Task, tr.Repeat), Task: tr.Task, Repeat: tr.Repeat,
			TrialAttempt: last.Retry, Attempts: len(outs),
			Status: last.Status, Reason: last.Reason, Reward: last.Reward, ExceptionType: last.ExceptionType,
			Evidence:        snapshot.Evidence{ResultSHA256: last.ResultSHA256, TaskChecksum: ptr("ck")},
			AttemptOutcomes: outs,
		}
		if err := w.Add(&o); err != nil {
			return nil, err
		}
		if len(observed) < spec.Trajectories {
			observed = append(observed, o)
		}
	}
	roundID, err := w.RoundID()
	if err != nil {
		return nil, err
	}
	for _, o := range observed {
		msgs := make([]map[string]any, spec.Messages)
		for j := range msgs {
			role := []string{"system", "user", "assistant", "tool"}[j%4]
			msgs[j] = map[string]any{"role": role, "content": fmt.Sprintf("message %d of %s %s", j, o.TrialID, spec.Redaction)}
		}
		b, err := json.MarshalIndent(map[string]any{
			"scope": "evaluation", "round_id": roundID, "trial_id": o.TrialID, "trial_attempt": o.TrialAttempt,
			"messages": msgs, "total_messages": spec.Messages, "complete": false, "truncated": false,
			"capture_policy": "sampled",
		}, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := w.AddTrajectory(b, false); err != nil {
			return nil, err
		}
	}
	w.SetRedactors([]string{"builtin:secrets"})
	return w.Commit()
}
