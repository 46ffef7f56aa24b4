package upload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
)

// Tally is how the server filed the records of one kind.
type Tally struct {
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
	Conflicts  int `json:"conflicts"`
}

func (t *Tally) add(r *Response) {
	t.Accepted += r.Accepted
	t.Duplicates += r.Duplicates
	t.Conflicts += r.Conflicts
}

// Summary is the outcome of an upload; it is also the `--output json`
// object of `tpctl upload`. Accepted, Duplicates and Conflicts are totals
// over every record (protocol, total, events, trajectories). After a lost
// acknowledgement the records of the replayed request count as duplicates:
// the server did keep them, once.
type Summary struct {
	Dir          string   `json:"dir"`
	RunID        string   `json:"run_id"`
	RoundID      string   `json:"round_id"`
	Complete     bool     `json:"complete"` // every request was answered 200
	Accepted     int      `json:"accepted"`
	Duplicates   int      `json:"duplicates"`
	Conflicts    int      `json:"conflicts"`
	ConflictIDs  []string `json:"conflict_ids"` // sorted trial IDs
	Protocol     Tally    `json:"protocol"`
	Total        Tally    `json:"round_total"`
	Events       Tally    `json:"events"`
	Trajectories Tally    `json:"trajectories"`
	Requests     int      `json:"requests"` // HTTP tries, retries included
	Retries      int      `json:"retries"`
	Bytes        int64    `json:"bytes"` // request body bytes of every try, retries and failed tries included

	// What the server took: requests answered 2xx with counts that add up,
	// and their body bytes. Bytes of a refused connection are not here.
	AcceptedRequests int   `json:"accepted_requests"`
	AcceptedBytes    int64 `json:"accepted_bytes"`
	// Tries that stored nothing (or nothing known), apart: no connection
	// (refused, unreachable, DNS, TLS), no answer (reset, timeout: a lost
	// acknowledgement is one), and an error answer (an HTTP error status
	// or a 2xx body that breaks the contract).
	FailedToConnect int `json:"failed_to_connect"`
	NoAnswer        int `json:"no_answer"`
	ErrorAnswers    int `json:"error_answers"`
}

// Progress is reported after each request and before each retry wait.
type Progress struct {
	// Phase is PhaseVerifying (before anything is sent) or PhaseUploading.
	Phase string
	Kind  string // kind of the current request
	Done  int    // requests answered so far
	Total int    // requests the upload needs (without retries)
	Bytes int64  // body bytes sent so far, retries included
	// Acked is the body bytes of requests the server answered: what is
	// known to have arrived, unlike Bytes.
	Acked     int64
	Retry     int // > 0: the try about to be made after RetryIn
	RetryIn   time.Duration
	RetryWhy  string // "HTTP 503", "network error"; never server text
	Conflicts int    // conflicts so far
}

// Progress phases.
const (
	PhaseVerifying = "verifying snapshot"
	PhaseUploading = "uploading"
)

// DryRun is what an upload would send; see Plan.
type DryRun struct {
	Dir          string `json:"dir"`
	RoundID      string `json:"round_id"`
	Expected     int    `json:"expected"`
	Events       int    `json:"events"`
	Batches      int    `json:"batches"`
	Trajectories int    `json:"trajectories"`
	Requests     int    `json:"requests"`
	// Bytes is the total request body size with an empty run ID; each
	// request grows by the run ID's length.
	Bytes             int64 `json:"bytes"`
	LargestEvent      int   `json:"largest_event"`
	LargestTrajectory int   `json:"largest_trajectory"`
}

// ConflictError means the server already holds different records under
// identities this snapshot uses. The upload itself finished.
type ConflictError struct {
	RoundID  string
	Count    int
	TrialIDs []string // sorted; may be empty for protocol/total conflicts
}

func (e *ConflictError) Error() string {
	msg := fmt.Sprintf("the ingest API already holds different records for %d identities of round %s; it kept its first copy", e.Count, e.RoundID)
	if len(e.TrialIDs) > 0 {
		ids := e.TrialIDs
		more := ""
		if len(ids) > 20 {
			ids, more = ids[:20], fmt.Sprintf(" and %d more", len(e.TrialIDs)-20)
		}
		msg += ": trials " + strings.Join(ids, ", ") + more
	}
	return msg
}

// prepared is a verified snapshot whose records all fit the API limits.
type prepared struct {
	snap     *snapshot.Snapshot
	m        *snapshot.Manifest
	dry      DryRun
	protocol ProtocolRecord
	// held are the encoded events from the checking pass, so the sending
	// pass need not decode the observations again; nil when they were more
	// than maxHeldEvents bytes (then snap's verified observations are read
	// again, never the file on disk).
	held *heldEvents
}

