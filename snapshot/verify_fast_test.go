package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/jcs"
)

// The fast path of verify (the streamed read with the exact readers:
// obsexact.go, planstream.go) must settle only what the held read
// settles the same way. These tests compare the two on snapshots changed
// after they were written, with the changed file's hash updated in the
// manifest (so hashing alone settles nothing and the re-derivation must).

// richObservations are testObservations with the explanation members and
// strings that need escaping, so the exact reader's every branch is
// written.
func richObservations() []Observation {
	obs := testObservations()
	a := &obs[0].AttemptOutcomes[0]
	a.Detail = `exception EnvironmentStartTimeoutError: "docker" <timed out> after 1.5 s — é`
	a.Timing = &Timing{EnvironmentSetup: ptr(6.2), AgentSetup: nil, AgentExecution: ptr(120.0), Verifier: ptr(1e-7)}
	a.Usage = &Usage{InputTokens: ptr(int64(2600)), CacheTokens: nil, OutputTokens: ptr(int64(324)), CostUSD: ptr(0.0098)}
	a.Agent = &Agent{Name: "terminus-2", Model: ptr("coder-7b")}
	b := &obs[1].AttemptOutcomes[0]
	b.Verifier = &VerifierOutput{Source: "verifier/ctrf.json", Text: "1 of 2 tests failed:\n\ttest_answer"}
	b.Reward = ptr(0.125)
	obs[1].Reward = b.Reward
	obs[2].Evidence.VerifierEnvironmentMode = ptr("shared")
	return obs
}

// bothPaths runs the streamed read (as Verify runs it first) and the held
// read on dir. When the streamed read got as far as re-deriving the
// manifest (no problem with the plan's or the observations' form, which
// it words its own way before the held read decides), the two must
// report exactly the same problems: the same re-derived values. Verify
// must always report the held read's problems.
func bothPaths(t *testing.T, dir string) (streamed, held *VerifyReport) {
	t.Helper()
	saved, err := Load(dir)
	if err != nil {
		return nil, nil
	}
	c := &capture{streamed: true, manifest: saved}
	streamed, serr := verify(dir, saved, c)
	held, herr := verify(dir, saved, nil)
	if (serr == nil) != (herr == nil) {
		t.Fatalf("streamed read: %v; held read: %v", serr, herr)
	}
	if herr != nil {
		return nil, nil
	}
	formOnly := false
	for _, p := range streamed.Problems {
		if p.Code == ProblemPlanInvalid || p.Code == ProblemObservation || p.Code == ProblemReadError {
			formOnly = true
		}
	}
	if streamed.OK && !held.OK {
		t.Fatalf("the streamed read settles a snapshot the held read refuses: %v", held.Problems)
	}
	if !formOnly && !cmp.Equal(streamed.Problems, held.Problems) {
		t.Fatalf("problems (-held +streamed):\n%s", cmp.Diff(held.Problems, streamed.Problems))
	}
	rep, err := Verify(dir)
	if err != nil || !cmp.Equal(rep.Problems, held.Problems) {
		t.Fatalf("Verify: %v, %v; the held read: %v", rep, err, held.Problems)
	}
	return streamed, held
}

// mutate rewrites name in dir with f applied and updates its hash in the
// manifest.
func mutate(t *testing.T, dir, name string, f func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rehash(dir, name); err != nil {
		t.Fatal(err)
	}
}

func replaceAll(old, new string) func([]byte) []byte {
	return func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(old), []byte(new)) }
}

