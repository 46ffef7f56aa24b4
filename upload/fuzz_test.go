package upload

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "7", "-1", "99999999999999999999", "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"} {
		f.Add(s)
	}
	now := time.Date(1994, 11, 6, 8, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if d := parseRetryAfter(s, now); d < 0 || d > 24*time.Hour {
			t.Fatalf("parseRetryAfter(%q) = %v, outside 0…24h", s, d)
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	f.Add(`{"accepted":3,"duplicates":0,"conflicts":0}`, 3)
	f.Add(`{"accepted":0,"duplicates":1,"conflicts":2,"conflict_ids":["a#0","b#1"]}`, 3)
	f.Add(`{"accepted":-1,"duplicates":4,"conflicts":0}`, 3)
	f.Add(`null`, 1)
	f.Fuzz(func(t *testing.T, body string, records int) {
		r, err := decodeResponse(KindObservations, []byte(body), records)
		if err != nil {
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		if r.Accepted < 0 || r.Duplicates < 0 || r.Conflicts < 0 || r.Accepted+r.Duplicates+r.Conflicts != records || len(r.ConflictIDs) > records {
			t.Fatalf("accepted an inconsistent answer %+v for %d records", r, records)
		}
	})
}

func FuzzCheckTrajectory(f *testing.F) {
	const round = "native:1111111111111111111111111111111111111111111111111111111111111111"
	f.Add(`{"scope":"evaluation","round_id":"` + round + `","trial_id":"a#0","trial_attempt":0,"messages":[{"role":"user","content":"hi"}],"total_messages":1,"complete":false,"truncated":false,"capture_policy":"sampled"}`)
	f.Add(`{"scope":"evaluation","round_id":"` + round + `","trial_id":"a#0","messages":[]}`)
	f.Add(`[1,2,3]`)
	f.Add(`{"messages":{"a":1}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		compact, h, err := checkTrajectory("trajectories/0001.json", []byte(raw), round)
		if err != nil {
			var re *RecordError
			if !errors.As(err, &re) || re.File != "trajectories/0001.json" {
				t.Fatalf("error %v of type %T", err, err)
			}
			return
		}
		// What passes is compact, valid JSON of the checked identity.
		if len(compact) > MaxTrajectoryBytes || !json.Valid(compact) || strings.ContainsAny(string(compact), "\n\t") {
			t.Fatalf("bad compact form %q", compact)
		}
		if h.RoundID != round || h.TrialID == "" || h.TrialAttempt == nil || h.Scope != "evaluation" {
			t.Fatalf("identity not checked: %+v", h)
		}
	})
}
