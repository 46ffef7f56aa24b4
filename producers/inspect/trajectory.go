package inspect

import (
	"errors"
	"strings"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// Message is one message of a sample's conversation in a neutral form,
// the shape of tpctl's trajectory protocol (package transcript): a tool
// call is an assistant message whose content is the call's arguments
// (compact JSON), with the tool's name and the call's id; a tool result is
// a tool message with the call's id and the tool's name.
type Message struct {
	Role     string // system, user, assistant or tool
	Content  string
	ToolName string // "" when none
	CallID   string // "" when none
}

// ErrNoMessages is returned by Messages for a sample read without
// SampleOptions.Messages.
var ErrNoMessages = errors.New("the sample was read without its messages")

// attachmentPrefix marks content Inspect moved into the sample's
// attachments (deduplicated text, images): "attachment://<hash>".
const attachmentPrefix = "attachment://"

// Messages converts the sample's messages (ChatMessageSystem, User,
// Assistant, Tool of src/inspect_ai/model/_chat_message.py) into the
// neutral form, in order. Text content is kept (a list of content parts is
// joined by blank lines; reasoning is kept as its text); images, audio,
// video and documents are named, never inlined. An "attachment://" string
// is resolved from the sample's attachments.
func (s *Sample) Messages() ([]Message, error) {
	if !s.withMessages {
		return nil, ErrNoMessages
	}
	var out []Message
	for _, m := range s.messages.items() {
		role := m.get("role").str()
		switch role {
		case "system", "user", "assistant", "tool":
		default:
			role = "user" // an unknown role is still the conversation's text
		}
		msg := Message{Role: role, Content: s.content(m.get("content"))}
		if role == "tool" {
			msg.CallID = m.get("tool_call_id").str()
			msg.ToolName = m.get("function").str()
			if e := m.get("error"); e.isObject() {
				t := e.get("type").str()
				em := s.resolve(e.get("message").str())
				if msg.Content != "" {
					msg.Content += "\n\n"
				}
				msg.Content += "[tool error " + t + "] " + em
			}
		}
		calls := m.get("tool_calls").items()
		if role != "assistant" || msg.Content != "" || len(calls) == 0 {
			out = append(out, msg)
		}
		if role != "assistant" {
			continue
		}
		for _, c := range calls {
			args := c.get("arguments")
			content := args.compact()
			if args.isString() { // arguments that did not parse stay text
				content = s.resolve(args.text)
			}
			out = append(out, Message{
				Role: "assistant", Content: content,
				ToolName: c.get("function").str(), CallID: c.get("id").str(),
			})
		}
	}
	return out, nil
}

// content flattens a message's content: a string, or a list of parts.
func (s *Sample) content(c *node) string {
	if c.isString() {
		return s.resolve(c.text)
	}
	var parts []string
	for _, p := range c.items() {
		switch t := p.get("type").str(); t {
		case "text":
			parts = append(parts, s.resolve(p.get("text").str()))
		case "reasoning":
			if r := p.get("reasoning").str(); r != "" {
				parts = append(parts, s.resolve(r))
			} else if r := p.get("redacted"); r != nil && r.kind == jsonscan.True {
				parts = append(parts, "[reasoning redacted]")
			}
		case "":
		default:
			parts = append(parts, "["+t+"]")
		}
	}
	return strings.Join(parts, "\n\n")
}

// resolve replaces an attachment reference by the attachment's text.
func (s *Sample) resolve(text string) string {
	if !strings.HasPrefix(text, attachmentPrefix) {
		return text
	}
	if v := s.attachments.get(text[len(attachmentPrefix):]); v.isString() {
		return v.text
	}
	return text
}
