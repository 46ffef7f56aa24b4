package report_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/internal/browsertest"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/report/reporttest"
	"github.com/tuneplane/tpctl/snapshot"
)

// These tests open generated reports in a real headless Chromium. They
// skip only when no Chromium is installed and TPCTL_REQUIRE_BROWSER is
// unset; .ci/run installs Debian's chromium and sets it, so CI never skips.
//
// Screenshots go to the test's artifact folder (go test -artifacts keeps
// it; TPCTL_SCREENSHOT_DIR overrides it). TPCTL_UPDATE_SCREENSHOT=1
// rewrites docs/report.png, the README's picture (TestBrowserWhy, from the
// README walk-through's own round).

// reportReady is true once the report's script has drawn the page.
const reportReady = `window.tpctlReport && window.tpctlReport.ready`

// openReport loads a report at a fragment and waits until its script
// says it is interactive.
func openReport(t testing.TB, b *browsertest.Browser, file, hash string) string {
	t.Helper()
	return b.OpenAt(t, file, hash, reportReady)
}

func writePage(t testing.TB, name string, write func(w *bytes.Buffer) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// allRendered scrolls the virtual list from top to bottom and returns the
// trial IDs of every row it drew.
const allRendered = `(async (side) => {
  const vp = document.getElementById('vp-' + side);
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const seen = [];
  vp.scrollTop = 0;
  for (let guard = 0; guard < 100000; guard++) {
    await frame(); await frame(); await frame();
    vp.querySelectorAll('.row .tid').forEach(e => { if (!seen.includes(e.textContent)) seen.push(e.textContent); });
    if (vp.scrollTop + vp.clientHeight >= vp.scrollHeight - 1) break;
    vp.scrollTop += vp.clientHeight;
  }
  return seen;
})`

func TestBrowserRound(t *testing.T) {
	b := browsertest.New(t, 1200, 900)
	r := reporttest.SmallRound(t, t.TempDir())
	file := writePage(t, "round.html", func(w *bytes.Buffer) error { return report.WriteRound(w, r) })
	page := openReport(t, b, file, "")

	// Every planned trial is drawn through the virtual list, missing ones
	// included, and nothing else.
	var want []string
	nFailure := 0
	for _, tr := range r.Trials {
		want = append(want, tr.ID)
		if tr.Status == snapshot.StatusFailure {
			nFailure++
		}
	}
	got := browsertest.Eval[[]string](t, b, allRendered+`('round')`)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("rows drawn while scrolling:\n%q\nwant every planned trial:\n%q", got, want)
	}

	// A status filter changes the rows: only failures remain.
	type rows struct {
		Shown    string   `json:"shown"`
		Statuses []string `json:"statuses"`
		IDs      []string `json:"ids"`
	}
	const read = `(() => ({shown: document.querySelector('#sec-round .shown').textContent,
		statuses: [...document.querySelectorAll('#vp-round .row .status')].map(e => e.textContent.slice(1)),
		ids: [...document.querySelectorAll('#vp-round .row .tid')].map(e => e.textContent)}))()`
	set := func(control, value, event string) rows {
		js := fmt.Sprintf(`(() => { const c = tpctlReport.explorers.round.controls[%q]; c.value = %q; c.dispatchEvent(new Event(%q)); })()`, control, value, event)
		browsertest.Eval[chromedp.Void](t, b, js)
		return browsertest.Eval[rows](t, b, read)
	}
	f := set("status", "failure", "change")
	if wantShown := fmt.Sprintf("Showing %d of %d planned trials.", nFailure, len(r.Trials)); f.Shown != wantShown {
		t.Errorf("after filtering by failure: %q, want %q", f.Shown, wantShown)
	}
	if len(f.Statuses) != nFailure {
		t.Errorf("%d rows drawn after filtering, want %d", len(f.Statuses), nFailure)
	}
	for _, s := range f.Statuses {
		if s != snapshot.StatusFailure {
			t.Errorf("a %q row is shown under the failure filter", s)
		}
	}
	set("status", "", "change")
	missing := set("status", "missing", "change")
	if len(missing.IDs) == 0 {
		t.Error("the missing filter shows no rows; the fixture has missing trials")
	}
	set("status", "", "change")

	// Search finds the planted markup as text, in a task name and in
	// message text.
	s := set("search", `<img src=x onerror="window.__xss=1"`, "input")
	if !slices.Equal(s.IDs, []string{reporttest.XSSTask + "#0"}) {
		t.Errorf("searching for <img shows %q, want the planted task as text", s.IDs)
	}
	if s := set("search", `onerror="window.__xss=3"`, "input"); !slices.Equal(s.IDs, []string{reporttest.XSSTask + "#0", "harbor/task-00#0", "harbor/task-00#3"}) {
		t.Errorf("searching message text shows %q, want the trials whose bodies hold it", s.IDs)
	}
	if s := set("search", reporttest.XSSClose+"#", "input"); !slices.Equal(s.IDs, []string{reporttest.XSSClose + "#0"}) {
		t.Errorf("searching for the planted task shows %q, want it as text", s.IDs)
	}
	set("search", "", "input")

	// Keyboard: focus the list, move down twice, Enter opens that trial.
	if err := chromedp.Do(b.Ctx, chromedp.Focus(chromedp.ID("vp-round")), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	if err := b.Poll(`!document.getElementById('detail-round').hidden`); err != nil {
		t.Fatal(err)
	}
	if h, third := browsertest.Eval[string](t, b, `decodeURIComponent(location.hash)`), "#round/"+r.Trials[2].ID; h != third {
		t.Errorf("after ↓ ↓ Enter the page shows %q, want %q", h, third)
	}

	// The trajectory viewer: a page of messages, tool calls paired with
	// their results, the truncation banner, and planted markup as text.
	browsertest.Eval[chromedp.Void](t, b, `location.hash = '#round/' + encodeURIComponent('harbor/task-00#0')`)
	if err := b.Poll(`document.querySelectorAll('#detail-round .msg').length > 0`); err != nil {
		t.Fatal(err)
	}
	type viewer struct {
		Messages int      `json:"messages"`
		First    string   `json:"first"`
		Banners  []string `json:"banners"`
		Planted  bool     `json:"planted"`
		Pairs    []string `json:"pairs"`
	}
	v := browsertest.Eval[viewer](t, b, `(() => {
		const d = document.getElementById('detail-round');
		return {messages: d.querySelectorAll('.msg').length,
			first: d.querySelector('.msg pre').textContent,
			banners: [...d.querySelectorAll('.banner')].map(e => e.textContent),
			planted: [...d.querySelectorAll('.msg pre')].some(e => e.textContent.includes('<img src=x onerror="window.__xss=3">')),
			pairs: [...d.querySelectorAll('.msg .pair')].map(e => e.textContent)};
	})()`)
	if v.Messages != 50 || v.First != "You are a coding agent." {
		t.Errorf("viewer shows %d messages starting %q, want the first page of 50", v.Messages, v.First)
	}
	if !slices.ContainsFunc(v.Banners, func(s string) bool {
		return s == "Truncated: 121 of 300 messages kept; the rest were counted, not stored."
	}) {
		t.Errorf("no truncation banner with kept/total among %q", v.Banners)
	}
	if !v.Planted {
		t.Error("the planted message is not shown as text")
	}
	if !slices.Equal(v.Pairs, []string{"result #4", "answers call #3", "result #6", "answers call #5"}) {
		t.Errorf("tool-call pairing links are %q", v.Pairs)
	}
	browsertest.Eval[chromedp.Void](t, b, `document.querySelector('#detail-round .msg .pair').click()`)
	if id := browsertest.Eval[string](t, b, `document.activeElement.id`); id != "msg-3" {
		t.Errorf("following the call's result link focuses %q, want msg-3", id)
	}
	b.ViewScreenshot(t, "round-trajectory.png")

	// A message permalink opens its body on the right page, focused.
	browsertest.Eval[chromedp.Void](t, b, `location.hash = '#round/' + encodeURIComponent('harbor/task-00#0') + '/0/75'`)
	if err := b.Poll(`document.activeElement && document.activeElement.id === 'msg-74'`); err != nil {
		t.Errorf("the permalink of message 75 did not focus it: %v", err)
	}
	if where := browsertest.Eval[string](t, b, `document.querySelector('#detail-round .pager span').textContent`); !strings.HasSuffix(where, "page 2 of 3") {
		t.Errorf("message 75 is shown on %q, want page 2 of 3", where)
	}

	// A trial without a body says so plainly.
	browsertest.Eval[chromedp.Void](t, b, `location.hash = '#round/' + encodeURIComponent('harbor/task-00#1')`)
	if err := b.Poll(`document.getElementById('detail-round').textContent.includes('No body exported for this trial. A missing body is not a failed trial')`); err != nil {
		t.Errorf("no 'no body' statement: %v", err)
	}

	// Nothing planted ran or became markup.
	if xss := browsertest.Eval[string](t, b, `String(window.__xss)`); xss != "undefined" {
		t.Errorf("planted script ran: window.__xss = %s", xss)
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('img, b').length`); n != 0 {
		t.Errorf("%d planted elements became markup", n)
	}
	// Its own: the code and five data blocks, of types no browser runs.
	if n := browsertest.Eval[int](t, b, `document.scripts.length`); n != 6 {
		t.Errorf("the page has %d script elements, want its own 6", n)
	}
	if n := browsertest.Eval[int](t, b, `[...document.scripts].filter(s => !['application/json', 'text/plain', 'application/x-gzip-base64-lines'].includes(s.type)).length`); n != 1 {
		t.Errorf("the page has %d script elements that run, want its own 1", n)
	}

	browsertest.Eval[chromedp.Void](t, b, `location.hash = ''; window.scrollTo(0, 0)`)
	b.ViewScreenshot(t, "round.png")
	b.Screenshot(t, "round-full.png")

	// Dark: the page follows prefers-color-scheme.
	b.Media(t, "", "dark")
	if bg := browsertest.Eval[string](t, b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(13, 17, 23)" {
		t.Errorf("with prefers-color-scheme: dark the background is %s", bg)
	}
	b.ViewScreenshot(t, "round-dark.png")

	// Print: the filtered trials are laid out as a plain table, the
	// interactive list and its controls are hidden.
	browsertest.Eval[chromedp.Void](t, b, `window.dispatchEvent(new Event('beforeprint'))`)
	b.Media(t, "print", "light")
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('#sec-round .printrows tbody tr').length`); n != len(r.Trials) {
		t.Errorf("the printed table has %d rows, want all %d", n, len(r.Trials))
	}
	if d := browsertest.Eval[string](t, b, `getComputedStyle(document.getElementById('vp-round')).display`); d != "none" {
		t.Errorf("the virtual list is displayed (%s) when printing", d)
	}
	b.Screenshot(t, "round-print.png")
	b.Media(t, "", "light")
	b.CheckQuiet(t, page)
}

func TestBrowserComparison(t *testing.T) {
	b := browsertest.New(t, 1200, 900)
	dir := t.TempDir()
	var bt, ct []reporttest.Trial
	for i := range 24 {
		task := fmt.Sprintf("harbor/task-%02d", i/3)
		base, cand := snapshot.StatusSuccess, snapshot.StatusSuccess
		switch i % 6 {
		case 1:
			base = snapshot.StatusFailure // failure → success
		case 2:
			cand = snapshot.StatusFailure // success → failure
		case 3:
			base, cand = snapshot.StatusFailure, snapshot.StatusFailure
		}
		bt = append(bt, reporttest.Trial{Task: task, Repeat: i % 3, Statuses: []string{base}})
		ct = append(ct, reporttest.Trial{Task: task, Repeat: i % 3, Statuses: []string{snapshot.StatusInfraError, cand}})
	}
	bodies := []reporttest.Body{{TrialID: "harbor/task-00#1", Attempt: 1, Messages: reporttest.Conversation(8)}}
	base := reporttest.Write(t, filepath.Join(dir, "base"), bt, nil)
	cand := reporttest.Write(t, filepath.Join(dir, "cand"), ct, bodies)
	res, err := compare.Rounds(context.Background(), filepath.Join(dir, "base"), filepath.Join(dir, "cand"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Comparable || len(res.Transitions.FailureToSuccess) == 0 {
		t.Fatalf("fixture: comparable %v, %d failure → success", res.Comparable, len(res.Transitions.FailureToSuccess))
	}
	file := writePage(t, "compare.html", func(w *bytes.Buffer) error { return report.WriteComparison(w, base, cand, res) })
	page := openReport(t, b, file, "")

	if v := browsertest.Eval[string](t, b, `document.querySelector('#h-cmp').textContent`); v != "Comparison: ✓ comparable" {
		t.Errorf("verdict %q", v)
	}
	if v := browsertest.Eval[string](t, b, `document.querySelector('.delta').textContent + ' ' + document.querySelector('.delta + .note').textContent`); !bytes.Contains([]byte(v), []byte("not a significance claim")) {
		t.Errorf("the delta is not labelled as no significance claim: %q", v)
	}
	b.ViewScreenshot(t, "compare.png")

	// A failure → success link opens that trial in the candidate round,
	// with its trajectory.
	first := res.Transitions.FailureToSuccess[0]
	browsertest.Eval[chromedp.Void](t, b, `[...document.querySelectorAll('#comparison .tlist a')].find(a => a.textContent === 'candidate').click()`)
	if err := b.Poll(`!document.getElementById('detail-candidate').hidden`); err != nil {
		t.Fatal(err)
	}
	shown := browsertest.Eval[string](t, b, `document.querySelector('#detail-candidate h4 .mono').textContent`)
	if shown != first {
		t.Errorf("the candidate link of %q opened %q", first, shown)
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('#detail-candidate .msg').length`); n == 0 {
		t.Error("the linked candidate trial shows no trajectory messages")
	}
	hist := browsertest.Eval[int](t, b, `document.querySelectorAll('#detail-candidate .hist tbody tr').length`)
	if hist != 2 {
		t.Errorf("candidate retry history has %d rows, want 2", hist)
	}
	b.ViewScreenshot(t, "compare-trial.png")
	b.CheckQuiet(t, page)
}

// bigRound is a 10,000-trial round: 2,500 tasks × 4 repeats.
func bigRound(b testing.TB, dir string) *report.Round {
	st := []string{snapshot.StatusSuccess, snapshot.StatusFailure, snapshot.StatusSuccess, snapshot.StatusInfraError, snapshot.StatusUnscored, snapshot.StatusSuccess}
	trials := make([]reporttest.Trial, 0, 10_000)
	for i := range 10_000 {
		trials = append(trials, reporttest.Trial{Task: fmt.Sprintf("bench/task-%04d", i/4), Repeat: i % 4, Statuses: []string{st[i%len(st)]}})
	}
	return reporttest.Write(b, filepath.Join(dir, "big"), trials, []reporttest.Body{{TrialID: "bench/task-0000#0", Messages: reporttest.Conversation(400), Total: 400}})
}
