package harbor

// Harbor's transcripts into tpctl's trajectory protocol: an ATIF file
// (agent/trajectory.json, or one per step of a multi-step trial) streamed
// step by step into a transcript.Body (docs/transcripts.md).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor/atif"
	"github.com/tuneplane/tpctl/transcript"
)

// ATIFPart is the trajectory part read from the ATIF file at path, behind
// marker (a step boundary; "" for none). The file is opened and decoded as
// a stream (atif.OpenFile, atif.Decode: size cap checked on the stat size
// first, step and depth caps); each step becomes messages (FromStep); once
// the body is full the remaining steps are only counted, checked as
// strictly but with none of their text decoded. A file that cannot be
// exported (not ATIF v1.x, over a cap, malformed, a symlink, missing) is a
// *transcript.SkipError with the reason.
func ATIFPart(marker, path string) transcript.Part {
	return transcript.Part{Marker: marker, Path: path, Read: func(ctx context.Context, body *transcript.Body) (transcript.SourceInfo, error) {
		return readATIF(ctx, path, body)
	}}
}

// readATIF streams one ATIF file into body.
func readATIF(ctx context.Context, path string, body *transcript.Body) (transcript.SourceInfo, error) {
	f, err := atif.OpenFile(path, atif.Options{})
	if err != nil {
		return transcript.SourceInfo{}, skipOr(path, err)
	}
	defer f.Close()
	var abort error
	refs := 0
	opts := atif.Options{Skim: body.Full}
	info, err := atif.Decode(f, opts, func(s *atif.Step) error {
		if err := ctx.Err(); err != nil {
			abort = err
			return err
		}
		for _, o := range s.Observation {
			refs += len(o.SubagentRefs)
		}
		if s.Skimmed {
			body.Count(messageCount(s))
			return nil
		}
		for _, m := range FromStep(s) {
			if err := body.Add(ctx, m); err != nil {
				abort = err
				return err
			}
		}
		return nil
	})
	if abort != nil {
		return transcript.SourceInfo{}, abort
	}
	if err != nil {
		return transcript.SourceInfo{}, skipOr(path, err)
	}
	return transcript.SourceInfo{SchemaVersion: info.SchemaVersion, Steps: info.StepCount, UnknownFields: info.UnknownFields,
		UnknownFieldPaths: info.UnknownFieldPaths, SubagentRefs: refs, EmbeddedSubagents: info.EmbeddedSubagents}, nil
}

