package snapshot

import (
	"fmt"
	"strconv"

	"github.com/tuneplane/tpctl/stats"
)

// Cost is what a set of trials cost (a round, a task, one trial), summed
// from the usage and timing its attempts already keep (tpctl-snapshot/3),
// with how much of it is known. Unknown is never 0: a sum is null when no
// attempt it covers reported the value, and each sum says how many
// attempts it stands on. Nothing here is in the round ID; it is computed
// from the snapshot as saved. See docs/snapshot-format.md ("Cost").
type Cost struct {
	// Attempts is every attempt, retries included.
	Attempts int `json:"attempts"`
	// WithCost is how many of them reported a cost.
	WithCost int `json:"with_cost"`
	// USDAllAttempts is the known cost of every attempt, retries included;
	// null when no attempt reported one.
	USDAllAttempts *float64 `json:"usd_all_attempts"`
	// FinalAttempts is the deciding attempts: one per trial with an
	// attempt (its highest retry), the one its status comes from.
	FinalAttempts int `json:"final_attempts"`
	// FinalWithCost is how many of the deciding attempts reported a cost.
	FinalWithCost int `json:"final_with_cost"`
	// USDFinalAttempts is the known cost of the deciding attempts; null
	// when none reported one.
	USDFinalAttempts *float64 `json:"usd_final_attempts"`
	// WithTokens is how many attempts reported any token count.
	WithTokens int `json:"with_tokens"`
	// InputTokens (cache included), CacheTokens and OutputTokens are
	// summed over the attempts that reported each; null when none did.
	InputTokens  *int64 `json:"input_tokens"`
	CacheTokens  *int64 `json:"cache_tokens"`
	OutputTokens *int64 `json:"output_tokens"`
	// Phases is the wall time of each phase summed over the attempts that
	// recorded it.
	Phases Phases `json:"phases"`
}

// Phases is the summed wall time of each phase of an attempt.
type Phases struct {
	EnvironmentSetup PhaseTime `json:"environment_setup"`
	AgentSetup       PhaseTime `json:"agent_setup"`
	AgentExecution   PhaseTime `json:"agent_execution"`
	Verifier         PhaseTime `json:"verifier"`
}

// PhaseTime is one phase's wall time summed over Attempts attempts (those
// that recorded it); Seconds is null when none did.
type PhaseTime struct {
	Seconds  *float64 `json:"sec"`
	Attempts int      `json:"attempts"`
}

// Known is true when at least one attempt reported a cost.
func (c *Cost) Known() bool { return c.WithCost > 0 }

// Seconds is the wall time of every phase together, summed over the
// attempts that recorded any; null when none did.
func (p *Phases) Seconds() *float64 {
	var sum float64
	known := false
	for _, t := range []PhaseTime{p.EnvironmentSetup, p.AgentSetup, p.AgentExecution, p.Verifier} {
		if t.Seconds != nil {
			sum += *t.Seconds
			known = true
		}
	}
	if !known {
		return nil
	}
	v := stats.Round12(sum)
	return &v
}

// CostOf sums the attempts of observations (nil ones, missing trials, are
// skipped). The sums run in the order given; each is rounded to 12
// decimal places so the same snapshot gives the same bytes.
func CostOf(observations []*Observation) Cost {
	var a costSum
	for _, o := range observations {
		a.add(o)
	}
	return a.cost()
}

// CostSum accumulates observations one at a time (for a streamed read);
// the zero value is empty.
type CostSum struct{ s costSum }

// Add counts o's attempts; nil (a missing trial) adds nothing.
func (c *CostSum) Add(o *Observation) { c.s.add(o) }

// Cost is the sum so far.
func (c *CostSum) Cost() Cost { return c.s.cost() }

// Merge adds what o has summed to c.
func (c *CostSum) Merge(o *CostSum) {
	a, b := &c.s, &o.s
	a.attempts += b.attempts
	a.withCost += b.withCost
	a.final += b.final
	a.finalWithCost += b.finalWithCost
	a.withTokens += b.withTokens
	a.usdAll += b.usdAll
	a.usdFinal += b.usdFinal
	a.in, a.cache, a.out = a.in+b.in, a.cache+b.cache, a.out+b.out
	a.inN, a.cacheN, a.outN = a.inN+b.inN, a.cacheN+b.cacheN, a.outN+b.outN
	for j := range a.phase {
		a.phase[j] += b.phase[j]
		a.phaseN[j] += b.phaseN[j]
	}
}

type costSum struct {
	attempts, withCost, final, finalWithCost, withTokens int
	usdAll, usdFinal                                     float64
	in, cache, out                                       int64
	inN, cacheN, outN                                    int
	phase                                                [4]float64
	phaseN                                               [4]int
}

