package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"strconv"

	"github.com/tuneplane/tpctl/internal/jcs"
)

// tally folds observations, in canonical order, into everything the
// manifest derives from them: counts, exception types, the round ID. The
// writer and Verify share it so a saved snapshot is checked by the very
// code that produced it.
type tally struct {
	plan         PlanSummary
	planCanon    []byte
	planIDs      map[string]bool
	outcomeRules string

	round     hash.Hash
	buf       []byte
	nAttempts int
	seen      int
	lastTask  string
	lastRep   int

	counts     Counts
	exceptions map[string]int
	shared     int
}

func newTally(planJSON []byte, outcomeRules string) (*tally, error) {
	canon, err := jcs.Transform(planJSON)
	if err != nil {
		return nil, fmt.Errorf("plan is not canonicalizable JSON: %w", err)
	}
	var p PlanSummary
	if err := json.Unmarshal(canon, &p); err != nil {
		return nil, fmt.Errorf("plan does not have the import-plan shape: %w", err)
	}
	t := &tally{
		plan:         p,
		planCanon:    canon,
		planIDs:      make(map[string]bool, len(p.Trials)),
		outcomeRules: outcomeRules,
		round:        sha256.New(),
		exceptions:   map[string]int{},
	}
	for _, tr := range p.Trials {
		id := TrialID(tr.Task, tr.Repeat)
		if t.planIDs[id] {
			return nil, fmt.Errorf("plan lists trial %q twice", id)
		}
		t.planIDs[id] = true
	}
	t.counts.Expected = len(p.Trials)
	// The round preimage is the RFC 8785 form of
	// {"attempts":[…],"outcome_rules":…,"plan":…,"round_format":…};
	// members are emitted in that (sorted) order so it can be streamed.
	t.round.Write([]byte(`{"attempts":[`))
	return t, nil
}

// appendRoundAttempt appends one element of the round preimage's
// "attempts" list in RFC 8785 form, members in sorted order:
// exception_type, reason, result_sha256, retry, reward, status, trial_id.
// Built by hand because it runs once per attempt of every import.
func appendRoundAttempt(b []byte, trialID string, a AttemptOutcome) []byte {
	optString := func(b []byte, s *string) []byte {
		if s == nil {
			return append(b, "null"...)
		}
		return jcs.AppendString(b, *s)
	}
	b = append(b, `{"exception_type":`...)
	b = optString(b, a.ExceptionType)
	b = append(b, `,"reason":`...)
	b = jcs.AppendString(b, a.Reason)
	b = append(b, `,"result_sha256":`...)
	b = optString(b, a.ResultSHA256)
	b = append(b, `,"retry":`...)
	b = strconv.AppendInt(b, int64(a.Retry), 10)
	b = append(b, `,"reward":`...)
	if a.Reward == nil {
		b = append(b, "null"...)
	} else {
		s, _ := jcs.FormatNumber(*a.Reward) // finite: checked in add
		b = append(b, s...)
	}
	b = append(b, `,"status":`...)
	b = jcs.AppendString(b, a.Status)
	b = append(b, `,"trial_id":`...)
	b = jcs.AppendString(b, trialID)
	return append(b, '}')
}

// add checks one observation against the plan and the rules of the format,
// fills in Trainable, and folds it in. Observations must come in canonical
// order, each trial at most once.
func (t *tally) add(o *Observation) error {
	if o.TrialID != TrialID(o.Task, o.Repeat) {
		return fmt.Errorf("trial_id %q does not match task %q and repeat %d", o.TrialID, o.Task, o.Repeat)
	}
	if !t.planIDs[o.TrialID] {
		return fmt.Errorf("trial %q is not in the plan", o.TrialID)
	}
	if t.seen > 0 && CompareTrials(t.lastTask, t.lastRep, o.Task, o.Repeat) >= 0 {
		return fmt.Errorf("trial %q is out of canonical (task, repeat) order or repeated", o.TrialID)
	}
	if len(o.AttemptOutcomes) == 0 {
		return fmt.Errorf("trial %q: an observation needs at least one attempt", o.TrialID)
	}
	if !slices.IsSortedFunc(o.AttemptOutcomes, func(a, b AttemptOutcome) int { return a.Retry - b.Retry }) {
		return fmt.Errorf("trial %q: attempts are not in ascending retry order", o.TrialID)
	}
	for i, a := range o.AttemptOutcomes {
		if a.Retry < 0 || (i > 0 && a.Retry == o.AttemptOutcomes[i-1].Retry) {
			return fmt.Errorf("trial %q: retry %d is negative or repeated", o.TrialID, a.Retry)
		}
		if !ValidStatus(a.Status) || a.Reason == "" {
			return fmt.Errorf("trial %q retry %d: status %q or reason %q is not valid", o.TrialID, a.Retry, a.Status, a.Reason)
		}
		if a.Reward != nil && (math.IsNaN(*a.Reward) || math.IsInf(*a.Reward, 0)) {
			return fmt.Errorf("trial %q retry %d: reward must be finite or null", o.TrialID, a.Retry)
		}
	}
	cur := o.AttemptOutcomes[len(o.AttemptOutcomes)-1]
	if o.TrialAttempt != cur.Retry || o.Attempts != len(o.AttemptOutcomes) ||
		o.Status != cur.Status || o.Reason != cur.Reason ||
		!eqPtr(o.Reward, cur.Reward) || !eqPtr(o.ExceptionType, cur.ExceptionType) ||
		!eqPtr(o.Evidence.ResultSHA256, cur.ResultSHA256) {
		return fmt.Errorf("trial %q: observation does not match its highest-retry attempt", o.TrialID)
	}
	o.Trainable = IsTrainable(t.plan.Trainable, t.plan.Split, o.Status)

	for _, a := range o.AttemptOutcomes {
		if t.nAttempts > 0 {
			t.buf = append(t.buf[:0], ',')
		} else {
			t.buf = t.buf[:0]
		}
		t.buf = appendRoundAttempt(t.buf, o.TrialID, a)
		t.round.Write(t.buf)
		t.nAttempts++
	}
	switch o.Status {
	case StatusSuccess:
		t.counts.Success++
	case StatusFailure:
		t.counts.Failure++
	case StatusInfraError:
		t.counts.InfraError++
	case StatusUnscored:
		t.counts.Unscored++
	}
	if o.ExceptionType != nil {
		t.exceptions[*o.ExceptionType]++
	}
	if m := o.Evidence.VerifierEnvironmentMode; m != nil && *m == "shared" {
		t.shared++
	}
	t.seen++
	t.lastTask, t.lastRep = o.Task, o.Repeat
	return nil
}

