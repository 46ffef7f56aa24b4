package report_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tuneplane/tpctl/internal/browsertest"
)

// TestBrowserRound10k opens the report of a generated 10,000-trial Harbor
// round (harborgen's mix, 20 exported bodies), written as tpctl report
// writes it (one streamed read), at 1,280 and 390 px: only the visible
// rows are drawn, a capped triage group says how many more it has, the
// search finds a task's trials, a trial opens with its packed history and
// body, the task table pages, task names are whole at 390 px and nothing
// scrolls sideways. Screenshots: round-10k-1280.png, round-10k-390.png
// (first screen), round-10k-390-tasks.png.
func TestBrowserRound10k(t *testing.T) {
	if testing.Short() {
		t.Skip("imports a 10,000-trial job")
	}
	file := writeSnapshotPage(t, harborRound(t, 10_000, 20))
	b := browsertest.New(t, 1280, 900)
	page := openReport(t, b, file, "")
	b.Viewport(t, 1280, 900)
	b.ViewScreenshot(t, "round-10k-1280.png")

	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('#vp-round .row').length`); n == 0 || n > 100 {
		t.Errorf("%d rows drawn for 10,000 trials; only the visible ones should be", n)
	}
	more := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('#triage-round .examples .more')].map(e => e.textContent)`)
	if !slices.Contains(more, "… and 1,997 more") {
		t.Errorf("the capped failure group says %q, want '… and 1,997 more' (2,000 failures, 3 listed)", more)
	}

	// Search: a task's ten trials, from the raw search text.
	browsertest.Eval[chromedp.Void](t, b, `(() => { const c = tpctlReport.explorers.round.controls.search; c.value = 'TASK-00012#'; c.dispatchEvent(new Event('input')); })()`)
	if s := browsertest.Eval[string](t, b, `document.querySelector('#sec-round .shown').textContent`); s != "Showing 10 of 10,000 planned trials." {
		t.Errorf("searching a task shows %q", s)
	}
	browsertest.Eval[chromedp.Void](t, b, `(() => { const c = tpctlReport.explorers.round.controls.search; c.value = ''; c.dispatchEvent(new Event('input')); })()`)

	// A trial far into the list opens with its history (inflated from its
	// block) and one with a body shows its messages.
	browsertest.Eval[chromedp.Void](t, b, `location.hash = '#round/' + encodeURIComponent('bench/task-00987#1')`)
	if err := b.Poll(`!document.getElementById('detail-round').hidden && document.querySelector('#detail-round h4 .mono').textContent === 'bench/task-00987#1'`); err != nil {
		t.Fatal(err)
	}
	if h := browsertest.Eval[string](t, b, `document.querySelector('#detail-round .hist').textContent`); !strings.Contains(h, "terminus-2 · coder-7b") || !strings.Contains(h, "$0.0098") {
		t.Errorf("the history of bench/task-00987#1 lacks its agent and cost: %s", h)
	}
	browsertest.Eval[chromedp.Void](t, b, `location.hash = '#round/' + encodeURIComponent('bench/task-00000#0')`)
	if err := b.Poll(`document.querySelectorAll('#detail-round .msg').length > 0`); err != nil {
		t.Errorf("the body of bench/task-00000#0 shows no message: %v", err)
	}
	browsertest.Eval[chromedp.Void](t, b, `history.replaceState(null, '', location.pathname); document.getElementById('detail-round').hidden = true; window.scrollTo(0, 0)`)

	// The task table shows a page of its 1,000 tasks.
	if w := browsertest.Eval[string](t, b, `document.querySelector('.tasks[data-side=round] .pager span').textContent`); w != "tasks 1–100 of 1,000 (… and 900 more on other pages)" {
		t.Errorf("the task table's pager says %q", w)
	}

	b.Viewport(t, 390, 844)
	browsertest.Eval[chromedp.Void](t, b, `window.scrollTo(0, 0)`)
	noSideScroll(t, b, "10,000-trial round at 390 px")
	b.ViewScreenshot(t, "round-10k-390.png")
	// Task names are whole: no cell clips its name, and the name column
	// shows at least 10 characters a line.
	type cell struct {
		Clipped int     `json:"clipped"`
		Width   float64 `json:"width"`
	}
	c := browsertest.Eval[cell](t, b, `(() => {
		const cells = [...document.querySelectorAll('.tasks[data-side=round] td.task')];
		cells[0].scrollIntoView({block: 'center'});
		return {clipped: cells.filter(td => td.scrollWidth > td.clientWidth + 1).length, width: cells[0].getBoundingClientRect().width};
	})()`)
	if c.Clipped != 0 || c.Width < 100 {
		t.Errorf("at 390 px %d task names are clipped and the name column is %.0f px wide", c.Clipped, c.Width)
	}
	b.ViewScreenshot(t, "round-10k-390-tasks.png")
	b.CheckQuiet(t, page)
}
