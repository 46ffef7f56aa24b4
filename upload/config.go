package upload

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tuneplane/tpctl/redact"
)

// Environment variables set by a TunePlane platform job.
const (
	EnvEndpoint = "TUNEPLANE_JOB_ENDPOINT"
	EnvRunID    = "TUNEPLANE_JOB_RUN_ID"
	EnvToken    = "TUNEPLANE_JOB_TOKEN"
)

// IngestPath is appended to the endpoint for every request.
const IngestPath = "/api/ingest/validation"

// Retry defaults. They keep a whole upload under about five minutes of
// waiting when the server is down, then give up with a hint to re-run
// `tpctl upload DIR` later.
const (
	DefaultMaxTries       = 8
	DefaultBaseDelay      = 500 * time.Millisecond
	DefaultMaxDelay       = 30 * time.Second
	DefaultMaxRetryAfter  = 2 * time.Minute
	DefaultRequestTimeout = 60 * time.Second
)

// Requests in flight at once. Latency, not bandwidth, bounds an upload of
// many small batches; a handful of connections hides most of it without
// looking like a flood to the server.
const (
	DefaultConcurrency = 6
	MaxConcurrency     = 32
)

// Config says where and how to upload. Endpoint, RunID and Token are
// required; every other field has a default.
type Config struct {
	// Endpoint is the platform base URL; requests go to Endpoint+IngestPath.
	// It must be https:// unless the host is a loopback address.
	Endpoint string
	// RunID is the platform run the round belongs to.
	RunID string
	// Token is the per-run ingest bearer token. It is only ever placed in
	// the Authorization header of requests to Endpoint's origin.
	Token string

	// HTTPClient is used for requests (nil: a client with sane timeouts).
	// It is copied, and the copy's CheckRedirect refuses redirects that
	// leave the endpoint's origin.
	HTTPClient *http.Client
	// MaxTries bounds the attempts per request, the first included
	// (0: DefaultMaxTries).
	MaxTries int
	// BaseDelay and MaxDelay shape the exponential backoff: the n-th retry
	// waits a random duration in [d/2, d] with d = min(BaseDelay·2ⁿ⁻¹,
	// MaxDelay) (0: the defaults).
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits for; a
	// server asking for longer ends the upload with a retry-later error
	// (0: DefaultMaxRetryAfter).
	MaxRetryAfter time.Duration
	// RequestTimeout bounds one try of one request (0: the default).
	RequestTimeout time.Duration
	// Concurrency is how many requests may be in flight at once, 1…
	// MaxConcurrency (0: DefaultConcurrency). The protocol and the round
	// total are always sent first, alone; events and trajectories follow
	// concurrently. Each request keeps its own tries, backoff and
	// Retry-After waits.
	Concurrency int
	// Progress, if set, is called after every request and before every
	// retry wait; never by two goroutines at once.
	Progress func(Progress)
	// Wait sleeps between tries; nil means a real timer. It must return
	// ctx.Err() when ctx ends first, and be safe for concurrent use (each
	// request in flight waits on its own). Tests replace it to run retries
	// in microseconds and to record the waits chosen.
	Wait func(ctx context.Context, d time.Duration) error
	// Environ is the environment whose secret values the outgoing-text
	// gate refuses to send (nil: this process's); Token is always one.
	Environ []string
}

// scanner is the outgoing-text gate for this upload: the secrets of
// Environ, the token itself, and the credential patterns.
func (c Config) scanner() *redact.Scanner {
	env := c.Environ
	if env == nil {
		env = os.Environ()
	}
	return redact.NewScanner(append(slices.Clone(env), EnvToken+"="+c.Token))
}

// MissingEnvError names every credential variable that is not set.
type MissingEnvError struct {
	Names []string
}

func (e *MissingEnvError) Error() string {
	verb := "is"
	if len(e.Names) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("%s %s not set: upload credentials come from the platform job", strings.Join(e.Names, " and "), verb)
}

// ConfigError is an endpoint, run ID or token that cannot be used. Its
// message never contains the token.
type ConfigError struct {
	Field string // the environment variable name
	Msg   string
}

func (e *ConfigError) Error() string { return e.Field + ": " + e.Msg }

