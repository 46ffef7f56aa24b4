// Package comparetest builds small synthetic snapshots for tests of the
// compare package and of the tpctl compare command. It is test support:
// nothing in tpctl's own commands imports it.
package comparetest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/producers/harbor"
	"github.com/tuneplane/tpctl/snapshot"
)

// Spec describes one synthetic round. Zero values get defaults that make
// two rounds comparable: the same digests, settings and outcome rules.
type Spec struct {
	// Dataset, Verifier, Environment and Harness are single characters
	// repeated 64 times to form the digest (default "1", "2", "3", "4").
	Dataset, Verifier, Environment, Harness string
	// Settings is the plan's settings object (default {"temperature":0}).
	Settings string
	// Checkpoint is checkpoint.ref (default a pinned hf:// reference).
	Checkpoint string
	// OutcomeRules defaults to the current rules, harbor.RulesVersion.
	OutcomeRules string
	// TaskChecksum, when set, is a single character repeated 64 times to
	// form every observation's evidence task_checksum (default: none
	// recorded).
	TaskChecksum string
	// Trials maps "task#repeat" to a status (success, failure,
	// infra_error, unscored) or "missing" (planned, never run). A status
	// may end in "@C" to give that trial the task_checksum C repeated 64
	// times, "@=VALUE" for VALUE itself, or "@-" for none recorded.
	Trials map[string]string
	// Explain, when set, fills in the tpctl-snapshot/3 explanation members
	// (detail, timing, usage, agent) of each observed trial's attempt.
	Explain func(task string, repeat int, a *snapshot.AttemptOutcome)
}

// Missing marks a planned trial that never ran (no attempts, so no
// observation); Build accepts it besides the four observation statuses.
const Missing = "missing"

// ParseArgs reads a Spec from command-line words, as the test-only
// mksnap command receives them: key=value options (dataset, verifier,
// environment, harness, settings, checkpoint, outcome_rules, checksum,
// detail) and
// TASK#REPEAT=STATUS trials.
func ParseArgs(args []string) (Spec, error) {
	s := Spec{Trials: map[string]string{}}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return s, fmt.Errorf("argument %q is not KEY=VALUE or TASK#REPEAT=STATUS", a)
		}
		switch k {
		case "dataset":
			s.Dataset = v
		case "verifier":
			s.Verifier = v
		case "environment":
			s.Environment = v
		case "harness":
			s.Harness = v
		case "settings":
			s.Settings = v
		case "checkpoint":
			s.Checkpoint = v
		case "outcome_rules":
			s.OutcomeRules = v
		case "checksum":
			s.TaskChecksum = v
		case "detail":
			// Every observed attempt's detail (the judge's one line).
			s.Explain = func(_ string, _ int, a *snapshot.AttemptOutcome) { a.Detail = v }
		default:
			if !strings.Contains(k, "#") {
				return s, fmt.Errorf("unknown option %q", k)
			}
			s.Trials[k] = v
		}
	}
	return s, nil
}

type trial struct {
	task     string
	repeat   int
	status   string
	checksum string // "" for none
}