// TestVerifyPathsAgree: on a snapshot as written and on changed ones
// (values, number forms, escapes, member order, white space, in the
// observations and in the plan) the streamed read and the held read
// re-derive the same manifest; the changes that keep every value keep
// the snapshot verifying (the decoders agree on values, not bytes).
func TestVerifyPathsAgree(t *testing.T) {
	tests := []struct {
		name, file string
		f          func([]byte) []byte
		ok         bool // the change keeps every value the manifest derives from
	}{
		{"as written", ObservationsFile, func(b []byte) []byte { return b }, true},
		{"reward 1 as 1.0", ObservationsFile, replaceAll(`"reward":1,`, `"reward":1.0,`), true},
		{"reward as an exponent", ObservationsFile, replaceAll(`"reward":0.125`, `"reward":125e-3`), true},
		{"tiny float as a decimal", ObservationsFile, replaceAll(`"verifier_sec":1e-7`, `"verifier_sec":0.0000001`), true},
		{"escaped letter in a status", ObservationsFile, replaceAll(`"status":"success"`, `"status":"succ\u0065ss"`), true},
		{"escaped slash in a detail", ObservationsFile, replaceAll(`after 1.5 s`, `after 1.5\/s`), true},
		{"white space after a colon", ObservationsFile, replaceAll(`"attempts":1,`, `"attempts": 1,`), true},
		{"members in another order", ObservationsFile, replaceAll(`"trial_attempt":0,"attempts":1,`, `"attempts":1,"trial_attempt":0,`), true},
		{"CRLF line ends", ObservationsFile, replaceAll("}\n", "}\r\n"), true},
		{"no final newline", ObservationsFile, func(b []byte) []byte { return bytes.TrimSuffix(b, []byte("\n")) }, true},
		{"status changed", ObservationsFile, replaceAll(`"status":"failure","reason":"reward_failure"`, `"status":"success","reason":"reward_failure"`), false},
		{"reward changed everywhere", ObservationsFile, replaceAll(`"reward":0.125`, `"reward":0.25`), false},
		{"reward changed in the attempt only", ObservationsFile, func(b []byte) []byte {
			i := bytes.LastIndex(b, []byte(`"reward":0.125`))
			return append(b[:i:i], bytes.Replace(b[i:], []byte(`0.125`), []byte(`0.5`), 1)...)
		}, false},
		{"exception type changed", ObservationsFile, replaceAll(`"WeirdError"`, `"OtherError"`), false},
		{"verifier mode changed", ObservationsFile, replaceAll(`"shared"`, `"docker"`), false},
		{"duplicate member", ObservationsFile, replaceAll(`"trainable":false,`, `"trainable":false,"trainable":true,`), false},
		{"unknown member", ObservationsFile, replaceAll(`"trainable":false,`, `"trainable":false,"x":1,`), false},
		{"timing null", ObservationsFile, replaceAll(`"timing":{"environment_setup_sec":6.2,"agent_setup_sec":null,"agent_execution_sec":120,"verifier_sec":1e-7}`, `"timing":null`), true},
		{"a line dropped", ObservationsFile, func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			return bytes.Join(append(lines[:1:1], lines[2:]...), nil)
		}, false},
		{"lines swapped", ObservationsFile, func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			lines[0], lines[1] = lines[1], lines[0]
			return bytes.Join(lines, nil)
		}, false},
		{"an empty line", ObservationsFile, replaceAll("}\n", "}\n\n"), false},
		{"plan: task escaped", PlanFile, replaceAll(`"task":"b"`, `"task":"\u0062"`), true},
		{"plan: task changed", PlanFile, replaceAll(`"task":"c"`, `"task":"d"`), false},
		{"plan: repeat as 0.0", PlanFile, replaceAll(`"repeat":0,"task":"b"`, `"repeat":0.0,"task":"b"`), true},
		{"plan: repeat as -0", PlanFile, replaceAll(`"repeat":0,"task":"b"`, `"repeat":-0,"task":"b"`), true},
		{"plan: a trial's members reordered", PlanFile, replaceAll(`"repeat":1,"task":"a"`, `"task":"a","repeat":1`), true},
		{"plan: a trial with one more member", PlanFile, replaceAll(`"repeat":1,"task":"a"`, `"repeat":1,"task":"a","z":[1,{"a":"]"}]`), false},
		{"plan: a trial with a member before attempts", PlanFile, replaceAll(`{"attempts":[{"dir":"a1"`, `{"a":"}","attempts":[{"dir":"a1"`), false},
		{"plan: white space", PlanFile, replaceAll(`,"repeat":1,`, `, "repeat":1,`), true},
		{"plan: a trial dropped", PlanFile, replaceAll(`{"attempts":[{"dir":"a1","retry":0}],"repeat":1,"task":"a"},`, ``), false},
		{"plan: a trial duplicated", PlanFile, replaceAll(`{"attempts":[{"dir":"a1","retry":0}],"repeat":1,"task":"a"},`, `{"attempts":[{"dir":"a1","retry":0}],"repeat":1,"task":"a"},{"attempts":[{"dir":"a1","retry":0}],"repeat":1,"task":"a"},`), false},
		{"plan: trials member twice", PlanFile, replaceAll(`,"version":1}`, `,"trials":[],"version":1}`), false},
		{"plan: split changed", PlanFile, replaceAll(`"split":"train"`, `"split":"test"`), false},
		{"plan: trailing bytes", PlanFile, replaceAll("}\n", "}\n{}\n"), false},
		{"plan: a bracket in a dir", PlanFile, replaceAll(`"dir":"a1"`, `"dir":"a]1}\"["`), false},
		// encoding/json takes a member for a field when their names fold
		// alike ("ſ" folds to "s"): one after the trials changes the head.
		{"plan: a member after the trials taken for split", PlanFile, replaceAll(`,"version":1}`, `,"version":1,"ſplit":"test"}`), false},
		{"plan: a member after the trials", PlanFile, replaceAll(`,"version":1}`, `,"version":1,"zz":[1,"]"]}`), false},
		{"plan: no newline at the end", PlanFile, replaceAll("}\n", "}"), true},
	}
	for _, block := range []int{planBlock, 7} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/block=%d", tt.name, block), func(t *testing.T) {
				defer func(n int) { planBlock = n }(planBlock)
				planBlock = block
				verifyPathsCase(t, tt.name, tt.file, tt.f, tt.ok)
			})
		}
	}
}

