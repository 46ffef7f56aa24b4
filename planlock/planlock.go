// Package planlock fixes the decision rule before the data: a lock is an
// in-toto Statement, signed in a DSSE envelope with attest's keys, that
// binds the canonical plan (the sha256 of plan.json as a snapshot of it
// stores it), the planned trial count, the gate policy's bytes and digest,
// and the power plan when one is given. Gate checks a candidate round
// against a lock — the round must be of the locked plan, the policy the
// locked one, every planned trial scored — before judging it. A signature
// proves who locked and that nothing moved since; it does not prove when
// (an RFC 3161 timestamp over the lock does, package timestamp).
// docs/ci.md, "Locked gates", says what each refusal means.
package planlock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/attest"
	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/snapshot"
)

// PredicateType is the lock's in-toto predicate type.
const PredicateType = "https://tuneplane.dev/attestation/plan-lock/v1"

// Subject names of a lock's Statement.
const (
	SubjectPlan   = "plan.json"
	SubjectPolicy = "policy"
)

// Proves and DoesNotProve are what a verified lock's signature says, in
// every output that relies on one.
const (
	Proves       = "the holder of the signing key locked this plan and policy, and neither has moved since"
	DoesNotProve = "when it was locked: a signature carries no trusted time (an RFC 3161 timestamp over the lock does), and it says nothing of who holds the key"
)

// MaxLockSize caps a lock file: one envelope.
const MaxLockSize = attest.MaxEnvelopeSize

// Predicate is what a lock binds.
type Predicate struct {
	// PlanSHA256 is the sha256 of the canonical plan, exactly the bytes a
	// snapshot of it stores as plan.json.
	PlanSHA256    string `json:"plan_sha256"`
	PlannedTrials int    `json:"planned_trials"`
	// Policy is the gate policy file as locked: its name, bytes and digest.
	Policy LockedPolicy `json:"policy"`
	// Power is `tpctl plan power --output json` when given; null otherwise.
	Power json.RawMessage `json:"power"`
	// Assurance is self_attested: a local key. The lock names no tpctl
	// version, so the same plan, policy, power plan and key give the same
	// bytes from any tpctl.
	Assurance string `json:"assurance"`
}

// LockedPolicy is the policy file's bytes as locked.
type LockedPolicy struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Text   string `json:"text"`
}

// Lock is a verified lock.
type Lock struct {
	File      string
	KeyID     string
	Predicate Predicate
	// Bytes are the lock file's bytes (what a timestamp is over).
	Bytes []byte
}

// Error is a lock that cannot be made or does not hold: Code says which
// (docs/ci.md), Msg in words.
type Error struct {
	Code string
	Msg  string
	Hint string
}

func (e *Error) Error() string { return e.Msg }

// Error codes.
const (
	CodeUnusable     = "lock_unusable"      // not a lock, not signed by the key, inconsistent
	CodePolicyMoved  = "policy_moved"       // the policy is not the locked one
	CodeAnotherPlan  = "another_plan"       // the candidate is not of the locked plan
	CodeNotYet       = "not_yet"            // not every planned trial is scored
	CodePlanInvalid  = "plan_invalid"       // the plan to lock has errors
	CodeLockExists   = "lock_exists"        // --out holds another lock
	CodePowerInvalid = "power_plan_invalid" // the power plan is not tpctl plan power JSON
)

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// CanonicalPlan reads an import plan and returns its canonical form as a
// snapshot stores it (plan.json: the normalized canonical JSON and a
// newline) and its planned trial count. The plan's folders are not
// checked: a plan is locked before anything has run.
func CanonicalPlan(path string) ([]byte, int, error) {
	p, rep, err := planfile.Load(path, planfile.Options{})
	if err != nil {
		return nil, 0, err
	}
	if p == nil || planfile.HasErrors(rep.Findings) {
		var msgs []string
		for _, f := range rep.Findings {
			if f.Severity == planfile.SeverityError {
				msgs = append(msgs, fmt.Sprintf("%s %s: %s", f.Pointer, f.Code, f.Message))
			}
			if len(msgs) == 3 {
				break
			}
		}
		return nil, 0, &Error{Code: CodePlanInvalid, Msg: fmt.Sprintf("the plan %q has errors and cannot be locked: %s", path, strings.Join(msgs, "; ")), Hint: "tpctl plan check " + path + " lists them"}
	}
	b, err := p.NormalizedJSON()
	if err != nil {
		return nil, 0, err
	}
	return append(b, '\n'), len(p.Trials), nil
}