func (s *costSum) add(o *Observation) {
	if o == nil {
		return
	}
	for i := range o.AttemptOutcomes {
		at := &o.AttemptOutcomes[i]
		final := i == len(o.AttemptOutcomes)-1
		s.attempts++
		if final {
			s.final++
		}
		if u := at.Usage; u != nil {
			if u.CostUSD != nil {
				s.withCost++
				s.usdAll += *u.CostUSD
				if final {
					s.finalWithCost++
					s.usdFinal += *u.CostUSD
				}
			}
			if u.InputTokens != nil || u.CacheTokens != nil || u.OutputTokens != nil {
				s.withTokens++
			}
			addInt(&s.in, &s.inN, u.InputTokens)
			addInt(&s.cache, &s.cacheN, u.CacheTokens)
			addInt(&s.out, &s.outN, u.OutputTokens)
		}
		if t := at.Timing; t != nil {
			for j, v := range []*float64{t.EnvironmentSetup, t.AgentSetup, t.AgentExecution, t.Verifier} {
				if v != nil {
					s.phase[j] += *v
					s.phaseN[j]++
				}
			}
		}
	}
}

func addInt(sum *int64, n *int, v *int64) {
	if v != nil {
		*sum += *v
		*n++
	}
}

func (s *costSum) cost() Cost {
	c := Cost{Attempts: s.attempts, WithCost: s.withCost, FinalAttempts: s.final, FinalWithCost: s.finalWithCost, WithTokens: s.withTokens}
	if s.withCost > 0 {
		c.USDAllAttempts = roundedPtr(s.usdAll)
	}
	if s.finalWithCost > 0 {
		c.USDFinalAttempts = roundedPtr(s.usdFinal)
	}
	intPtr := func(v int64, n int) *int64 {
		if n == 0 {
			return nil
		}
		return &v
	}
	c.InputTokens, c.CacheTokens, c.OutputTokens = intPtr(s.in, s.inN), intPtr(s.cache, s.cacheN), intPtr(s.out, s.outN)
	pt := func(j int) PhaseTime {
		if s.phaseN[j] == 0 {
			return PhaseTime{}
		}
		return PhaseTime{Seconds: roundedPtr(s.phase[j]), Attempts: s.phaseN[j]}
	}
	c.Phases = Phases{pt(0), pt(1), pt(2), pt(3)}
	return c
}

func roundedPtr(v float64) *float64 {
	r := stats.Round12(v)
	return &r
}

// USD formats a dollar amount for a person: cents from a dollar up, four
// significant digits below it, so a round of cheap attempts does not read
// $0.00.
func USD(v float64) string {
	switch {
	case v == 0:
		return "$0"
	case v >= 1 || v <= -1:
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	}
	return "$" + strconv.FormatFloat(v, 'g', 4, 64)
}

// Text is the spend of every attempt with its coverage, for a person:
// "$4.12 known for 17 of 20 attempts", "unknown (none of 20 attempts
// reported a cost)", "$4.12 known for all 20 attempts".
func (c *Cost) Text() string {
	return coverageText(c.USDAllAttempts, c.WithCost, c.Attempts, "attempt")
}

// FinalText is the same for the deciding attempts.
func (c *Cost) FinalText() string {
	return coverageText(c.USDFinalAttempts, c.FinalWithCost, c.FinalAttempts, "deciding attempt")
}

func coverageText(usd *float64, known, of int, noun string) string {
	plural := noun + "s"
	switch {
	case of == 0:
		return "none (no " + noun + ")"
	case usd == nil:
		if of == 1 {
			return "unknown (the " + noun + " reported no cost)"
		}
		return fmt.Sprintf("unknown (none of %d %s reported a cost)", of, plural)
	case known == of:
		if of == 1 {
			return USD(*usd) + " known for the one " + noun
		}
		return fmt.Sprintf("%s known for all %d %s", USD(*usd), of, plural)
	}
	return fmt.Sprintf("%s known for %d of %d %s", USD(*usd), known, of, plural)
}

// HarborText says what Harbor's own job view would show as the job's cost
// for these attempts, and why it differs from USDAllAttempts: Harbor sums
// only the cost of each trial's last attempt (a retried attempt's cost is
// subtracted) and adds an attempt of unknown cost as nothing. "" when
// nothing is known.
func (c *Cost) HarborText() string {
	if c.USDFinalAttempts == nil && c.USDAllAttempts == nil {
		return ""
	}
	harbor := 0.0
	if c.USDFinalAttempts != nil {
		harbor = *c.USDFinalAttempts
	}
	var why []string
	if retried := c.Attempts - c.FinalAttempts; retried > 0 {
		left := 0.0
		if c.USDAllAttempts != nil {
			left = stats.Round12(*c.USDAllAttempts - harbor)
		}
		why = append(why, fmt.Sprintf("it leaves out %d retried %s (%s known)", retried, plural(retried, "attempt"), USD(left)))
	}
	if unknown := c.FinalAttempts - c.FinalWithCost; unknown > 0 {
		why = append(why, fmt.Sprintf("it adds %d %s of unknown cost as $0", unknown, plural(unknown, "attempt")))
	}
	if len(why) == 0 {
		return USD(harbor) + ", the same: no attempt was retried and every cost is known"
	}
	s := USD(harbor) + ": "
	for i, w := range why {
		if i > 0 {
			s += " and "
		}
		s += w
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
