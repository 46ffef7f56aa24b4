package upload

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tuneplane/tpctl/snapshot"
)

// Request kinds, in the order they are sent.
const (
	KindProtocol     = "validation_protocol"
	KindTotal        = "round_total"
	KindObservations = "observations"
	KindTrajectory   = "trajectory"
)

// Limits of the ingest API (SPEC §6). They are checked locally before
// anything is sent, so an oversized record is a clear local error rather
// than a 413 halfway through an upload.
const (
	MaxEventsPerRequest   = 32
	MaxEventBytes         = 16 << 10
	MaxTrajectoryBytes    = 1 << 20
	MaxTrajectoryMessages = 1024
)

// Event is one observation as the ingest API receives it. Optional values
// are omitted when absent.
type Event struct {
	TrialID       string   `json:"trial_id"`
	Task          string   `json:"task"`
	Repeat        int      `json:"repeat"`
	TrialAttempt  int      `json:"trial_attempt"`
	Status        string   `json:"status"`
	Reward        *float64 `json:"reward,omitempty"`
	ExceptionType *string  `json:"exception_type,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	Trainable     bool     `json:"trainable"`
}

// EventOf maps a snapshot observation to its wire event.
func EventOf(o snapshot.Observation) Event {
	return Event{
		TrialID: o.TrialID, Task: o.Task, Repeat: o.Repeat, TrialAttempt: o.TrialAttempt,
		Status: o.Status, Reward: o.Reward, ExceptionType: o.ExceptionType, Reason: o.Reason,
		Trainable: o.Trainable,
	}
}

// ProtocolRecord is the "protocol" object of the validation_protocol
// request: the manifest's protocol evidence plus what identifies the model
// and the rules that judged it.
type ProtocolRecord struct {
	snapshot.Protocol
	Name         string              `json:"name"`
	Source       snapshot.Source     `json:"source"`
	Checkpoint   snapshot.Checkpoint `json:"checkpoint"`
	OutcomeRules string              `json:"outcome_rules"`
	Format       string              `json:"format"`
}

// ProtocolOf builds the protocol record from a manifest.
func ProtocolOf(m *snapshot.Manifest) ProtocolRecord {
	return ProtocolRecord{
		Protocol: m.Protocol, Name: m.Name, Source: m.Source, Checkpoint: m.Checkpoint,
		OutcomeRules: m.OutcomeRules, Format: m.Format,
	}
}

// TrajectoryHeader is the part of a trajectory file the client reads: its
// identity and what the limits apply to.
type TrajectoryHeader struct {
	Scope         string            `json:"scope"`
	RoundID       string            `json:"round_id"`
	TrialID       string            `json:"trial_id"`
	TrialAttempt  *int              `json:"trial_attempt"`
	Messages      []json.RawMessage `json:"messages"`
	TotalMessages int               `json:"total_messages"`
}

// RecordError is a record that cannot be sent: over an API limit or not of
// the expected shape. It is found before the first request.
type RecordError struct {
	File    string // snapshot file, e.g. "observations.jsonl" or "trajectories/0003.json"
	TrialID string // may be empty when the file cannot be read
	Code    string // "event_too_large", "trajectory_too_large", "too_many_messages", "trajectory_invalid"
	Msg     string
}

func (e *RecordError) Error() string {
	where := e.File
	if e.TrialID != "" {
		where += ": trial " + e.TrialID
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// Record error codes.
const (
	CodeEventTooLarge      = "event_too_large"
	CodeTrajectoryTooLarge = "trajectory_too_large"
	CodeTooManyMessages    = "too_many_messages"
	CodeTrajectoryInvalid  = "trajectory_invalid"
)

// encoder builds request bodies. Bodies are held as []byte so every try
// of a request sends identical bytes (http.NewRequest makes GetBody replay
// them after a redirect or a dropped connection).
type encoder struct {
	runID, roundID string
	buf            bytes.Buffer
}

func (e *encoder) head(kind string) {
	e.buf.Reset()
	e.buf.WriteString(`{"kind":`)
	writeJSON(&e.buf, kind)
	e.buf.WriteString(`,"run_id":`)
	writeJSON(&e.buf, e.runID)
	e.buf.WriteString(`,"round_id":`)
	writeJSON(&e.buf, e.roundID)
}

func writeJSON(b *bytes.Buffer, v any) {
	// Marshal of strings, ints and the fixed structs here cannot fail.
	out, _ := json.Marshal(v)
	b.Write(out)
}

func (e *encoder) protocol(p ProtocolRecord) []byte {
	e.head(KindProtocol)
	e.buf.WriteString(`,"protocol":`)
	writeJSON(&e.buf, p)
	e.buf.WriteByte('}')
	return bytes.Clone(e.buf.Bytes())
}

func (e *encoder) total(expected int) []byte {
	e.head(KindTotal)
	e.buf.WriteString(`,"expected":`)
	writeJSON(&e.buf, expected)
	e.buf.WriteByte('}')
	return bytes.Clone(e.buf.Bytes())
}

// observations encodes a batch from already-encoded events.
func (e *encoder) observations(events [][]byte) []byte {
	return bytes.Clone(e.observationsTemp(events))
}

// observationsTemp is observations into the encoder's own buffer, valid
// until the next call: for measuring without copying.
func (e *encoder) observationsTemp(events [][]byte) []byte {
	e.head(KindObservations)
	e.buf.WriteString(`,"events":[`)
	for i, ev := range events {
		if i > 0 {
			e.buf.WriteByte(',')
		}
		e.buf.Write(ev)
	}
	e.buf.WriteString("]}")
	return e.buf.Bytes()
}

// trajectory wraps an already compacted trajectory object.
func (e *encoder) trajectory(compact []byte) []byte {
	e.head(KindTrajectory)
	e.buf.WriteString(`,"trajectory":`)
	e.buf.Write(compact)
	e.buf.WriteByte('}')
	return bytes.Clone(e.buf.Bytes())
}

// encodeEvent marshals one event and checks the 16 KiB limit.
func encodeEvent(o snapshot.Observation) ([]byte, error) {
	b, err := json.Marshal(EventOf(o))
	if err != nil {
		return nil, &RecordError{File: snapshot.ObservationsFile, TrialID: o.TrialID, Code: CodeEventTooLarge,
			Msg: fmt.Sprintf("cannot be encoded: %v", err)}
	}
	if len(b) > MaxEventBytes {
		return nil, &RecordError{File: snapshot.ObservationsFile, TrialID: o.TrialID, Code: CodeEventTooLarge,
			Msg: fmt.Sprintf("event is %d bytes, over the ingest limit of %d bytes (16 KiB); shorten the task name, reason or exception type", len(b), MaxEventBytes)}
	}
	return b, nil
}

// checkTrajectory compacts a trajectory file, checks its identity against
// the round and applies the 1 MiB / 1,024 message limits.
func checkTrajectory(name string, raw []byte, roundID string) (compact []byte, h TrajectoryHeader, err error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, h, &RecordError{File: name, Code: CodeTrajectoryInvalid, Msg: fmt.Sprintf("is not valid JSON: %v", err)}
	}
	if err := json.Unmarshal(buf.Bytes(), &h); err != nil {
		return nil, h, &RecordError{File: name, Code: CodeTrajectoryInvalid, Msg: fmt.Sprintf("does not have the trajectory shape: %v", err)}
	}
	bad := func(code, format string, args ...any) error {
		return &RecordError{File: name, TrialID: h.TrialID, Code: code, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case h.TrialID == "":
		return nil, h, bad(CodeTrajectoryInvalid, "has no trial_id")
	case h.TrialAttempt == nil:
		return nil, h, bad(CodeTrajectoryInvalid, "has no trial_attempt")
	case h.RoundID != roundID:
		return nil, h, bad(CodeTrajectoryInvalid, "round_id is %q but the snapshot's round is %q", h.RoundID, roundID)
	case h.Scope != "evaluation":
		return nil, h, bad(CodeTrajectoryInvalid, "scope is %q, expected \"evaluation\"", h.Scope)
	case len(h.Messages) > MaxTrajectoryMessages:
		return nil, h, bad(CodeTooManyMessages, "has %d messages, over the ingest limit of %d; re-import to truncate it", len(h.Messages), MaxTrajectoryMessages)
	case buf.Len() > MaxTrajectoryBytes:
		return nil, h, bad(CodeTrajectoryTooLarge, "is %d bytes, over the ingest limit of %d bytes (1 MiB); re-import to truncate it", buf.Len(), MaxTrajectoryBytes)
	}
	h.Messages = nil // only the count was needed; do not keep them alive
	return buf.Bytes(), h, nil
}
