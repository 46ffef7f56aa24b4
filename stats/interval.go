package stats

import (
	"fmt"
	"math"
)

// MinTasks is the fewest tasks (clusters) for which tpctl gives a
// task-clustered interval, a paired interval or a minimum detectable
// effect. Below it even the small-sample corrected intervals cover far
// less often than they claim (docs/statistics.md, "Coverage"), so the
// numbers are null with a NullReason instead.
const MinTasks = 5

// ReasonTooFewTasks is the NullReason code for fewer than MinTasks tasks.
const ReasonTooFewTasks = "too_few_tasks"

// NullReason says why an interval (or a minimum detectable effect) is
// null: a number that would claim more than the data hold is left out,
// and this says so.
type NullReason struct {
	// Code is machine-readable: ReasonTooFewTasks.
	Code string `json:"code"`
	// Tasks is G, the number of tasks the number would rest on, and
	// MinTasks the fewest tpctl gives it for.
	Tasks    int `json:"tasks"`
	MinTasks int `json:"min_tasks"`
	// Message says the same in words.
	Message string `json:"message"`
}

// TooFewTasks is the reason for g < MinTasks tasks; nil when g is enough.
func TooFewTasks(g int) *NullReason {
	if g >= MinTasks {
		return nil
	}
	task := "tasks"
	if g == 1 {
		task = "task"
	}
	return &NullReason{
		Code: ReasonTooFewTasks, Tasks: g, MinTasks: MinTasks,
		Message: fmt.Sprintf("%d %s; a task-clustered interval needs at least %d (more repeats of the same tasks do not help)", g, task, MinTasks),
	}
}

// T975 and T80 are the 0.975 and 0.80 quantiles of Student's t with
// G−1 degrees of freedom, the critical values of the clustered
// intervals and of the minimum detectable effect for G tasks.
func T975(g int) float64 { return TQuantile(0.975, g-1) }

// T80 is the 0.80 quantile of t with g−1 degrees of freedom.
func T80(g int) float64 { return TQuantile(0.80, g-1) }

// WilsonZ is the Wilson score interval of a proportion p observed over n
// trials (n real and positive: an effective sample size) with critical
// value z. It stays inside [0, 1] and has positive width for every p,
// 0 and 1 included. Wilson(k, n) is WilsonZ(k/n, n, Z95), rounded.
func WilsonZ(p, n, z float64) (lo, hi float64) {
	z2 := float64(z * z)
	denom := 1 + z2/n
	centre := (p + z2/(2*n)) / denom
	half := z * math.Sqrt(p*(1-p)/n+z2/(4*n*n)) / denom
	return math.Max(0, centre-half), math.Min(1, centre+half)
}

// EffectiveN is the number of independent trials whose binomial standard
// error √(p(1−p)/n) equals the clustered se, at most N: min(N,
// p(1−p)/se²). It is N when se is 0 (every task has the same share) and
// when p is 0 or 1.
func EffectiveN(p, se float64, n int) float64 {
	nf := float64(n)
	v := p * (1 - p)
	if se <= 0 || v <= 0 {
		return nf
	}
	return math.Min(nf, v/float64(se*se))
}

// ClusteredRateCI95 is the 95% interval of a success rate p over n scored
// trials in g tasks whose CR1 standard error is se: the Wilson interval
// on the effective sample size EffectiveN(p, se, n) with the t quantile
// of g−1 degrees of freedom in place of z. Rounded with Round12; inside
// [0, 1], never of zero width. Nil with a NullReason below MinTasks.
func ClusteredRateCI95(p, se float64, n, g int) (ci *[2]float64, nEff float64, null *NullReason) {
	if r := TooFewTasks(g); r != nil {
		return nil, 0, r
	}
	nEff = EffectiveN(p, se, n)
	lo, hi := WilsonZ(p, nEff, T975(g))
	return &[2]float64{Round12(lo), Round12(hi)}, Round12(nEff), nil
}

// PairedSE is the standard error the paired interval and the minimum
// detectable effect use: the CR1 se of the mean difference over n matched
// trials, but at least 1/(n+2), the Agresti–Min standard error of a
// paired difference with no discordant trial (half a discordant trial
// added in each direction). The CR1 se is 0 when every task has the same
// mean difference (most often: no trial changed), which would give a
// zero-width interval; the floor is about what n unchanged trials can
// rule out. It binds only near that case: with any spread between tasks
// the CR1 se is several times larger.
func PairedSE(se float64, n int) float64 {
	return math.Max(se, 1/float64(n+2))
}

// PairedCI95 is the 95% interval delta ± t(g−1)·se of a mean paired
// difference over g tasks, clipped to [−1, 1] (se from PairedSE, so
// positive), with the minimum detectable effect (t₀.₉₇₅ + t₀.₈₀)·se: the
// smallest true difference a two-sided 5% test of this size detects with
// 80% power. Rounded with Round12. Both nil with a NullReason below
// MinTasks.
func PairedCI95(delta, se float64, g int) (ci *[2]float64, mde *float64, null *NullReason) {
	if r := TooFewTasks(g); r != nil {
		return nil, nil, r
	}
	t975, t80 := T975(g), T80(g)
	h := float64(t975 * se)
	lo, hi := math.Max(-1, delta-h), math.Min(1, delta+h)
	m := Round12(float64((t975 + t80) * se))
	return &[2]float64{Round12(lo), Round12(hi)}, &m, nil
}

// PairwiseComparisons is k(k−1)/2, the number of pairs among k rounds:
// the family FamilyCI95 corrects for when the pair compared was chosen
// on the same data (the best round against each other one).
func PairwiseComparisons(k int) int {
	if k < 2 {
		return 0
	}
	return k * (k - 1) / 2
}

// FamilyT is the critical value of a family of m two-sided 95% paired
// intervals over g tasks by Bonferroni: the 1 − 0.025/m quantile of t
// with g−1 degrees of freedom (T975(g) when m ≤ 1).
func FamilyT(g, m int) float64 {
	if m <= 1 {
		return T975(g)
	}
	return TQuantile(1-0.025/float64(m), g-1)
}

// FamilyCI95 is the paired interval delta ± FamilyT(g, m)·se clipped to
// [−1, 1] (se from PairedSE), which holds simultaneously with the other
// m−1 intervals of its family at 95%: with m = PairwiseComparisons(k), for
// every pair of k rounds, and so for any pairs chosen after looking at
// the data — the best round against each other one (docs/trend.md,
// "Intervals against the best"). Rounded with Round12; nil with a
// NullReason below MinTasks.
func FamilyCI95(delta, se float64, g, m int) (ci *[2]float64, null *NullReason) {
	if r := TooFewTasks(g); r != nil {
		return nil, r
	}
	h := float64(FamilyT(g, m) * se)
	lo, hi := math.Max(-1, delta-h), math.Min(1, delta+h)
	return &[2]float64{Round12(lo), Round12(hi)}, nil
}
