// Package transcript is tpctl's trajectory protocol: the platform's
// trajectory body (SPEC §3, §6 item 4), messages with roles, redacted by
// the user's redactor, scanned for secrets, cut to the platform's limits
// with the cut declared, and always labelled as a sample.
//
// BuildParts is the entry point. A producer's converter (producers/harbor
// for Harbor's ATIF) streams each part's messages into the Body, so memory
// is bounded by the kept messages (at most Limits.MaxBytes) plus what the
// converter holds, whatever the size of the source.
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Fixed labels of every exported trajectory: a transcript cannot prove the
// full original context, token count or training consumption.
const (
	Scope         = "evaluation"
	CapturePolicy = "sampled"
)

// Message is one platform message. Absent values encode as null.
type Message struct {
	Role             string  `json:"role"` // system, user, assistant or tool
	Content          string  `json:"content"`
	ToolName         *string `json:"tool_name"`
	CallID           *string `json:"call_id"`
	PromptTokens     *int64  `json:"prompt_tokens"`
	CompletionTokens *int64  `json:"completion_tokens"`
	DurationMS       *int64  `json:"duration_ms"`
}

// Trajectory is the platform trajectory body. RoundID, TrialID and
// TrialAttempt are filled by the caller after Build.
type Trajectory struct {
	Scope         string    `json:"scope"`
	RoundID       string    `json:"round_id"`
	TrialID       string    `json:"trial_id"`
	TrialAttempt  int       `json:"trial_attempt"`
	Messages      []Message `json:"messages"`
	TotalMessages int       `json:"total_messages"`
	Complete      bool      `json:"complete"`
	Truncated     bool      `json:"truncated"`
	CapturePolicy string    `json:"capture_policy"`

	// Source describes the ATIF file; it is not part of the wire shape.
	Source SourceInfo `json:"-"`
}

// SourceInfo summarises the native file a trajectory came from (for
// Harbor, the ATIF file), for reporting (never exported to the platform).
type SourceInfo struct {
	SchemaVersion     string
	Steps             int
	UnknownFields     int
	UnknownFieldPaths []string
	SubagentRefs      int // subagent references recorded in messages, not followed
	EmbeddedSubagents int // v1.7 embedded subagent trajectories, skipped
}

// Limits bounds one exported trajectory.
type Limits struct {
	MaxMessages int // at most this many messages are kept
	MaxBytes    int // the encoded trajectory (with IDs filled) stays at or under this
}

// DefaultLimits are the platform's limits: 1,024 messages and 1 MiB.
var DefaultLimits = Limits{MaxMessages: 1024, MaxBytes: 1 << 20}

// Headroom is the part of MaxBytes kept free when Build sizes a trajectory
// whose round_id, trial_id and trial_attempt are not known yet: room for
// those, the digits of total_messages, and the upload request that wraps
// the body.
const Headroom = 1024

func (l Limits) withDefaults() Limits {
	if l.MaxMessages <= 0 {
		l.MaxMessages = DefaultLimits.MaxMessages
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	return l
}

// SkipError reports a trajectory file that is left out of the snapshot,
// with the reason to show the user. Any other error from Build aborts.
type SkipError struct {
	Path   string
	Reason string
	Err    error
}

func (e *SkipError) Error() string {
	return fmt.Sprintf("skipping trajectory %q: %s", e.Path, e.Reason)
}

func (e *SkipError) Unwrap() error { return e.Err }

// Encode returns the bytes to write as trajectories/NNNN.json: compact
// JSON in field order, no HTML escaping, one trailing newline. The same
// trajectory always gives the same bytes. It refuses a trajectory that
// breaks the fixed labels (scope, capture_policy, complete).
func Encode(t *Trajectory) ([]byte, error) {
	if t == nil {
		return nil, errors.New("no trajectory to encode")
	}
	if t.Scope != Scope || t.CapturePolicy != CapturePolicy || t.Complete {
		return nil, fmt.Errorf("trajectory for trial %q must have scope %q, capture_policy %q and complete false (has %q, %q, %t)",
			t.TrialID, Scope, CapturePolicy, t.Scope, t.CapturePolicy, t.Complete)
	}
	c := *t
	if c.Messages == nil {
		c.Messages = []Message{}
	}
	return marshal(&c)
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if t, ok := v.(*Trajectory); ok {
		// Room for the messages' text and their keys up front: a body
		// is up to a MiB, and growing to it copies it several times.
		n := 1024
		for _, m := range t.Messages {
			n += len(m.Content) + len(m.Role) + 128
		}
		b.Grow(n)
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
