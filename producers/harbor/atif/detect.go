package atif

import (
	"path/filepath"
	"strings"
)

// nativeNames are the file names Harbor's installed agents give their own
// (non-ATIF) trajectories; Harbor converts them into trajectory.json.
var nativeNames = map[string]string{
	"mini-swe-agent.trajectory.json": "mini-swe-agent native trajectory",
	"openhands.trajectory.json":      "OpenHands native event list",
	"swe-agent.trajectory.json":      "SWE-agent native trajectory",
	"gemini-cli.trajectory.json":     "Gemini CLI native session",
}

const litellmName = "litellm-trajectory.jsonl"

// CheckName refuses, by file name alone, the trajectory files that are
// known not to be ATIF. It returns nil for names that may hold ATIF; the
// content is checked by Decode.
func CheckName(path string) error {
	base := filepath.Base(path)
	if base == litellmName {
		return &UnsupportedFormatError{Format: litellmName, Reason: litellmReason}
	}
	if f, ok := nativeNames[base]; ok {
		return &UnsupportedFormatError{Format: f, Reason: nativeReason}
	}
	if strings.HasSuffix(strings.ToLower(base), ".jsonl") {
		f := "JSON Lines"
		switch {
		case base == "hermes-session.jsonl":
			f = "Hermes native session JSONL"
		case strings.Contains(filepath.ToSlash(path), "/sessions/"):
			f = "claude-code session JSONL"
		}
		return &UnsupportedFormatError{Format: f, Reason: "an agent's native session log, not ATIF; " + useATIF}
	}
	return nil
}

const (
	useATIF       = "tpctl reads only ATIF (" + "agent/trajectory.json with schema_version ATIF-v1.0 … ATIF-v1.7)"
	litellmReason = "the legacy per-LLM-call log written by a LiteLLM proxy logger is not supported; " +
		"make the agent write ATIF agent/trajectory.json (Harbor's installed agents do this after the run)"
	nativeReason = "this is the agent's own format, which Harbor converts into agent/trajectory.json; " + useATIF
)

// classify names a non-ATIF format from the top-level keys of the first
// JSON value and whether more values followed (JSON Lines). It returns nil
// when nothing matches.
func classify(keys map[string]bool, multi bool) *UnsupportedFormatError {
	switch {
	case keys["request_body"] || keys["response_body"]:
		return &UnsupportedFormatError{Format: litellmName, Reason: litellmReason}
	case keys["trajectory_format"] || (keys["info"] && keys["messages"]):
		return &UnsupportedFormatError{Format: "mini-swe-agent native trajectory", Reason: nativeReason}
	case keys["sessionId"] && (keys["projectHash"] || keys["messages"]) && !keys["parentUuid"]:
		return &UnsupportedFormatError{Format: "Gemini CLI native session", Reason: nativeReason}
	case keys["parentUuid"] || (keys["uuid"] && keys["sessionId"]) || (multi && keys["type"] && keys["sessionId"]):
		return &UnsupportedFormatError{Format: "claude-code session JSONL", Reason: nativeReason}
	case multi:
		return &UnsupportedFormatError{Format: "JSON Lines", Reason: "the file holds several JSON values, one per line; " + useATIF}
	}
	return nil
}
