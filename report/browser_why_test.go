package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/importer"
	"github.com/tuneplane/tpctl/internal/browsertest"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor/wing"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/report/reporttest"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/transcript"
)

// exampleRound imports one of testdata/example's plans as the README's
// walk-through does (transcripts, trace limit 8, builtin:secrets).
func exampleRound(t testing.TB, plan string) (*report.Round, string) {
	t.Helper()
	example, _ := filepath.Abs(filepath.Join("..", "testdata", "example"))
	out := filepath.Join(t.TempDir(), "snap")
	_, err := importer.Import(context.Background(), importer.Options{Producers: harborOnly(t), PlanPath: filepath.Join(example, plan), Root: example, Out: out,
		Transcripts: &importer.TranscriptOptions{Limit: 8, Redactors: []string{"builtin:secrets"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.LoadRound(out)
	if err != nil {
		t.Fatal(err)
	}
	return r, out
}

// noSideScroll fails when the page is wider than the viewport.
func noSideScroll(t testing.TB, b *browsertest.Browser, what string) {
	t.Helper()
	type widths struct {
		Doc, Win int
		Widest   string
	}
	w := browsertest.Eval[widths](t, b, `(() => {
		const win = window.innerWidth;
		let widest = '';
		for (const e of document.querySelectorAll('body *')) {
			const r = e.getBoundingClientRect();
			if (r.right > win + 1 && getComputedStyle(e).position !== 'absolute' && !e.parentElement.closest('.scroll, .viewport, .kv.gate, .msg pre, pre.arg, svg.defs')) { widest = e.tagName + '.' + e.className + ' ' + Math.round(r.right) + ' in ' + e.parentElement.tagName + '.' + e.parentElement.className; break; }
		}
		const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		for (let n; !widest && (n = w.nextNode());) {
			const r = document.createRange();
			r.selectNodeContents(n);
			if (r.getBoundingClientRect().right > win + 1 && !n.parentElement.closest('.scroll, .viewport, .kv.gate, .msg pre, pre.arg')) widest = 'text in ' + n.parentElement.tagName + ': ' + n.textContent.slice(0, 40);
		}
		return {doc: document.documentElement.scrollWidth, win: win, widest: widest};
	})()`)
	if w.Doc > w.Win {
		t.Errorf("%s: the page is %d px wide in a %d px viewport (first overflowing element: %s)", what, w.Doc, w.Win, w.Widest)
	}
}

// TestBrowserWhy drives the failures-first page of the README's own round
// (testdata/example, imported as the walk-through does): the triage block
// is in the first screen and its links filter the list, the detail panel
// says why a trial failed, the task table sorts and filters, the keyboard
// closes, moves and steps, and nothing scrolls sideways at 390 px.
func TestBrowserWhy(t *testing.T) {
	b := browsertest.New(t, 1400, 900)
	r, _ := exampleRound(t, "import-plan.json")
	file := writePage(t, "round.html", func(w *bytes.Buffer) error { return report.WriteRound(w, r) })
	page := openReport(t, b, file, "")
	b.Viewport(t, 1400, 900)

	// A failed trial is in the first screen: the triage block under the
	// headline names it, with the judge's words.
	type first struct {
		ID, Why string
		Bottom  float64
	}
	f := browsertest.Eval[first](t, b, `(() => {
		const a = [...document.querySelectorAll('#triage-round .examples a')].find(a => a.textContent === 'harbor/hello-world#1');
		if (!a) return {id: '', why: '', bottom: 1e9};
		return {id: a.textContent, why: a.parentElement.querySelector('.why').textContent, bottom: a.getBoundingClientRect().bottom};
	})()`)
	if f.ID == "" || f.Bottom > 900 {
		t.Errorf("the failed trial harbor/hello-world#1 is not in the first 900 px (bottom %.0f)", f.Bottom)
	}
	if !strings.Contains(f.Why, "Agent execution timed out after 120.0 seconds") {
		t.Errorf("the triage line says %q, want the exception's message", f.Why)
	}
	png := b.ViewScreenshot(t, "why-first-screen.png")
	if os.Getenv("TPCTL_UPDATE_SCREENSHOT") != "" {
		if err := os.WriteFile(filepath.Join("..", "docs", "report.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Each triage count is a link into the filtered list.
	type list struct {
		Shown    string   `json:"shown"`
		Statuses []string `json:"statuses"`
		IDs      []string `json:"ids"`
		Height   float64  `json:"height"`
	}
	const read = `(() => ({shown: document.querySelector('#sec-round .shown').textContent,
		statuses: [...document.querySelectorAll('#vp-round .row .status')].map(e => e.textContent.slice(1)),
		ids: [...document.querySelectorAll('#vp-round .row .tid')].map(e => e.textContent),
		height: document.getElementById('vp-round').getBoundingClientRect().height}))()`
	browsertest.Eval[chromedp.Void](t, b, `[...document.querySelectorAll('#triage-round .tcount')].find(a => a.textContent.includes('infra_error')).click()`)
	if err := b.Poll(`document.querySelector('#sec-round .shown').textContent.startsWith('Showing 1 of')`); err != nil {
		t.Fatal(err)
	}
	l := browsertest.Eval[list](t, b, read)
	if !slices.Equal(l.Statuses, []string{snapshot.StatusInfraError}) || !slices.Equal(l.IDs, []string{"harbor/hello-alpine#2"}) {
		t.Errorf("the infra_error triage link shows %q %q", l.Statuses, l.IDs)
	}
	if l.Height > 3*30 {
		t.Errorf("a one-row list is %.0f px tall; it should be sized to its rows", l.Height)
	}
	// The reason and exception tables are links too.
	browsertest.Eval[chromedp.Void](t, b, `document.querySelector('.counts a[href*="exception=RewardFileNotFoundError"]').click()`)
	if err := b.Poll(`document.querySelector('#vp-round .row .tid') && document.querySelector('#vp-round .row .tid').textContent === 'harbor/hello-alpine#0'`); err != nil {
		t.Errorf("the exception table's link did not filter the list: %v", err)
	}

	// The detail says why: open the failed trial from the triage block.
	browsertest.Eval[chromedp.Void](t, b, `[...document.querySelectorAll('#triage-round .examples a')].find(a => a.textContent === 'harbor/hello-world#1').click()`)
	if err := b.Poll(`!document.getElementById('detail-round').hidden && !!document.querySelector('#detail-round .why-banner')`); err != nil {
		t.Fatal(err)
	}
	type detail struct {
		Why, Hist string
		Active    string
	}
	d := browsertest.Eval[detail](t, b, `(() => ({why: document.querySelector('#detail-round .why-banner').textContent,
		hist: document.querySelector('#detail-round .hist').textContent, active: document.activeElement.id}))()`)
	if d.Why != `Why: exception AgentTimeoutError: Agent execution timed out after 120.0 seconds; reward "reward" is 0.0` {
		t.Errorf("the detail panel says %q", d.Why)
	}
	for _, want := range []string{"env 6.2 s", "in · ", "terminus-2 · gpt-4o"} {
		if !strings.Contains(d.Hist, want) {
			t.Errorf("the attempt history lacks %q: %s", want, d.Hist)
		}
	}
	b.ViewScreenshot(t, "why-detail.png")

	// Esc closes the detail and returns to its row.
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	type back struct {
		Hidden   bool   `json:"hidden"`
		Active   string `json:"active"`
		Selected string `json:"selected"`
	}
	bk := browsertest.Eval[back](t, b, `(() => ({hidden: document.getElementById('detail-round').hidden, active: document.activeElement.id,
		selected: (document.querySelector('#vp-round .row[aria-selected=true] .tid') || {}).textContent}))()`)
	if !bk.Hidden || bk.Active != "vp-round" || bk.Selected != "harbor/hello-world#1" {
		t.Errorf("after Esc: detail hidden %v, focus on %q, selected row %q; want the list focused on harbor/hello-world#1", bk.Hidden, bk.Active, bk.Selected)
	}
	// j and k move; n opens the next trial, p the previous one.
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent("j")); err != nil {
		t.Fatal(err)
	}
	if s := browsertest.Eval[string](t, b, `document.querySelector('#vp-round .row[aria-selected=true] .tid').textContent`); s != "harbor/hello-world#2" {
		t.Errorf("j selects %q, want harbor/hello-world#2", s)
	}
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent("k"), chromedp.KeyEvent("n")); err != nil {
		t.Fatal(err)
	}
	if err := b.Poll(`decodeURIComponent(location.hash) === '#round/harbor/hello-world#2'`); err != nil {
		t.Errorf("n did not open the next trial: %v", err)
	}
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent("p")); err != nil {
		t.Fatal(err)
	}
	if err := b.Poll(`decodeURIComponent(location.hash) === '#round/harbor/hello-world#1'`); err != nil {
		t.Errorf("p did not open the previous trial: %v", err)
	}
	// / focuses the search, which finds a trial by its detail text.
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent("/")); err != nil {
		t.Fatal(err)
	}
	if ph := browsertest.Eval[string](t, b, `document.activeElement.placeholder || ''`); !strings.HasPrefix(ph, "status, reason") {
		t.Errorf("/ focused %q, want the search box", ph)
	}
	// (DevTools sends the key's character as an event of its own, which
	// the page's preventDefault on keydown cannot stop as a real keyboard's
	// is stopped; the box is emptied before typing.)
	browsertest.Eval[chromedp.Void](t, b, `document.activeElement.value = ''`)
	if err := chromedp.Do(b.Ctx, chromedp.SendKeys(`input[type=search][placeholder^="status"]`, "no reward file")); err != nil {
		t.Fatal(err)
	}
	if l := browsertest.Eval[list](t, b, read); !slices.Equal(l.IDs, []string{"harbor/hello-alpine#0"}) {
		t.Errorf("searching the detail text shows %q (%s; search box %q)", l.IDs, l.Shown, browsertest.Eval[string](t, b, `tpctlReport.explorers.round.controls.search.value`))
	}
	browsertest.Eval[chromedp.Void](t, b, `(() => { const c = tpctlReport.explorers.round.controls.search; c.value = ''; c.dispatchEvent(new Event('input')); })()`)

	// The task table: worst first, a header sorts, a row filters the list.
	tasks := func() []string {
		return browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('.tasks[data-side=round] tbody tr td:first-child')].map(e => e.textContent)`)
	}
	if got := tasks(); !slices.Equal(got, []string{"harbor/hello-world", "harbor/hello-alpine"}) {
		t.Errorf("task table rows %q, want the worst success rate first", got)
	}
	browsertest.Eval[chromedp.Void](t, b, `[...document.querySelectorAll('.tasks[data-side=round] th button')].find(b => b.textContent.startsWith('task')).click()`)
	if got := tasks(); !slices.Equal(got, []string{"harbor/hello-alpine", "harbor/hello-world"}) {
		t.Errorf("sorted by task: %q", got)
	}
	if fl := browsertest.Eval[string](t, b, `[...document.querySelectorAll('.tasks[data-side=round] tbody tr')].find(r => r.textContent.includes('hello-world')).querySelector('.flags').textContent`); fl != "flaky" {
		t.Errorf("harbor/hello-world is flagged %q, want flaky", fl)
	}
	browsertest.Eval[chromedp.Void](t, b, `[...document.querySelectorAll('.tasks[data-side=round] tbody tr')].find(r => r.textContent.includes('hello-alpine')).click()`)
	if l := browsertest.Eval[list](t, b, read); l.Shown != "Showing 4 of 8 planned trials." || slices.ContainsFunc(l.IDs, func(s string) bool { return !strings.HasPrefix(s, "harbor/hello-alpine#") }) {
		t.Errorf("a task row shows %q %q", l.Shown, l.IDs)
	}
	// The task filter is type-ahead: part of a name narrows the list.
	browsertest.Eval[chromedp.Void](t, b, `(() => { const c = tpctlReport.explorers.round.controls.task; c.value = 'world'; c.dispatchEvent(new Event('input')); })()`)
	if l := browsertest.Eval[list](t, b, read); l.Shown != "Showing 4 of 8 planned trials." || !strings.HasPrefix(l.IDs[0], "harbor/hello-world#") {
		t.Errorf("typing 'world' shows %q %q", l.Shown, l.IDs)
	}

	// At 390 px nothing scrolls sideways: the page, a trial's detail, the
	// trajectory viewer.
	b.Viewport(t, 390, 844)
	browsertest.Eval[chromedp.Void](t, b, `location.hash = ''; window.scrollTo(0, 0)`)
	noSideScroll(t, b, "round at 390 px")
	b.Screenshot(t, "why-390.png")
	browsertest.Eval[chromedp.Void](t, b, `location.hash = '#round/' + encodeURIComponent('harbor/hello-world#1')`)
	if err := b.Poll(`!document.getElementById('detail-round').hidden`); err != nil {
		t.Fatal(err)
	}
	noSideScroll(t, b, "a trial's detail at 390 px")
	b.ViewScreenshot(t, "why-390-detail.png")
	b.CheckQuiet(t, page)
}

// TestBrowserSideBySide: each transition of a comparison opens the trial
// in both rounds side by side, with next/previous transition; the title
// names both checkpoints; the not-comparable banner points at the gate
// below it; at 390 px nothing scrolls sideways.
func TestBrowserSideBySide(t *testing.T) {
	b := browsertest.New(t, 1400, 900)
	base, baseDir := exampleRound(t, "import-plan-round-2.json")
	cand, candDir := exampleRound(t, "import-plan-round-3.json")
	res, err := compare.Rounds(context.Background(), baseDir, candDir)
	if err != nil {
		t.Fatal(err)
	}
	file := writePage(t, "review.html", func(w *bytes.Buffer) error { return report.WriteComparison(w, base, cand, res) })
	page := openReport(t, b, file, "")
	b.Viewport(t, 1400, 900)
	title := browsertest.Eval[string](t, b, `document.querySelector('h1').textContent`)
	if !strings.Contains(title, base.Manifest.Checkpoint.Ref) || !strings.Contains(title, cand.Manifest.Checkpoint.Ref) {
		t.Errorf("the title %q does not name both checkpoints", title)
	}
	pairs := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('#comparison .tlist a.mono')].map(a => a.textContent)`)
	if len(pairs) < 2 {
		t.Fatalf("the fixture's comparison has %d transitions; the test needs two", len(pairs))
	}
	browsertest.Eval[chromedp.Void](t, b, `document.querySelector('#comparison .tlist a.mono').click()`)
	// Each column's detail is drawn in turn: wait for both statuses, not
	// only both headings (a loaded machine can be read between the two).
	if err := b.Poll(`!document.getElementById('pairview').hidden && document.querySelectorAll('#pairview .paircol .detail .dhead h4 .status').length >= 2`); err != nil {
		t.Fatal(err)
	}
	type side struct {
		Heads    []string `json:"heads"`
		Statuses []string `json:"statuses"`
		Where    string   `json:"where"`
	}
	const read = `(() => ({heads: [...document.querySelectorAll('#pairview .paircol > h4')].map(e => e.textContent),
		statuses: [...document.querySelectorAll('#pairview .paircol .detail .dhead h4 .status')].map(e => e.textContent.slice(1)),
		where: document.querySelector('#pairview .pairnav .note').textContent}))()`
	s := browsertest.Eval[side](t, b, read)
	if len(s.Heads) != 2 || !strings.HasPrefix(s.Heads[0], "Base · ") || !strings.HasPrefix(s.Heads[1], "Candidate · ") {
		t.Errorf("side-by-side columns %q", s.Heads)
	}
	if len(s.Statuses) != 2 || s.Statuses[0] == s.Statuses[1] {
		t.Errorf("a transition shows statuses %q in its two columns, want two different ones", s.Statuses)
	}
	if s.Where != "transition 1 of "+itoa(len(pairs)) {
		t.Errorf("the pair view says %q", s.Where)
	}
	b.ViewScreenshot(t, "side-by-side.png")
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent("n")); err != nil {
		t.Fatal(err)
	}
	if err := b.Poll(`document.querySelector('#pairview .pairnav .note') && document.querySelector('#pairview .pairnav .note').textContent === 'transition 2 of ` + itoa(len(pairs)) + `'`); err != nil {
		t.Errorf("n did not step to the next transition: %v", err)
	}
	if got := browsertest.Eval[string](t, b, `document.querySelector('#pairview .pairnav strong').textContent`); got != pairs[1] {
		t.Errorf("the second transition is %q, want %q", got, pairs[1])
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('.ptasks tbody tr').length`); n == 0 {
		t.Error("no per-task base vs candidate table")
	}
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	if !browsertest.Eval[bool](t, b, `document.getElementById('pairview').hidden`) {
		t.Error("Esc did not close the side-by-side view")
	}
	b.Viewport(t, 390, 844)
	browsertest.Eval[chromedp.Void](t, b, `location.hash = '#pair/' + encodeURIComponent(`+jsString(pairs[0])+`)`)
	if err := b.Poll(`!document.getElementById('pairview').hidden`); err != nil {
		t.Fatal(err)
	}
	noSideScroll(t, b, "comparison at 390 px")
	b.Screenshot(t, "side-by-side-390.png")
	b.CheckQuiet(t, page)
}

// TestBrowserUntrustedKeys: task names and tool call IDs such as
// "__proto__", "constructor" and "toString" are keys like any other
// (issue 26 item 5): the transcript whose call IDs are "__proto__" shows
// all its messages with calls paired to results, and the task filter
// lists those tasks.
func TestBrowserUntrustedKeys(t *testing.T) {
	b := browsertest.New(t, 1200, 900)
	names := []string{"__proto__", "constructor", "toString", "hasOwnProperty"}
	var trials []reporttest.Trial
	for _, n := range names {
		trials = append(trials, reporttest.Trial{Task: n, Repeat: 0, Statuses: []string{snapshot.StatusFailure}})
	}
	var msgs []transcript.Message
	msgs = append(msgs, transcript.Message{Role: "user", Content: "go"})
	for _, id := range names {
		msgs = append(msgs,
			transcript.Message{Role: "assistant", Content: `{"keystrokes":"ls -la\n"}`, ToolName: reporttest.Ptr("terminal"), CallID: reporttest.Ptr(id)},
			transcript.Message{Role: "tool", Content: "listing for " + id, ToolName: reporttest.Ptr("terminal"), CallID: reporttest.Ptr(id)})
	}
	r := reporttest.Write(t, filepath.Join(t.TempDir(), "round"), trials, []reporttest.Body{{TrialID: "__proto__#0", Attempt: 0, Messages: msgs}})
	file := writePage(t, "keys.html", func(w *bytes.Buffer) error { return report.WriteRound(w, r) })
	page := openReport(t, b, file, "#round/"+"__proto__%230")
	if err := b.Poll(`document.querySelectorAll('#detail-round .msg').length > 0`); err != nil {
		t.Fatalf("the __proto__ transcript shows no message: %v", err)
	}
	type view struct {
		Messages int      `json:"messages"`
		Pairs    []string `json:"pairs"`
		Args     []string `json:"args"`
		Tasks    []string `json:"tasks"`
		Roles    []string `json:"roles"`
	}
	v := browsertest.Eval[view](t, b, `(() => ({messages: document.querySelectorAll('#detail-round .msg').length,
		pairs: [...document.querySelectorAll('#detail-round .msg .pair')].map(e => e.textContent),
		args: [...document.querySelectorAll('#detail-round .msg pre.arg code')].map(e => e.textContent),
		tasks: [...document.querySelectorAll('#sec-round datalist option')].map(o => o.value),
		roles: [...document.querySelectorAll('#detail-round .roles label')].map(e => e.textContent.trim())}))()`)
	if v.Messages != len(msgs) {
		t.Errorf("the transcript shows %d messages, want %d", v.Messages, len(msgs))
	}
	wantPairs := []string{}
	for i := range names {
		wantPairs = append(wantPairs, "result #"+itoa(3+2*i), "answers call #"+itoa(2+2*i))
	}
	if !slices.Equal(v.Pairs, wantPairs) {
		t.Errorf("pairing links %q, want %q", v.Pairs, wantPairs)
	}
	if len(v.Args) != len(names) || v.Args[0] != "ls -la\n" {
		t.Errorf("tool arguments shown as %q, want the keystrokes as text", v.Args)
	}
	sortedNames := slices.Sorted(slices.Values(names))
	if !slices.Equal(v.Tasks, sortedNames) {
		t.Errorf("the task filter offers %q, want %q", v.Tasks, sortedNames)
	}
	for _, n := range names {
		browsertest.Eval[chromedp.Void](t, b, `(() => { const c = tpctlReport.explorers.round.controls.task; c.value = `+jsString(n)+`; c.dispatchEvent(new Event('input')); })()`)
		ids := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('#vp-round .row .tid')].map(e => e.textContent)`)
		if !slices.Equal(ids, []string{n + "#0"}) {
			t.Errorf("the task filter %q shows %q", n, ids)
		}
	}
	if got := browsertest.Eval[string](t, b, `document.querySelector('.tasks[data-side=round] tbody').textContent`); !strings.Contains(got, "__proto__") || !strings.Contains(got, "constructor") {
		t.Errorf("the task table lacks the tasks: %s", got)
	}
	b.CheckQuiet(t, page)
}

func itoa(n int) string { return strconv.Itoa(n) }

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string { return strconv.Quote(s) }

// harborOnly is the registry of Harbor's producer alone, as cmd/tpctl
// builds it with Harbor's line.
func harborOnly(t testing.TB) *producers.Registry {
	t.Helper()
	r, err := producers.NewRegistry(wing.New())
	if err != nil {
		t.Fatal(err)
	}
	return r
}
