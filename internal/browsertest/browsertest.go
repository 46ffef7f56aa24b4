// Package browsertest opens tpctl's HTML pages in a real headless
// Chromium for tests: it skips when no Chromium is installed unless
// TPCTL_REQUIRE_BROWSER is set (.ci/run sets it), records every request
// and every script exception or error log entry, and saves screenshots to
// the test's artifact folder (TPCTL_SCREENSHOT_DIR overrides it). Test
// support only: no command imports it.
package browsertest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium tab.
type Browser struct {
	Ctx context.Context

	mu       sync.Mutex
	requests []string
	problems []string
}

func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("TPCTL_REQUIRE_BROWSER") != "" {
		t.Fatal("no Chromium found and TPCTL_REQUIRE_BROWSER is set: install it (Debian: apt-get install -y chromium)")
	}
	t.Skip("skipping the browser test: no Chromium found (Debian: apt-get install -y chromium; set TPCTL_REQUIRE_BROWSER=1 to fail instead)")
	return ""
}

// New starts Chromium with a window of the given size.
func New(t testing.TB, width, height int) *Browser {
	path := chromiumPath(t)
	// The deadline only stops a hung browser; nothing asserts on time.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	t.Cleanup(cancelAlloc)
	b := &Browser{}
	tab, cancelTab := chromedp.NewContext(alloc, chromedp.WithListener(func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL)
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if x := e.ExceptionDetails.Exception; x != nil {
				msg += " " + x.Description // the message and stack, not just "Uncaught"
			}
			b.problems = append(b.problems, "exception: "+msg)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				b.problems = append(b.problems, fmt.Sprintf("log %s: %s", e.Entry.Source, e.Entry.Text))
			}
		}
	}))
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	b.Ctx = tab
	return b
}

// Open loads a file and waits for its document to be complete.
func (b *Browser) Open(t testing.TB, file string) string {
	t.Helper()
	return b.OpenAt(t, file, "", "")
}

// OpenAt loads a file at a fragment (hash, "" or "#…"), waits for its
// document to be complete and then, when ready is not "", until the
// expression ready is truthy (a page's script saying it is interactive).
// It returns the file's URL without the fragment.
func (b *Browser) OpenAt(t testing.TB, file, hash, ready string) string {
	t.Helper()
	u := (&url.URL{Scheme: "file", Path: file}).String()
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(u+hash)); err != nil {
		t.Fatal(err)
	}
	if err := b.Poll(`document.readyState === "complete"`); err != nil {
		t.Fatal(err)
	}
	if ready != "" {
		if err := b.Poll(ready); err != nil {
			t.Fatalf("the page did not become ready (%s): %v", ready, err)
		}
	}
	return u
}

// Poll waits until the expression is truthy. The long deadline only
// stops a hung page on a loaded machine; nothing asserts on time.
func (b *Browser) Poll(expr string) error {
	_, err := chromedp.Run(b.Ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(2*time.Minute)))
	return err
}

// Eval evaluates js in the page; a promise is awaited.
func Eval[T any](t testing.TB, b *Browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// Viewport resizes the page (CSS pixels) as a phone or a desktop would.
func (b *Browser) Viewport(t testing.TB, w, h int64) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.EmulateViewport(w, h)); err != nil {
		t.Fatal(err)
	}
}

// Media emulates a CSS media type ("" for screen, "print") and a
// prefers-color-scheme ("light", "dark").
func (b *Browser) Media(t testing.TB, typ, scheme string) {
	t.Helper()
	err := chromedp.Do(b.Ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Media: typ, Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
}

// CheckQuiet fails on any request but the page itself, any script
// exception and any error the browser logged (a CSP violation is one).
func (b *Browser) CheckQuiet(t testing.TB, page string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.requests) == 0 {
		t.Error("the request log is empty: the listener saw nothing, so it cannot show that nothing else was fetched")
	}
	pu, _ := url.Parse(page)
	for _, r := range b.requests {
		if u, err := url.Parse(r); err != nil || u.Scheme != "file" || u.Path != pu.Path {
			t.Errorf("the page requested %q; it must load nothing but itself", r)
		}
	}
	for _, p := range b.problems {
		t.Errorf("browser reported %s", p)
	}
}

// Screenshot saves a screenshot of the whole page as name (in the
// artifact folder) and returns the PNG.
func (b *Browser) Screenshot(t testing.TB, name string) []byte {
	t.Helper()
	return b.save(t, name, chromedp.FullScreenshot(100))
}

// ViewScreenshot saves a screenshot of what the viewport shows (the first
// screen, unless scrolled) as name and returns the PNG.
func (b *Browser) ViewScreenshot(t testing.TB, name string) []byte {
	t.Helper()
	return b.save(t, name, chromedp.CaptureScreenshot())
}

func (b *Browser) save(t testing.TB, name string, shot chromedp.Action[[]byte]) []byte {
	t.Helper()
	png, err := chromedp.Run(b.Ctx, shot)
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("TPCTL_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.ArtifactDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return png
}
