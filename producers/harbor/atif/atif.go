// Package atif reads Harbor's Agent Trajectory Interchange Format
// (agent/trajectory.json, ATIF-v1.0 … ATIF-v1.7) as a stream.
//
// The decoder is a typed walker over internal/jsonscan tokens instead of
// an unmarshal of the whole document, so a trajectory is never held twice
// in memory and a caller can consume steps one at a time; steps a caller
// no longer needs (Options.Skim) are checked but their text is never
// decoded. Every input is bounded: the file size
// (MaxTrajectorySize, checked on the stat size before reading and again on
// the bytes read), the step count (MaxSteps) and the nesting depth
// (MaxDepth). Unknown fields are tolerated and counted, because newer Harbor
// releases add fields; wrong types in the fields tpctl uses are errors with
// a JSON pointer and byte offset.
//
// Non-ATIF agent formats (the legacy litellm-trajectory.jsonl, Claude Code
// session JSONL, mini-swe-agent, OpenHands and Gemini CLI native files) are
// recognised by name or by content and reported as *UnsupportedFormatError.
package atif

import (
	"fmt"
)

// Bounds on what the decoder accepts. They are variables only so tests can
// exercise them cheaply; Options carries the values a caller actually uses.
const (
	// MaxTrajectorySize is the largest trajectory file read (64 MiB).
	MaxTrajectorySize int64 = 64 << 20
	// MaxSteps is the largest number of steps accepted in one trajectory.
	MaxSteps = 200_000
	// MaxDepth is the deepest nesting of JSON arrays and objects accepted
	// anywhere in the document (tool arguments included).
	MaxDepth = 128
)

// SupportedVersions lists the schema_version values this package reads.
var SupportedVersions = []string{
	"ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3",
	"ATIF-v1.4", "ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7",
}

// Options bounds one decode. The zero value means the package defaults.
type Options struct {
	MaxSize  int64 // bytes; 0 means MaxTrajectorySize
	MaxSteps int   // 0 means MaxSteps
	MaxDepth int   // 0 means MaxDepth

	// Skim, when set, is asked before each step whether the caller still
	// needs that step's text. When it answers true the step is read and
	// checked exactly as any other (the same errors, the same counts and
	// structure) but its free text is not decoded: Step.Skimmed is set, and
	// each text field (message, tool call fields, results, references)
	// holds "" when the source text is empty and Skimmed otherwise.
	// Source stays exact. A caller past its own cap uses it to count the
	// rest without paying for it.
	Skim func() bool
}

// Skimmed stands for the non-empty text of a skimmed step (Options.Skim).
const Skimmed = "\x00skimmed"

func (o Options) withDefaults() Options {
	if o.MaxSize <= 0 {
		o.MaxSize = MaxTrajectorySize
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = MaxSteps
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = MaxDepth
	}
	return o
}

// Trajectory is the root of an ATIF document. When Decode is given a step
// callback, Steps stays empty and StepCount still counts every step.
type Trajectory struct {
	SchemaVersion          string
	SessionID              string
	TrajectoryID           string // v1.7
	Agent                  Agent
	Steps                  []*Step
	StepCount              int
	Notes                  string
	ContinuedTrajectoryRef string // relative file name of a continuation; recorded, not followed
	// EmbeddedSubagents counts v1.7 subagent_trajectories; they are skipped,
	// not converted.
	EmbeddedSubagents int
	// UnknownFields counts object keys outside the ATIF schema (keys inside
	// extra, arguments and tool_definitions are free-form and not counted).
	UnknownFields int
	// UnknownFieldPaths names up to 16 distinct unknown fields, as JSON
	// pointers with array indexes replaced by "*", for diagnostics.
	UnknownFieldPaths []string
}

// Agent describes the agent that produced the trajectory.
type Agent struct {
	Name      string
	Version   string
	ModelName string
}

