package compare

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/stats"
)

// TestPaired50x4MatchesStatsmodels compares the 50-task × 4-repeat pair
// that stats/testdata/statsmodels.json was recorded from.
func TestPaired50x4MatchesStatsmodels(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "stats", "testdata", "statsmodels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Results map[string]struct {
			Nobs, Groups int
			Mean, SE     float64
			CI95T        [2]float64 `json:"ci95_t"`
			MDE80T       float64    `json:"mde80_t"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	want := ref.Results["grid50x4_paired"]
	base, cand := comparetest.Grid(50, 4, 16, 0.1)
	r, err := Rounds(context.Background(), build(t, "b", comparetest.Spec{Trials: base}), build(t, "c", comparetest.Spec{Trials: cand}))
	if err != nil {
		t.Fatal(err)
	}
	p := r.Paired
	if p == nil || p.SEClustered == nil {
		t.Fatalf("paired = %+v", p)
	}
	const tol = 1e-9
	// The t(G−1) interval and MDE statsmodels gives with use_t=True.
	if p.Trials != want.Nobs || p.Tasks != want.Groups || math.Abs(p.Delta-want.Mean) > tol ||
		math.Abs(*p.SEClustered-want.SE) > tol || math.Abs(p.CI95[0]-want.CI95T[0]) > tol || math.Abs(p.CI95[1]-want.CI95T[1]) > tol ||
		math.Abs(*p.MDE80-want.MDE80T) > tol || p.DF == nil || *p.DF != 49 || p.NullReason != nil {
		t.Errorf("paired %+v se %v ci %v mde %v; statsmodels %+v", *p, *p.SEClustered, *p.CI95, *p.MDE80, want)
	}
	// Over the same matched, clean trials the paired delta is the
	// difference of the success rates.
	if math.Abs(p.Delta-*r.Delta) > 1e-12 {
		t.Errorf("paired delta %v, rate delta %v", p.Delta, *r.Delta)
	}
}

func TestPairedEdges(t *testing.T) {
	se := func(v float64) *float64 { return &v }
	df := func(v int) *int { return &v }
	// five tasks a–e of two trials each, every trial the same in both rounds
	// but for the changes named.
	five := func(changes ...string) (b, c map[string]string) {
		b, c = map[string]string{}, map[string]string{}
		for _, task := range []string{"a", "b", "c", "d", "e"} {
			b[task+"#0"], b[task+"#1"] = "success", "failure"
			c[task+"#0"], c[task+"#1"] = "success", "failure"
		}
		for _, id := range changes {
			c[id] = map[string]string{"success": "failure", "failure": "success"}[c[id]]
		}
		return b, c
	}
	noneB, noneC := five()
	allB, allC := five()
	for id, s := range allB {
		if s == "success" {
			allB[id] = "failure"
		}
		allC[id] = "success"
	}
	// Differences +1 on both trials of a (and 0 elsewhere): N = 10, delta
	// 0.2, residual sums 2 − 0.4 and −0.4 four times: se² = 5/4 · (1.6² +
	// 4·0.4²)/100 = 0.04, se = 0.2.
	oneB, oneC := five("a#1")
	oneB["a#0"], oneC["a#0"] = "failure", "success"
	t975, t80 := stats.TQuantile(0.975, 4), stats.TQuantile(0.8, 4)
	tests := []struct {
		name       string
		base, cand map[string]string
		want       *Paired
	}{
		{"not comparable", trials("a#0", "success", "b#0", "unscored"), trials("a#0", "success", "b#0", "success"), nil},
		{"one task: no se", trials("a#0", "success", "a#1", "failure"), trials("a#0", "success", "a#1", "success"),
			&Paired{Trials: 2, Tasks: 1, Delta: 0.5, NullReason: stats.TooFewTasks(1)}},
		{"two tasks: se but no interval", trials("a#0", "failure", "a#1", "failure", "b#0", "success", "b#1", "failure"),
			trials("a#0", "success", "a#1", "success", "b#0", "success", "b#1", "failure"),
			&Paired{Trials: 4, Tasks: 2, Delta: 0.5, SEClustered: se(0.5), NullReason: stats.TooFewTasks(2)}},
		// se 0: the floor 1/(N+2) = 1/12 keeps the interval from zero width.
		{"nothing changes: floor", noneB, noneC,
			&Paired{Trials: 10, Tasks: 5, Delta: 0, SEClustered: se(0), CI95: &[2]float64{stats.Round12(-t975 / 12), stats.Round12(t975 / 12)},
				MDE80: se(stats.Round12((t975 + t80) / 12)), DF: df(4)}},
		// Everything goes from failure to success: delta 1, se 0, the
		// interval clipped at 1.
		{"everything changes: clipped", allB, allC,
			&Paired{Trials: 10, Tasks: 5, Delta: 1, SEClustered: se(0), CI95: &[2]float64{stats.Round12(1 - t975/12), 1},
				MDE80: se(stats.Round12((t975 + t80) / 12)), DF: df(4)}},
		{"hand computed", oneB, oneC,
			&Paired{Trials: 10, Tasks: 5, Delta: 0.2, SEClustered: se(0.2), CI95: &[2]float64{stats.Round12(0.2 - t975*0.2), stats.Round12(0.2 + t975*0.2)},
				MDE80: se(stats.Round12((t975 + t80) * 0.2)), DF: df(4)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Rounds(context.Background(), build(t, "b", comparetest.Spec{Trials: tt.base}), build(t, "c", comparetest.Spec{Trials: tt.cand}))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(r.Paired)
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("paired = %s; want %s", got, want)
			}
		})
	}
}

// TestPairedFormatV1: a tpctl-snapshot/1 round (no statistics member) is
// still compared, paired difference included.
func TestPairedFormatV1(t *testing.T) {
	base, cand := comparetest.Grid(5, 2, 3, 0.2)
	bd := build(t, "b", comparetest.Spec{Trials: base})
	if err := comparetest.ToFormatV1(bd); err != nil {
		t.Fatal(err)
	}
	r, err := Rounds(context.Background(), bd, build(t, "c", comparetest.Spec{Trials: cand}))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Comparable || r.Paired == nil || r.Paired.Trials != 10 {
		t.Errorf("comparable %v paired %+v reasons %v", r.Comparable, r.Paired, r.Reasons)
	}
}

// TestPairedFormatV2: a round that tpctl wrote as tpctl-snapshot/2
// (snapshot/testdata/v2) compares with a tpctl-snapshot/3 one, with the
// paired difference by the current rules.
func TestPairedFormatV2(t *testing.T) {
	_, cand := comparetest.Grid(6, 3, 1, 0)
	r, err := Rounds(context.Background(), filepath.Join("..", "snapshot", "testdata", "v2", "grid-6x3"), build(t, "c", comparetest.Spec{Trials: cand}))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Comparable || r.Paired == nil || r.Paired.Trials != 18 || r.Paired.Tasks != 6 || r.Paired.CI95 == nil || r.Paired.DF == nil || *r.Paired.DF != 5 {
		t.Fatalf("comparable %v paired %+v reasons %v", r.Comparable, r.Paired, r.Reasons)
	}
}
