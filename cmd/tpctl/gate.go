package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/internal/ui"
)

// gateOptions are the resolved arguments of tpctl gate.
type gateOptions struct {
	Candidate, Baseline, Policy string
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
  max_infra_error_rate: 0.05
  max_cost_usd: 25                # known spend of every attempt, in US dollars
  baseline:
    non_inferiority_margin: 0.05  # pass when the paired 95% lower bound >= -margin
  quarantine: [harbor/flaky-task] # tasks left out of every rule, listed in the verdict

The success-rate interval is the task-clustered one, honest for repeated
trials; the baseline rule uses the paired difference over trials scored in
both rounds. An interval that cannot be computed is "not enough evidence",
which fails the rule; so does a baseline of another protocol, and a cost cap
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
			return runF(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Baseline, "baseline", "", "baseline snapshot for the policy's baseline rule")
	cmd.Flags().StringVar(&opts.Policy, "policy", "", "policy file (YAML)")
	return cmd
}

func gateRun(ctx context.Context, a *app, opts *gateOptions) error {
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
	switch {
	case a.jsonOutput():
		if err := a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*gate.Verdict
		}{"gate_verdict", v}); err != nil {
			return err
		}
	case a.output == outputGitHub:
		if err := writeGateGitHub(a, v); err != nil {
			return err
		}
	default:
		if err := writeGate(a.io.Out, a.io.Width(), v); err != nil {
			return err
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
