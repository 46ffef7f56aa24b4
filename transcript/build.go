package transcript

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/redact"
)

// Part is one piece of an attempt's body, read by its producer: a
// multi-step Harbor trial has one per step, in execution order.
type Part struct {
	// Marker, when not empty, becomes a system message put before the
	// part's own messages: the step boundary. It is redacted, scanned and
	// counted like any other message.
	Marker string
	// Path names the part's file in messages (a secret found, a skip).
	Path string
	// Read streams the part's messages, in order, into the body. The
	// producer's converter into the trajectory protocol implements it
	// (producers/harbor for ATIF).
	Read func(ctx context.Context, body *Body) (SourceInfo, error)
}

// Body is the trajectory being built, as a part's reader sees it.
type Body struct {
	c    *collector
	r    redact.Redactor
	sc   *redact.Scanner
	path string
}

// Full reports that the body has no room left: the rest of a part's
// messages need only be counted (Count), never converted or redacted.
func (b *Body) Full() bool { return b.c.full }

// Add counts one message and, while the body has room, redacts it, scans
// the redacted text (a hit is a *redact.SecretFoundError) and keeps it,
// cut to the limits. Its error aborts the build: return it.
func (b *Body) Add(ctx context.Context, m Message) error {
	return b.c.offer(ctx, b.r, b.sc, b.path, m)
}

// Count counts n messages a reader passed over once the body was full.
func (b *Body) Count(n int) { b.c.total += n }

// BuildParts builds one body from the parts of an attempt:
//
//  1. each part's messages (after its Marker message) come from its
//     reader, in the order of parts;
//  2. every string of a message that may be kept (content, tool name,
//     call ID) goes through r — before any cut, so a cut never splits a
//     secret the redactor would have recognised;
//  3. the whole redacted strings are scanned with sc; a hit aborts;
//  4. messages are kept in order up to lim (DefaultLimits when zero), the
//     last one cut on a character boundary if needed; the rest are only
//     counted, never redacted or held in memory. The cut is declared on
//     the whole (total_messages counts every message of every part,
//     markers included).
//
// RoundID, TrialID and TrialAttempt are left for the caller; Headroom bytes
// of lim.MaxBytes are kept free for them.
//
// Errors: *SkipError for a part to leave out with a stated reason, which
// skips the whole body (a body never silently lacks a step); anything else
// aborts the import: *redact.Error or another redactor failure,
// *redact.SecretFoundError, the context's error, or a read error.
// r must not be nil; a nil sc means redact.NewScanner(os.Environ()).
func BuildParts(ctx context.Context, parts []Part, r redact.Redactor, sc *redact.Scanner, lim Limits) (*Trajectory, error) {
	if r == nil {
		return nil, errors.New("transcripts need a redactor; pass --redactor (e.g. builtin:secrets)")
	}
	if len(parts) == 0 {
		return nil, errors.New("no trajectory file to build from")
	}
	if sc == nil {
		sc = redact.NewScanner(os.Environ())
	}
	lim = lim.withDefaults()
	t := &Trajectory{Scope: Scope, CapturePolicy: CapturePolicy}
	c := newCollector(lim, t, Headroom)
	var versions []string
	for _, p := range parts {
		if p.Marker != "" {
			if err := c.offer(ctx, r, sc, p.Path, Message{Role: "system", Content: p.Marker}); err != nil {
				return nil, err
			}
		}
		if p.Read == nil {
			return nil, fmt.Errorf("trajectory part %q has no reader", p.Path)
		}
		info, err := p.Read(ctx, &Body{c: c, r: r, sc: sc, path: p.Path})
		if err != nil {
			return nil, err
		}
		if !slices.Contains(versions, info.SchemaVersion) {
			versions = append(versions, info.SchemaVersion)
		}
		t.Source.Steps += info.Steps
		t.Source.UnknownFields += info.UnknownFields
		t.Source.UnknownFieldPaths = append(t.Source.UnknownFieldPaths, info.UnknownFieldPaths...)
		t.Source.SubagentRefs += info.SubagentRefs
		t.Source.EmbeddedSubagents += info.EmbeddedSubagents
	}
	t.Source.SchemaVersion = strings.Join(versions, ", ")
	t.Messages = c.kept
	if t.Messages == nil {
		t.Messages = []Message{}
	}
	t.TotalMessages = c.total
	t.Truncated = c.truncated()
	return t, nil
}

// offer counts one message and, while the body has room, redacts, scans
// and keeps it.
func (c *collector) offer(ctx context.Context, r redact.Redactor, sc *redact.Scanner, path string, m Message) error {
	c.total++
	if c.full {
		return nil
	}
	pre, err := redactMessage(ctx, r, &m)
	if err != nil {
		return err
	}
	if err := scanMessage(sc, path, c.total-1, &m, pre); err != nil {
		return err
	}
	c.add(m)
	return nil
}

// redactMessage runs every string field of m through r. Empty strings are
// left as they are. It returns, per field (content, tool_name, call_id),
// what the redactor's prefilter found in its output, when r tells
// (redact.PrefilterRedactor), so the scan need not look again.
func redactMessage(ctx context.Context, r redact.Redactor, m *Message) ([3]redact.Candidates, error) {
	var pre [3]redact.Candidates
	pr, _ := r.(redact.PrefilterRedactor)
	one := func(s string, c *redact.Candidates) (string, error) {
		if s == "" {
			return s, nil
		}
		var out string
		var err error
		if pr != nil {
			out, *c, err = pr.RedactPrefiltered(ctx, s)
		} else {
			out, err = r.Redact(ctx, s)
		}
		if err != nil {
			return "", err
		}
		// Encoding would silently turn invalid bytes into U+FFFD; do it
		// here so sizes and scans see the final text.
		return strings.ToValidUTF8(out, "\uFFFD"), nil
	}
	var err error
	if m.Content, err = one(m.Content, &pre[0]); err != nil {
		return pre, err
	}
	for i, p := range []*string{m.ToolName, m.CallID} {
		if p != nil {
			if *p, err = one(*p, &pre[i+1]); err != nil {
				return pre, err
			}
		}
	}
	return pre, nil
}

// scanMessage scans the whole redacted strings of m (before any cut, which
// could hide half a secret from a pattern) and reports the first hit.
// pre holds what redaction's prefilter found per field (redactMessage).
func scanMessage(sc *redact.Scanner, path string, idx int, m *Message, pre [3]redact.Candidates) error {
	fields := []struct {
		name string
		v    *string
	}{{"content", &m.Content}, {"tool_name", m.ToolName}, {"call_id", m.CallID}}
	for i, f := range fields {
		if f.v == nil || *f.v == "" {
			continue
		}
		if hits := sc.ScanPrefiltered(f.name, *f.v, pre[i]); len(hits) > 0 {
			return &redact.SecretFoundError{
				Where:    fmt.Sprintf("trajectory %q message %d %s", path, idx, f.name),
				Detector: hits[0].Detector,
				Count:    hits[0].Count,
			}
		}
	}
	return nil
}