// Options are the inputs of Create.
type Options struct {
	Plan, PolicyFile, Out string
	// PowerFile is the JSON of tpctl plan power --output json, or "".
	PowerFile string
	Key       *attest.PrivateKey
	// Gate is the invocation's registry of secrets (cmd/tpctl): the
	// signed lock carries none (attest.SignStatement refuses it).
	Gate *redact.Scanner
}

// Created says what Create wrote.
type Created struct {
	Out           string `json:"lock"`
	KeyID         string `json:"keyid"`
	PlanSHA256    string `json:"plan_sha256"`
	PlannedTrials int    `json:"planned_trials"`
	PolicySHA256  string `json:"policy_sha256"`
	Power         bool   `json:"power_plan"`
	// Changed is false when Out already held exactly this lock.
	Changed bool `json:"changed"`
}

// Create locks a plan and a policy: it checks both, signs the Statement
// through attest.SignStatement and writes the envelope, one line, to Out
// atomically. An Out that holds anything else is refused; the same lock
// again (signing is deterministic) leaves it unchanged.
func Create(o Options) (*Created, error) {
	plan, trials, err := CanonicalPlan(o.Plan)
	if err != nil {
		return nil, err
	}
	policy, err := safefs.ReadFileCapped(o.PolicyFile, gate.MaxPolicySize)
	if err != nil {
		return nil, &gate.PolicyError{File: o.PolicyFile, Msg: fmt.Sprintf("cannot be read: %v", err)}
	}
	if _, err := gate.ParsePolicy(o.PolicyFile, policy); err != nil {
		return nil, err
	}
	pr := Predicate{PlanSHA256: sum(plan), PlannedTrials: trials, Power: json.RawMessage("null"), Assurance: "self_attested",
		Policy: LockedPolicy{File: o.PolicyFile, SHA256: sum(policy), Text: string(policy)}}
	if o.PowerFile != "" {
		if pr.Power, err = readPower(o.PowerFile); err != nil {
			return nil, err
		}
	}
	pb, err := jcs.Marshal(pr)
	if err != nil {
		return nil, err
	}
	st := &attest.Statement{Type: attest.StatementType, PredicateType: PredicateType, Predicate: pb,
		Subject: []attest.Subject{{Name: SubjectPlan, Digest: map[string]string{"sha256": pr.PlanSHA256}}, {Name: SubjectPolicy, Digest: map[string]string{"sha256": pr.Policy.SHA256}}}}
	line, err := attest.SignStatement(st, o.Key, o.Gate)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	c := &Created{Out: o.Out, KeyID: o.Key.Public.KeyID, PlanSHA256: pr.PlanSHA256, PlannedTrials: trials, PolicySHA256: pr.Policy.SHA256, Power: o.PowerFile != ""}
	// The one writer beside snapshots: never inside one, never over a
	// link, FIFO or device (reading a FIFO below would block).
	if err := safefs.CheckOutside(o.Out); err != nil {
		return nil, err
	}
	if err := safefs.CheckReplaceable(o.Out, true); err != nil {
		return nil, err
	}
	switch old, err := os.ReadFile(o.Out); {
	case err == nil && bytes.Equal(old, line):
		return c, nil
	case err == nil:
		return nil, &Error{Code: CodeLockExists, Msg: fmt.Sprintf("%s already exists and is not this lock", o.Out), Hint: "a lock is never overwritten; choose another --out"}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if err := safefs.WriteFile(o.Out, line, 0o644); err != nil {
		return nil, err
	}
	c.Changed = true
	return c, nil
}

// readPower reads a power plan: tpctl plan power --output json.
func readPower(path string) (json.RawMessage, error) {
	b, err := safefs.ReadFileCapped(path, 16<<20)
	if err != nil {
		return nil, &Error{Code: CodePowerInvalid, Msg: fmt.Sprintf("the power plan %q cannot be read: %v", path, err)}
	}
	var head struct {
		Format  string          `json:"format"`
		Designs json.RawMessage `json:"designs"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.Format != "tpctl-power/1" || len(head.Designs) == 0 {
		return nil, &Error{Code: CodePowerInvalid, Msg: fmt.Sprintf("%q is not a power plan (tpctl plan power --output json, format tpctl-power/1)", path),
			Hint: "tpctl plan power --pilot PILOT --policy FILE --output json > power.json"}
	}
	c, err := jcs.Canonical(b)
	if err != nil {
		return nil, &Error{Code: CodePowerInvalid, Msg: fmt.Sprintf("the power plan %q: %v", path, err)}
	}
	return c, nil
}

// Open reads a lock file and verifies it: one DSSE envelope signed by key
// over an in-toto Statement of PredicateType whose subjects are the
// predicate's plan and policy digests, and whose policy text has the
// digest it claims. Every failure is an *Error with CodeUnusable.
func Open(path string, key *attest.PublicKey) (*Lock, error) {
	bad := func(format string, args ...any) error {
		return &Error{Code: CodeUnusable, Msg: fmt.Sprintf("lock %s: ", path) + fmt.Sprintf(format, args...)}
	}
	b, err := safefs.ReadFileCapped(path, MaxLockSize)
	if err != nil {
		return nil, bad("cannot be read: %v", err)
	}
	env, err := attest.ParseEnvelope(bytes.TrimRight(b, "\r\n"))
	if err != nil {
		return nil, bad("%v", err)
	}
	if !env.SignedBy(key) {
		return nil, &Error{Code: CodeUnusable, Msg: fmt.Sprintf("lock %s is not signed by keyid %s (its signature names keyid %s)", path, key.KeyID, strings.Join(env.KeyIDs(), ", ")),
			Hint: "--key must be the public half of the key that made the lock"}
	}
	if env.PayloadType != attest.PayloadType {
		return nil, bad("payloadType is %q, not %q", env.PayloadType, attest.PayloadType)
	}
	st, err := attest.ParseStatement(env.Payload)
	if err != nil {
		return nil, bad("%v", err)
	}
	if st.PredicateType != PredicateType {
		return nil, bad("it is a %s attestation, not a plan lock (%s)", st.PredicateType, PredicateType)
	}
	dec := json.NewDecoder(bytes.NewReader(st.Predicate))
	dec.DisallowUnknownFields()
	var pr Predicate
	if err := dec.Decode(&pr); err != nil {
		return nil, bad("the predicate is not a plan lock: %v", err)
	}
	if sum([]byte(pr.Policy.Text)) != pr.Policy.SHA256 {
		return nil, bad("the locked policy text does not have the digest the lock claims")
	}
	for _, s := range []attest.Subject{{Name: SubjectPlan, Digest: map[string]string{"sha256": pr.PlanSHA256}}, {Name: SubjectPolicy, Digest: map[string]string{"sha256": pr.Policy.SHA256}}} {
		if !slices.ContainsFunc(st.Subject, func(x attest.Subject) bool { return x.Name == s.Name && x.Digest["sha256"] == s.Digest["sha256"] }) {
			return nil, bad("its subjects do not name %s with sha256 %s", s.Name, s.Digest["sha256"])
		}
	}
	return &Lock{File: path, KeyID: key.KeyID, Predicate: pr, Bytes: b}, nil
}

// CheckPolicy refuses a policy that is not the locked one, naming every
// rule that moved and the lock.
func (l *Lock) CheckPolicy(file string, data []byte) error {
	if sum(data) == l.Predicate.Policy.SHA256 {
		return nil
	}
	moved := "the file's bytes differ but no rule did (comments or layout); a lock binds the bytes"
	locked, err1 := gate.ParsePolicy(l.Predicate.Policy.File, []byte(l.Predicate.Policy.Text))
	given, err2 := gate.ParsePolicy(file, data)
	if err1 == nil && err2 == nil {
		if d := PolicyDiff(locked, given); len(d) > 0 {
			moved = strings.Join(d, "; ")
		}
	} else if err2 != nil {
		moved = err2.Error()
	}
	return &Error{Code: CodePolicyMoved, Msg: fmt.Sprintf("policy %s is not the policy locked in %s (sha256 %s, locked %s): %s", file, l.File, sum(data), l.Predicate.Policy.SHA256, moved),
		Hint: "gate with the locked policy; a rule changed after locking is what a lock exists to refuse"}
}

// PolicyDiff names each rule of two policies that differs, as
// "RULE moved from X to Y".
func PolicyDiff(locked, given *gate.Policy) []string {
	var out []string
	add := func(rule string, a, b any) {
		if fmt.Sprint(a) != fmt.Sprint(b) {
			out = append(out, fmt.Sprintf("%s moved from %s to %s", rule, show(a), show(b)))
		}
	}
	f := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	add(gate.RuleRequire, locked.Require, given.Require)
	add(gate.RuleMinSuccess, f(locked.MinSuccessRate), f(given.MinSuccessRate))
	add("unscored_trials", locked.UnscoredTrials, given.UnscoredTrials)
	add(gate.RuleMaxInfra, f(locked.MaxInfraErrorRate), f(given.MaxInfraErrorRate))
	add(gate.RuleMaxCost, f(locked.MaxCostUSD), f(given.MaxCostUSD))
	add(gate.RuleNonInferior, f(locked.NonInferiorityMargin), f(given.NonInferiorityMargin))
	add("baseline.allow_degraded", locked.AllowDegraded, given.AllowDegraded)
	add("quarantine", locked.Quarantine, given.Quarantine)
	return out
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "(not set)"
	case string:
		if x == "" {
			return "(not set)"
		}
		return fmt.Sprintf("%q", x)
	case []string:
		if x == nil {
			return "(not set)"
		}
	}
	return fmt.Sprint(v)
}

// CheckRound refuses a candidate round of another plan, and says "not
// yet" while any planned trial is not scored: a locked gate gives no
// verdict early.
func (l *Lock) CheckRound(r *round.Round) error {
	m := r.Manifest
	if got := m.Files[snapshot.PlanFile]; got != l.Predicate.PlanSHA256 {
		return &Error{Code: CodeAnotherPlan, Msg: fmt.Sprintf("the candidate %q is a round of another plan: its plan.json has sha256 %s, the plan locked in %s has %s (%d planned trials; the candidate plans %d)",
			r.Dir, got, l.File, l.Predicate.PlanSHA256, l.Predicate.PlannedTrials, m.Counts.Expected),
			Hint: "gate the round of the locked plan; a plan changed after locking needs a new lock, made before its results exist"}
	}
	c := m.Counts
	if c.Scored() < l.Predicate.PlannedTrials {
		return &Error{Code: CodeNotYet, Msg: fmt.Sprintf("not yet: %d of the %d planned trials locked in %s are scored (%d missing, %d infra_error, %d unscored); a locked gate gives no verdict before every planned trial is scored",
			c.Scored(), l.Predicate.PlannedTrials, l.File, c.Missing, c.InfraError, c.Unscored),
			Hint: "run (or rerun) the trials that are not scored, import again and gate the new snapshot"}
	}
	return nil
}

// Gate checks the candidate against the lock and the policy file's bytes
// against the locked ones, then judges it as gate.Run does.
func Gate(ctx context.Context, l *Lock, policyFile string, opts gate.Options) (*gate.Verdict, error) {
	data, err := safefs.ReadFileCapped(policyFile, gate.MaxPolicySize)
	if err != nil {
		return nil, &gate.PolicyError{File: policyFile, Msg: fmt.Sprintf("cannot be read: %v", err)}
	}
	if err := l.CheckPolicy(policyFile, data); err != nil {
		return nil, err
	}
	p, err := gate.ParsePolicy(policyFile, data)
	if err != nil {
		return nil, err
	}
	cand, err := gate.LoadRound(ctx, opts.Candidate, "candidate")
	if err != nil {
		return nil, err
	}
	if err := l.CheckRound(cand); err != nil {
		return nil, err
	}
	var base *round.Round
	if opts.Baseline != "" {
		if base, err = gate.LoadRound(ctx, opts.Baseline, "baseline"); err != nil {
			return nil, err
		}
	}
	if (p.NonInferiorityMargin != nil) != (base != nil) {
		return gate.Run(ctx, p, opts) // the same argument errors as an unlocked gate
	}
	return gate.Judge(p, policyFile, cand, base)
}
