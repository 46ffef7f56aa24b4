package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// familyCell is one (tasks, shape) cell of the vs-best simulation.
type familyCell struct {
	tasks  int
	shape  shape
	trends int
	// flagged counts trends in which some round's interval against the
	// best excludes 0: with the family interval and with the per-pair one.
	flagged, flaggedPerPair int
}

// simulateFamily runs trends of k rounds of one true rate: the task
// success probabilities are drawn once per trend, and every round draws
// its trials from the same probabilities (nothing changes between
// checkpoints). As trend does, the best round is the highest success
// rate (the first of equals), and each other round is compared with it
// by the paired difference over the same trials.
func simulateFamily(seed uint64, g, repeats, k, trends int, sh shape) familyCell {
	r := rand.New(rand.NewPCG(seed, uint64(g)*1000+uint64(k)))
	cell := familyCell{tasks: g, shape: sh, trends: trends}
	probs := make([]float64, g)
	outcome := make([][]int, k) // round × trial
	for i := range outcome {
		outcome[i] = make([]int, g*repeats)
	}
	diff := make([]Cluster, g)
	m := PairwiseComparisons(k)
	for range trends {
		for i := range probs {
			probs[i] = betaDraw(r, sh.a, sh.b)
		}
		best, bestSum := -1, -1
		for j := range k {
			sum := 0
			for i := range g {
				for rep := range repeats {
					x := 0
					if r.Float64() < probs[i] {
						x = 1
					}
					outcome[j][i*repeats+rep] = x
					sum += x
				}
			}
			if sum > bestSum {
				best, bestSum = j, sum
			}
		}
		any, anyPer := false, false
		for j := range k {
			if j == best {
				continue
			}
			for i := range g {
				d := 0
				for rep := range repeats {
					d += outcome[j][i*repeats+rep] - outcome[best][i*repeats+rep]
				}
				diff[i] = Cluster{Trials: repeats, Sum: d}
			}
			delta, se, _, _ := ClusteredMean(diff)
			pse := PairedSE(se, g*repeats)
			ci, _ := FamilyCI95(delta, pse, g, m)
			per, _, _ := PairedCI95(delta, pse, g)
			if ci[0] > 0 || ci[1] < 0 {
				any = true
			}
			if per[0] > 0 || per[1] < 0 {
				anyPer = true
			}
		}
		if any {
			cell.flagged++
		}
		if anyPer {
			cell.flaggedPerPair++
		}
	}
	return cell
}

// TestFamilyCoverage is issue 34's family check: 5 checkpoints of one
// true rate, and at most 5% of trends may show any round "below the
// best" by its vs-best interval. 2,000 trends a cell (a true 5% would
// exceed 5.8% in fewer than 5% of runs; the seed is fixed anyway). The
// per-pair intervals it replaces are measured beside it, for
// docs/trend.md.
func TestFamilyCoverage(t *testing.T) {
	const k, trends, repeats = 5, 2000, 4
	worst := 0.0
	for _, g := range []int{5, 10, 30} {
		for i, sh := range tunedShapes {
			c := simulateFamily(tunedSeed+uint64(i), g, repeats, k, trends, sh)
			rate, per := float64(c.flagged)/float64(trends), float64(c.flaggedPerPair)/float64(trends)
			worst = max(worst, rate)
			where := fmt.Sprintf("G=%d × %d repeats, %s", g, repeats, sh.name)
			t.Logf("%s: %d rounds of one rate flag some round in %.1f%% of trends (family intervals), %.1f%% (per-pair intervals)", where, k, 100*rate, 100*per)
			if rate > 0.05 {
				t.Errorf("%s: the vs-best family intervals flag some round in %.3f of %d trends of one true rate, want ≤ 0.05", where, rate, trends)
			}
		}
	}
	t.Logf("worst cell: %.1f%%", 100*worst)
}
