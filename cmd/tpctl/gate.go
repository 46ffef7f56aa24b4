package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/attest"
	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/planlock"
	"github.com/tuneplane/tpctl/timestamp"
)

// gateOptions are the resolved arguments of tpctl gate.
type gateOptions struct {
	Candidate, Baseline, Policy string
	// Lock and Key check the candidate and policy against a plan lock;
	// Timestamp and TSACert verify an RFC 3161 token over the lock.
	Lock, Key, Timestamp, TSACert string
}

// newGateCmd is tpctl gate; runF (nil: gateRun) is the seam tests use to
// check argument handling.
func newGateCmd(a *app, runF func(context.Context, *app, *gateOptions) error) *cobra.Command {
	if runF == nil {
		runF = gateRun
	}
	opts := &gateOptions{}
	cmd := &cobra.Command{
		Use:   "gate CANDIDATE [--baseline BASE] --policy FILE",
		Short: "Pass or fail a candidate round on a policy: clean, minimum rate, infra errors, cost, non-inferiority",
		Long: `Judge a saved candidate round by a policy file (YAML, strict: an unknown key
is an error naming the closest one), for CI:

  require: clean                  # or: any
  min_success_rate: 0.5           # judged on the lower bound of the 95% interval
  unscored_trials: count_as_failed  # degraded round: judge the worst case (or: leave_out)
  max_infra_error_rate: 0.05
  max_cost_usd: 25                # known spend of every attempt, in US dollars
  baseline:
    non_inferiority_margin: 0.05  # pass when the paired 95% lower bound >= -margin
    allow_degraded: false         # true: judge a pair compare calls not comparable
  quarantine: [harbor/flaky-task] # tasks left out of every rule, listed in the verdict

The success-rate interval is the task-clustered one, honest for repeated
trials; the baseline rule uses the paired difference over trials scored in
both rounds. An interval that cannot be computed is "not enough evidence",
which fails the rule; so does a baseline of another protocol, a degraded pair
(as tpctl compare says) unless baseline.allow_degraded is true, and a cost cap
when at most half of the attempts reported a cost (known spend over the cap
fails whatever the rest). Both snapshots are verified first.

--output json prints the verdict (schema: tpctl schema gate-verdict);
--output github prints an annotation per failed rule and appends the verdict to
the step summary.

Exit status: 0 every rule passes; 1 a rule fails (each named with its
numbers); 2 usage error, a policy file that cannot be used, or a folder that is
not a snapshot or fails verification.`,
		Example: `  tpctl gate out/candidate --policy gate.yaml
  tpctl gate out/candidate --baseline out/main --policy gate.yaml --output github`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Policy == "" {
				return usageErr(errors.New("--policy is required"), "write a policy file (see tpctl gate --help) and pass --policy gate.yaml")
			}
			opts.Candidate = args[0]
			switch {
			case opts.Lock != "" && opts.Key == "":
				return usageErr(errors.New("--lock needs --key"), "pass --key PUB, the public key of whoever made the lock")
			case opts.Lock == "" && (opts.Key != "" || opts.Timestamp != ""):
				return usageErr(errors.New("--key and --timestamp check a plan lock; give --lock"), "tpctl plan lock makes one before the run")
			case (opts.Timestamp == "") != (opts.TSACert == ""):
				return usageErr(errors.New("--timestamp and --tsa-cert go together"), "the token is checked against the time-stamping authority's certificate")
			}
			return runF(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Baseline, "baseline", "", "baseline snapshot for the policy's baseline rule")
	cmd.Flags().StringVar(&opts.Policy, "policy", "", "policy file (YAML)")
	cmd.Flags().StringVar(&opts.Lock, "lock", "", "plan lock (tpctl plan lock): the candidate must be its plan, the policy its policy, every planned trial scored")
	cmd.Flags().StringVar(&opts.Key, "key", "", "public key of the lock's signer (with --lock)")
	cmd.Flags().StringVar(&opts.Timestamp, "timestamp", "", "RFC 3161 time-stamp token (or response) over the lock file, DER")
	cmd.Flags().StringVar(&opts.TSACert, "tsa-cert", "", "certificate of the time-stamping authority (PEM or DER)")
	return cmd
}

func gateRun(ctx context.Context, a *app, opts *gateOptions) error {
	if opts.Lock != "" {
		return gateLockedRun(ctx, a, opts)
	}
	p, err := gate.LoadPolicy(opts.Policy)
	if err != nil {
		var pe *gate.PolicyError
		if errors.As(err, &pe) && a.output == outputGitHub {
			fmt.Fprint(a.io.Out, annotation{level: "error", file: pe.File, line: pe.Line, title: "tpctl gate policy", message: pe.Error()}.String())
		}
		return inputErr(err)
	}
	a.startProgress().Phase("verifying snapshots", 0, "")
	v, err := gate.Run(ctx, p, gate.Options{Candidate: opts.Candidate, Baseline: opts.Baseline, PolicyFile: opts.Policy})
	a.endProgress()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		var ie *gate.InputError
		if errors.As(err, &ie) && ie.Hint != "" {
			return inputErr(err, ie.Hint)
		}
		return inputErr(err)
	}
	return showVerdict(a, v, nil)
}

// lockView is what a verdict under a lock says of the lock.
type lockView struct {
	File          string `json:"file"`
	KeyID         string `json:"keyid"`
	PlanSHA256    string `json:"plan_sha256"`
	PlannedTrials int    `json:"planned_trials"`
	PolicySHA256  string `json:"policy_sha256"`
	Proves        string `json:"proves"`
	DoesNotProve  string `json:"does_not_prove"`
	// LockedBefore is the RFC 3161 time the lock existed by, when a
	// token was given and holds; TSA names its authority.
	LockedBefore *time.Time `json:"locked_before,omitempty"`
	TSA          string     `json:"tsa,omitempty"`
}

