package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/power"
)

// planPowerOptions are the resolved inputs of tpctl plan power.
type planPowerOptions struct {
	Pilot, Baseline, Policy string
	Target                  float64
	Simulations             int
	Seed                    uint64
	Tasks, Repeats          []int
}

// newPlanPowerCmd is tpctl plan power; runF nil is planPowerRun.
func newPlanPowerCmd(a *app, runF func(context.Context, *app, *planPowerOptions) error) *cobra.Command {
	if runF == nil {
		runF = planPowerRun
	}
	o := &planPowerOptions{}
	cmd := &cobra.Command{
		Use:   "power --pilot SNAPSHOT --policy FILE [--baseline BASE] [--target 0.8]",
		Short: "How many tasks and repeats a gate policy needs, simulated from a pilot round",
		Long: `Before a run: simulate rounds of designs of tasks × repeats from a pilot
round's tasks (resampling tasks with their observed shares of success, failure
and not scored) and judge each with the code tpctl gate runs, so the power is
the chance tpctl gate passes a round of that design. Prints every design's power,
the smallest design (fewest trials) that reaches --target, and what more repeats
of the same tasks cannot buy: repeats shrink the noise within a task, never the
spread between tasks, and under 5 tasks no interval rule can pass at all.

With a baseline rule (baseline.non_inferiority_margin) pass --baseline: the
design is paired (baseline and candidate on the same tasks), and the plan gives
the smallest true difference the rule shows non-inferior with about 80% power.

Seeded and deterministic: the same pilot, policy and flags give the same numbers.
--output json prints {"designs": [{"tasks", "repeats", "power", …}],
"recommended": {…} | null, …} (schema: tpctl schema power-plan;
docs/statistics.md, "Power").

Exit status: 0 the plan was made (also when no design reaches the target); 2
usage error, a policy that cannot be used, or a folder that is not a snapshot.`,
		Example: `  tpctl plan power --pilot out/pilot --policy gate.yaml
  tpctl plan power --pilot out/pilot --baseline out/main --policy gate.yaml --target 0.9 --output json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case o.Pilot == "":
				return usageErr(errors.New("--pilot is required"), "give a snapshot of a small run of the tasks you plan to use: --pilot out/pilot")
			case o.Policy == "":
				return usageErr(errors.New("--policy is required"), "the gate policy the run will be judged by: --policy gate.yaml")
			}
			return runF(cmd.Context(), a, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Pilot, "pilot", "", "pilot snapshot whose tasks the simulation resamples")
	f.StringVar(&o.Baseline, "baseline", "", "baseline snapshot, for the policy's baseline rule")
	f.StringVar(&o.Policy, "policy", "", "gate policy file (YAML), as for tpctl gate")
	f.Float64Var(&o.Target, "target", power.DefaultTarget, "power the recommended design must reach")
	f.IntVar(&o.Simulations, "simulations", power.DefaultSimulations, "simulated rounds per design")
	f.Uint64Var(&o.Seed, "seed", power.DefaultSeed, "seed of the simulation")
	f.IntSliceVar(&o.Tasks, "tasks", power.DefaultTasks, "task counts to try")
	f.IntSliceVar(&o.Repeats, "repeats", power.DefaultRepeats, "repeats per task to try")
	return cmd
}

func planPowerRun(ctx context.Context, a *app, o *planPowerOptions) error {
	p, err := gate.LoadPolicy(o.Policy)
	if err != nil {
		return inputErr(err)
	}
	a.startProgress().Phase("simulating designs", 0, "")
	res, err := power.Run(ctx, p, power.Options{Pilot: o.Pilot, Baseline: o.Baseline, PolicyFile: o.Policy, Target: o.Target,
		Simulations: o.Simulations, Seed: o.Seed, Tasks: o.Tasks, Repeats: o.Repeats})
	a.endProgress()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		var ie *power.InputError
		if errors.As(err, &ie) && ie.Hint != "" {
			return inputErr(err, ie.Hint)
		}
		return inputErr(err)
	}
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*power.Result
		}{"power_plan", res})
	}
	return writePower(a.io.Out, a.io.Width(), a.secrets.mask, res)
}

// writePower is the terminal view of a power plan: a tasks × repeats
// table of powers, the recommendation, what repeats cannot buy, the
// paired plan and the notes.
func writePower(w io.Writer, width int, mask func(string) string, r *power.Result) error {
	var b strings.Builder
	rate := "—"
	if r.Pilot.SuccessRate != nil {
		rate = strconv.FormatFloat(100**r.Pilot.SuccessRate, 'f', 1, 64) + "%"
	}
	lost := ""
	if r.Pilot.NotScored > 0 {
		lost, rate = fmt.Sprintf(", %d not scored", r.Pilot.NotScored), rate+" of scored"
	}
	fmt.Fprintf(&b, "power of policy %s (%s) from pilot %s (%s, %s%s, success %s); %d simulated rounds per design, seed %d, judged by tpctl gate's code\n\n",
		ui.Printable(r.Policy), strings.Join(r.PolicyRules, ", "), ui.Printable(r.Pilot.Dir), ui.Plural(r.Pilot.Tasks, "task"), ui.Plural(r.Pilot.Planned, "planned trial"), lost, rate, r.Simulations, r.Seed)
	// How the trials lost are judged decides what every figure below
	// means: said once, before the table.
	if r.Unscored != "" {
		fmt.Fprintf(&b, "trials not scored: %s\n\n", r.Unscored)
	}
	if _, err := io.WriteString(w, ui.Wrap(b.String(), width, mask)); err != nil {
		return err
	}
	b.Reset()
	var repeats []int
	var tasks []int
	for _, d := range r.Designs {
		if !containsInt(repeats, d.Repeats) {
			repeats = append(repeats, d.Repeats)
		}
		if !containsInt(tasks, d.Tasks) {
			tasks = append(tasks, d.Tasks)
		}
	}
	t := ui.Table{Header: []string{"tasks"}, Right: []bool{true}}
	for _, rep := range repeats {
		t.Header = append(t.Header, "×"+strconv.Itoa(rep))
		t.Right = append(t.Right, true)
	}
	tooFew := ""
	for _, n := range tasks {
		row := []string{strconv.Itoa(n)}
		for _, rep := range repeats {
			for _, d := range r.Designs {
				if d.Tasks == n && d.Repeats == rep {
					cell := powerPct(d.Power)
					if d.Reason != "" {
						cell, tooFew = "0%*", d.Reason
					} else if d.Power >= r.Target {
						cell += "+"
					}
					row = append(row, cell)
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	t.Mask = mask
	if err := ui.Columns(w, width, t); err != nil {
		return err
	}
	fmt.Fprintf(&b, "  power: the share of simulated rounds tpctl gate passes; + reaches the target %s\n", powerPct(r.Target))
	if tooFew != "" {
		fmt.Fprintf(&b, "  * %s\n", tooFew)
	}
	b.WriteString("\n")
	if d := r.Recommended; d != nil {
		fmt.Fprintf(&b, "recommended: %s × %s (%s), power %s (Monte Carlo ±%s)\n", ui.Plural(d.Tasks, "task"), ui.Plural(d.Repeats, "repeat"), ui.Plural(d.Trials, "trial"), powerPct(d.Power), powerPct(d.MCSE))
	} else {
		fmt.Fprintf(&b, "recommended: none — no design tried reaches %s; try more tasks (--tasks), or a policy the pilot's rates can meet\n", powerPct(r.Target))
	}
	for i := len(r.RepeatLimits) - 1; i >= 0; i-- {
		l := r.RepeatLimits[i]
		if l.Reaches {
			continue
		}
		fmt.Fprintf(&b, "more repeats cannot buy it: with %s, %d → %d repeats moves the power %s → %s, short of %s; repeats shrink the noise within a task, not the spread between tasks — add tasks\n",
			ui.Plural(l.Tasks, "task"), l.FromRepeats, l.ToRepeats, powerPct(l.From), powerPct(l.To), powerPct(r.Target))
		break // the most tasks that still fall short say it best
	}
	if p := r.Paired; p != nil {
		fmt.Fprintf(&b, "baseline rule (margin %s): paired design — baseline and candidate run the same %s × %s; the pilot is %s against the baseline; this design shows non-inferiority with about 80%% power when the true difference is at least %s (−margin + MDE %s)\n",
			powerPct(p.Margin), ui.Plural(p.Tasks, "task"), ui.Plural(p.Repeats, "repeat"), signedPowerPct(p.PilotDelta), signedPowerPct(p.Detectable), powerPct(p.MDE80))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, ui.Wrap(b.String(), width, mask))
	return err
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func powerPct(x float64) string {
	s := strconv.FormatFloat(100*x, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + "%"
}

func signedPowerPct(x float64) string {
	if x >= 0 {
		return "+" + powerPct(x)
	}
	return "−" + powerPct(-x)
}
