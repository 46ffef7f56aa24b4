package snapshot

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// decodePlanHead decodes the canonical plan as json.Unmarshal into a
// planHead would, faster: the trials array, which is nearly all of a
// plan's bytes, is walked directly and the rest goes through
// encoding/json with the array left empty. Whenever the direct walk
// cannot be sure to match encoding/json (a key that case-folds to a
// field's name without being it, a duplicate, a null, a non-integer
// repeat) the whole plan goes through encoding/json, which decides;
// FuzzDecodePlanHead checks the two agree.
func decodePlanHead(canon []byte, p *planHead) error {
	if start, end, keys, ok := trialKeys(canon); ok {
		head := make([]byte, 0, len(canon)-(end-start)+2)
		head = append(head, canon[:start]...)
		head = append(head, "[]"...)
		head = append(head, canon[end:]...)
		var h planHead
		if err := json.Unmarshal(head, &h); err == nil {
			h.Trials = keys
			*p = h
			return nil
		}
	}
	*p = planHead{}
	return json.Unmarshal(canon, p)
}

// trialKeys reads the keys of the trials array of the JSON object canon
// and returns them with the array's span, or false when canon is not an
// object, has no trials member or has it twice, or has a key encoding/json
// might match to it other than "trials" itself (any key that is not plain
// ASCII, or that equals it but for case), or when walkTrials declines.
func trialKeys(canon []byte) (start, end int, keys []trialKey, ok bool) {
	var d jsonscan.Decoder
	d.Reset(canon, jsonscan.Options{})
	if k, err := d.Next(); err != nil || k != jsonscan.BeginObject {
		return 0, 0, nil, false
	}
	found := false
	for {
		k, err := d.Next()
		if err != nil {
			return 0, 0, nil, false
		}
		if k == jsonscan.EndObject {
			break
		}
		name := d.Text()
		isTrials := string(name) == "trials"
		if !isTrials && (!ascii(name) || bytes.EqualFold(name, []byte("trials"))) {
			return 0, 0, nil, false
		}
		if k, err = d.Next(); err != nil {
			return 0, 0, nil, false
		}
		if !isTrials {
			if d.Skip(k) != nil {
				return 0, 0, nil, false
			}
			continue
		}
		if found {
			return 0, 0, nil, false
		}
		found, start = true, int(d.Start())
		if keys, ok = walkTrials(&d, k); !ok {
			return 0, 0, nil, false
		}
		end = int(d.InputOffset())
	}
	if _, err := d.Next(); err != io.EOF || !found {
		return 0, 0, nil, false
	}
	return start, end, keys, true
}

// walkTrials reads an array of trial objects, whose first token k was
// just read, into keys, or declines (ok false) where encoding/json might
// read them otherwise.
func walkTrials(d *jsonscan.Decoder, k jsonscan.Kind) (keys []trialKey, ok bool) {
	if k != jsonscan.BeginArray {
		return nil, false
	}
	keys = []trialKey{}
	for {
		k, err := d.Next()
		if err != nil {
			return nil, false
		}
		if k == jsonscan.EndArray {
			return keys, true
		}
		t, ok := walkTrial(d, k)
		if !ok {
			return nil, false
		}
		keys = append(keys, t)
	}
}

// walkTrial reads one trial object, whose first token k was just read,
// or declines (ok false) where encoding/json might read it otherwise.
func walkTrial(d *jsonscan.Decoder, k jsonscan.Kind) (t trialKey, ok bool) {
	if k != jsonscan.BeginObject {
		return t, false
	}
	var seen uint8 // task 1, repeat 2: a duplicate declines
	for {
		k, err := d.Next()
		if err != nil {
			return t, false
		}
		if k == jsonscan.EndObject {
			return t, true
		}
		name := d.Text()
		var member uint8
		switch string(name) {
		case "task":
			member = 1
		case "repeat":
			member = 2
		default:
			if !ascii(name) || bytes.EqualFold(name, []byte("task")) || bytes.EqualFold(name, []byte("repeat")) {
				return t, false
			}
		}
		if seen&member != 0 {
			return t, false
		}
		seen |= member
		if k, err = d.Next(); err != nil {
			return t, false
		}
		switch {
		case member == 1 && k == jsonscan.String:
			t.Task = d.String()
		case member == 2 && k == jsonscan.Number:
			if t.Repeat, ok = smallInt(d.Raw()); !ok {
				return t, false
			}
		case member == 0:
			// Members the keys do not hold are skipped, as encoding/json
			// skips them (their duplicates do not matter).
			if d.Skip(k) != nil {
				return t, false
			}
		default:
			return t, false
		}
	}
}

func ascii(s []byte) bool {
	for _, c := range s {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// smallInt parses a number token that is an integer of at most 18 digits;
// encoding/json decodes others into an int otherwise or not at all.
func smallInt(raw []byte) (int, bool) {
	digits := raw
	if len(raw) > 0 && raw[0] == '-' {
		digits = raw[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if len(digits) < len(raw) {
		n = -n
	}
	return n, true
}
