package ingesttest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Action is a fault the receiver can inject.
type Action string

// Faults. Drop* close the TCP connection without an answer; DropAfterCommit
// does so after storing the records, which is the lost acknowledgement a
// client must survive by replaying.
const (
	DropBeforeCommit Action = "drop-before"
	DropAfterCommit  Action = "drop-after"
	Status500        Action = "500"
	Status503        Action = "503"
	Status429        Action = "429"
	// Slow waits Delay before handling the request normally (it still
	// commits, even if the client gave up waiting).
	Slow Action = "slow"
	// ExpireToken expires the request's token before it is checked: this
	// request and every later one with that token get 401.
	ExpireToken Action = "expire-token"
)

// MaxDelay bounds a Slow fault so a test cannot hang a server.
const MaxDelay = 30 * time.Second

// Fault is one injected failure.
type Fault struct {
	Action Action
	// Kind limits the fault to requests of one kind ("" matches any).
	Kind string
	// After skips the first After matching requests.
	After int
	// Times is how many matching requests get the fault (0 means 1).
	Times int
	// RetryAfter is sent as the Retry-After header (429, 503), verbatim:
	// delay-seconds or an HTTP-date.
	RetryAfter string
	// Delay is the wait of a Slow fault (capped at MaxDelay).
	Delay time.Duration

	seen, used int
}

// match returns the fault for a request of kind, if any, and counts it.
func (r *Receiver) match(kind string) *Fault {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.faults {
		if f.Kind != "" && f.Kind != kind {
			continue
		}
		times := max(f.Times, 1)
		if f.used >= times {
			continue
		}
		f.seen++
		if f.seen <= f.After {
			continue
		}
		f.used++
		c := *f
		return &c
	}
	return nil
}

// ParseFault reads the command-line form of a fault:
//
//	ACTION[,kind=KIND][,after=N][,times=N][,retry-after=VALUE][,delay=DURATION]
//
// for example "drop-after,kind=observations,after=2" or
// "429,retry-after=1,times=3".
func ParseFault(s string) (Fault, error) {
	parts := strings.Split(strings.TrimSpace(s), ",")
	f := Fault{Action: Action(parts[0])}
	switch f.Action {
	case DropBeforeCommit, DropAfterCommit, Status500, Status503, Status429, Slow, ExpireToken:
	default:
		return Fault{}, fmt.Errorf("fault %q: unknown action %q; use drop-before, drop-after, 500, 503, 429, slow or expire-token", s, parts[0])
	}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return Fault{}, fmt.Errorf("fault %q: %q is not key=value", s, p)
		}
		var err error
		switch k {
		case "kind":
			switch v {
			case "validation_protocol", "round_total", "observations", "trajectory":
				f.Kind = v
			default:
				err = fmt.Errorf("unknown kind %q", v)
			}
		case "after":
			f.After, err = count(v)
		case "times":
			f.Times, err = count(v)
		case "retry-after":
			if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r > '~' }) {
				err = fmt.Errorf("retry-after %q is not a header value", v)
			}
			f.RetryAfter = v
		case "delay":
			f.Delay, err = time.ParseDuration(v)
			if err == nil && (f.Delay < 0 || f.Delay > MaxDelay) {
				err = fmt.Errorf("delay %s is outside 0…%s", f.Delay, MaxDelay)
			}
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return Fault{}, fmt.Errorf("fault %q: %w", s, err)
		}
	}
	return f, nil
}

func count(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1_000_000 {
		return 0, fmt.Errorf("%q is not a count between 0 and 1000000", v)
	}
	return n, nil
}
