package harbor

import (
	"math"
	"strconv"
	"time"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// TimingInfo is one of Harbor's phase timings ({started_at, finished_at},
// UTC, each nullable). A value of the wrong type is read as null: timings
// explain a trial, they never judge it.
type TimingInfo struct {
	StartedAt, FinishedAt *string
}

// Seconds is the phase's duration, when both ends are RFC 3339 times and
// the end is not before the start.
func (t *TimingInfo) Seconds() (float64, bool) {
	if t == nil || t.StartedAt == nil || t.FinishedAt == nil {
		return 0, false
	}
	a, err1 := time.Parse(time.RFC3339Nano, *t.StartedAt)
	b, err2 := time.Parse(time.RFC3339Nano, *t.FinishedAt)
	if err1 != nil || err2 != nil || b.Before(a) {
		return 0, false
	}
	return b.Sub(a).Seconds(), true
}

// Timings are the trial-level phase timings; a nil member is a phase
// that never started (or a multi-step trial's agent and verifier, which
// Harbor times per step).
type Timings struct {
	EnvironmentSetup, AgentSetup, AgentExecution, Verifier *TimingInfo
}

// Usage is Harbor's AgentContext token and cost counts (n_input_tokens
// includes the cache tokens). For a multi-step trial it is the sum over
// the steps' agent_result, as Harbor's compute_token_cost_totals does. A
// nil member was null, absent or not a number.
type Usage struct {
	InputTokens, CacheTokens, OutputTokens *int64
	CostUSD                                *float64
}

// IsZero reports whether no count was given.
func (u *Usage) IsZero() bool {
	return u == nil || u.InputTokens == nil && u.CacheTokens == nil && u.OutputTokens == nil && u.CostUSD == nil
}

// add sums o into u, member by member (nil + x = x).
func (u *Usage) add(o Usage) {
	addInt := func(dst **int64, v *int64) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(int64)
		}
		**dst += *v
	}
	addInt(&u.InputTokens, o.InputTokens)
	addInt(&u.CacheTokens, o.CacheTokens)
	addInt(&u.OutputTokens, o.OutputTokens)
	if o.CostUSD != nil {
		if u.CostUSD == nil {
			u.CostUSD = new(float64)
		}
		*u.CostUSD += *o.CostUSD
	}
}

// The extras below read an object whose syntax the decoder has already
// checked, taking only the members of the expected type and ignoring the
// rest, so a timing or usage value can never make a result unreadable.

// objectMembers calls fn with each top-level key of the object raw and a
// decoder positioned on its value's first token (kind k); fn must consume
// the value (Skip). It stops quietly at anything unexpected. d is the
// caller's scratch decoder, reset over raw: a result has up to seven
// timing and usage objects, and a decoder per object was a third of an
// import's allocations. The key is valid only until fn reads the value's
// text, and only the strings fn keeps are allocated.
func objectMembers(d *jsonscan.Decoder, raw []byte, fn func(key []byte, d *jsonscan.Decoder, k jsonscan.Kind) bool) {
	d.Reset(raw, scanOpts)
	defer d.Reset(nil, scanOpts)
	if k, err := d.Next(); err != nil || k != jsonscan.BeginObject {
		return
	}
	for {
		k, err := d.Next()
		if err != nil || k != jsonscan.String {
			return
		}
		key := d.Text()
		v, err := d.Next()
		if err != nil || !fn(key, d, v) {
			return
		}
	}
}

// skipped is fn's usual tail: skip what was not taken.
func skipped(d *jsonscan.Decoder, k jsonscan.Kind) bool { return d.Skip(k) == nil }

// timingText is where one phase timing's strings are in the decoder's
// times: started_at [0] and finished_at [1], each from, to and whether
// it was there; present says the timing was an object.
type timingText struct {
	span    [2]struct{ from, to int }
	seen    [2]bool
	present bool
}

// timingWithText holds a TimingInfo with the strings it points to.
type timingWithText struct {
	t TimingInfo
	s [2]string
}

// parseTiming reads a timing object, appending its strings to *text. A
// trial has up to four timings: their strings are cut from one
// allocation, and they are held together (finishTimings); a string each
// with its own holder was most of an import's allocations.
func parseTiming(sub *jsonscan.Decoder, raw []byte, text *[]byte) timingText {
	t := timingText{present: true}
	objectMembers(sub, raw, func(key []byte, d *jsonscan.Decoder, k jsonscan.Kind) bool {
		if k != jsonscan.String {
			return skipped(d, k)
		}
		var i int
		switch string(key) {
		case "started_at":
			i = 0
		case "finished_at":
			i = 1
		default:
			return skipped(d, k)
		}
		from := len(*text)
		*text = append(*text, d.Text()...) // after the switch: it may reuse key's memory
		t.span[i].from, t.span[i].to, t.seen[i] = from, len(*text), true
		return true
	})
	return t
}

// finishTimings sets the result's Timings from what timing read: the
// strings of all four share one allocation, the TimingInfos another
// (none for ReadAttempt's result, whose timings are the decoder's).
func (d *decoder) finishTimings() {
	var holders *[4]timingWithText
	var all string
	for i := range d.timeAt {
		at := &d.timeAt[i]
		if !at.present {
			continue
		}
		if holders == nil {
			if d.scratch {
				holders = &d.timings
				*holders = [4]timingWithText{}
			} else {
				holders = new([4]timingWithText)
			}
			all = string(d.times)
		}
		tt := &holders[i]
		for k, ok := range at.seen {
			if ok {
				tt.s[k] = all[at.span[k].from:at.span[k].to]
			}
		}
		if at.seen[0] {
			tt.t.StartedAt = &tt.s[0]
		}
		if at.seen[1] {
			tt.t.FinishedAt = &tt.s[1]
		}
		switch i {
		case 0:
			d.res.Timings.EnvironmentSetup = &tt.t
		case 1:
			d.res.Timings.AgentSetup = &tt.t
		case 2:
			d.res.Timings.AgentExecution = &tt.t
		default:
			d.res.Timings.Verifier = &tt.t
		}
	}
}

// usageValues holds the counts a Usage points to.
type usageValues struct {
	n    [3]int64 // input, cache, output tokens
	cost float64
}

// parseUsage reads a usage object; its counts share one allocation, or
// are kept in vals when it is not nil.
func parseUsage(sub *jsonscan.Decoder, raw []byte, vals *usageValues) Usage {
	var u Usage
	objectMembers(sub, raw, func(key []byte, d *jsonscan.Decoder, k jsonscan.Kind) bool {
		if k != jsonscan.Number {
			return skipped(d, k)
		}
		i := 0
		switch string(key) {
		case "n_input_tokens":
		case "n_cache_tokens":
			i = 1
		case "n_output_tokens":
			i = 2
		case "cost_usd":
			f, err := strconv.ParseFloat(string(d.Raw()), 64)
			if err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && f >= 0 {
				if vals == nil {
					vals = new(usageValues)
				}
				vals.cost = f
				u.CostUSD = &vals.cost
			}
			return true
		default:
			return true
		}
		n, err := strconv.ParseInt(string(d.Raw()), 10, 64)
		if err != nil || n < 0 {
			return true
		}
		if vals == nil {
			vals = new(usageValues)
		}
		vals.n[i] = n
		switch i {
		case 0:
			u.InputTokens = &vals.n[0]
		case 1:
			u.CacheTokens = &vals.n[1]
		default:
			u.OutputTokens = &vals.n[2]
		}
		return true
	})
	return u
}
