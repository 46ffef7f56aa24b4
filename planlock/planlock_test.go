package planlock_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/attest"
	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/planlock"
)

const data = "../timestamp/testdata"

// TestCommittedLock: the lock in timestamp/testdata is what Create makes
// now from the same plan, policy and key (a lock is a function of them),
// and Open accepts it with the right key only.
func TestCommittedLock(t *testing.T) {
	key, err := attest.LoadPrivateKey(filepath.Join(data, "lock.key"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := filepath.Abs("../testdata/example/import-plan-round-3.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(data, "plan.lock"))
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := os.ReadFile(filepath.Join(data, "gate.yaml"))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gate.yaml"), pol, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // the lock names the policy file as given
	c, err := planlock.Create(planlock.Options{Plan: plan, PolicyFile: "gate.yaml", Out: "plan.lock", Key: key})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile("plan.lock")
	if !bytes.Equal(got, want) || !c.Changed || c.PlannedTrials != 8 {
		t.Errorf("the lock made now differs from the committed one (changed %v):\n%s\n%s", c.Changed, got, want)
	}
}

func TestOpenAndChecks(t *testing.T) {
	pub, err := attest.LoadPublicKey(filepath.Join(data, "lock.key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := planlock.Open(filepath.Join(data, "plan.lock"), pub)
	if err != nil {
		t.Fatal(err)
	}
	if l.Predicate.PlannedTrials != 8 || l.Predicate.Policy.File != "gate.yaml" {
		t.Errorf("predicate %+v", l.Predicate)
	}
	other, err := attest.LoadPublicKey(filepath.Join("..", "attest", "testdata", "keys", "ed25519.key"))
	if err != nil {
		t.Fatal(err)
	}
	var le *planlock.Error
	if _, err := planlock.Open(filepath.Join(data, "plan.lock"), other); !errors.As(err, &le) || le.Code != planlock.CodeUnusable || !strings.Contains(err.Error(), "is not signed by keyid") {
		t.Errorf("another key: %v", err)
	}
	// A byte changed anywhere in the envelope breaks it.
	raw := l.Bytes
	for _, i := range []int{10, len(raw) / 2, len(raw) - 20} {
		bad := bytes.Clone(raw)
		bad[i] ^= 0x02
		p := filepath.Join(t.TempDir(), "bad.lock")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := planlock.Open(p, pub); err == nil {
			t.Errorf("byte %d changed: the lock still opens", i)
		}
	}
	// The policy: the locked bytes pass, a moved rule is named.
	if err := l.CheckPolicy("gate.yaml", []byte(l.Predicate.Policy.Text)); err != nil {
		t.Errorf("the locked policy: %v", err)
	}
	err = l.CheckPolicy("g2.yaml", []byte("require: clean\nmin_success_rate: 0.4\nquarantine: [a]\n"))
	if !errors.As(err, &le) || le.Code != planlock.CodePolicyMoved || !strings.Contains(err.Error(), "min_success_rate moved from 0.5 to 0.4; quarantine moved from (not set) to [a]") {
		t.Errorf("moved: %v", err)
	}
	err = l.CheckPolicy("g3.yaml", []byte("require: clean\nmin_success_rate: 0.5 # same\n"))
	if err == nil || !strings.Contains(err.Error(), "no rule did") {
		t.Errorf("a comment added: %v", err)
	}
	a, _ := gate.ParsePolicy("a", []byte("baseline: {non_inferiority_margin: 0.05}\n"))
	bb, _ := gate.ParsePolicy("b", []byte("baseline: {non_inferiority_margin: 0.05, allow_degraded: true}\nunscored_trials: leave_out\n"))
	if d := planlock.PolicyDiff(a, bb); strings.Join(d, "; ") != `unscored_trials moved from (not set) to "leave_out"; baseline.allow_degraded moved from false to true` {
		t.Errorf("diff %q", d)
	}
}
