package report_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tuneplane/tpctl/internal/browsertest"
	"github.com/tuneplane/tpctl/report"
)

// TestBrowserCostAndKeys drives issue 33's and 34's items on the README's
// round (testdata/example: 8 planned trials, 6 attempts with a cost, 2
// missing): the round's cost with its coverage and the worst and best
// case beside the rate, the task table's cost and time columns, the
// trial list sorted by cost and by duration (unknown last), the skip link
// to the trial list, and the triage block as one Tab stop.
func TestBrowserCostAndKeys(t *testing.T) {
	b := browsertest.New(t, 1280, 900)
	r, _ := exampleRound(t, "import-plan.json")
	file := writePage(t, "round.html", func(w *bytes.Buffer) error { return report.WriteRound(w, r) })
	page := openReport(t, b, file, "")
	b.Viewport(t, 1280, 900)

	headline := browsertest.Eval[string](t, b, `document.querySelector('#sec-round .headline').textContent`)
	for _, want := range []string{
		"success rate 75.0% (worst–best case 37.5%–87.5%: if the 4 of 8 planned trials not scored had all failed / all succeeded)",
		"cost $0.06 known for all 6 attempts",
	} {
		if !strings.Contains(headline, want) {
			t.Errorf("the headline lacks %q:\n%s", want, headline)
		}
	}
	cost := browsertest.Eval[string](t, b, `document.querySelector('#sec-round table.cost').textContent`)
	for _, want := range []string{"$0.06 known for all 6 attempts", "deciding attempts$0.06 known for all 6 deciding attempts", "agent execution"} {
		if !strings.Contains(cost, want) {
			t.Errorf("the cost table lacks %q:\n%s", want, cost)
		}
	}

	// The task table: cost (every attempt's known cost) and time.
	type taskRow struct{ Task, Cost, Time string }
	rows := browsertest.Eval[[]taskRow](t, b, `[...document.querySelectorAll('.tasks[data-side=round] tbody tr')].map(tr => {
		const th = [...tr.closest('table').querySelectorAll('thead th')].map(h => h.textContent.replace(/ [▲▼]$/, ''));
		const td = [...tr.children].map(c => c.textContent);
		return {task: td[0], cost: td[th.indexOf('cost')], time: td[th.indexOf('time')]};
	})`)
	want := []taskRow{{"harbor/hello-world", "$0.0294", "3.3 min"}, {"harbor/hello-alpine", "$0.0306", "5.6 min"}}
	if !slices.Equal(rows, want) {
		t.Errorf("task rows %+v, want %+v", rows, want)
	}

	// The trial list sorts by cost and by duration, highest first, a trial
	// with nothing known (missing) last.
	ids := func(sort string) []string {
		browsertest.Eval[chromedp.Void](t, b, `(() => { const c = tpctlReport.explorers.round.controls.sort; c.value = '`+sort+`'; c.dispatchEvent(new Event('change')); })()`)
		return browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('#vp-round .row .tid')].map(e => e.textContent)`)
	}
	if got := ids("cost"); !slices.Equal(got, []string{"harbor/hello-alpine#2", "harbor/hello-world#2", "harbor/hello-alpine#1", "harbor/hello-world#1",
		"harbor/hello-alpine#0", "harbor/hello-world#0", "harbor/hello-alpine#3", "harbor/hello-world#3"}) {
		t.Errorf("sorted by cost: %q", got)
	}
	if got := ids("duration"); !slices.Equal(got[:2], []string{"harbor/hello-alpine#2", "harbor/hello-world#1"}) || !strings.HasSuffix(got[7], "#3") {
		t.Errorf("sorted by duration: %q", got)
	}
	if got := ids("tokens"); len(got) != 8 || !strings.HasSuffix(got[7], "#3") {
		t.Errorf("sorted by tokens: %q", got)
	}
	ids("canonical")

	// The skip link puts the focus on the trial list.
	browsertest.Eval[chromedp.Void](t, b, `document.querySelector('a.skip[data-skip=round]').click()`)
	if id := browsertest.Eval[string](t, b, `document.activeElement.id`); id != "vp-round" {
		t.Errorf("the skip link focused %q, want the trial list vp-round", id)
	}

	// The triage block is one Tab stop: Tab leaves it from its first link,
	// ↓ moves inside it, and Shift+Tab comes back to the link last used.
	active := func() string {
		return browsertest.Eval[string](t, b, `(() => { const a = document.activeElement; return (a.closest('#triage-round') ? 'triage:' : '') + a.textContent.trim().slice(0, 40); })()`)
	}
	browsertest.Eval[chromedp.Void](t, b, `document.querySelector('#triage-round a').focus()`)
	first := active()
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatal(err)
	}
	if a := active(); strings.HasPrefix(a, "triage:") {
		t.Errorf("Tab from the triage block's first link went to %q, still inside it", a)
	}
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))); err != nil {
		t.Fatal(err)
	}
	if a := active(); a != first {
		t.Errorf("Shift+Tab came back to %q, want %q", a, first)
	}
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.ArrowDown)); err != nil {
		t.Fatal(err)
	}
	second := active()
	if second == first || !strings.HasPrefix(second, "triage:") {
		t.Errorf("↓ in the triage block moved to %q", second)
	}
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))); err != nil {
		t.Fatal(err)
	}
	if a := active(); a != second {
		t.Errorf("Tab and Shift+Tab came back to %q, want the link last used %q", a, second)
	}
	if n := browsertest.Eval[int](t, b, `[...document.querySelectorAll('#triage-round a')].filter(a => a.tabIndex === 0).length`); n != 1 {
		t.Errorf("%d triage links are Tab stops, want 1", n)
	}
	b.ViewScreenshot(t, "cost-first-screen.png")
	b.CheckQuiet(t, page)
}
