package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/attest"
	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/planlock"
)

// planLockOptions are the resolved inputs of tpctl plan lock.
type planLockOptions struct {
	Plan, Policy, Key, Out, Power string
}

// newPlanLockCmd is tpctl plan lock; runF nil is planLockRun.
func newPlanLockCmd(a *app, runF func(context.Context, *app, *planLockOptions) error) *cobra.Command {
	if runF == nil {
		runF = planLockRun
	}
	o := &planLockOptions{}
	cmd := &cobra.Command{
		Use:   "lock PLAN --policy FILE --key KEY --out LOCK [--power POWER.json]",
		Short: "Sign the plan and the gate policy before any result exists",
		Long: `Lock the decision rule before the data: sign an in-toto Statement (DSSE, the
keys of tpctl attest) binding the canonical plan's sha256 (plan.json as a
snapshot of it stores it), the planned trial count, the policy file's bytes and
digest, and the power plan of tpctl plan power --output json when given. Write it
to LOCK, one line.

tpctl gate CANDIDATE --policy FILE --lock LOCK --key PUB then refuses a policy that
is not the locked one (naming each rule that moved), a round of another plan, and
any verdict before every planned trial is scored ("not yet").

What the signature proves: ` + planlock.Proves + `. What it does not: ` + planlock.DoesNotProve + `.
A timestamp from an RFC 3161 authority over LOCK (openssl ts) proves when; pass it
to tpctl gate --timestamp.

The same plan, policy, power plan and key give the same bytes; an existing LOCK
holding anything else is refused. Exit status: 0 locked; 2 an unusable plan,
policy, key or power plan, or LOCK exists.`,
		Example: `  tpctl plan power --pilot out/pilot --policy gate.yaml --output json > power.json
  tpctl plan lock plan.json --policy gate.yaml --key tpctl.key --power power.json --out plan.lock`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Plan = args[0]
			for _, f := range []struct{ name, v, hint string }{
				{"--policy", o.Policy, "the gate policy to lock: --policy gate.yaml"},
				{"--key", o.Key, "a private key: tpctl attest keygen --out tpctl.key"},
				{"--out", o.Out, "where to write the lock: --out plan.lock"},
			} {
				if f.v == "" {
					return usageErr(fmt.Errorf("%s is required", f.name), f.hint)
				}
			}
			return runF(cmd.Context(), a, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Policy, "policy", "", "gate policy file (YAML) to lock")
	f.StringVar(&o.Key, "key", "", "private key to sign with (PKCS#8 PEM, as tpctl attest)")
	f.StringVar(&o.Out, "out", "", "lock file to write")
	f.StringVar(&o.Power, "power", "", "power plan to bind (tpctl plan power --output json)")
	return cmd
}

func planLockRun(_ context.Context, a *app, o *planLockOptions) error {
	key, err := attest.LoadPrivateKey(o.Key)
	if err != nil {
		return inputErr(err)
	}
	c, err := planlock.Create(planlock.Options{Plan: o.Plan, PolicyFile: o.Policy, Out: o.Out, PowerFile: o.Power, Key: key})
	if err != nil {
		return lockErr(err)
	}
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*planlock.Created
			Proves       string `json:"proves"`
			DoesNotProve string `json:"does_not_prove"`
		}{"plan_lock", c, planlock.Proves, planlock.DoesNotProve})
	}
	state := "wrote"
	if !c.Changed {
		state = "unchanged (it already holds this lock)"
	}
	fmt.Fprintln(a.io.Out, ui.Wrap(fmt.Sprintf("locked %s (%s, plan sha256 %s) and policy %s (sha256 %s) with keyid %s: %s %s",
		ui.Printable(o.Plan), ui.Plural(c.PlannedTrials, "planned trial"), c.PlanSHA256, ui.Printable(o.Policy), c.PolicySHA256, c.KeyID, state, ui.Printable(c.Out)), a.io.Width()))
	fmt.Fprintln(a.io.Out, ui.Wrap("the signature proves "+planlock.Proves+"; it does not prove "+planlock.DoesNotProve, a.io.Width()))
	return nil
}

// lockErr maps a lock's errors to exit codes: a lock that does not hold
// for the candidate is a finding (exit 1), an unusable input exit 2.
func lockErr(err error) error {
	var le *planlock.Error
	if errors.As(err, &le) {
		switch le.Code {
		case planlock.CodePolicyMoved, planlock.CodeAnotherPlan, planlock.CodeNotYet, planlock.CodeUnusable:
			return findingErr(err, cond(le.Hint)...)
		}
		return inputErr(err, cond(le.Hint)...)
	}
	var ie *gate.InputError
	if errors.As(err, &ie) && ie.Hint != "" {
		return inputErr(err, ie.Hint)
	}
	return inputErr(err)
}

func cond(h string) []string {
	if h == "" {
		return nil
	}
	return []string{h}
}
