package compare

import (
	"math"
	"math/big"
	"strconv"
)

// exactLimit is the largest number of discordant pairs for which the
// binomial tail is summed in exact integer arithmetic; above it the tail
// is summed in floating point from an accurate saddle-point density.
const exactLimit = 1024

// McNemar returns the exact two-sided McNemar p-value for b and c
// discordant pairs (b trials went one way, c the other): under the null
// hypothesis each discordant pair is a fair coin, so the p-value is
// min(1, 2·P(X ≤ min(b, c))) for X ~ Binomial(b+c, 1/2). With no
// discordant pairs, or b == c, it is 1. The result is rounded to 12
// significant digits so that the JSON output is the same on every platform;
// a true value below the smallest float64 (about 5e-324) reads 0. Negative
// counts are not counts: the result is then NaN.
func McNemar(b, c int) float64 {
	if b < 0 || c < 0 {
		return math.NaN()
	}
	if b == c {
		return 1
	}
	n, k := b+c, min(b, c)
	if n < 0 { // int overflow: counts beyond any real evaluation
		return math.NaN()
	}
	var p float64
	if n <= exactLimit {
		p = exactTwoSided(n, k)
	} else {
		p = approxTwoSided(n, k)
	}
	return round12(math.Min(1, math.Max(0, p)))
}

// exactTwoSided is 2·Σ_{i≤k} C(n,i) / 2^n computed exactly and rounded
// once to the nearest float64. It needs k < n/2 (then the value is < 1).
func exactTwoSided(n, k int) float64 {
	sum := new(big.Int)
	term := big.NewInt(1) // C(n, 0)
	for i := 0; i <= k; i++ {
		sum.Add(sum, term)
		// C(n, i+1) = C(n, i)·(n−i)/(i+1), always an exact division.
		term.Mul(term, big.NewInt(int64(n-i)))
		term.Quo(term, big.NewInt(int64(i+1)))
	}
	f := new(big.Float).SetPrec(uint(max(sum.BitLen(), 64))).SetInt(sum)
	f.SetMantExp(f, -(n - 1)) // ·2 / 2^n
	p, _ := f.Float64()
	return p
}

// approxTwoSided is the same tail for large n: the density at k comes from
// Loader's saddle-point expansion (accurate to about 1e-15 relative, where
// lgamma differences lose digits as n grows), and lower terms follow by the
// exact ratio P(i−1)/P(i) = i/(n−i+1), summed until they stop mattering.
func approxTwoSided(n, k int) float64 {
	if k == 0 {
		return math.Exp(float64(1-n) * math.Ln2)
	}
	logPk := logBinomHalf(n, k)
	sum, term := 1.0, 1.0
	for i := k; i > 0; i-- {
		term *= float64(i) / float64(n-i+1)
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return math.Exp(math.Ln2 + logPk + math.Log(sum))
}

// logBinomHalf is log P(X = x) for X ~ Binomial(n, 1/2), 0 < x < n
// (C. Loader, "Fast and accurate computation of binomial probabilities",
// 2000 — the method behind R's dbinom).
func logBinomHalf(n, x int) float64 {
	nf, xf, yf := float64(n), float64(x), float64(n-x)
	half := nf / 2
	lc := stirlerr(nf) - stirlerr(xf) - stirlerr(yf) - bd0(xf, half) - bd0(yf, half)
	return lc + 0.5*math.Log(nf/(2*math.Pi*xf*yf))
}

// stirlerr is log(n!) − log(√(2πn)·(n/e)^n) for n ≥ 1.
func stirlerr(n float64) float64 {
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	if n <= 15 {
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*math.Log(n) + n - 0.5*math.Log(2*math.Pi)
	}
	nn := n * n
	switch {
	case n > 500:
		return (s0 - s1/nn) / n
	case n > 80:
		return (s0 - (s1-s2/nn)/nn) / n
	case n > 35:
		return (s0 - (s1-(s2-s3/nn)/nn)/nn) / n
	default:
		return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
	}
}

// bd0 is x·log(x/np) + np − x, computed without cancellation when x is
// close to np.
func bd0(x, np float64) float64 {
	if math.Abs(x-np) < 0.1*(x+np) {
		v := (x - np) / (x + np)
		s := (x - np) * v
		ej := 2 * x * v
		v *= v
		for j := 1; j < 1000; j++ {
			ej *= v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*math.Log(x/np) + np - x
}

// round12 rounds to 12 significant digits (not decimal places: p-values
// can be tiny and must not collapse to 0).
func round12(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	if err != nil {
		return x
	}
	return r
}
