package snapshot

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// trajFields are the few members of a trajectory file that opening and
// verifying a snapshot read; the rest (the transcript, up to
// MaxTrajectorySize) is only hashed.
type trajFields struct {
	RoundID       string `json:"round_id"`
	TrialID       string `json:"trial_id"`
	Truncated     bool   `json:"truncated"`
	Complete      bool   `json:"complete"`
	CapturePolicy string `json:"capture_policy"`
}

// readTrajFields reads a trajectory file's fields as json.Unmarshal into
// trajFields would, with the same error. Valid JSON is scanned once
// for its top-level members, the other values skipped without being
// decoded; anything the scan does not handle exactly (escaped or
// case-folded keys, escaped strings, null, a wrong type, a non-object)
// and invalid JSON go to json.Unmarshal, so the result never differs
// (FuzzTrajFields checks this).
func readTrajFields(b []byte) (trajFields, error) {
	if json.Valid(b) {
		if f, ok := scanTrajFields(b); ok {
			return f, nil
		}
	}
	var f trajFields
	err := json.Unmarshal(b, &f)
	return f, err
}

// scanTrajFields walks the top-level object of valid JSON; ok is false
// when json.Unmarshal must decide.
func scanTrajFields(b []byte) (f trajFields, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return f, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return f, true
	}
	for i < len(b) {
		key, next, ok := plainString(b, i)
		if !ok {
			return f, false
		}
		i = skipSpace(b, next)
		i = skipSpace(b, i+1) // the ':'
		var dst *string
		var flag *bool
		switch key {
		case "round_id":
			dst = &f.RoundID
		case "trial_id":
			dst = &f.TrialID
		case "capture_policy":
			dst = &f.CapturePolicy
		case "truncated":
			flag = &f.Truncated
		case "complete":
			flag = &f.Complete
		default:
			// encoding/json matches keys case-insensitively.
			for _, k := range [...]string{"round_id", "trial_id", "capture_policy", "truncated", "complete"} {
				if strings.EqualFold(key, k) {
					return f, false
				}
			}
		}
		switch {
		case dst != nil:
			s, end, ok := plainString(b, i)
			if !ok {
				return f, false
			}
			*dst, i = s, end
		case flag != nil:
			switch {
			case bytes.HasPrefix(b[i:], []byte("true")):
				*flag, i = true, i+4
			case bytes.HasPrefix(b[i:], []byte("false")):
				*flag, i = false, i+5
			default:
				return f, false
			}
		default:
			i = skipValue(b, i)
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return f, false
		}
		if b[i] == '}' {
			return f, true
		}
		i = skipSpace(b, i+1) // the ','
	}
	return f, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the string at b[i] when it has no escapes (ok false
// otherwise, or when b[i] is not a string), returning the index after it.
func plainString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	j := bytes.IndexByte(b[i+1:], '"')
	if j < 0 {
		return "", i, false
	}
	s := b[i+1 : i+1+j]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) { // json.Unmarshal replaces invalid UTF-8
		return "", i, false
	}
	return string(s), i + j + 2, true
}

// skipValue returns the index after the value at b[i] in valid JSON.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			i++
			for i < len(b) {
				j := bytes.IndexAny(b[i:], `"\`)
				if j < 0 {
					return len(b)
				}
				i += j
				if b[i] == '\\' {
					i += 2
					continue
				}
				break
			}
			i++
			if depth == 0 {
				return i
			}
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
			if depth == 0 {
				return i
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
			i++
		default: // numbers, true, false, null
			i++
		}
	}
	return i
}

// trajRead is the trajectory file name as foldStreamed read it, if it did.
func (c *capture) trajRead(name string) (trajRead, bool) {
	if c == nil {
		return trajRead{}, false
	}
	r, ok := c.traj[name]
	return r, ok
}