// Build writes the round described by s as a snapshot folder at dir.
func Build(dir string, s Spec) (*snapshot.Manifest, error) {
	digest := func(c, def string) string { return strings.Repeat(cmp.Or(c, def), 64)[:64] }
	trials := make([]trial, 0, len(s.Trials))
	for id, st := range s.Trials {
		i := strings.LastIndexByte(id, '#')
		rep, err := strconv.Atoi(id[i+1:])
		if err != nil || i <= 0 || rep < 0 {
			return nil, fmt.Errorf("trial %q is not TASK#REPEAT", id)
		}
		sum := s.TaskChecksum
		if st2, c, ok := strings.Cut(st, "@"); ok {
			st, sum = st2, c
		}
		if sum == "-" {
			sum = ""
		}
		if lit, ok := strings.CutPrefix(sum, "="); ok {
			sum = lit // "@=VALUE": VALUE itself, however long
		} else if sum != "" {
			sum = digest(sum, "")
		}
		trials = append(trials, trial{id[:i], rep, st, sum})
	}
	slices.SortFunc(trials, func(a, b trial) int { return snapshot.CompareTrials(a.task, a.repeat, b.task, b.repeat) })

	type planTrial struct {
		Task     string           `json:"task"`
		Repeat   int              `json:"repeat"`
		Attempts []map[string]any `json:"attempts"`
	}
	plan := map[string]any{
		"version": 1,
		"source":  map[string]string{"format": "harbor", "revision": "5f5618b8f5419dde63f2df6d86706782e597e8a3"},
		"name":    "compare-test",
		"split":   "heldout",
		"checkpoint": map[string]string{
			"ref":       cmp.Or(s.Checkpoint, "hf://acme/coder-7b@0123456789abcdef0123456789abcdef01234567"),
			"served_as": "hosted_vllm/coder-7b",
		},
		"protocol": map[string]string{
			"dataset_digest":     digest(s.Dataset, "1"),
			"verifier_digest":    digest(s.Verifier, "2"),
			"environment_digest": digest(s.Environment, "3"),
			"harness_digest":     digest(s.Harness, "4"),
		},
		"settings": json.RawMessage(cmp.Or(s.Settings, `{"temperature":0}`)),
	}
	pts := make([]planTrial, 0, len(trials))
	for i, t := range trials {
		pt := planTrial{Task: t.task, Repeat: t.repeat, Attempts: []map[string]any{}}
		if t.status != Missing {
			pt.Attempts = append(pt.Attempts, map[string]any{"retry": 0, "dir": fmt.Sprintf("t%d", i)})
		}
		pts = append(pts, pt)
	}
	plan["trials"] = pts
	planJSON, err := json.Marshal(plan)
	if err != nil {
		return nil, err
	}
	w, err := snapshot.Create(dir, planJSON, snapshot.Options{FormatVerified: true, OutcomeRules: cmp.Or(s.OutcomeRules, harbor.RulesVersion)})
	if err != nil {
		return nil, err
	}
	for _, t := range trials {
		if t.status == Missing {
			continue
		}
		if !snapshot.ValidStatus(t.status) {
			w.Abort()
			return nil, fmt.Errorf("trial %s#%d: status %q is not success, failure, infra_error, unscored or missing", t.task, t.repeat, t.status)
		}
		o := Observation(t.task, t.repeat, t.status)
		if s.Explain != nil {
			s.Explain(t.task, t.repeat, &o.AttemptOutcomes[0])
		}
		if t.checksum != "" {
			o.Evidence.TaskChecksum = &t.checksum
		}
		if err := w.Add(&o); err != nil {
			w.Abort()
			return nil, err
		}
	}
	return w.Commit()
}

// Observation is a one-attempt observation with the given status and a
// plausible reason, reward and evidence hash.
func Observation(task string, repeat int, status string) snapshot.Observation {
	id := snapshot.TrialID(task, repeat)
	sha := digest.Bytes([]byte(id + "/" + status)).String()
	a := snapshot.AttemptOutcome{Retry: 0, Status: status, ResultSHA256: &sha}
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
		a.Reason = "reward_missing"
	}
	return snapshot.Observation{
		TrialID: id, Task: task, Repeat: repeat,
		TrialAttempt: 0, Attempts: 1,
		Status: a.Status, Reason: a.Reason, Reward: a.Reward, ExceptionType: a.ExceptionType,
		Evidence:        snapshot.Evidence{ResultSHA256: &sha},
		AttemptOutcomes: []snapshot.AttemptOutcome{a},
	}
}

// ToFormatV1 rewrites the manifest of the snapshot in dir as
// tpctl-snapshot/1 wrote it (no statistics member), for the tests that
// older rounds are still read.
func ToFormatV1(dir string) error {
	path := filepath.Join(dir, "snapshot.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	m["format"] = "tpctl-snapshot/1"
	delete(m, "statistics")
	b, err = json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