// maxHeldEvents bounds the memory kept for encoded events (about 300,000
// trials); a variable so a test can exercise the streaming fallback.
var maxHeldEvents = 64 << 20

// heldEvents is an arena of encoded events and their trial IDs.
type heldEvents struct {
	data []byte
	ends []int
	ids  []string
}

func (h *heldEvents) add(ev []byte, id string) {
	h.data = append(h.data, ev...)
	h.ends = append(h.ends, len(h.data))
	h.ids = append(h.ids, id)
}

// batches calls fn with consecutive batches of at most n events.
func (h *heldEvents) batches(n int, fn func(events [][]byte, ids []string) error) error {
	events := make([][]byte, 0, n)
	for i := 0; i < len(h.ends); i += n {
		j := min(i+n, len(h.ends))
		events = events[:0]
		start := 0
		if i > 0 {
			start = h.ends[i-1]
		}
		for k := i; k < j; k++ {
			events = append(events, h.data[start:h.ends[k]])
			start = h.ends[k]
		}
		if err := fn(events, h.ids[i:j]); err != nil {
			return err
		}
	}
	return nil
}

// prepare opens dir (which verifies it) and walks every record once,
// checking limits, so an upload never starts on a snapshot it cannot
// finish. The caller closes p.snap.
//
// Every record is also passed through the outgoing-text gate (scanner): a
// snapshot saved long ago, or edited and re-hashed since, is refused
// before the first request if it carries a known secret.
func prepare(dir, runID string, hold bool, scanner *redact.Scanner) (p *prepared, err error) {
	snap, err := snapshot.Open(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			snap.Close()
		}
	}()
	m := snap.Manifest()
	p = &prepared{snap: snap, m: m, protocol: ProtocolOf(m)}
	if hold {
		p.held = &heldEvents{}
	}

	enc := &encoder{runID: runID, roundID: m.RoundID}
	d := &p.dry
	*d = DryRun{Dir: dir, RoundID: m.RoundID, Expected: m.Counts.Expected, Requests: 2}
	d.Bytes = int64(len(enc.protocol(p.protocol)) + len(enc.total(m.Counts.Expected)))
	if err := scanner.CheckPayload("the "+KindProtocol+" record (from "+snapshot.ManifestFile+")", enc.protocol(p.protocol)); err != nil {
		return nil, err
	}

	// Batch sizes are known from the count alone; bytes need the events.
	batch := make([][]byte, 0, MaxEventsPerRequest)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		d.Batches++
		d.Bytes += int64(len(enc.observationsTemp(batch)))
		batch = batch[:0]
	}
	for o, err := range snap.Observations() {
		if err != nil {
			return nil, err
		}
		ev, err := checkedEvent(o, scanner)
		if err != nil {
			return nil, err
		}
		d.Events++
		d.LargestEvent = max(d.LargestEvent, len(ev))
		if p.held != nil {
			p.held.add(ev, o.TrialID)
			if len(p.held.data) > maxHeldEvents {
				p.held = nil
			}
		}
		batch = append(batch, ev)
		if len(batch) == MaxEventsPerRequest {
			flush()
		}
	}
	flush()
	for tr, err := range snap.Trajectories() {
		if err != nil {
			return nil, err
		}
		name := tr.Name
		compact, _, err := checkTrajectory(name, tr.Data, m.RoundID)
		if err != nil {
			return nil, err
		}
		if err := scanner.CheckPayload("the trajectory "+name, compact); err != nil {
			return nil, err
		}
		d.Trajectories++
		d.LargestTrajectory = max(d.LargestTrajectory, len(compact))
		d.Bytes += int64(len(enc.trajectory(compact)))
	}
	d.Requests += d.Batches + d.Trajectories
	return p, nil
}

// checkedEvent encodes o's event and passes it through the gate.
func checkedEvent(o snapshot.Observation, scanner *redact.Scanner) ([]byte, error) {
	ev, err := encodeEvent(o)
	if err != nil {
		return nil, err
	}
	if err := scanner.CheckPayload("an event", ev); err != nil {
		var pe *redact.PayloadError
		if errors.As(err, &pe) {
			pe.Where = "the event of trial " + strconv.Quote(o.TrialID) + " (from " + snapshot.ObservationsFile + ")"
		}
		return nil, err
	}
	return ev, nil
}

// Plan verifies the snapshot in dir and reports what an upload would send,
// without credentials or network. A tampered snapshot gives a
// *snapshot.VerifyError, a record over a limit a *RecordError. sc is the
// invocation's registry of secrets (nil: the credential patterns only).
func Plan(dir string, sc *redact.Scanner) (*DryRun, error) {
	if sc == nil {
		sc = redact.NewScanner(nil)
	}
	p, err := prepare(dir, "", false, sc)
	if err != nil {
		return nil, err
	}
	p.snap.Close()
	return &p.dry, nil
}

