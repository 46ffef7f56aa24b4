package redact

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The test binary plays the child redactor when this variable is set; the
// value picks its behaviour.
const fakeEnv = "TPCTL_FAKE_REDACTOR"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeRedactor(mode))
	}
	os.Exit(m.Run())
}

// fakeRedactor behaves well for the first request (the probe sent by Open)
// and then as mode says.
func fakeRedactor(mode string) int {
	if mode == "crash-at-start" {
		fmt.Fprintln(os.Stderr, "fake: cannot load my dictionary")
		return 2
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for n := 1; in.Scan(); n++ {
		if mode == "answer-unread" && n == 1 {
			// Answer the probe, then answer request 2 without reading it
			// and never read again.
			fmt.Fprintf(out, "{\"id\":1,\"text\":\"\"}\n{\"id\":2,\"text\":\"\"}\n")
			out.Flush()
			time.Sleep(time.Hour)
		}
		var req struct {
			ID   int64  `json:"id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "fake: bad request:", err)
			return 1
		}
		answer := map[string]any{"id": req.ID, "text": strings.ReplaceAll(req.Text, "SECRET", "[X]")}
		if n >= 2 {
			switch mode {
			case "hang":
				time.Sleep(time.Hour)
			case "crash":
				fmt.Fprintln(os.Stderr, "fake: segfault-ish")
				return 139
			case "stderr-flood":
				fmt.Fprint(os.Stderr, strings.Repeat("noise ", 10000)+"LAST-WORDS")
				return 1
			case "garbage":
				fmt.Fprintln(out, "hello I am not JSON and I echo SECRET")
				out.Flush()
				continue
			case "number":
				answer["text"] = 42
			case "wrong-id":
				answer["id"] = req.ID + 7
			case "error":
				delete(answer, "text")
				answer["error"] = "dictionary says no"
			case "unterminated":
				fmt.Fprint(out, `{"id":2,"text":"x"}`)
				out.Flush()
				return 0
			case "error-echo":
				// A careless redactor that quotes its input in its
				// refusal and on stderr.
				fmt.Fprintln(os.Stderr, "debug: got "+req.Text)
				delete(answer, "text")
				answer["error"] = "cannot redact " + req.Text
			case "stderr-echo":
				fmt.Fprintln(os.Stderr, "fatal: while redacting "+req.Text)
				return 1
			case "slow":
				time.Sleep(50 * time.Millisecond)
			case "exit-clean":
				return 0
			}
		}
		b, _ := json.Marshal(answer)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	return 0
}

func fakeSpec(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(exe, " \t") {
		t.Skip("test binary path has spaces; exec: specs split on spaces")
	}
	return "exec:" + exe
}

func openFake(t *testing.T, mode string, timeout time.Duration) (Redactor, error) {
	t.Helper()
	return OpenWith(context.Background(), fakeSpec(t), Options{
		Timeout: timeout,
		Env:     append(os.Environ(), fakeEnv+"="+mode),
	})
}

func TestExecProtocol(t *testing.T) {
	tests := []struct {
		mode    string
		timeout time.Duration
		wantErr string // "" means success
	}{
		{"echo", 30 * time.Second, ""},
		{"slow", 30 * time.Second, ""},
		{"hang", 3 * time.Second, "no answer within 3s (request 2); it was stopped"},
		{"crash", 30 * time.Second, "closed its output and exited with exit status 139 while handling request 2; its stderr ends with: fake: segfault-ish"},
		{"garbage", 30 * time.Second, "answered request 2 with 37 bytes that are not a JSON object"},
		{"number", 30 * time.Second, `answered request 2 with a number for "text"; it must return a string`},
		{"wrong-id", 30 * time.Second, "answered request 2 with id 9; answers must come in order"},
		{"error", 30 * time.Second, "refused request 2: dictionary says no"},
		{"unterminated", 30 * time.Second, "printed an unterminated line and closed its output (request 2)"},
		{"exit-clean", 30 * time.Second, "closed its output and exited with status 0 while handling request 2"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			r, err := openFake(t, tt.mode, tt.timeout)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer r.Close()
			got, err := r.Redact(context.Background(), "my SECRET is SECRET")
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got != "my [X] is [X]" {
					t.Errorf("got %q", got)
				}
				// A second request reuses the same child.
				if got, err := r.Redact(context.Background(), "plain"); err != nil || got != "plain" {
					t.Errorf("second request: %q, %v", got, err)
				}
				if err := r.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *redact.Error", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q\n does not contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error echoes the text being redacted: %v", err)
			}
			// Broken stays broken; the child was reaped.
			if _, err2 := r.Redact(context.Background(), "again"); err2 == nil {
				t.Error("a broken redactor answered again")
			}
			p := r.(*process)
			select {
			case <-p.exited:
			default:
				t.Error("child still running after a failure")
			}
		})
	}
}

func TestExecStartFailures(t *testing.T) {
	_, err := openFake(t, "crash-at-start", 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exited with exit status 2 while handling request 1") ||
		!strings.Contains(err.Error(), "fake: cannot load my dictionary") {
		t.Errorf("crash at start: %v", err)
	}
	_, err = Open(context.Background(), "exec:/definitely/not/here --flag")
	if err == nil || !strings.Contains(err.Error(), `program "/definitely/not/here" not found`) {
		t.Errorf("missing program: %v", err)
	}
	_, err = Open(context.Background(), "exec:   ")
	if err == nil || !strings.Contains(err.Error(), "names no command") {
		t.Errorf("empty command: %v", err)
	}
}

// TestExecErrorsMaskSecrets: tpctl shows a redactor's refusal message and
// the tail of its stderr; credentials in them (a secret value of the
// environment, a provider key) are masked, whatever the redactor quoted.
func TestExecErrorsMaskSecrets(t *testing.T) {
	const token = "tp-job-0123456789abcdef"
	text := "curl -H 'Authorization: " + token + "' with " + fakeOpenAI
	for _, mode := range []string{"error-echo", "stderr-echo"} {
		t.Run(mode, func(t *testing.T) {
			r, err := OpenWith(context.Background(), fakeSpec(t), Options{
				Timeout: 30 * time.Second,
				Env:     append(os.Environ(), fakeEnv+"="+mode, "TUNEPLANE_JOB_TOKEN="+token),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = r.Redact(context.Background(), text)
			if err == nil {
				t.Fatal("the redactor's failure was not reported")
			}
			msg := err.Error()
			for _, secret := range []string{token, fakeOpenAI} {
				if strings.Contains(msg, secret) {
					t.Errorf("error shows a secret the redactor quoted: %s", msg)
				}
			}
			if !strings.Contains(msg, "[REDACTED:env:TUNEPLANE_JOB_TOKEN]") || !strings.Contains(msg, "[REDACTED:openai_key]") {
				t.Errorf("error does not show where secrets were masked: %s", msg)
			}
		})
	}
}

func TestExecStderrBounded(t *testing.T) {
	r, err := openFake(t, "stderr-flood", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Redact(context.Background(), "x")
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("err = %v", err)
	}
	if len(re.Stderr) > stderrTail || !strings.HasSuffix(re.Stderr, "LAST-WORDS") {
		t.Errorf("stderr kept %d bytes, ends %q", len(re.Stderr), re.Stderr[max(0, len(re.Stderr)-20):])
	}
}

func TestExecCancel(t *testing.T) {
	r, err := openFake(t, "hang", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := r.Redact(ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's error", err)
	}
}

// A child that answers a request before reading all of it and then stops
// reading must not block the write forever: the time limit and the
// context still apply.
func TestExecAnswerWithoutReading(t *testing.T) {
	big := strings.Repeat("x", 4<<20) // far more than a pipe holds
	t.Run("timeout", func(t *testing.T) {
		r, err := openFake(t, "answer-unread", 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		done := make(chan error, 1)
		go func() { _, err := r.Redact(context.Background(), big); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "answered request 2 before reading all of it") {
				t.Errorf("err = %v", err)
			}
		case <-time.After(2 * time.Minute):
			killProcess(r.(*process).cmd) // unblock the write so Close can run
			t.Fatal("Redact blocked on a child that stopped reading")
		}
	})
	t.Run("cancel", func(t *testing.T) {
		r, err := openFake(t, "answer-unread", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() { _, err := r.Redact(ctx, big); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want the context's error", err)
			}
		case <-time.After(2 * time.Minute):
			killProcess(r.(*process).cmd) // unblock the write so Close can run
			t.Fatal("Redact ignored cancellation while a child stopped reading")
		}
	})
}

func TestExecLargeText(t *testing.T) {
	r, err := openFake(t, "echo", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	big := strings.Repeat("é SECRET \"q\"\n", 400_000) // ~5 MB
	got, err := r.Redact(context.Background(), big)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.ReplaceAll(big, "SECRET", "[X]"); got != want {
		t.Errorf("large text came back changed (%d bytes, want %d)", len(got), len(want))
	}
}

func TestCloseReaps(t *testing.T) {
	r, err := openFake(t, "echo", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p := r.(*process)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	default:
		t.Fatal("Close returned before the child was reaped")
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := r.Redact(context.Background(), "x"); err == nil {
		t.Error("Redact after Close succeeded")
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPythonRedactor(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	dir := t.TempDir()
	writeFile(t, dir, "scrub.py", `
def clean(s):
    print("debug output must not break the protocol")
    return s.replace("hunter2", "[pw]")

def number(s):
    return 42

def boom(s):
    if s:
        raise ValueError("bad input")
    return s
`)
	opts := Options{Dir: dir, Timeout: time.Minute}
	ctx := context.Background()

	r, err := OpenWith(ctx, "scrub:clean", opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Redact(ctx, "password hunter2 — ünïcode")
	if err != nil || got != "password [pw] — ünïcode" {
		t.Errorf("clean: %q, %v", got, err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	// number fails already on the probe.
	_, err = OpenWith(ctx, "scrub:number", opts)
	if err == nil || !strings.Contains(err.Error(), "scrub.number returned int, not str") {
		t.Errorf("number: %v", err)
	}
	r, err = OpenWith(ctx, "scrub:boom", opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Redact(ctx, "x")
	if err == nil || !strings.Contains(err.Error(), "scrub.boom raised ValueError: bad input") {
		t.Errorf("boom: %v", err)
	}
	r.Close()

	_, err = OpenWith(ctx, "no_such_module:clean", opts)
	if err == nil || !strings.Contains(err.Error(), "cannot import module 'no_such_module': ModuleNotFoundError") {
		t.Errorf("missing module: %v", err)
	}
	_, err = OpenWith(ctx, "scrub:missing", opts)
	if err == nil || !strings.Contains(err.Error(), "module 'scrub' has no function 'missing'") {
		t.Errorf("missing function: %v", err)
	}
}

func TestPythonMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Open(context.Background(), "common.redact:clean")
	if err == nil || !strings.Contains(err.Error(), "needs python3, which is not on PATH") {
		t.Errorf("err = %v", err)
	}
}

func TestOpenSpecs(t *testing.T) {
	tests := []struct{ spec, err string }{
		{"builtin:secrets", ""},
		{"builtin:pii", `unknown built-in redactor "builtin:pii"`},
		{"rules:", "names no file"},
		{"rules:/nope/rules.yaml", `failed to read rules file "/nope/rules.yaml"`},
		{"scrub", `unknown redactor "scrub"; use builtin:secrets, rules:FILE, exec:COMMAND or MODULE:FUNCTION`},
		{"a b:c", `unknown redactor "a b:c"`},
	}
	for _, tt := range tests {
		r, err := Open(context.Background(), tt.spec)
		if tt.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.spec, err)
			} else {
				r.Close()
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err = %v, want %q", tt.spec, err, tt.err)
		}
	}
	if _, err := OpenAll(context.Background(), nil); err == nil {
		t.Error("OpenAll with no specs succeeded")
	}
}

// TestCheckSpec: a spec's form is checked without opening anything, so a
// typo is a usage error reported before any work.
func TestCheckSpec(t *testing.T) {
	tests := []struct{ spec, err string }{
		{"builtin:secrets", ""},
		{"rules:my.yaml", ""},
		{"exec:./scrub --strict", ""},
		{"common.redact:clean", ""},
		{"builtin:nope", `unknown built-in redactor "builtin:nope"`},
		{"builtin", `unknown built-in redactor "builtin"`},
		{"rules:", "names no file"},
		{"exec: ", "names no command"},
		{"scrub", `unknown redactor "scrub"; use builtin:secrets`},
		{"", `unknown redactor ""`},
		{"a-b:c", `unknown redactor "a-b:c"`},
	}
	for _, tt := range tests {
		err := CheckSpec(tt.spec)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (tt.err == "") != (err == nil) || !strings.Contains(got, tt.err) {
			t.Errorf("CheckSpec(%q) = %v; want %q", tt.spec, err, tt.err)
		}
	}
}

func TestChain(t *testing.T) {
	dir := t.TempDir()
	rf := writeFile(t, dir, "r.yaml", "rules:\n  - pattern: 'REDACTED:(\\w+)'\n    replacement: 'gone:$1'\n")
	r, err := OpenAll(context.Background(), []string{"builtin:secrets", "rules:" + rf})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	key := "hf_" + strings.Repeat("Ab1", 12)
	got, err := r.Redact(context.Background(), "token "+key)
	if err != nil {
		t.Fatal(err)
	}
	// The rules see the builtin's output: order matters.
	if got != "token [gone:huggingface_token]" {
		t.Errorf("got %q", got)
	}
	if d := cmp.Diff([]string{"builtin:secrets", "rules:" + rf}, Names(r)); d != "" {
		t.Errorf("Names (-want +got):\n%s", d)
	}
	if r.Name() != "builtin:secrets,rules:"+rf {
		t.Errorf("Name = %q", r.Name())
	}
}

// TestConcurrent: builtin:secrets, a rules: file and chains of those may
// be called from several goroutines; a process-backed redactor, alone or
// in a chain, may not.
func TestConcurrent(t *testing.T) {
	rules, err := Open(context.Background(), "rules:"+writeFile(t, t.TempDir(), "r.yaml", "rules:\n  - pattern: 'x'\n    replacement: 'y'\n"))
	if err != nil {
		t.Fatal(err)
	}
	proc, err := openFake(t, "echo", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	for _, tt := range []struct {
		name string
		r    Redactor
		want bool
	}{
		{"builtin:secrets", Secrets(), true},
		{"rules", rules, true},
		{"secrets and rules", Chain(Secrets(), rules), true},
		{"exec", proc, false},
		{"secrets and exec", Chain(Secrets(), proc), false},
	} {
		if got := Concurrent(tt.r); got != tt.want {
			t.Errorf("Concurrent(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
