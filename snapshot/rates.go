package snapshot

import "math"

// z95 is the two-sided 95% standard normal quantile.
const z95 = 1.959963984540054

// Rate is k/n with its Wilson score interval. Both are nil when n is 0: a
// rate over nothing is unknown, never 0%.
func Rate(k, n int) (rate *float64, ci *[2]float64) {
	if n <= 0 || k < 0 || k > n {
		return nil, nil
	}
	p := float64(k) / float64(n)
	lo, hi := Wilson(k, n)
	return &p, &[2]float64{lo, hi}
}

// Wilson returns the Wilson score 95% interval for k successes in n
// trials. Unlike the normal approximation it stays inside [0, 1] and is
// honest at 0 and n.
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return math.NaN(), math.NaN()
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z95 * z95
	denom := 1 + z2/nf
	centre := (p + z2/(2*nf)) / denom
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / denom
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	// Round to 12 significant places so the JSON is stable across
	// platforms whose libm differs in the last ulp.
	return round12(lo), round12(hi)
}

func round12(x float64) float64 {
	return math.Round(x*1e12) / 1e12
}
