package upload

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/tuneplane/tpctl/redact"
)

// Doer sends one HTTP request; *http.Client implements it. Implementations
// must return a non-nil response or a non-nil error, as net/http does.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

var _ Doer = (*http.Client)(nil)

// Response is the body of a 200 answer: how the server filed the records
// of one request. ConflictIDs is an optional extension naming the trials
// whose stored record differs (see docs/ingest-api.md).
type Response struct {
	Accepted    int      `json:"accepted"`
	Duplicates  int      `json:"duplicates"`
	Conflicts   int      `json:"conflicts"`
	ConflictIDs []string `json:"conflict_ids,omitempty"`
}

// HTTPError is a response the client does not accept. Status 400, 401,
// 403, 413 and 422 are permanent: the same request would fail again.
type HTTPError struct {
	Status int
	Kind   string // request kind, e.g. "observations"
	// Detail is the server's explanation, scrubbed of the token, cut to
	// 300 characters, without control characters. May be empty.
	Detail string
	// RetryAfter is the wait the server asked for (429/503), if any.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	var msg string
	switch e.Status {
	case http.StatusBadRequest:
		msg = "the ingest API rejected the %s request as malformed (HTTP 400)"
	case http.StatusUnauthorized:
		msg = "the ingest API refused the token for the %s request (HTTP 401): it is wrong or has expired"
	case http.StatusForbidden:
		msg = "the ingest API forbids the %s request (HTTP 403): the token is not an ingest token or is not scoped to this run"
	case http.StatusRequestEntityTooLarge:
		msg = "the ingest API refused the %s request as over a limit (HTTP 413)"
	case http.StatusUnprocessableEntity:
		msg = "the ingest API could not process the %s request (HTTP 422)"
	case http.StatusTooManyRequests:
		msg = "the ingest API is rate limiting the %s request (HTTP 429)"
	case http.StatusNotFound:
		msg = "the ingest API was not found for the %s request (HTTP 404): check TUNEPLANE_JOB_ENDPOINT"
	default:
		if e.Status >= 500 {
			msg = "the ingest API failed the %s request (HTTP " + strconv.Itoa(e.Status) + ")"
		} else {
			msg = "the ingest API answered the %s request with an unexpected HTTP " + strconv.Itoa(e.Status)
		}
	}
	msg = fmt.Sprintf(msg, e.Kind)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Permanent reports whether repeating the request cannot help.
func (e *HTTPError) Permanent() bool { return !retryableStatus(e.Status) }

func retryableStatus(s int) bool { return s == http.StatusTooManyRequests || s >= 500 }

// TransportError is a request that still failed after the last try, or
// whose retry wait the server asked to be longer than the client waits.
// Err is the last failure (a network error or a retryable *HTTPError).
type TransportError struct {
	Endpoint string // origin only
	Kind     string
	Tries    int
	Err      error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("failed to send the %s request to %s after %d tries: %v", e.Kind, e.Endpoint, e.Tries, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// ResponseError is a 2xx answer that does not follow the contract: not the
// counts JSON, or counts that do not add up to the records sent.
type ResponseError struct {
	Kind string
	Msg  string
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("the ingest API answered the %s request with a response tpctl does not understand: %s", e.Kind, e.Msg)
}

// retryInfo describes one retry for the progress callback.
type retryInfo struct {
	try    int // the try about to be made, 2…MaxTries
	wait   time.Duration
	reason string
}

// sender posts request bodies with retries. It is the decorator around a
// Doer: every body is a []byte, so every try sends the same bytes.
type sender struct {
	doer    Doer
	url     string // endpoint + IngestPath
	origin  string
	token   string
	gate    *redact.Scanner // masks what the server says before it is cut
	cfg     Config
	onRetry func(kind string, r retryInfo)

	mu       sync.Mutex // guards the counters below: requests run concurrently
	requests int        // tries made, successful or not
	bytes    int64      // body bytes of those tries
	failed   failedTries
}

// failedTries counts the tries that stored nothing, by what went wrong:
// a summary must not count their bytes as sent to a server (issue 27).
type failedTries struct {
	connect  int // no connection: refused, unreachable, DNS, TLS handshake
	noAnswer int // connected, but the answer never arrived (reset, timeout)
	answered int // the server answered with an error status or a bad body
}

// sent returns the tries made so far and their body bytes.
func (s *sender) sent() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.bytes
}

// failures returns the failed tries so far.
func (s *sender) failures() failedTries {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// countFailure files a failed try under what went wrong.
func (s *sender) countFailure(f *int) {
	s.mu.Lock()
	*f++
	s.mu.Unlock()
}

// noConnection reports whether err happened before a connection to the
// server existed, so no byte of the request reached it.
func noConnection(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	var tlsErr *tls.RecordHeaderError
	var cert *tls.CertificateVerificationError
	return errors.As(err, &dns) || errors.As(err, &tlsErr) || errors.As(err, &cert)
}

// maxResponse caps how much of a response body is read.
const maxResponse = 64 << 10

// send posts body and returns the decoded counts. It makes at most
// cfg.MaxTries tries and waits between them; records is the number of
// records in body, which the answer must account for.
func (s *sender) send(ctx context.Context, kind string, body []byte, records int) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var last error
	for try := 1; ; try++ {
		resp, wait, err := s.try(ctx, kind, body, records)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !retryable(err) {
			return nil, unwrapPermanent(err)
		}
		last = err
		if try >= s.cfg.MaxTries {
			return nil, &TransportError{Endpoint: s.origin, Kind: kind, Tries: try, Err: last}
		}
		if wait > s.cfg.MaxRetryAfter {
			return nil, &TransportError{Endpoint: s.origin, Kind: kind, Tries: try,
				Err: fmt.Errorf("%w; %s", last, retryLater(wait, s.cfg.MaxRetryAfter, time.Now()))}
		}
		if wait == 0 {
			wait = s.backoff(try)
		}
		if s.onRetry != nil {
			s.onRetry(kind, retryInfo{try: try + 1, wait: wait, reason: retryReason(err)})
		}
		if err := s.cfg.Wait(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// backoff is the wait before try n+1: full exponential growth capped at
// MaxDelay, with "equal jitter" (a random point in the upper half) so
// many clients restarting together spread out but never retry instantly.
func (s *sender) backoff(n int) time.Duration {
	d := s.cfg.BaseDelay
	for i := 1; i < n && d < s.cfg.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, s.cfg.MaxDelay)
	half := d / 2
	return half + rand.N(half+1)
}

// try makes one attempt. wait > 0 is a Retry-After the server asked for.
func (s *sender) try(ctx context.Context, kind string, body []byte, records int) (*Response, time.Duration, error) {
	tctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, &permanentError{err}
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	// No Idempotency-Key header: the identities inside the body make
	// every request idempotent (SPEC §6), and net/http would treat the
	// header as permission to replay on its own, invisibly to the bounded
	// tries and to the progress report.
	req.Header.Set("User-Agent", "tpctl-upload/1")
	s.mu.Lock()
	s.requests++
	s.bytes += int64(len(body))
	s.mu.Unlock()
	resp, err := s.doer.Do(req)
	if err != nil {
		var re *RedirectError
		if errors.As(err, &re) {
			return nil, 0, &permanentError{re}
		}
		if errors.Is(err, errTooManyRedirects) {
			return nil, 0, &permanentError{errTooManyRedirects}
		}
		if ctx.Err() == nil {
			if noConnection(err) {
				s.countFailure(&s.failed.connect)
			} else {
				s.countFailure(&s.failed.noAnswer)
			}
		}
		return nil, 0, cleanNetError(err)
	}
	defer func() {
		// Drain what is left (bounded) so the connection is reused.
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
		resp.Body.Close()
	}()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if rerr != nil {
			// The server may have committed; a replay is safe.
			s.countFailure(&s.failed.noAnswer)
			return nil, 0, cleanNetError(rerr)
		}
		r, err := decodeResponse(kind, data, records)
		if err != nil {
			s.countFailure(&s.failed.answered)
			return nil, 0, &permanentError{err}
		}
		return r, 0, nil
	}
	s.countFailure(&s.failed.answered)
	he := &HTTPError{Status: resp.StatusCode, Kind: kind, Detail: s.detail(data)}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		he.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return nil, he.RetryAfter, he
}

// permanentError marks an error that must not be retried.
type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

func retryable(err error) bool {
	var pe *permanentError
	if errors.As(err, &pe) {
		return false
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return !he.Permanent()
	}
	return true // network errors, timeouts, resets
}

// unwrapPermanent strips the internal marker before returning to callers.
func unwrapPermanent(err error) error {
	var pe *permanentError
	if errors.As(err, &pe) {
		return pe.err
	}
	return err
}

func retryReason(err error) string {
	var he *HTTPError
	if errors.As(err, &he) {
		return "HTTP " + strconv.Itoa(he.Status)
	}
	return "network error"
}

// cleanNetError keeps a network error's meaning and drops the request URL
// that *url.Error repeats (the endpoint is reported once, by origin).
func cleanNetError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// detail turns an error body into one safe line: the "error" or "message"
// member of a JSON body, else the text; the token is scrubbed because a
// careless server may echo the Authorization header.
func (s *sender) detail(data []byte) string {
	var obj struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	text := string(data)
	if json.Unmarshal(data, &obj) == nil {
		switch {
		case obj.Message != "":
			text = obj.Message
		case obj.Error != nil:
			if str, ok := obj.Error.(string); ok {
				text = str
			} else if b, err := json.Marshal(obj.Error); err == nil {
				text = string(b)
			}
		}
	}
	if s.token != "" {
		text = redact.Scrub(text, s.token)
	}
	// Masked here, before the cut below, which could leave half a secret
	// the printed message's gate no longer recognises; and before the
	// line breaks are folded, which could split one (issue 26).
	text = s.gate.Mask(text)
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, text)
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > 300 {
		text = string(r[:300]) + "…"
	}
	// Scrub again after folding: a token split by whitespace could be
	// rejoined above.
	if s.token != "" {
		text = redact.Scrub(text, s.token)
	}
	return text
}

// decodeResponse reads {"accepted","duplicates","conflicts"} and checks
// that every record sent is accounted for exactly once.
func decodeResponse(kind string, data []byte, records int) (*Response, error) {
	var r Response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &ResponseError{Kind: kind, Msg: fmt.Sprintf("expected {\"accepted\",\"duplicates\",\"conflicts\"}: %v", err)}
	}
	if r.Accepted < 0 || r.Duplicates < 0 || r.Conflicts < 0 {
		return nil, &ResponseError{Kind: kind, Msg: "negative counts"}
	}
	if n := r.Accepted + r.Duplicates + r.Conflicts; n != records {
		return nil, &ResponseError{Kind: kind, Msg: fmt.Sprintf("it accounts for %d records but %d were sent", n, records)}
	}
	if len(r.ConflictIDs) > records {
		r.ConflictIDs = r.ConflictIDs[:records]
	}
	return &r, nil
}

// retryAfterCap is the longest wait parseRetryAfter reports: any longer
// Retry-After, up to values no integer holds, means "not within a day".
const retryAfterCap = 24 * time.Hour

// parseRetryAfter reads delay-seconds or an HTTP-date (RFC 9110 §10.2.3),
// capped at retryAfterCap. Delay-seconds too large for an int64
// ("99999999999999999999") are the cap, not garbage: the server means
// "much later". Unparseable or past values give 0, meaning "use the
// backoff".
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		// Cap before multiplying so a huge value cannot overflow; an
		// out-of-range value is larger than the cap.
		if err != nil || secs > int64(retryAfterCap/time.Second) {
			return retryAfterCap
		}
		return time.Duration(secs) * time.Second
	}
	if _, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return 0 // negative: not a delay RFC 9110 allows
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, retryAfterCap)
		}
	}
	return 0
}

func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// retryLater says when a server that asked for a wait longer than the
// retry budget (limit) may be tried again.
func retryLater(wait, limit time.Duration, now time.Time) string {
	if wait >= retryAfterCap {
		return fmt.Sprintf("the server asked to wait more than a day (Retry-After), far longer than tpctl waits (at most %s): the upload stopped; run it again no sooner than %s",
			limit, now.Add(retryAfterCap).UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("the server asked to wait %s (Retry-After), longer than tpctl waits (at most %s): run the upload again after %s",
		wait.Round(time.Second), limit, now.Add(wait).UTC().Format(time.RFC3339))
}
