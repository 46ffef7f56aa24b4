package transcript

import (
	"strings"

	"github.com/tuneplane/tpctl/producers/harbor/atif"
)

// FromStep converts one ATIF step into platform messages, in this order:
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
func FromStep(s *atif.Step) []Message {
	var out []Message
	role := s.Source
	if role == "agent" {
		role = "assistant"
	}
	if s.Message != "" || (len(s.ToolCalls) == 0 && len(s.Observation) == 0) {
		out = append(out, Message{Role: role, Content: s.Message})
	}
	names := map[string]string{}
	for _, tc := range s.ToolCalls {
		names[tc.ID] = tc.FunctionName
		out = append(out, Message{Role: "assistant", Content: tc.Arguments, ToolName: str(tc.FunctionName), CallID: str(tc.ID)})
	}
	for _, r := range s.Observation {
		m := Message{Role: "tool", Content: r.Content}
		if r.SourceCallID != nil {
			m.CallID = str(*r.SourceCallID)
			if n, ok := names[*r.SourceCallID]; ok {
				m.ToolName = str(n)
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

func str(s string) *string { return &s }