// Snapshot verifies the snapshot in dir and uploads it. The summary is
// returned whenever verification passed, also with an error, and then
// tells how far the upload got. Errors callers branch on:
// *snapshot.VerifyError,
// *RecordError, *MissingEnvError, *ConfigError (nothing sent);
// *HTTPError (a permanent refusal), *TransportError (retries exhausted),
// *RedirectError, *ResponseError; *ConflictError (everything was sent but
// the server holds different records); ctx.Err() when cancelled.
func Snapshot(ctx context.Context, dir string, cfg Config) (*Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	endpoint, _ := parseEndpoint(cfg.Endpoint) // checked by Validate
	cfg = cfg.withDefaults()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Progress != nil {
		// Verifying a large snapshot takes seconds: say so before it.
		cfg.Progress(Progress{Phase: PhaseVerifying})
	}
	scanner := cfg.scanner()
	p, err := prepare(dir, cfg.RunID, true, scanner)
	if err != nil {
		return nil, err
	}
	defer p.snap.Close()
	u := &uploader{
		p:   p,
		cfg: cfg,
		enc: &encoder{runID: cfg.RunID, roundID: p.m.RoundID},
		sum: &Summary{Dir: dir, RunID: cfg.RunID, RoundID: p.m.RoundID, ConflictIDs: []string{}},
		s: &sender{
			doer:   httpClient(cfg.HTTPClient, endpoint, cfg.Concurrency),
			url:    endpoint.String() + IngestPath,
			origin: origin(endpoint),
			token:  cfg.Token,
			gate:   scanner,
			cfg:    cfg,
		},
		conflictSet: map[string]bool{},
		scanner:     scanner,
	}
	u.s.onRetry = u.retried
	err = u.run(ctx)
	u.finish()
	if err != nil {
		return u.sum, err
	}
	if u.sum.Conflicts > 0 {
		return u.sum, &ConflictError{RoundID: p.m.RoundID, Count: u.sum.Conflicts, TrialIDs: u.sum.ConflictIDs}
	}
	return u.sum, nil
}

type uploader struct {
	p   *prepared
	cfg Config
	enc *encoder
	s   *sender

	// mu guards what requests in flight file into: the summary, done
	// and conflictSet; Progress is called with it held, so never twice
	// at once.
	mu          sync.Mutex
	sum         *Summary
	done        int
	acked       int64 // body bytes of answered requests
	conflictSet map[string]bool
	scanner     *redact.Scanner
}

func (u *uploader) run(ctx context.Context) error {
	if err := u.post(ctx, KindProtocol, u.enc.protocol(u.p.protocol), nil, &u.sum.Protocol); err != nil {
		return err
	}
	if err := u.post(ctx, KindTotal, u.enc.total(u.p.m.Counts.Expected), nil, &u.sum.Total); err != nil {
		return err
	}

	f := newInflight(ctx, u.cfg.Concurrency)
	err := u.sendEvents(f)
	if err == nil {
		err = u.sendTrajectories(f)
	}
	if werr := f.wait(); werr != nil {
		// A request's failure is the cause; a read error that follows
		// from the cancellation it caused is not.
		err = werr
	}
	if err != nil {
		return err
	}
	u.sum.Complete = true
	return nil
}

// sendTrajectories reads, checks and sends the trajectories; bodies are
// built here, one at a time, so at most Concurrency are held at once.
func (u *uploader) sendTrajectories(f *inflight) error {
	for tr, err := range u.p.snap.Trajectories() {
		if err != nil {
			return err
		}
		// The bytes match the SHA-256 that was verified (Trajectories
		// checks it), so they are the ones prepare checked and gated.
		compact, h, err := checkTrajectory(tr.Name, tr.Data, u.p.m.RoundID)
		if err != nil {
			return err
		}
		body, ids := u.enc.trajectory(compact), []string{h.TrialID}
		if err := f.start(func(ctx context.Context) error {
			return u.post(ctx, KindTrajectory, body, ids, &u.sum.Trajectories)
		}); err != nil {
			return err
		}
	}
	return nil
}

