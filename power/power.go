// Package power answers, before a run, how many tasks and repeats a gate
// policy needs: it simulates rounds of designs of tasks × repeats from a
// pilot round's tasks (resampling tasks with their observed rates) and
// judges each with the very code tpctl gate runs (gate.Judge), so the
// power it claims is the pass rate of the gate over rounds like the
// pilot's. With a baseline rule the design is paired: baseline and
// candidate run on the same tasks. Seeded and deterministic.
// docs/statistics.md, "Power", says how to read it.
package power

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/stats"
)

// Format is the version of the JSON result.
const Format = "tpctl-power/1"

// Defaults of Options.
var (
	DefaultTasks   = []int{3, 5, 10, 20, 30, 50, 100, 200}
	DefaultRepeats = []int{1, 2, 4, 8}
)

const (
	// DefaultTarget is the power a recommended design must reach.
	DefaultTarget = 0.8
	// DefaultSimulations is the rounds simulated per design: the power's
	// Monte Carlo standard error is at most 0.5/√400 = 2.5 points.
	DefaultSimulations = 400
	// DefaultSeed seeds the simulation.
	DefaultSeed uint64 = 1
	// MaxTrialsPerRound caps a design, so a typo in --tasks cannot ask
	// for days of simulation.
	MaxTrialsPerRound = 100_000
)

// Options are the inputs of Run besides the policy.
type Options struct {
	Pilot, Baseline, PolicyFile string
	Target                      float64
	Simulations                 int
	Seed                        uint64
	// Tasks and Repeats are the design grid (DefaultTasks, DefaultRepeats
	// when empty).
	Tasks, Repeats []int
}

// Design is one design of tasks × repeats and the chance the policy
// passes it.
type Design struct {
	Tasks   int     `json:"tasks"`
	Repeats int     `json:"repeats"`
	Trials  int     `json:"trials"`
	Power   float64 `json:"power"`
	// MCSE is the power's Monte Carlo standard error.
	MCSE float64 `json:"mc_se"`
	// Reason says why the power is 0 without simulating (too few tasks
	// for an interval rule); empty otherwise.
	Reason string `json:"reason,omitempty"`
}

// Source describes a round the simulation draws from.
type Source struct {
	Dir         string   `json:"dir"`
	RoundID     string   `json:"round_id"`
	Tasks       int      `json:"tasks"`
	Planned     int      `json:"planned"`
	SuccessRate *float64 `json:"success_rate"`
	NotScored   int      `json:"not_scored"`
}

// RepeatLimit says, for one number of tasks, what more repeats bought.
type RepeatLimit struct {
	Tasks int `json:"tasks"`
	// From and To are the powers at the fewest and most repeats tried.
	FromRepeats int     `json:"from_repeats"`
	ToRepeats   int     `json:"to_repeats"`
	From        float64 `json:"from"`
	To          float64 `json:"to"`
	// Reaches is whether any number of repeats tried reaches the target.
	Reaches bool `json:"reaches_target"`
}

// Paired is the baseline rule's design: what it can detect at the margin.
type Paired struct {
	Margin float64 `json:"margin"`
	// Tasks and Repeats are the design this is for (the recommended one,
	// else the largest tried).
	Tasks   int `json:"tasks"`
	Repeats int `json:"repeats"`
	// PilotDelta is the pilot's rate minus the baseline's over the tasks
	// they share: the difference the simulation assumes.
	PilotDelta float64 `json:"pilot_delta"`
	// MDE80 is the mean minimum detectable effect of the simulated pairs
	// (compare's mde80), and Detectable = −margin + MDE80 the smallest true
	// difference the rule shows non-inferior with about 80% power.
	MDE80      float64 `json:"mde80"`
	Detectable float64 `json:"detectable_delta"`
}

// Result is the power plan.
type Result struct {
	Format      string   `json:"format"`
	Policy      string   `json:"policy"`
	PolicyRules []string `json:"policy_rules"`
	Pilot       Source   `json:"pilot"`
	Baseline    *Source  `json:"baseline"`
	Target      float64  `json:"target"`
	Simulations int      `json:"simulations"`
	Seed        uint64   `json:"seed"`
	Designs     []Design `json:"designs"`
	// Recommended is the design with the fewest trials (then the fewest
	// repeats) whose power reaches Target; nil when none does.
	Recommended  *Design       `json:"recommended"`
	RepeatLimits []RepeatLimit `json:"repeat_limits"`
	Paired       *Paired       `json:"paired"`
	// Unscored says, once, how the simulated rounds' trials not scored
	// are judged (the gate's worst case, leave_out, require: clean, the
	// baseline rule); empty when the pilot and baseline scored every
	// planned trial the simulation draws from.
	Unscored string `json:"unscored,omitempty"`
	// Notes say what the simulation assumes that the user should know.
	Notes []string `json:"notes"`
}

