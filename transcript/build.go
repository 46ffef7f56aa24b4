package transcript

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/atif"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/redact"
)

// Build reads the ATIF file at path and returns its platform trajectory:
//
//  1. the file is opened and decoded as a stream (atif.OpenFile, atif.Decode:
//     size cap checked on the stat size first, step and depth caps);
//  2. each step becomes messages (FromStep);
//  3. every string of a message that may be kept (content, tool name,
//     call ID) goes through r — before any cut, so a cut never splits a
//     secret the redactor would have recognised;
//  4. the whole redacted strings are scanned with sc; a hit aborts;
//  5. messages are kept in order up to lim (DefaultLimits when zero), the
//     last one cut on a character boundary if needed; the rest are only
//     counted, never redacted or held in memory.
//
// RoundID, TrialID and TrialAttempt are left for the caller; Headroom bytes
// of lim.MaxBytes are kept free for them.
//
// Errors: *SkipError for a file to leave out with a stated reason (not ATIF
// v1.x, over a size, step or depth cap, malformed, a symlink, missing);
// anything else aborts the import: *redact.Error or another redactor
// failure, *redact.SecretFoundError, the context's error, or a read error.
// r must not be nil; sc is the invocation's registry of secrets (nil: the
// credential patterns only).
func Build(ctx context.Context, path string, r redact.Redactor, sc *redact.Scanner, lim Limits) (*Trajectory, error) {
	return BuildParts(ctx, []Part{{Path: path}}, r, sc, lim)
}

// Part is one ATIF file of an attempt's body. A multi-step trial has one
// per step, in execution order.
type Part struct {
	// Marker, when not empty, becomes a system message put before the
	// part's own messages: the step boundary. It is redacted, scanned and
	// counted like any other message.
	Marker string
	Path   string
}

// BuildParts is Build over several files that make one body: their
// messages in the order of parts (each after its Marker message), with
// the limits applied to the whole and the cut declared on the whole
// (total_messages counts every message of every part, markers included).
// A part that must be skipped skips the whole body (*SkipError naming that
// file), so a body never silently lacks a step.
func BuildParts(ctx context.Context, parts []Part, r redact.Redactor, sc *redact.Scanner, lim Limits) (*Trajectory, error) {
	if r == nil {
		return nil, errors.New("transcripts need a redactor; pass --redactor (e.g. builtin:secrets)")
	}
	if len(parts) == 0 {
		return nil, errors.New("no trajectory file to build from")
	}
	if sc == nil {
		sc = redact.NewScanner(nil)
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
		info, refs, err := c.file(ctx, p.Path, r, sc)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(versions, info.SchemaVersion) {
			versions = append(versions, info.SchemaVersion)
		}
		t.Source.Steps += info.StepCount
		t.Source.UnknownFields += info.UnknownFields
		t.Source.UnknownFieldPaths = append(t.Source.UnknownFieldPaths, info.UnknownFieldPaths...)
		t.Source.SubagentRefs += refs
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

// file streams one ATIF file into the collector.
func (c *collector) file(ctx context.Context, path string, r redact.Redactor, sc *redact.Scanner) (*atif.Trajectory, int, error) {
	f, err := atif.OpenFile(path, atif.Options{})
	if err != nil {
		return nil, 0, skipOr(path, err)
	}
	defer f.Close()
	var abort error
	refs := 0
	// Once the body is full the remaining steps are only counted: Skim
	// checks them as strictly but decodes none of their text.
	opts := atif.Options{Skim: func() bool { return c.full }}
	info, err := atif.Decode(f, opts, func(s *atif.Step) error {
		if err := ctx.Err(); err != nil {
			abort = err
			return err
		}
		for _, o := range s.Observation {
			refs += len(o.SubagentRefs)
		}
		if s.Skimmed {
			c.total += messageCount(s)
			return nil
		}
		for _, m := range FromStep(s) {
			if err := c.offer(ctx, r, sc, path, m); err != nil {
				abort = err
				return err
			}
		}
		return nil
	})
	if abort != nil {
		return nil, 0, abort
	}
	if err != nil {
		return nil, 0, skipOr(path, err)
	}
	return info, refs, nil
}

// skipOr turns the errors that mean "this file cannot be exported" into a
// *SkipError and wraps the others with the path.
func skipOr(path string, err error) error {
	var (
		u  *atif.UnsupportedFormatError
		l  *atif.LimitError
		s  *atif.SyntaxError
		pe *safefs.PathError
	)
	switch {
	case errors.As(err, &u):
		return &SkipError{Path: path, Reason: err.Error(), Err: err}
	case errors.As(err, &l):
		return &SkipError{Path: path, Reason: "over a limit: " + err.Error(), Err: err}
	case errors.As(err, &s):
		return &SkipError{Path: path, Reason: "malformed: " + err.Error(), Err: err}
	case errors.As(err, &pe):
		return &SkipError{Path: path, Reason: err.Error(), Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return &SkipError{Path: path, Reason: "does not exist", Err: err}
	}
	return fmt.Errorf("failed to read trajectory %q: %w", path, err)
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
