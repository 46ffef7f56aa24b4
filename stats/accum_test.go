package stats

import (
	"math/rand/v2"
	"testing"
)

// TestClusterSumsMatches holds ClusterSums and TaskCounts to the
// functions they stand in for, bit for bit, on random clusters.
func TestClusterSumsMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := r.IntN(40)
		var cs []Cluster
		var acc ClusterSums
		var tasks []Task
		tc := TaskCounts{}
		for range n {
			trials := r.IntN(12)
			c := Cluster{Trials: trials, Sum: r.IntN(trials + 1)}
			if round%50 == 7 {
				c.Sum = -c.Sum // outside the fast sums
			}
			cs = append(cs, c)
			acc.Add(c)
			if trials > 0 {
				tk := Task{N: trials, C: max(c.Sum, 0)}
				tasks = append(tasks, tk)
				tc.Add(tk)
			}
		}
		m1, se1, ok1, seOK1 := ClusteredMean(cs)
		m2, se2, ok2, seOK2 := acc.Result()
		if m1 != m2 || se1 != se2 || ok1 != ok2 || seOK1 != seOK2 {
			t.Fatalf("round %d: ClusteredMean %v %v %v %v, ClusterSums %v %v %v %v", round, m1, se1, ok1, seOK1, m2, se2, ok2, seOK2)
		}
		for k := 0; k <= 12; k++ {
			a1, h1, o1 := PassK(tasks, k)
			a2, h2, o2 := tc.PassK(k)
			if a1 != a2 || h1 != h2 || o1 != o2 {
				t.Fatalf("round %d k %d: PassK %v %v %v, TaskCounts %v %v %v", round, k, a1, h1, o1, a2, h2, o2)
			}
		}
	}
}