// verifyPathsCase writes a snapshot, changes file with f and compares
// the two reads; ok is whether the held read must say OK.
func verifyPathsCase(t *testing.T, name, file string, f func([]byte) []byte, ok bool) {
	dir := writeWith(t, sortedPlan, richObservations(), false)
	before, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	mutate(t, dir, file, f)
	if after, _ := os.ReadFile(filepath.Join(dir, file)); name != "as written" && bytes.Equal(before, after) {
		t.Fatalf("the change changed nothing in %s", before)
	}
	streamed, held := bothPaths(t, dir)
	if held == nil {
		t.Fatal("not a snapshot")
	}
	if held.OK != ok {
		t.Errorf("held read OK %v, want %v: %v", held.OK, ok, held.Problems)
	}
	if name == "as written" && !streamed.OK {
		t.Errorf("the streamed read refuses a snapshot as written: %v", streamed.Problems)
	}
}

// TestVerifyStreamedHeadAfterTrials: the streamed read takes the plan's
// head before its trials and sees the members after them only at the end;
// one there that encoding/json decodes into the head (a name that folds
// to "settings") must send the snapshot to the held read, even when every
// digest agrees with the head as first read. The snapshot's round ID is
// made to match the changed plan, so only the settings tell them apart.
func TestVerifyStreamedHeadAfterTrials(t *testing.T) {
	dir := writeWith(t, sortedPlan, richObservations(), false)
	mutate(t, dir, PlanFile, replaceAll(`,"version":1}`, `,"version":1,"ſettings":{"x":1}}`))
	saved, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	held, err := verify(dir, saved, nil)
	if err != nil {
		t.Fatal(err)
	}
	var round string
	for _, p := range held.Problems {
		if p.Code == ProblemRoundMismatch {
			round = p.Message[strings.LastIndex(p.Message, " ")+1:]
		}
	}
	if round == "" {
		t.Fatalf("the changed plan kept its round ID: %v", held.Problems)
	}
	if err := replaceIn(filepath.Join(dir, ManifestFile), saved.RoundID, round); err != nil {
		t.Fatal(err)
	}
	streamed, held := bothPaths(t, dir)
	if held == nil || held.OK || len(held.Problems) != 1 || held.Problems[0].Code != ProblemFieldMismatch || !strings.Contains(held.Problems[0].Message, "settings_digest") {
		t.Fatalf("the held read: %+v; want one problem, the settings digest", held)
	}
	if streamed.OK {
		t.Fatal("the streamed read settles a plan whose head changed after its trials")
	}
}