func (l *lockView) line() string {
	s := fmt.Sprintf("locked: the candidate is the plan locked in %s (keyid %s) and the policy is the locked one; the signature proves %s", l.File, l.KeyID, planlock.Proves)
	if l.LockedBefore != nil {
		return s + fmt.Sprintf("; locked before %s (RFC 3161 timestamp by %s)", l.LockedBefore.Format(time.RFC3339), l.TSA)
	}
	return s + "; it does not prove " + planlock.DoesNotProve
}

// gateLockedRun is tpctl gate --lock: the lock verified (and its
// timestamp), the policy and the candidate checked against it, then the
// verdict.
func gateLockedRun(ctx context.Context, a *app, opts *gateOptions) error {
	pub, err := attest.LoadPublicKey(opts.Key)
	if err != nil {
		return inputErr(err)
	}
	l, err := planlock.Open(opts.Lock, pub)
	if err != nil {
		return lockErr(err)
	}
	lv := &lockView{File: opts.Lock, KeyID: l.KeyID, PlanSHA256: l.Predicate.PlanSHA256, PlannedTrials: l.Predicate.PlannedTrials,
		PolicySHA256: l.Predicate.Policy.SHA256, Proves: planlock.Proves, DoesNotProve: planlock.DoesNotProve}
	if opts.Timestamp != "" {
		tok, err := timestamp.VerifyFiles(opts.Timestamp, opts.TSACert, l.Bytes)
		if err != nil {
			return findingErr(err, "the token must be over the lock file's exact bytes (openssl ts -query -data LOCK -sha256), from the authority whose certificate you pass")
		}
		lv.LockedBefore, lv.TSA = &tok.Time, tok.Authority
		lv.DoesNotProve = "who holds the key"
	}
	a.startProgress().Phase("verifying snapshots", 0, "")
	v, err := planlock.Gate(ctx, l, opts.Policy, gate.Options{Candidate: opts.Candidate, Baseline: opts.Baseline, PolicyFile: opts.Policy})
	a.endProgress()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		return lockErr(err)
	}
	return showVerdict(a, v, lv)
}

// showVerdict prints a verdict (and the lock it was judged under, if
// any) and returns exit 1 when a rule failed.
func showVerdict(a *app, v *gate.Verdict, lv *lockView) error {
	switch {
	case a.jsonOutput():
		if err := a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*gate.Verdict
			Lock *lockView `json:"lock,omitempty"`
		}{"gate_verdict", v, lv}); err != nil {
			return err
		}
	case a.output == outputGitHub:
		if err := writeGateGitHub(a, v); err != nil {
			return err
		}
		if lv != nil {
			fmt.Fprint(a.io.Out, annotation{level: "notice", title: "tpctl gate: locked", message: lv.line()}.String())
		}
	default:
		if err := writeGate(a.io.Out, a.io.Width(), v); err != nil {
			return err
		}
		if lv != nil {
			fmt.Fprintln(a.io.Out, ui.Wrap("  "+lv.line(), a.io.Width()))
		}
	}
	if !v.Pass {
		var failed []string
		for _, r := range v.Rules {
			if !r.Passed() {
				failed = append(failed, r.Rule)
			}
		}
		return silentFinding(fmt.Errorf("the gate failed: %s", strings.Join(failed, ", ")))
	}
	return nil
}

// writeGateGitHub prints one ::error per failed rule (a notice per passed
// one) and appends the verdict as a table to the step summary.
func writeGateGitHub(a *app, v *gate.Verdict) error {
	var sb, md strings.Builder
	for _, r := range v.Rules {
		level := "notice"
		if !r.Passed() {
			level = "error"
		}
		sb.WriteString(annotation{level: level, title: "tpctl gate: " + r.Rule + " " + strings.ReplaceAll(r.Outcome, "_", " "), message: r.Message}.String())
	}
	verdict := "passed"
	icon := "✅"
	if !v.Pass {
		verdict, icon = "failed", "❌"
	}
	fmt.Fprintf(&sb, "gate %s: %s, policy %s\n", verdict, v.Candidate.Dir, v.Policy)
	if _, err := fmt.Fprint(a.io.Out, sb.String()); err != nil {
		return err
	}
	fmt.Fprintf(&md, "### %s tpctl gate %s: %s\n\n", icon, mdCode(v.Candidate.Dir), verdict)
	fmt.Fprintf(&md, "Candidate %s", mdCode(v.Candidate.Checkpoint.Ref))
	if v.Baseline != nil {
		fmt.Fprintf(&md, ", baseline %s", mdCode(v.Baseline.Checkpoint.Ref))
	}
	fmt.Fprintf(&md, ", policy %s.\n\n| rule | outcome | detail |\n|---|---|---|\n", mdCode(v.Policy))
	for _, r := range v.Rules {
		fmt.Fprintf(&md, "| `%s` | %s | %s |\n", r.Rule, strings.ReplaceAll(r.Outcome, "_", " "), mdCell(r.Message))
	}
	if len(v.Quarantined) > 0 {
		var qs []string
		for _, q := range v.Quarantined {
			qs = append(qs, fmt.Sprintf("%s (%s)", mdCode(q.Task), ui.Plural(q.Trials, "trial")))
		}
		fmt.Fprintf(&md, "\nQuarantined, left out of every rule: %s\n", strings.Join(qs, ", "))
	}
	md.WriteString("\n")
	appendStepSummary(a.io.ErrOut, md.String())
	return nil
}
