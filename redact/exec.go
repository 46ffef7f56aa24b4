package redact

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tuneplane/tpctl/internal/supervise"
)

// MaxResponseBytes caps one line a child redactor may print (64 MiB).
const MaxResponseBytes = 64 << 20

// stderrTail is how much of a child's stderr is kept for error messages.
const stderrTail = 2048

// closeGrace is how long Close waits for a child to exit after its stdin
// is closed before killing it.
const closeGrace = 2 * time.Second

// tailBuffer keeps the last max bytes written to it, masked before they
// are cut (issue 26): whole lines go through mask as they complete, so the
// cut at the front can only fall inside masked text, never leave half a
// secret. A line longer than tailLine is masked and kept in pieces, each
// piece's last tailCarry bytes held back to be masked again with what
// follows (a secret is far shorter than tailCarry).
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	pending []byte // the current line, not yet masked
	max     int
	mask    func(string) string
}

const (
	tailLine  = 64 << 10
	tailCarry = 4 << 10
)

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = append(t.pending, p...)
	for {
		i := bytes.IndexByte(t.pending, '\n')
		if i < 0 {
			break
		}
		t.keep(t.masked(t.pending[:i+1]))
		t.pending = append(t.pending[:0], t.pending[i+1:]...)
	}
	if len(t.pending) > tailLine {
		m := t.masked(t.pending)
		cut := max(0, len(m)-tailCarry)
		t.keep(m[:cut])
		t.pending = append(t.pending[:0], m[cut:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) masked(b []byte) []byte {
	if t.mask == nil {
		return b
	}
	return []byte(t.mask(string(b)))
}

// keep appends masked bytes and cuts the front to max.
func (t *tailBuffer) keep(b []byte) {
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append(slices.Clone(t.buf), t.masked(t.pending)...)
	if len(out) > t.max {
		out = out[len(out)-t.max:]
	}
	return string(bytes.ToValidUTF8(out, []byte("?")))
}

type line struct {
	b   []byte
	err error
}

// process is a redactor backed by a long-lived child that answers one JSON
// line per request: {"id":N,"text":"…"} in, {"id":N,"text":"…"} out (or
// {"id":N,"error":"…"} to refuse).
type process struct {
	spec    string
	cmd     *exec.Cmd
	stdin   *os.File
	lines   chan line
	stderr  *tailBuffer
	timeout time.Duration
	exited  chan struct{} // closed when Wait returned
	waitErr error

	// gate is the invocation's registry of secrets (Options.Gate), masked
	// with the builtin patterns in what the child prints that tpctl
	// shows: its refusal messages and its stderr.
	gate *Scanner

	mu     sync.Mutex
	nextID int64
	broken error
	closed bool
}

var _ Redactor = (*process)(nil)

func startProcess(ctx context.Context, spec string, argv []string, opts Options) (*process, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("redactor %q: program %q not found: %w", spec, argv[0], err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env
	setProcessGroup(cmd)
	// Plain pipes rather than StdoutPipe: Wait must not close our read end
	// while an answer is still buffered.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("redactor %q: failed to create pipe: %w", spec, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("redactor %q: failed to create pipe: %w", spec, err)
	}
	p := &process{
		spec:    spec,
		cmd:     cmd,
		stdin:   inW,
		lines:   make(chan line, 1),
		stderr:  &tailBuffer{max: stderrTail},
		timeout: opts.Timeout,
		exited:  make(chan struct{}),
	}
	p.gate = opts.Gate
	if p.gate == nil {
		p.gate = NewScanner(opts.Env)
	}
	p.stderr.mask = p.mask
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	// Bound the wait for stderr copying if a grandchild keeps it open.
	cmd.WaitDelay = closeGrace
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("redactor %q: failed to start %q: %w", spec, argv[0], err)
	}
	// A supervisor that outlives tpctl kills the redactor's process group
	// if tpctl dies first (the parent-death signal reaches the redactor
	// alone); Linux only, internal/supervise.
	unwatch, _ := supervise.Watch(cmd.Process.Pid, 0)
	go func() {
		p.waitErr = cmd.Wait()
		unwatch()
		close(p.exited)
	}()
	go readLines(outR, p.lines)
	// Probe: a child that cannot import its module, or does not speak the
	// protocol, fails here instead of in the middle of an import.
	if _, err := p.Redact(ctx, ""); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// readLines sends every line of r to ch, then the read error, then closes.
func readLines(r *os.File, ch chan<- line) {
	defer close(ch)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var acc []byte
		for {
			frag, err := br.ReadSlice('\n')
			if len(acc)+len(frag) > MaxResponseBytes {
				ch <- line{err: fmt.Errorf("printed a line longer than %d bytes", MaxResponseBytes)}
				return
			}
			acc = append(acc, frag...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if len(acc) > 0 && err == io.EOF {
					err = errors.New("printed an unterminated line and closed its output")
				}
				ch <- line{err: err}
				return
			}
			break
		}
		ch <- line{b: acc}
	}
}

func (p *process) Name() string { return p.spec }

func (p *process) Redact(ctx context.Context, s string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken != nil {
		return "", p.broken
	}
	if p.closed {
		return "", &Error{Redactor: p.spec, Err: errors.New("used after Close")}
	}
	p.nextID++
	id := p.nextID
	req, err := json.Marshal(struct {
		ID   int64  `json:"id"`
		Text string `json:"text"`
	}{id, s})
	if err != nil {
		return "", &Error{Redactor: p.spec, Err: err}
	}
	req = append(req, '\n')
	// Write from a goroutine: a child that stops reading would block a
	// large write forever, and the timeout must still fire.
	wrote := make(chan error, 1)
	go func() {
		_, err := p.stdin.Write(req)
		wrote <- err
	}()
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	lines := p.lines
	var (
		text     string
		answered bool
	)
	for !answered || wrote != nil {
		select {
		case <-ctx.Done():
			return "", p.fail(id, fmt.Errorf("interrupted: %w", ctx.Err()))
		case <-timer.C:
			if answered {
				// It answered without reading the whole request and
				// then stopped reading: the next request could never
				// be written.
				return "", p.fail(id, fmt.Errorf("answered request %d before reading all of it and then stopped reading its input for %s; it was stopped", id, p.timeout))
			}
			return "", p.fail(id, fmt.Errorf("no answer within %s (request %d); it was stopped", p.timeout, id))
		case err := <-wrote:
			wrote = nil
			if err != nil {
				return "", p.fail(id, p.exitReason(id, "stopped reading its input"))
			}
		case l, ok := <-lines:
			if !ok || l.err != nil {
				if ok && l.err != io.EOF && !errors.Is(l.err, os.ErrClosed) {
					return "", p.fail(id, fmt.Errorf("%v (request %d)", l.err, id))
				}
				return "", p.fail(id, p.exitReason(id, "closed its output"))
			}
			var err error
			// A refusal message is the child's own text, which may quote
			// what it was asked to redact: parseAnswer masks it before
			// cutting it.
			if text, err = parseAnswer(l.b, id, p.mask); err != nil {
				return "", p.fail(id, err)
			}
			// The rest of the request may still be in flight; wait for it
			// (within the same time limit) but read no further answers.
			answered, lines = true, nil
		}
	}
	return text, nil
}

// exitReason waits briefly for the child to exit and describes how it did.
func (p *process) exitReason(id int64, what string) error {
	select {
	case <-p.exited:
		status := "exited with status 0"
		if p.waitErr != nil {
			status = "exited with " + p.waitErr.Error()
		}
		return fmt.Errorf("%s and %s while handling request %d", what, status, id)
	case <-time.After(closeGrace):
		return fmt.Errorf("%s while handling request %d", what, id)
	}
}

// fail kills and reaps the child, marks the redactor broken and returns
// the error with the tail of the child's stderr.
func (p *process) fail(id int64, err error) error {
	p.kill()
	p.broken = &Error{Redactor: p.spec, Err: err, Stderr: p.mask(p.stderr.String())}
	return p.broken
}

// mask hides credentials in text the child chose to print before tpctl
// shows it in an error: a redactor's diagnostics (a Python exception
// message, a debug line on stderr) may quote the very text it was given.
// The builtin:secrets patterns and the exact secret values of the child's
// environment become [REDACTED:…].
func (p *process) mask(s string) string {
	s, _ = Secrets().Redact(context.Background(), s)
	return p.gate.Mask(s)
}

func (p *process) kill() {
	select {
	case <-p.exited:
	default:
		killProcess(p.cmd)
		<-p.exited
	}
	p.stdin.Close()
}

// parseAnswer checks one answer line. It never quotes the line: it may hold
// the very text being redacted; a refusal's message is quoted after mask.
// the very text being redacted.
func parseAnswer(b []byte, id int64, mask func(string) string) (string, error) {
	b = bytes.TrimRight(b, "\r\n")
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return "", fmt.Errorf("answered request %d with %d bytes that are not a JSON object; each answer must be one line {\"id\":%d,\"text\":\"…\"}", id, len(b), id)
	}
	rawID, ok := m["id"]
	if !ok {
		return "", fmt.Errorf("answered request %d without an \"id\"", id)
	}
	var got int64
	if err := json.Unmarshal(rawID, &got); err != nil || got != id {
		return "", fmt.Errorf("answered request %d with id %s; answers must come in order with the request's id", id, truncate(string(rawID), 40))
	}
	if rawErr, ok := m["error"]; ok && string(rawErr) != "null" {
		var msg string
		if json.Unmarshal(rawErr, &msg) != nil {
			msg = "(no message)"
		}
		return "", fmt.Errorf("refused request %d: %s", id, truncate(mask(msg), 500))
	}
	rawText, ok := m["text"]
	if !ok {
		return "", fmt.Errorf("answered request %d without \"text\"", id)
	}
	var text string
	if len(rawText) == 0 || rawText[0] != '"' || json.Unmarshal(rawText, &text) != nil {
		return "", fmt.Errorf("answered request %d with %s for \"text\"; it must return a string", id, jsonKind(rawText))
	}
	return text, nil
}

func jsonKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '"':
		return "an invalid string"
	}
	return "a number"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…(" + strconv.Itoa(len(s)-n) + " more bytes)"
}

// Close closes the child's stdin, waits up to two seconds for it to exit,
// then kills it; the child is always reaped. A child that exits non-zero
// on its own is reported.
func (p *process) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(closeGrace):
		killProcess(p.cmd)
		<-p.exited
		return nil
	}
	if p.broken == nil && p.waitErr != nil {
		return &Error{Redactor: p.spec, Err: fmt.Errorf("exited with %v when closed", p.waitErr), Stderr: p.mask(p.stderr.String())}
	}
	return nil
}