// InputError means the plan cannot be made: an unusable snapshot, a
// policy and arguments that disagree, a design out of range. It is the
// gate's (the same checks of the same policy and rounds).
type InputError = gate.InputError

// Task is one pilot task's observed shares of its planned trials: the
// probabilities a simulated trial of it succeeds or fails (the rest is
// not scored), and with a baseline the baseline's.
type Task struct {
	Name                     string
	Success, Failure         float64
	BaseSuccess, BaseFailure float64
}

// Run loads and verifies the pilot (and baseline) and computes the plan.
func Run(ctx context.Context, p *gate.Policy, opts Options) (*Result, error) {
	if err := argsAgree(p, opts.Baseline != "", opts.PolicyFile); err != nil {
		return nil, err
	}
	pilot, err := gate.LoadRound(ctx, opts.Pilot, "pilot")
	if err != nil {
		return nil, err
	}
	var base *round.Round
	if opts.Baseline != "" {
		if base, err = gate.LoadRound(ctx, opts.Baseline, "baseline"); err != nil {
			return nil, err
		}
	}
	return Plan(ctx, p, opts, pilot, base)
}

// Plan computes the power plan from loaded rounds (base nil without a
// baseline rule).
func Plan(ctx context.Context, p *gate.Policy, opts Options, pilot, base *round.Round) (*Result, error) {
	if err := argsAgree(p, base != nil, opts.PolicyFile); err != nil {
		return nil, err
	}
	if opts.Target == 0 {
		opts.Target = DefaultTarget
	}
	if !(opts.Target > 0 && opts.Target < 1) {
		return nil, &InputError{Msg: fmt.Sprintf("--target %v is not a power between 0 and 1", opts.Target), Hint: "the usual target is 0.8"}
	}
	if opts.Simulations == 0 {
		opts.Simulations = DefaultSimulations
	}
	if opts.Simulations < 10 || opts.Simulations > 100_000 {
		return nil, &InputError{Msg: fmt.Sprintf("--simulations %d is outside 10–100000", opts.Simulations)}
	}
	tasksGrid, repeatsGrid := cmpOr(opts.Tasks, DefaultTasks), cmpOr(opts.Repeats, DefaultRepeats)
	for _, t := range tasksGrid {
		for _, r := range repeatsGrid {
			if t < 1 || r < 1 || t*r > MaxTrialsPerRound {
				return nil, &InputError{Msg: fmt.Sprintf("design %d tasks × %d repeats is outside 1–%d trials per round", t, r, MaxTrialsPerRound)}
			}
		}
	}
	res := &Result{Format: Format, Policy: opts.PolicyFile, PolicyRules: rulesOf(p), Target: opts.Target, Simulations: opts.Simulations, Seed: opts.Seed,
		Designs: []Design{}, RepeatLimits: []RepeatLimit{}, Notes: []string{}}
	res.Pilot = sourceOf(pilot)
	pool, err := Pool(pilot, base, p.Quarantine)
	if err != nil {
		return nil, err
	}
	if base != nil {
		b := sourceOf(base)
		res.Baseline = &b
	}
	// The simulated rounds have their own task names: the quarantine was
	// applied to the pool, so the simulation's policy has none.
	sim := *p
	sim.Quarantine = nil
	res.Notes = notes(pool)
	res.Unscored = unscoredJudging(pool, res.Pilot, res.Baseline, p)
	if p.MaxCostUSD != nil {
		// Simulated trials have no cost; the cap is a budget, not a
		// chance, and the pilot's spend per trial says what a design costs.
		sim.MaxCostUSD = nil
		res.Notes = append(res.Notes, "max_cost_usd is not simulated (a simulated trial has no cost): the pilot's spend per trial times a design's trials says whether it fits the cap")
	}

	type job struct{ i, t, r int }
	for _, t := range tasksGrid {
		for _, r := range repeatsGrid {
			res.Designs = append(res.Designs, Design{Tasks: t, Repeats: r, Trials: t * r})
		}
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var firstErr error
	var mu sync.Mutex
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for j := range jobs {
				d := &res.Designs[j.i]
				if intervalRule(p) && j.t < stats.MinTasks {
					d.Reason = fmt.Sprintf("%s, so %s cannot pass", stats.TooFewTasks(j.t).Message, strings.Join(intervalRules(p), " and "))
					continue
				}
				pw, err := Simulate(ctx, &sim, pool, base != nil, j.t, j.r, opts.Simulations, opts.Seed)
				if err != nil {
					mu.Lock()
					firstErr = cmpOrErr(firstErr, err)
					mu.Unlock()
					continue
				}
				d.Power = stats.Round12(pw)
				d.MCSE = stats.Round12(math.Sqrt(pw * (1 - pw) / float64(opts.Simulations)))
			}
		})
	}
	for i, d := range res.Designs {
		jobs <- job{i, d.Tasks, d.Repeats}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	for i := range res.Designs {
		d := res.Designs[i]
		if d.Power >= opts.Target && (res.Recommended == nil || d.Trials < res.Recommended.Trials || d.Trials == res.Recommended.Trials && d.Repeats < res.Recommended.Repeats) {
			res.Recommended = &res.Designs[i]
		}
	}
	if res.Recommended != nil {
		rec := *res.Recommended
		res.Recommended = &rec
	}
	for _, t := range tasksGrid {
		var row []Design
		for _, d := range res.Designs {
			if d.Tasks == t && d.Reason == "" {
				row = append(row, d)
			}
		}
		if len(row) < 2 {
			continue
		}
		first, last := row[0], row[len(row)-1]
		l := RepeatLimit{Tasks: t, FromRepeats: first.Repeats, ToRepeats: last.Repeats, From: first.Power, To: last.Power}
		for _, d := range row {
			l.Reaches = l.Reaches || d.Power >= opts.Target
		}
		res.RepeatLimits = append(res.RepeatLimits, l)
	}
	if base != nil {
		at := res.Recommended
		if at == nil {
			at = &res.Designs[len(res.Designs)-1]
		}
		pp, err := pairedPlan(ctx, *p.NonInferiorityMargin, pool, at.Tasks, at.Repeats, opts.Simulations, opts.Seed)
		if err != nil {
			return nil, err
		}
		res.Paired = pp
	}
	return res, nil
}