// skipOr turns the errors that mean "this file cannot be exported" into a
// *transcript.SkipError and wraps the others with the path.
func skipOr(path string, err error) error {
	var (
		u  *atif.UnsupportedFormatError
		l  *atif.LimitError
		s  *atif.SyntaxError
		pe *safefs.PathError
	)
	switch {
	case errors.As(err, &u):
		return &transcript.SkipError{Path: path, Reason: err.Error(), Err: err}
	case errors.As(err, &l):
		return &transcript.SkipError{Path: path, Reason: "over a limit: " + err.Error(), Err: err}
	case errors.As(err, &s):
		return &transcript.SkipError{Path: path, Reason: "malformed: " + err.Error(), Err: err}
	case errors.As(err, &pe):
		return &transcript.SkipError{Path: path, Reason: err.Error(), Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return &transcript.SkipError{Path: path, Reason: "does not exist", Err: err}
	}
	return fmt.Errorf("failed to read trajectory %q: %w", path, err)
}

// FromStep converts one ATIF step into trajectory messages, in this order:
//
//   - the step's message: role system, user or assistant (for source
//     "agent"); left out when empty and the step has tool calls or
//     observation results, so no empty message stands for nothing;
//   - one assistant message per tool call: content is the arguments JSON,
//     tool_name the function, call_id the tool_call_id;
//   - one tool message per observation result: content is the result text
//     (images as markers, subagent references as
//     "[subagent trajectory: …]" lines), call_id the source_call_id (null
//     when the result is not tied to a call), tool_name the function of the
//     call it answers in the same step.
//
// The step's metrics (prompt/completion tokens, duration) go on its first
// message. reasoning_content is not exported.
func FromStep(s *atif.Step) []transcript.Message {
	var out []transcript.Message
	role := s.Source
	if role == "agent" {
		role = "assistant"
	}
	if s.Message != "" || (len(s.ToolCalls) == 0 && len(s.Observation) == 0) {
		out = append(out, transcript.Message{Role: role, Content: s.Message})
	}
	names := map[string]string{}
	for _, tc := range s.ToolCalls {
		names[tc.ID] = tc.FunctionName
		out = append(out, transcript.Message{Role: "assistant", Content: tc.Arguments, ToolName: strPtr(tc.FunctionName), CallID: strPtr(tc.ID)})
	}
	for _, r := range s.Observation {
		m := transcript.Message{Role: "tool", Content: r.Content}
		if r.SourceCallID != nil {
			m.CallID = strPtr(*r.SourceCallID)
			if n, ok := names[*r.SourceCallID]; ok {
				m.ToolName = strPtr(n)
			}
		}
		if len(r.SubagentRefs) > 0 {
			var b strings.Builder
			b.WriteString(r.Content)
			for _, ref := range r.SubagentRefs {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(SubagentMarker(ref))
			}
			m.Content = b.String()
		}
		out = append(out, m)
	}
	if s.Metrics != nil && len(out) > 0 {
		out[0].PromptTokens = s.Metrics.PromptTokens
		out[0].CompletionTokens = s.Metrics.CompletionTokens
		out[0].DurationMS = s.Metrics.DurationMS
	}
	return out
}

// messageCount is len(FromStep(s)), without building the messages.
func messageCount(s *atif.Step) int {
	n := len(s.ToolCalls) + len(s.Observation)
	if s.Message != "" || n == 0 {
		n++
	}
	return n
}

// SubagentMarker is the line that records a subagent reference in a tool
// message. The reference is never followed.
func SubagentMarker(ref atif.SubagentRef) string {
	id := ref.TrajectoryPath
	if id == "" {
		id = ref.TrajectoryID
	}
	if id == "" {
		id = ref.SessionID
	}
	return "[subagent trajectory: " + id + "]"
}

func strPtr(s string) *string { return &s }

// StepMarkerPrefix starts the content of the system message that opens
// each step of a multi-step attempt's body (docs/transcripts.md).
const StepMarkerPrefix = "[tpctl: step boundary] "

// stepMarker is the boundary message before step i (1-based) of n.
func stepMarker(i, n int, name string) string {
	return fmt.Sprintf("%sstep %d of %d: %q", StepMarkerPrefix, i, n, name)
}

// Note codes of an attempt's transcript (the import's
// skipped_trajectories).
const (
	NoteSkipped   = "trajectory_skipped"
	NoteStepOrder = "trajectory_step_order"
)

// TranscriptParts lists the trajectory parts of the attempt folder rel
// under root: agent/trajectory.json for a single-step trial, else every
// step's steps/<name>/agent/trajectory.json in execution order — the order
// of step_results in the attempt's result.json — each behind a step
// boundary marker. Steps without a trajectory are left out; when
// result.json gives no step order, the step folders are taken in name
// order and a note says so. An attempt whose only transcript is the legacy
// litellm format has no parts and a note saying so. Every path is
// resolved with each component lstat'ed: a symlink anywhere on the way is
// an error (the transcript is skipped with it as the reason) rather than
// followed out of the job folder.
func TranscriptParts(root, rel string) (parts []transcript.Part, notes []producers.Note, err error) {
	dir, err := safefs.Resolve(root, rel)
	if err != nil {
		return nil, nil, nil
	}
	parts, note, err := trajectoryParts(root, rel, dir)
	if err != nil {
		return nil, nil, err
	}
	if note != "" {
		notes = append(notes, producers.Note{Code: NoteStepOrder, Message: note})
	}
	if len(parts) == 0 {
		// Say so when the only transcript is the legacy litellm format,
		// rather than skipping the attempt silently.
		if fi, err := os.Lstat(filepath.Join(dir, "agent", "litellm-trajectory.jsonl")); err == nil && fi.Mode().IsRegular() {
			notes = append(notes, producers.Note{Code: NoteSkipped, Message: "agent/litellm-trajectory.jsonl is the legacy litellm format, which tpctl does not read; export ATIF (agent/trajectory.json) instead"})
		}
	}
	return parts, notes, nil
}

func trajectoryParts(root, rel, dir string) (parts []transcript.Part, note string, err error) {
	resolve := func(c string) (string, bool, error) {
		p, err := safefs.Resolve(root, c)
		var pe *safefs.PathError
		if errors.As(err, &pe) && pe.Code == safefs.CodeMissing {
			return "", false, nil
		}
		return p, err == nil, err
	}
	if p, ok, err := resolve(rel + "/agent/trajectory.json"); err != nil || ok {
		if err != nil {
			return nil, "", err
		}
		return []transcript.Part{ATIFPart("", p)}, "", nil
	}
	names, ordered := stepOrder(root, rel)
	if !ordered {
		names = stepFolders(dir)
		if len(names) > 0 {
			note = "result.json gives no step order (step_results), so the steps are in folder-name order"
		}
	}
	for i, n := range names {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`) {
			return nil, "", fmt.Errorf("step name %q is not a folder name; its trajectory is not read", n)
		}
		p, ok, err := resolve(rel + "/steps/" + n + "/agent/trajectory.json")
		if err != nil {
			return nil, "", err
		}
		if ok {
			parts = append(parts, ATIFPart(stepMarker(i+1, len(names), n), p))
		}
	}
	if len(parts) == 0 {
		note = ""
	}
	return parts, note, nil
}

// stepOrder reads the step names in execution order from the attempt's
// result.json; ordered is false when it cannot be read or is not a
// multi-step result.
func stepOrder(root, rel string) (names []string, ordered bool) {
	p, err := safefs.Resolve(root, rel+"/"+ResultFile)
	if err != nil {
		return nil, false
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	r, err := DecodeTrialResult(f)
	if err != nil || !r.MultiStep {
		return nil, false
	}
	for _, st := range r.Steps {
		names = append(names, st.Name)
	}
	return names, true
}

// stepFolders lists the attempt's steps/ folder names in name order. A
// symlinked step folder is listed too, so that resolving it refuses it
// with a stated reason instead of passing over it.
func stepFolders(dir string) []string {
	entries, err := os.ReadDir(filepath.Join(dir, "steps"))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}
