package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor/plandraft"
)

// planInitOptions are the resolved inputs of `tpctl plan init`.
type planInitOptions struct {
	Root, Out           string
	Agent, Model, Split string
	// From names the producer whose output --root holds ("" detects it).
	From string
}

// newPlanInitCmd is tpctl plan init; runF nil is planInitRun.
func newPlanInitCmd(a *app, runF func(context.Context, *app, *planInitOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(ctx context.Context, a *app, o *planInitOptions) error { return planInitRun(ctx, a, o) }
	}
	opts := &planInitOptions{}
	cmd := &cobra.Command{
		Use:   "init --root JOBDIR [--out FILE] [--agent NAME] [--model NAME] [--split NAME]",
		Short: "Draft an import plan from a Harbor job folder, for review",
		Long: `Init reads the Harbor job's own declaration of what it planned (the job's
lock.json, else its config.json; the job's result.json n_total_trials as a
cross-check) and drafts every planned trial: a finished trial with its folder,
an interrupted one (a folder without result.json) with its folder, so the
import counts it unscored, and one that never started with no attempts, so it
counts as missing. Which folder is which planned trial comes from the folder's
own lock.json (else config.json), never from its name.

One plan names one checkpoint: a job run with several (agent, model) pairs is
refused, naming each pair and the --agent/--model flags that pick it.
source.revision comes from the job lock's Harbor version, settings from the
trials' TrialConfig (refused when they differ; the agent's generation
arguments also recorded as settings.generation), the dataset digest is
proposed from the lock's task digests (docs/digest-rules.md, harbor-lock),
and the verifier, environment and harness digests from the job's files: the
tasks' tests/ and environment/ folders the lock names (each checked against
the lock's task digest), the Harbor commit and the agent's configuration
(harbor-job). Each proposal names the files it was read from; one whose
inputs cannot be read stays a placeholder, with why. The split and the
checkpoint stay REPLACE_… placeholders: fill them with 'tpctl plan set'; the
settings the job's files do not record (so plan check would warn
settings_incomplete) are named with a 'tpctl plan set' that records each.

Without a job declaration (trial folders only) init drafts one trial per
folder with a result.json, as before, and warns that the planned set must be
checked by hand.

Which producer's output --root holds is detected (--from names it when a
folder holds several); a folder holding none of it is refused.

Exit status: 0 drafted; 1 the job cannot be drafted as one plan (several
pairs, revisions or settings), or --root holds no output tpctl reads; 2 bad
flags or an unreadable job (a corrupt lock.json, a trial folder its job did
not plan).`,
		Example: `  tpctl plan init --root testdata/harbor-v0.22.0/jobs/2026-09-01__10-00-00 --model gpt-5.4 --out import-plan.json
  tpctl plan init --root jobs/2026-04-08__12-00-00 --split heldout`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runF(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Root, "root", "", "Harbor job folder; dirs in the plan are relative to it")
	f.StringVar(&opts.Out, "out", "", "write the draft to this new file instead of stdout")
	f.StringVar(&opts.Agent, "agent", "", "draft only this agent's planned trials (a job with several)")
	f.StringVar(&opts.Model, "model", "", "draft only this model's planned trials (a job with several)")
	f.StringVar(&opts.Split, "split", "", "the plan's split (default: the REPLACE_SPLIT placeholder)")
	f.StringVar(&opts.From, "from", "", "the producer whose output --root holds (default: detected; harbor)")
	return cmd
}

func planInitRun(ctx context.Context, a *app, opts *planInitOptions) error {
	s := a.io
	if opts.Root == "" {
		return usageErr(fmt.Errorf("--root is required"), "tpctl plan init --root JOBDIR")
	}
	if opts.Out != "" {
		if err := safefs.MustNotExist(opts.Out); err != nil {
			return usageErr(err, "choose a new --out file; init never overwrites a plan")
		}
	}
	prod, err := pickProducer(a.producers(), opts.Root, opts.From)
	if err != nil {
		return err
	}
	d, err := prod.Draft(ctx, opts.Root, producers.DraftOptions{Agent: opts.Agent, Model: opts.Model, Split: opts.Split})
	if err != nil {
		var pe *plandraft.PairsError
		var re *plandraft.RevisionsError
		var se *plandraft.SettingsError
		switch {
		case errors.As(err, &pe):
			hint := "add the flags of one pair, e.g. tpctl plan init --root " + opts.Root + " " + pe.Pairs[0].Flags()
			if len(pe.Pairs) == 0 {
				hint = "the job planned no trials"
			}
			return findingErr(err, hint)
		case errors.As(err, &re):
			return findingErr(err, "give --root one job folder, or the jobs of one Harbor revision")
		case errors.As(err, &se):
			return findingErr(err, "draft the trials of one setting: pass --root the job that used it")
		}
		return inputErr(err, "give the Harbor job folder (the one holding the trial folders)")
	}
	b, err := planfile.DraftJSON(d.Plan)
	if err != nil {
		return err
	}
	for _, sk := range d.Skipped {
		fmt.Fprintf(s.ErrOut, "tpctl: warning: skipped %s: %s\n", termsafe.Escape(sk.Dir), termsafe.Escape(sk.Reason))
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(s.ErrOut, "tpctl: warning: %s\n", termsafe.Escape(w))
	}
	for _, n := range d.Notes {
		fmt.Fprintf(s.ErrOut, "tpctl: %s\n", termsafe.Escape(n))
	}
	fmt.Fprintf(s.ErrOut, "tpctl: %s\n", termsafe.Escape(d.Summary))
	planName := opts.Out
	if planName == "" {
		planName = "PLAN"
	}
	if ph := plandraft.Placeholders(d.Plan); len(ph) > 0 {
		fmt.Fprintf(s.ErrOut, "tpctl: fill in %s:\n", ui.Plural(len(ph), "placeholder"))
		for _, p := range ph {
			fmt.Fprintf(s.ErrOut, "  %s\n", termsafe.Escape(placeholderCommand(planName, p)))
		}
	}
	if len(d.Unknown) > 0 {
		var cats []string
		for _, u := range d.Unknown {
			cats = append(cats, u.Category)
		}
		fmt.Fprintf(s.ErrOut, "tpctl: the job's files do not record these settings (%s); plan check warns settings_incomplete until each is set, e.g.:\n", strings.Join(cats, ", "))
		for _, u := range d.Unknown {
			fmt.Fprintf(s.ErrOut, "  %s\n", termsafe.Escape(ui.Command("plan", "set", planName, u.Pointer, u.Example)))
		}
	}
	fmt.Fprintf(s.ErrOut, "tpctl: then run: tpctl plan check %s --root %s\n", termsafe.Escape(shellArg(planName)), termsafe.Escape(shellArg(opts.Root)))
	if opts.Out == "" {
		_, err = s.Out.Write(b)
		return err
	}
	return safefs.WriteNew(opts.Out, b, 0o644)
}

// pickProducer is the producer whose output root holds: the one --from
// names, else the one the registry detects there. A root that is not a
// readable folder goes to the first producer (Harbor), whose draft says
// so as it always has.
func pickProducer(reg *producers.Registry, root, from string) (producers.Producer, error) {
	if from != "" {
		p, err := reg.For(from)
		if err != nil {
			return nil, usageErr(err, "pass --from "+strings.Join(reg.Formats(), " or --from "))
		}
		return p, nil
	}
	found := reg.Detect(root)
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		var names, flags []string
		for _, p := range found {
			names = append(names, p.Name())
			flags = append(flags, "--from "+p.Format())
		}
		return nil, findingErr(fmt.Errorf("%s holds the output of several producers (%s)", root, strings.Join(names, ", ")),
			"pick one with "+strings.Join(flags, " or "))
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return reg.All()[0], nil
	}
	var names []string
	for _, p := range reg.All() {
		names = append(names, p.Name())
	}
	return nil, findingErr(fmt.Errorf("no %s output under %s", strings.Join(names, " or "), root),
		"give --root the folder the evaluation wrote (a Harbor job folder)")
}

// placeholderCommand is the command that fills one placeholder.
func placeholderCommand(plan, ptr string) string {
	plan = shellArg(plan)
	switch ptr {
	case "/split":
		return "tpctl plan set " + plan + " /split heldout"
	case "/checkpoint/ref":
		return "tpctl plan set " + plan + " /checkpoint/ref 'hf://ORG/MODEL@<40-hex commit>'"
	case "/source/revision":
		return "tpctl plan set " + plan + " /source/revision <validated Harbor commit (tpctl formats)>"
	case "/protocol/dataset_digest":
		return "tpctl digest dir DATASET_DIR --set " + plan + ":" + ptr
	case "/protocol/verifier_digest":
		return "tpctl digest file VERIFIER_FILE --set " + plan + ":" + ptr
	case "/protocol/environment_digest":
		return "tpctl digest file ENVIRONMENT_FILE --set " + plan + ":" + ptr
	case "/protocol/harness_digest":
		return "tpctl digest file HARNESS_FILE --set " + plan + ":" + ptr
	}
	return "tpctl plan set " + plan + " " + ptr + " VALUE"
}

// shellArg quotes s for a shell when it needs it.
func shellArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