// argsAgree refuses a baseline rule without a baseline and a baseline
// without a baseline rule, as tpctl gate does.
func argsAgree(p *gate.Policy, hasBase bool, policyFile string) error {
	return p.CheckBaseline(hasBase, policyFile, "pass --baseline BASE: the round the candidate will be compared with (its per-task rates drive the paired simulation)")
}

func cmpOr(a, b []int) []int {
	if len(a) > 0 {
		out := slices.Clone(a)
		slices.Sort(out)
		return slices.Compact(out)
	}
	return b
}

func cmpOrErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func sourceOf(r *round.Round) Source {
	s := r.Summarize(nil)
	return Source{Dir: r.Dir, RoundID: r.Manifest.RoundID, Tasks: s.Tasks, Planned: s.Counts.Expected, SuccessRate: s.SuccessRate, NotScored: s.Counts.Expected - s.Counts.Scored()}
}

func rulesOf(p *gate.Policy) []string {
	var out []string
	if p.Require != "" {
		out = append(out, gate.RuleRequire)
	}
	if p.MinSuccessRate != nil {
		out = append(out, gate.RuleMinSuccess)
	}
	if p.MaxInfraErrorRate != nil {
		out = append(out, gate.RuleMaxInfra)
	}
	if p.MaxCostUSD != nil {
		out = append(out, gate.RuleMaxCost)
	}
	if p.NonInferiorityMargin != nil {
		out = append(out, gate.RuleNonInferior)
	}
	return out
}

func intervalRules(p *gate.Policy) []string {
	var out []string
	if p.MinSuccessRate != nil {
		out = append(out, gate.RuleMinSuccess)
	}
	if p.NonInferiorityMargin != nil {
		out = append(out, gate.RuleNonInferior)
	}
	return out
}

func intervalRule(p *gate.Policy) bool { return len(intervalRules(p)) > 0 }