// sendEvents sends the observations in batches, from the events held by
// prepare or, for a very large snapshot, from the verified observations
// again (snapshot.Open kept the bytes it hashed: the file on disk is not
// read again), each event passed through the gate again.
func (u *uploader) sendEvents(f *inflight) error {
	postBatch := func(events [][]byte, ids []string) error {
		body := u.enc.observations(events)
		return f.start(func(ctx context.Context) error {
			return u.post(ctx, KindObservations, body, ids, &u.sum.Events)
		})
	}
	if u.p.held != nil {
		return u.p.held.batches(MaxEventsPerRequest, postBatch)
	}
	batch := make([][]byte, 0, MaxEventsPerRequest)
	var ids []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		// ids go with the request in flight; batch is copied into the body.
		err := postBatch(batch, ids)
		batch, ids = batch[:0], nil
		return err
	}
	for o, err := range u.p.snap.Observations() {
		if err != nil {
			return fmt.Errorf("failed to read the snapshot's observations again: %w", err)
		}
		ev, err := checkedEvent(o, u.scanner)
		if err != nil {
			return err
		}
		batch = append(batch, ev)
		ids = append(ids, o.TrialID)
		if len(batch) == MaxEventsPerRequest {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// inflight runs requests with at most n in flight. The first failure
// cancels the others and stops new ones from starting; it is the error
// wait returns.
type inflight struct {
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup

	mu  sync.Mutex
	err error
}

func newInflight(ctx context.Context, n int) *inflight {
	ctx, cancel := context.WithCancel(ctx)
	return &inflight{ctx: ctx, cancel: cancel, slots: make(chan struct{}, n)}
}

// start runs fn once a slot is free; it returns the first failure instead
// when there is one (fn then does not run).
func (f *inflight) start(fn func(ctx context.Context) error) error {
	select {
	case f.slots <- struct{}{}:
	case <-f.ctx.Done():
		return f.failure()
	}
	if err := f.failure(); err != nil {
		<-f.slots
		return err
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer func() { <-f.slots }()
		if err := fn(f.ctx); err != nil {
			f.mu.Lock()
			if f.err == nil {
				f.err = err
				f.cancel()
			}
			f.mu.Unlock()
		}
	}()
	return nil
}

// failure is the first failure, or the context's error once it ended.
func (f *inflight) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	return f.ctx.Err()
}

// wait waits for every request started and returns the first failure.
func (f *inflight) wait() error {
	f.wg.Wait()
	err := f.failure()
	f.cancel()
	return err
}

// post sends one request and files its answer. ids are the trial IDs of
// its records, used to name conflicts when the server does not.
func (u *uploader) post(ctx context.Context, kind string, body []byte, ids []string, t *Tally) error {
	records := max(len(ids), 1)
	// The last gate before the wire, over the request as it is sent:
	// prepare checked every record it holds.
	if err := u.scanner.CheckPayload("a "+kind+" request", body); err != nil {
		return err
	}
	r, err := u.s.send(ctx, kind, body, records)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sum.Requests, u.sum.Bytes = u.s.sent()
	if err != nil {
		return err
	}
	u.done++
	u.acked += int64(len(body))
	t.add(r)
	u.sum.Accepted += r.Accepted
	u.sum.Duplicates += r.Duplicates
	u.sum.Conflicts += r.Conflicts
	if r.Conflicts > 0 && len(ids) > 0 {
		for _, id := range conflictTrials(r.ConflictIDs, ids) {
			u.conflictSet[id] = true
		}
	}
	u.report(Progress{Kind: kind})
	return nil
}

// conflictTrials returns the trials of a request to report as conflicts.
// The server's conflict_ids are trusted only as far as they name trials of
// the request (ids): anything else — a trial this request did not carry,
// or text with terminal escape sequences from a broken or hostile server —
// would be printed to the user as a fact. When the server names none of
// the request's trials, every trial of the request is a candidate
// (documented in docs/ingest-api.md).
func conflictTrials(named, ids []string) []string {
	var out []string
	for _, id := range named {
		if slices.Contains(ids, id) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return ids
	}
	return out
}

func (u *uploader) retried(kind string, r retryInfo) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sum.Retries++
	u.report(Progress{Kind: kind, Retry: r.try, RetryIn: r.wait, RetryWhy: r.reason})
}

// report calls the Progress callback; u.mu is held.
func (u *uploader) report(p Progress) {
	if u.cfg.Progress == nil {
		return
	}
	_, sent := u.s.sent()
	p.Phase = PhaseUploading
	p.Done, p.Total, p.Bytes, p.Acked, p.Conflicts = u.done, u.p.dry.Requests, sent, u.acked, u.sum.Conflicts
	u.cfg.Progress(p)
}

func (u *uploader) finish() {
	u.sum.Requests, u.sum.Bytes = u.s.sent()
	u.sum.AcceptedRequests, u.sum.AcceptedBytes = u.done, u.acked
	f := u.s.failures()
	u.sum.FailedToConnect, u.sum.NoAnswer, u.sum.ErrorAnswers = f.connect, f.noAnswer, f.answered
	ids := make([]string, 0, len(u.conflictSet))
	for id := range u.conflictSet {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	u.sum.ConflictIDs = ids
}