// ConfigFromEnv reads the three TUNEPLANE_JOB_* variables through getenv
// (os.Getenv, or a lookup that also consults a config file) and validates
// them. The error names each missing variable and never includes the token.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		Endpoint: strings.TrimSpace(getenv(EnvEndpoint)),
		RunID:    strings.TrimSpace(getenv(EnvRunID)),
		Token:    strings.TrimSpace(getenv(EnvToken)),
	}
	var missing []string
	for _, kv := range [...]struct{ name, val string }{
		{EnvEndpoint, cfg.Endpoint}, {EnvRunID, cfg.RunID}, {EnvToken, cfg.Token},
	} {
		if kv.val == "" {
			missing = append(missing, kv.name)
		}
	}
	if len(missing) > 0 {
		return Config{}, &MissingEnvError{Names: missing}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate checks the endpoint, run ID and token. It is called by Snapshot
// too, so a Config built by hand gets the same checks.
func (c Config) Validate() error {
	if _, err := parseEndpoint(c.Endpoint); err != nil {
		// Someone may paste the token into the endpoint's path.
		var ce *ConfigError
		if c.Token != "" && errors.As(err, &ce) {
			ce.Msg = redact.Scrub(ce.Msg, c.Token)
		}
		return err
	}
	if c.RunID == "" {
		return &MissingEnvError{Names: []string{EnvRunID}}
	}
	if len(c.RunID) > 256 || strings.ContainsFunc(c.RunID, isControl) {
		return &ConfigError{Field: EnvRunID, Msg: "must be at most 256 characters without control characters"}
	}
	if c.Token == "" {
		return &MissingEnvError{Names: []string{EnvToken}}
	}
	if c.Concurrency < 0 || c.Concurrency > MaxConcurrency {
		return &ConfigError{Field: "concurrency", Msg: fmt.Sprintf("%d is out of range: use 1…%d", c.Concurrency, MaxConcurrency)}
	}
	// A token with spaces or control characters cannot be a header value;
	// net/http would refuse it later with a less useful message.
	if strings.ContainsFunc(c.Token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return &ConfigError{Field: EnvToken, Msg: "contains whitespace or control characters; copy the token again from the platform job"}
	}
	return nil
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

// parseEndpoint checks the endpoint URL: absolute http(s), no user info,
// query or fragment, and https unless the host is loopback.
func parseEndpoint(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, &MissingEnvError{Names: []string{EnvEndpoint}}
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes the input; a URL with credentials in it would
		// leak them, so say only what is wrong.
		return nil, &ConfigError{Field: EnvEndpoint, Msg: "is not a valid URL; expected https://HOST[/PREFIX]"}
	}
	if u.User != nil {
		return nil, &ConfigError{Field: EnvEndpoint, Msg: "must not contain user credentials; the token goes in TUNEPLANE_JOB_TOKEN"}
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, &ConfigError{Field: EnvEndpoint, Msg: "is not an absolute http(s) URL; expected https://HOST[/PREFIX]"}
	}
	// Only scheme, host and path are ever echoed: a query may hold a secret.
	shown := u.Scheme + "://" + u.Host + u.EscapedPath()
	// url.Parse takes any digits as a port; a port no socket can have
	// would otherwise surface as a network error, retried for a minute.
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, &ConfigError{Field: EnvEndpoint, Msg: fmt.Sprintf("%q has port %s; a port is 1 to 65535", shown, p)}
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, &ConfigError{Field: EnvEndpoint, Msg: fmt.Sprintf("%q has an empty port; remove the colon or give a port from 1 to 65535", shown)}
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, &ConfigError{Field: EnvEndpoint, Msg: fmt.Sprintf("%q must not have a query or fragment", shown)}
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, &ConfigError{Field: EnvEndpoint, Msg: fmt.Sprintf("%q uses http:// for a non-loopback host; the ingest token is only sent over https://", shown)}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// isLoopback accepts "localhost" and literal loopback IPs only: a name
// that merely resolves to 127.0.0.1 today is not trusted with plain http.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RedirectError is a redirect the client refused to follow because it
// leaves the endpoint's origin (scheme, host and port).
type RedirectError struct {
	From, To string // origins, never full URLs with queries
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("refused a redirect from %s to %s: the ingest token is never sent to another host", e.From, e.To)
}

var errTooManyRedirects = errors.New("stopped after 5 redirects")

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// httpClient returns a copy of base (or a default client) whose redirects
// must stay on the endpoint's origin. Go would drop the Authorization
// header on a cross-host redirect anyway; refusing is louder and also
// stops an https→http downgrade on the same host.
func httpClient(base *http.Client, endpoint *url.URL, conns int) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// One kept-alive connection per request in flight, and no more:
		// without the cap, a request starting just before another one's
		// connection goes idle dials one more.
		t.MaxIdleConnsPerHost = conns
		t.MaxConnsPerHost = conns
		t.ResponseHeaderTimeout = DefaultRequestTimeout
		c.Transport = t
	}
	want := origin(endpoint)
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if got := origin(req.URL); got != want {
			return &RedirectError{From: want, To: got}
		}
		if len(via) >= 5 {
			return errTooManyRedirects
		}
		return nil
	}
	return &c
}

func (c Config) withDefaults() Config {
	if c.MaxTries <= 0 {
		c.MaxTries = DefaultMaxTries
	}
	if c.BaseDelay <= 0 {
		c.BaseDelay = DefaultBaseDelay
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = DefaultMaxDelay
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.Wait == nil {
		c.Wait = sleep
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	return c
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