// Pool is the pilot's tasks outside the quarantine with their shares of
// success, failure and not scored among their planned trials; with a
// baseline, only the tasks both plan, with the baseline's shares too.
func Pool(pilot, base *round.Round, quarantine []string) ([]Task, error) {
	quarantined := map[string]bool{}
	for _, q := range quarantine {
		quarantined[q] = true
	}
	shares := func(r *round.Round) (map[string]*[3]int, []string) {
		m := map[string]*[3]int{}
		var order []string
		for _, t := range r.Trials {
			if quarantined[t.Task] {
				continue
			}
			c := m[t.Task]
			if c == nil {
				c = new([3]int)
				m[t.Task] = c
				order = append(order, t.Task)
			}
			c[2]++
			switch t.Status {
			case snapshot.StatusSuccess:
				c[0]++
			case snapshot.StatusFailure:
				c[1]++
			}
		}
		return m, order
	}
	pm, order := shares(pilot)
	var bm map[string]*[3]int
	if base != nil {
		if d := round.ProtocolDifferences(base.Manifest, pilot.Manifest); len(d) > 0 {
			var parts []string
			for _, x := range d {
				parts = append(parts, x.String())
			}
			return nil, &InputError{Msg: fmt.Sprintf("the pilot %q and the baseline %q are of different protocols (%s): the baseline rule would call every candidate not comparable", pilot.Dir, base.Dir, strings.Join(parts, "; ")),
				Hint: "plan with a baseline of the protocol you will run"}
		}
		bm, _ = shares(base)
	}
	var pool []Task
	for _, name := range order {
		c := pm[name]
		t := Task{Name: name, Success: float64(c[0]) / float64(c[2]), Failure: float64(c[1]) / float64(c[2])}
		if bm != nil {
			b := bm[name]
			if b == nil {
				continue
			}
			t.BaseSuccess, t.BaseFailure = float64(b[0])/float64(b[2]), float64(b[1])/float64(b[2])
		}
		pool = append(pool, t)
	}
	if len(pool) == 0 {
		return nil, &InputError{Msg: fmt.Sprintf("the pilot %q has no task outside the quarantine to simulate from", pilot.Dir)}
	}
	return pool, nil
}

func notes(pool []Task) []string {
	out := []string{fmt.Sprintf("designs resample the pilot's %d tasks with replacement, each with its observed shares of success, failure and not scored; the tasks you run are assumed to be drawn from the same population", len(pool))}
	if len(pool) < 10 {
		out = append(out, fmt.Sprintf("the pilot has only %d tasks: the spread between tasks it shows is itself uncertain, so treat these powers as rough", len(pool)))
	}
	return out
}