// Step is one ATIF step.
type Step struct {
	StepID           int64
	Timestamp        string
	Source           string // "system", "user" or "agent"
	ModelName        string
	Message          string // text parts joined by "\n"; images replaced by ImageMarker
	ReasoningContent string
	ToolCalls        []ToolCall
	Observation      []ObservationResult // nil when the step has no observation
	Metrics          *Metrics
	IsCopiedContext  bool
	// Skimmed reports that the step's text was not decoded (Options.Skim).
	Skimmed bool
}

// ToolCall is one function call made by the agent in a step.
type ToolCall struct {
	ID           string
	FunctionName string
	// Arguments is the compact JSON text of the arguments value, in the key
	// order of the source file.
	Arguments string
}

// ObservationResult is one result of a step's observation.
type ObservationResult struct {
	SourceCallID *string // nil when the result is not tied to a tool call
	Content      string
	SubagentRefs []SubagentRef
}

// SubagentRef points at a subagent's trajectory. tpctl records it and never
// follows it: the referenced file may be anywhere, even a URL.
type SubagentRef struct {
	SessionID      string
	TrajectoryID   string
	TrajectoryPath string
}

// Metrics holds the per-step LLM usage figures tpctl exports.
type Metrics struct {
	PromptTokens     *int64
	CompletionTokens *int64
	CachedTokens     *int64
	// DurationMS comes from metrics.extra.duration_ms when a writer put an
	// integer there; ATIF up to v1.7 has no duration field of its own.
	DurationMS *int64
}

// ImageMarker is the text that replaces an image content part. Only the
// media type is kept: the image path may be a machine path or a signed URL.
func ImageMarker(mediaType string) string {
	if mediaType == "" {
		return "[image]"
	}
	return "[image: " + mediaType + "]"
}

// UnsupportedFormatError reports a file that is not ATIF v1.x: an agent's
// native format, the legacy litellm JSONL, or an unknown schema_version.
type UnsupportedFormatError struct {
	Format string // e.g. "litellm-trajectory.jsonl", "claude-code session JSONL", "ATIF-v2.0"
	Reason string
}

func (e *UnsupportedFormatError) Error() string {
	return fmt.Sprintf("unsupported trajectory format %s: %s", e.Format, e.Reason)
}

// LimitError reports input over one of the decoder's bounds.
type LimitError struct {
	What  string // "bytes", "steps" or "nesting levels"
	Limit int64
	Size  int64  // the observed size when known (bytes from stat), else 0
	At    string // JSON pointer, when the limit was hit inside the document
}

func (e *LimitError) Error() string {
	var s string
	switch e.What {
	case "bytes":
		if e.Size > 0 {
			s = fmt.Sprintf("file is %d bytes, over the %d-byte limit", e.Size, e.Limit)
		} else {
			s = fmt.Sprintf("file is over the %d-byte limit", e.Limit)
		}
	default:
		s = fmt.Sprintf("more than %d %s", e.Limit, e.What)
	}
	if e.At != "" {
		s = e.At + ": " + s
	}
	return s
}

// SyntaxError reports malformed JSON or a value of the wrong type or form,
// located by JSON pointer and byte offset.
type SyntaxError struct {
	Pointer string // JSON pointer of the offending value ("" for the root)
	Offset  int64  // bytes read when the problem was seen
	Msg     string
	Err     error // underlying decoder error, if any
}

func (e *SyntaxError) Error() string {
	ptr := e.Pointer
	if ptr == "" {
		ptr = "/"
	}
	s := fmt.Sprintf("%s (near byte %d): %s", ptr, e.Offset, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *SyntaxError) Unwrap() error { return e.Err }

func versionSupported(v string) bool {
	for _, s := range SupportedVersions {
		if s == v {
			return true
		}
	}
	return false
}

func supportedList() string {
	return SupportedVersions[0] + " … " + SupportedVersions[len(SupportedVersions)-1]
}