// FuzzVerifyPaths is TestVerifyPathsAgree's check for any change: the
// fuzzer cuts del bytes at off in the observations or the plan, puts ins
// there, and the streamed and held reads must agree.
func FuzzVerifyPaths(f *testing.F) {
	f.Add(false, uint16(30), uint8(1), []byte("2"))
	f.Add(false, uint16(80), uint8(3), []byte(`\u0041`))
	f.Add(true, uint16(700), uint8(0), []byte(" "))
	f.Add(true, uint16(650), uint8(2), []byte(`1.0`))
	f.Fuzz(func(t *testing.T, plan bool, off uint16, del uint8, ins []byte) {
		dir := writeWith(t, sortedPlan, richObservations(), false)
		name := ObservationsFile
		if plan {
			name = PlanFile
		}
		mutate(t, dir, name, func(b []byte) []byte {
			i := int(off) % (len(b) + 1)
			j := min(i+int(del), len(b))
			return append(append(b[:i:i], ins...), b[j:]...)
		})
		bothPaths(t, dir)
	})
}

// TestExactTakesWrittenLines pins that lines as tpctl writes them take
// the exact reader (else it would silently stop mattering) and decode as
// encoding/json decodes them.
func TestExactTakesWrittenLines(t *testing.T) {
	lines := written(t)
	for _, o := range richObservations() {
		b, err := appendObservation(nil, &o)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	for _, line := range lines {
		var got Observation
		if !newObsDecoder().exact(line, &got) {
			t.Errorf("exact reader declined a written line: %s", line)
			continue
		}
		want, err := strictDecode(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("line %s:\nexact  %+v\nstrict %+v (%v)", line, got, want, err)
		}
	}
}

// FuzzExactObservation is the exact reader's differential check: what it
// accepts, encoding/json accepts with the same value; and one decoder
// reading many lines (sharing and interning strings) gives each line's
// value as a fresh decoder does. Seeds in testdata/fuzz.
func FuzzExactObservation(f *testing.F) {
	for _, line := range written(f) {
		f.Add(line, []byte(nil))
	}
	f.Fuzz(func(t *testing.T, line, prev []byte) {
		d := newObsDecoder()
		var p Observation
		d.decode(prev, &p) // state a line before leaves behind
		var got Observation
		if !d.exact(line, &got) {
			return
		}
		want, err := strictDecode(line)
		if err != nil {
			t.Fatalf("exact reader accepted %q, encoding/json refuses it: %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nexact  %+v\nstrict %+v", line, got, want)
		}
	})
}

// FuzzKeyWalk: the streamed plan walk takes a trials array only when it
// is in RFC 8785 form, and then with the keys encoding/json decodes.
// Seeds in testdata/fuzz.
func FuzzKeyWalk(f *testing.F) {
	f.Add([]byte(`[{"attempts":[{"dir":"d","retry":0}],"repeat":0,"task":"a"},{"attempts":[],"repeat":1,"task":"a"}]`))
	f.Add([]byte(`[{"attempts":[],"repeat":0,"task":"\u0061"}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		w := newKeyWalk(bytes.NewReader(b))
		var got []trialKey
		for {
			k, ok, err := w.next()
			if err != nil {
				return
			}
			if !ok {
				break
			}
			got = append(got, k)
		}
		if canon, err := jcs.Canonical(b); err != nil || !bytes.Equal(canon, b) {
			t.Fatalf("walked %q, which is not canonical (%v)", b, err)
		}
		var want []trialKey
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("walked %q, which encoding/json refuses: %v", b, err)
		}
		if len(want) == 0 && len(got) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: walked %v, encoding/json %v", b, got, want)
		}
	})
}

// TestPlanSpan: the lexer finds the top-level trials array wherever
// brackets, quotes and escapes stand around it, and refuses what a
// streamed read does not take.
func TestPlanSpan(t *testing.T) {
	tests := []struct {
		in         string
		start, end int64 // -1: refused
	}{
		{`{"a":"[\"]","trials":[{"x":"]"}],"z":{"trials":1}}` + "\n", 21, 32},
		{`{"s":{"trials":[1]},"trials":[]}` + "\n", 29, 31},
		{`{"tr\u0069als":[],"b":1}` + "\n", -1, -1},
		{`{"trials":{}}` + "\n", -1, -1},
		{`{"trials":[],"trials":[]}` + "\n", -1, -1},
		{`{"trials": []}` + "\n", -1, -1},
		{`[{"trials":[]}]` + "\n", -1, -1},
		{`{"trials":[]}{}` + "\n", -1, -1},
	}
	for _, tt := range tests {
		for _, cut := range []int{1, 3, 7, len(tt.in)} {
			s := newPlanSpan()
			for b := []byte(tt.in); len(b) > 0; {
				n := min(cut, len(b))
				s.feed(b[:n])
				b = b[n:]
			}
			start, end := s.start, s.end
			if s.bad || s.closed != int64(len(tt.in)-1) {
				start, end = -1, -1
			}
			if start >= 0 {
				if got := tt.in[start:end]; !strings.HasPrefix(got, "[") || !strings.HasSuffix(got, "]") {
					t.Errorf("%s: span %q", tt.in, got)
				}
			}
			if start != tt.start || end != tt.end {
				t.Errorf("%s in pieces of %d: span %d..%d, want %d..%d", tt.in, cut, start, end, tt.start, tt.end)
			}
		}
	}
}

// FuzzPlanStream: whatever plan.json holds, the single streamed read
// (openPlan, the trials walked to their end, the rest, finish) accepts it
// only when it is canonical JSON and a newline, walks the trials
// encoding/json decodes from it, took the head encoding/json decodes, and
// gives its canonical digest and SHA-256.
func FuzzPlanStream(f *testing.F) {
	f.Add([]byte(sortedPlan + "\n"))
	f.Add([]byte(strings.Replace(sortedPlan, `,"version":1}`, `,"version":1,"ſettings":{"x":1}}`, 1) + "\n"))
	f.Add([]byte(strings.Replace(sortedPlan, `,"version":1}`, `,"version":1,"zz":[1,"]"]}`, 1) + "\n"))
	f.Add([]byte(`{"trials":[]}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, PlanFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := openPlan(dir)
		if err != nil {
			return
		}
		defer p.close()
		var head planHead
		if decodePlanHead(p.provisionalHead(), &head) != nil {
			return
		}
		w := newKeyWalk(p)
		w.tail = true
		var got []trialKey
		for {
			k, ok, err := w.next()
			if err != nil {
				return
			}
			if !ok {
				break
			}
			got = append(got, k)
		}
		tail, err := w.rest(maxPlanHead)
		if err != nil {
			return
		}
		canonSum, fileSum, err := p.finish(tail, &head)
		if err != nil {
			return
		}
		body, ok := bytes.CutSuffix(b, []byte("\n"))
		if canon, err := jcs.Canonical(body); !ok || err != nil || !bytes.Equal(canon, body) {
			t.Fatalf("accepted %q, which is not canonical JSON and a newline (%v)", b, err)
		}
		var want planHead
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", b, err)
		}
		if len(got) != 0 || len(want.Trials) != 0 {
			if !reflect.DeepEqual(got, want.Trials) {
				t.Fatalf("%q: walked %v, encoding/json %v", b, got, want.Trials)
			}
		}
		want.Trials = nil
		if !reflect.DeepEqual(head, want) {
			t.Fatalf("%q: head %+v, encoding/json %+v", b, head, want)
		}
		if canonSum != digest.Bytes(body).String() || fileSum != digest.Bytes(b).String() {
			t.Fatalf("%q: digests %s %s", b, canonSum, fileSum)
		}
	})
}