// unscoredJudging says how the trials the simulated rounds lose are
// judged, in the order a reader needs it: that they are lost at the
// pilot's rates, then what each rule of the policy does with them (the
// gate's, gate.Judge). "" when the pool loses nothing.
func unscoredJudging(pool []Task, pilot Source, base *Source, p *gate.Policy) string {
	lost := false
	for _, t := range pool {
		if t.Success+t.Failure < 1 || base != nil && t.BaseSuccess+t.BaseFailure < 1 {
			lost = true
		}
	}
	if !lost {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of the pilot's %d planned trials were not scored (infra_error, unscored or missing)", pilot.NotScored, pilot.Planned)
	if base != nil && base.NotScored > 0 {
		fmt.Fprintf(&b, ", and %d of the baseline's %d", base.NotScored, base.Planned)
	}
	b.WriteString(", and simulated rounds lose trials at the same rates.")
	if p.Require == gate.RequireClean {
		b.WriteString(" require: clean fails every simulated round that loses a trial, so these powers are at most the chance of losing none — fix the crashes first.")
	}
	if p.MinSuccessRate != nil {
		if p.UnscoredTrials == gate.UnscoredLeftOut {
			b.WriteString(" The policy says unscored_trials: leave_out, so min_success_rate is judged on the scored trials only: these powers assume the trials lost are no harder than the rest.")
		} else {
			worst := 0.0
			if pilot.Planned > 0 && pilot.SuccessRate != nil {
				worst = float64(pilot.Planned-pilot.NotScored) * *pilot.SuccessRate / float64(pilot.Planned)
			}
			over := ""
			if pilot.SuccessRate != nil {
				over = fmt.Sprintf(" than the pilot's %s over scored trials suggests (worst case %s)", pctText(*pilot.SuccessRate), pctText(worst))
			}
			fmt.Fprintf(&b, " tpctl gate judges min_success_rate on the worst case — every trial not scored counted as a failure — so these powers are the chance of passing on the worst case, lower%s.", over)
		}
	}
	if p.NonInferiorityMargin != nil {
		if p.AllowDegraded {
			b.WriteString(" The policy says baseline.allow_degraded: true, so the baseline rule judges a degraded pair over the trials scored in both, which lean to the easier tasks when crashes hit hard ones.")
		} else {
			b.WriteString(" The baseline rule fails a simulated pair with a degraded round as not comparable, as tpctl compare calls it.")
		}
	}
	return b.String()
}

// pctText is a rate in percent with one decimal.
func pctText(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

// Simulate is the pass rate of the policy over sims rounds of tasks ×
// repeats drawn from pool: each round resamples tasks with replacement
// and draws every trial from its task's shares; with paired, a baseline
// round on the same tasks from the baseline's shares. Every round is
// judged by gate.Judge. Deterministic in seed, tasks and repeats.
func Simulate(ctx context.Context, p *gate.Policy, pool []Task, paired bool, tasks, repeats, sims int, seed uint64) (float64, error) {
	r := rand.New(rand.NewPCG(seed, uint64(tasks)<<32|uint64(repeats)))
	m := simManifest()
	pass := 0
	for range sims {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		cand, base := Draw(r, pool, m, paired, tasks, repeats)
		v, err := gate.Judge(p, "policy", cand, base)
		if err != nil {
			return 0, err
		}
		if v.Pass {
			pass++
		}
	}
	return float64(pass) / float64(sims), nil
}

// simManifest is the manifest every simulated round shares: one protocol,
// so a simulated pair is comparable unless a round is degraded.
func simManifest() *snapshot.Manifest {
	return &snapshot.Manifest{Name: "simulated", RoundID: "simulated", Checkpoint: snapshot.Checkpoint{Ref: "simulated"}}
}

// taskName names the i-th simulated task so names sort in draw order.
func taskName(i int) string { return fmt.Sprintf("sim/task-%06d", i) }

// Draw draws one simulated round (and, paired, its baseline) of tasks ×
// repeats from pool.
func Draw(r *rand.Rand, pool []Task, m *snapshot.Manifest, paired bool, tasks, repeats int) (cand, base *round.Round) {
	cand = &round.Round{Dir: "simulated", Manifest: m, Trials: make([]round.Trial, 0, tasks*repeats)}
	if paired {
		base = &round.Round{Dir: "simulated-baseline", Manifest: m, Trials: make([]round.Trial, 0, tasks*repeats)}
	}
	status := func(s, f float64) string {
		u := r.Float64()
		switch {
		case u < s:
			return snapshot.StatusSuccess
		case u < s+f:
			return snapshot.StatusFailure
		}
		return snapshot.StatusInfraError
	}
	for i := range tasks {
		t := pool[r.IntN(len(pool))]
		name := taskName(i)
		for rep := range repeats {
			cand.Trials = append(cand.Trials, round.Trial{Task: name, Repeat: rep, Status: status(t.Success, t.Failure)})
			if paired {
				base.Trials = append(base.Trials, round.Trial{Task: name, Repeat: rep, Status: status(t.BaseSuccess, t.BaseFailure)})
			}
		}
	}
	return cand, base
}

// pairedPlan is the baseline rule's design at tasks × repeats: the pilot's
// difference and the mean minimum detectable effect of simulated pairs.
func pairedPlan(ctx context.Context, margin float64, pool []Task, tasks, repeats, sims int, seed uint64) (*Paired, error) {
	pp := &Paired{Margin: margin, Tasks: tasks, Repeats: repeats}
	var ps, pb float64
	for _, t := range pool {
		ps += t.Success
		pb += t.BaseSuccess
	}
	pp.PilotDelta = stats.Round12((ps - pb) / float64(len(pool)))
	r := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(tasks)<<32|uint64(repeats)))
	m := simManifest()
	sum, n := 0.0, 0
	for range sims {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cand, base := Draw(r, pool, m, true, tasks, repeats)
		pr := round.Pair(base, cand, nil)
		if pr.Paired != nil && pr.Paired.MDE80 != nil {
			sum += *pr.Paired.MDE80
			n++
		}
	}
	if n == 0 {
		return nil, errors.New("no simulated pair has a paired interval at this design")
	}
	pp.MDE80 = stats.Round12(sum / float64(n))
	pp.Detectable = stats.Round12(-margin + pp.MDE80)
	return pp, nil
}
