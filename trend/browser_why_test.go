package trend_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/internal/browsertest"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/trend"
)

// trendPage builds n rounds (round degraded, when ≥ 0, has a trial not
// scored and loses successes) whose attempts report a cost, and writes
// their trend page.
func trendPage(t *testing.T, n, degraded int, ref func(i int) string) string {
	t.Helper()
	var dirs []string
	for i := range n {
		tr := trials(3 + i%8)
		if i == degraded {
			tr = trials(1)
			tr["task-05#1"] = "infra_error"
		}
		cost := 0.25 * float64(i+1)
		dirs = append(dirs, build(t, fmt.Sprint("r", i), comparetest.Spec{Checkpoint: ref(i), Trials: tr,
			Explain: func(task string, repeat int, a *snapshot.AttemptOutcome) {
				c := cost / 12
				a.Usage = &snapshot.Usage{CostUSD: &c}
			}}))
	}
	res, err := trend.Run(context.Background(), dirs, trend.OrderGiven)
	if err != nil {
		t.Fatal(err)
	}
	page, err := trend.HTML(res)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trend.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTrendPageLayout opens trend pages in headless Chromium at 390 and
// 1,280 px (issue 33, item 4): the page never scrolls sideways, no table
// is wider than its box at 1,280 px, every x-axis label is whole (a
// checkpoint that does not fit its slot is left to the rounds table, never
// cut), differences read in percentage points as compare says them, each
// round's cost and cost per success is written, and a pair the page calls
// not comparable has no "regressed" line.
func TestTrendPageLayout(t *testing.T) {
	long := func(i int) string {
		return fmt.Sprintf("hf://acme/a-rather-long-model-name-for-a-checkpoint@%040x", i+1)
	}
	short := func(i int) string { return fmt.Sprintf("hf://acme/coder-7b@step-%d", (i+1)*1000) }
	for _, tc := range []struct {
		name     string
		n        int
		ref      func(int) string
		refsShow bool
	}{
		{"five-short", 5, short, true},
		{"eight-long", 8, long, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := trendPage(t, tc.n, 2, tc.ref)
			b := browsertest.New(t, 1280, 900)
			u := b.Open(t, path)
			for _, w := range []int64{390, 1280} {
				b.Viewport(t, w, 900)
				if d := browsertest.Eval[float64](t, b, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); d > 0 {
					t.Errorf("%d px: the page scrolls sideways by %v px", w, d)
				}
				if w == 1280 {
					over := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll("table")].filter(e => e.getBoundingClientRect().width > e.parentElement.clientWidth + 0.5).map(e => e.closest("section").id)`)
					if len(over) > 0 {
						cells := browsertest.Eval[string](t, b, `[...document.querySelectorAll("#rounds tr:nth-child(1) > *")].map(e => e.tagName + ":" + Math.round(e.getBoundingClientRect().width)).join(" ") + " table:" + document.querySelector("#rounds table").getBoundingClientRect().width + " box:" + document.querySelector("#rounds .scroll").clientWidth`)
						t.Errorf("1280 px: tables wider than their box in %v (%s)", over, cells)
					}
				}
				b.Screenshot(t, fmt.Sprintf("trend-%s-%d.png", tc.name, w))
			}
			axis := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll("svg.chart text.axis")].map(e => e.textContent)`)
			refs := 0
			for _, a := range axis {
				if strings.Contains(a, "…") {
					t.Errorf("axis label %q is cut", a)
				}
				if strings.Contains(a, "@") {
					refs++
				}
			}
			if want := map[bool]int{true: tc.n, false: 0}[tc.refsShow]; refs != want {
				t.Errorf("%d checkpoint labels on the axis, want %d (%q)", refs, want, axis)
			}
			// Labels on one line never overlap.
			overlap := browsertest.Eval[bool](t, b, `(() => { const r = [...document.querySelectorAll("svg.chart text.axis.ref")].map(e => e.getBoundingClientRect()); return r.some((a, i) => i > 0 && a.left < r[i-1].right); })()`)
			if overlap {
				t.Error("checkpoint labels on the axis overlap")
			}
			pairs := browsertest.Eval[string](t, b, `document.querySelector("#pairs").innerText`)
			if !strings.Contains(pairs, " pp") || strings.Contains(pairs, "%,") {
				t.Errorf("pairs not in percentage points:\n%s", pairs)
			}
			if !strings.Contains(pairs, "2 → 3") || !strings.Contains(pairs, "not comparable: round 3") {
				t.Errorf("pairs lack the non-comparable 2 → 3:\n%s", pairs)
			}
			reg := browsertest.Eval[string](t, b, `document.querySelector("#regressions").innerText`)
			if strings.Contains(reg, "2 → 3") {
				t.Errorf("a not-comparable pair has a regressed line:\n%s", reg)
			}
			rounds := browsertest.Eval[string](t, b, `document.querySelector("#rounds").innerText`)
			for _, want := range []string{"cost", "per success", "$0.25", "$0.75"} {
				if !strings.Contains(rounds, want) {
					t.Errorf("rounds table lacks %q:\n%s", want, rounds)
				}
			}
			b.CheckQuiet(t, u)
		})
	}
}