// manifest completes the round ID and builds the manifest; files and
// trajectories are filled by the caller.
func (t *tally) manifest(formatVerified bool) (*Manifest, error) {
	rules, _ := json.Marshal(t.outcomeRules)
	fmtJSON, _ := json.Marshal(RoundFormat)
	t.round.Write([]byte(`],"outcome_rules":`))
	t.round.Write(rules)
	t.round.Write([]byte(`,"plan":`))
	t.round.Write(t.planCanon)
	t.round.Write([]byte(`,"round_format":`))
	t.round.Write(fmtJSON)
	t.round.Write([]byte(`}`))

	cohort, err := CohortDigest(t.plan.TrialIDs())
	if err != nil {
		return nil, err
	}
	settings, err := SettingsDigest(t.plan.Protocol.EnvironmentDigest, t.plan.Protocol.HarnessDigest, t.plan.Settings)
	if err != nil {
		return nil, err
	}
	c := t.counts
	c.Missing = c.Expected - t.seen
	m := &Manifest{
		Format:  Format,
		RoundID: "native:" + hex.EncodeToString(t.round.Sum(nil)),
		Name:    t.plan.Name,
		Source:  Source{Format: t.plan.Source.Format, Revision: t.plan.Source.Revision, FormatVerified: formatVerified},
		Protocol: Protocol{
			DigestRules:    DigestRules,
			DatasetDigest:  t.plan.Protocol.DatasetDigest,
			CohortDigest:   cohort,
			VerifierDigest: t.plan.Protocol.VerifierDigest,
			SettingsDigest: settings,
			Split:          t.plan.Split,
		},
		Checkpoint:     t.plan.Checkpoint,
		OutcomeRules:   t.outcomeRules,
		Counts:         c,
		ExceptionTypes: t.exceptions,
		SharedVerifier: t.shared,
		Label:          LabelDegraded,
		Trajectories:   TrajectoryInfo{Redactors: []string{}},
		Files:          map[string]string{},
	}
	m.SuccessRate, m.SuccessRateCI95 = Rate(c.Success, c.Scored())
	m.Coverage, m.CoverageCI95 = Rate(c.Scored(), c.Expected)
	if c.Expected > 0 && c.Scored() == c.Expected {
		m.Label = LabelClean
	}
	return m, nil
}

// CohortDigest is the SHA-256 of the RFC 8785 form of the plan's trial IDs
// sorted by their UTF-8 bytes.
func CohortDigest(ids []string) (string, error) {
	s := slices.Clone(ids)
	slices.Sort(s)
	if s == nil {
		s = []string{}
	}
	b, err := jcs.Marshal(s)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// SettingsDigest is the SHA-256 of the RFC 8785 form of
// {"environment_digest", "harness_digest", "settings"}.
func SettingsDigest(environment, harness string, settings json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(settings)) == 0 {
		settings = json.RawMessage("{}")
	}
	b, err := json.Marshal(struct {
		Environment string          `json:"environment_digest"`
		Harness     string          `json:"harness_digest"`
		Settings    json.RawMessage `json:"settings"`
	}{environment, harness, settings})
	if err != nil {
		return "", err
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return "", errors.New("settings are not canonicalizable JSON: " + err.Error())
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
