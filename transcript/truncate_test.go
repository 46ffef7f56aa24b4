package transcript

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func str(s string) *string { return &s }

func TestEncodeShape(t *testing.T) {
	tr := &Trajectory{Scope: Scope, CapturePolicy: CapturePolicy, RoundID: "native:r", TrialID: "t<1>&", TrialAttempt: 2,
		Messages:      []Message{{Role: "user", Content: "a<b>&c"}, {Role: "tool", Content: "", CallID: str("c1"), DurationMS: new(int64)}},
		TotalMessages: 2}
	got, err := Encode(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"scope":"evaluation","round_id":"native:r","trial_id":"t<1>&","trial_attempt":2,"messages":[` +
		`{"role":"user","content":"a<b>&c","tool_name":null,"call_id":null,"prompt_tokens":null,"completion_tokens":null,"duration_ms":null},` +
		`{"role":"tool","content":"","tool_name":null,"call_id":"c1","prompt_tokens":null,"completion_tokens":null,"duration_ms":0}],` +
		`"total_messages":2,"complete":false,"truncated":false,"capture_policy":"sampled"}` + "\n"
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("encoding (-want +got):\n%s", d)
	}
	empty, _ := Encode(&Trajectory{Scope: Scope, CapturePolicy: CapturePolicy})
	if !bytes.Contains(empty, []byte(`"messages":[]`)) {
		t.Errorf("empty messages must be [], got %s", empty)
	}
	for _, bad := range []*Trajectory{{CapturePolicy: CapturePolicy}, {Scope: Scope, CapturePolicy: "full"}, {Scope: Scope, CapturePolicy: CapturePolicy, Complete: true}, nil} {
		if _, err := Encode(bad); err == nil {
			t.Errorf("Encode(%+v) succeeded", bad)
		}
	}
}

func TestJSONStringLen(t *testing.T) {
	for _, s := range []string{"", "plain", "\"\\/\b\f\n\r\t\x00\x1f\x7f", "<>&", "é✓𝄞", "\u2028\u2029", "bad\xff\xfe", string([]byte{0xe2, 0x9c})} {
		b, _ := marshal(s)
		if got, want := jsonStringLen(s), len(b)-1; got != want {
			t.Errorf("jsonStringLen(%q) = %d, encoding/json writes %d (%s)", s, got, want, b)
		}
	}
}

func TestTruncateLimits(t *testing.T) {
	env := &Trajectory{Scope: Scope, CapturePolicy: CapturePolicy, TrialID: "t"}
	msgs := []Message{{Role: "user", Content: "aaaa"}, {Role: "assistant", Content: strings.Repeat("b", 500)}, {Role: "tool", Content: "c"}}
	kept, tr := Truncate(msgs, env, Limits{MaxMessages: 2, MaxBytes: 1 << 20})
	if len(kept) != 2 || !tr {
		t.Errorf("message limit: kept %d, truncated %t", len(kept), tr)
	}
	kept, tr = Truncate(msgs, env, Limits{MaxMessages: 10, MaxBytes: 1 << 20})
	if len(kept) != 3 || tr {
		t.Errorf("no limit hit: kept %d, truncated %t", len(kept), tr)
	}
	kept, tr = Truncate(msgs, env, Limits{MaxMessages: 10, MaxBytes: 600})
	if len(kept) != 2 || !tr || len(kept[1].Content) >= 500 || len(kept[1].Content) < 16 {
		t.Errorf("byte limit: kept %d (last %d bytes), truncated %t", len(kept), len(kept[len(kept)-1].Content), tr)
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("hello", "wörld ✓ \"quoted\"\n", 3, 400)
	f.Add(strings.Repeat("𝄞", 300), "\x00\u2028<>&", 1, 350)
	f.Add("bad\xffutf8", "", 2, 330)
	f.Fuzz(func(t *testing.T, a, b string, maxMsgs, maxBytes int) {
		if maxMsgs < 1 || maxMsgs > 50 || maxBytes < 1 || maxBytes > 1<<16 {
			return
		}
		a, b = strings.ToValidUTF8(a, "\uFFFD"), strings.ToValidUTF8(b, "\uFFFD")
		var msgs []Message
		for i := 0; i < 5; i++ {
			msgs = append(msgs, Message{Role: "user", Content: a}, Message{Role: "tool", Content: b, CallID: str(a)})
		}
		env := &Trajectory{Scope: Scope, CapturePolicy: CapturePolicy, RoundID: "native:x", TrialID: b}
		lim := Limits{MaxMessages: maxMsgs, MaxBytes: maxBytes}
		kept, truncated := Truncate(msgs, env, lim)
		out := *env
		out.Messages, out.TotalMessages, out.Truncated = kept, len(msgs), truncated
		enc, err := Encode(&out)
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) > 0 && len(enc) > maxBytes {
			t.Fatalf("encoded %d bytes over the %d limit", len(enc), maxBytes)
		}
		if len(kept) > maxMsgs || truncated != (len(kept) < len(msgs) || (len(kept) > 0 && kept[len(kept)-1].Content != msgs[len(kept)-1].Content)) {
			t.Fatalf("kept %d, truncated %t", len(kept), truncated)
		}
		for i, m := range kept {
			if !utf8.ValidString(m.Content) || !strings.HasPrefix(msgs[i].Content, m.Content) {
				t.Fatalf("message %d is not a valid prefix of the original", i)
			}
			if i < len(kept)-1 && m.Content != msgs[i].Content {
				t.Fatalf("message %d was cut but is not the last", i)
			}
		}
		if jsonStringLen(a) != len(must(marshal(a)))-1 {
			t.Fatalf("jsonStringLen(%q) disagrees with encoding/json", a)
		}
	})
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
