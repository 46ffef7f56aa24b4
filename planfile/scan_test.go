package planfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// scanSeedPlan is a plan Scan vouches for: sorted trials, ascending
// retries, settings that leave one category out (a warning).
const scanSeedPlan = `{"version":1,"source":{"format":"harbor","revision":"5f5618b8f5419dde63f2df6d86706782e597e8a3"},
"name":"n","split":"train","trainable":true,
"checkpoint":{"ref":"hf://a/b@0123456789abcdef0123456789abcdef01234567"},
"protocol":{"dataset_digest":"1111111111111111111111111111111111111111111111111111111111111111","verifier_digest":"2222222222222222222222222222222222222222222222222222222222222222",
"environment_digest":"3333333333333333333333333333333333333333333333333333333333333333","harness_digest":"4444444444444444444444444444444444444444444444444444444444444444"},
"settings":{"temperature":0,"context_window":1000,"repeats":1,"environment_type":"docker"},
"trials":[{"task":"a","repeat":0,"attempts":[{"retry":0,"dir":"j/a0"},{"retry":1,"dir":"j/a0b"}]},
{"task":"a","repeat":10,"attempts":[]},{"repeat":2,"task":"b/c","attempts":[{"dir":"j/b2","retry":0}]},{"task":"é","repeat":0}]}`

// checkScan fails when Scan vouches for data while Load finds an error, a
// finding under /trials or findings other than Scan's, or when the
// canonical form Scan writes (or reads back) is not NormalizedJSON's.
func checkScan(t *testing.T, data []byte) (vouched bool) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, ok := Scan(path, Options{})
	if !ok {
		return false
	}
	defer s.Close()
	p, rep, err := Load(path, Options{})
	if err != nil || p == nil {
		t.Fatalf("Scan vouched for a plan Load cannot read: %v", err)
	}
	var loaded []Finding
	for _, f := range rep.Findings {
		if f.Severity == SeverityError || f.Pointer == "/trials" || strings.HasPrefix(f.Pointer, "/trials/") {
			t.Fatalf("Scan vouched for a plan with finding %+v", f)
		}
		f.Line, f.Column = 0, 0
		loaded = append(loaded, f)
	}
	if d := cmp.Diff(loaded, s.Findings()); d != "" {
		t.Fatalf("findings differ (-Load +Scan):\n%s", d)
	}
	if s.Trials() != len(p.Trials) {
		t.Fatalf("Scan counted %d trials, Load %d", s.Trials(), len(p.Trials))
	}
	want, err := p.NormalizedJSON()
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := s.WriteCanonical(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("canonical form differs:\n%s\nwant\n%s", got.Bytes(), want)
	}
	var back []Trial
	if err := ReadCanonicalTrials(bytes.NewReader(want), func(tr Trial) error { back = append(back, tr); return nil }); err != nil {
		t.Fatal(err)
	}
	norm := p.Normalized().Trials
	if len(back) == 0 && len(norm) == 0 {
		return true
	}
	if d := cmp.Diff(norm, back, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("trials read back differ (-want +got):\n%s", d)
	}
	return true
}

// FuzzScan holds the streaming validator to Load: it may decline any
// plan, but never vouch for one Load judges otherwise.
func FuzzScan(f *testing.F) {
	for _, name := range []string{"import-plan.json", "import-plan-v0.22.0.json"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "example", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(scanSeedPlan))
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data) })
}

// TestScan: which plans Scan vouches for, each checked against Load.
func TestScan(t *testing.T) {
	sortedTrials := func(n int) string {
		var sb strings.Builder
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"task":"t%03d","repeat":%d,"attempts":[{"retry":0,"dir":"j/%d"}]}`, i/3, i%3, i)
		}
		return sb.String()
	}
	withTrials := func(trials string) string {
		i := strings.Index(scanSeedPlan, `"trials":[`)
		return scanSeedPlan[:i] + `"trials":[` + trials + `]}`
	}
	tests := []struct {
		name  string
		plan  string
		vouch bool
	}{
		{"seed", scanSeedPlan, true},
		{"many trials", withTrials(sortedTrials(500)), true},
		{"trials first", `{"trials":[{"task":"a","repeat":0}],` + scanSeedPlan[1:strings.LastIndex(scanSeedPlan[:strings.Index(scanSeedPlan, `"trials":[`)], ",")] + `}`, true},
		{"no trials", withTrials(""), false},
		{"out of order", withTrials(`{"task":"b","repeat":0},{"task":"a","repeat":0}`), false},
		{"repeat twice", withTrials(`{"task":"a","repeat":0},{"task":"a","repeat":0}`), false},
		{"retries descending", withTrials(`{"task":"a","repeat":0,"attempts":[{"retry":1,"dir":"x"},{"retry":0,"dir":"y"}]}`), false},
		{"duplicate dir", withTrials(`{"task":"a","repeat":0,"attempts":[{"retry":0,"dir":"x"}]},{"task":"a","repeat":1,"attempts":[{"retry":0,"dir":"x"}]}`), false},
		{"unclean dir", withTrials(`{"task":"a","repeat":0,"attempts":[{"retry":0,"dir":"x//y"}]}`), false},
		{"escape", withTrials(`{"task":"\u0061","repeat":0}`), false},
		{"hash in task", withTrials(`{"task":"a#b","repeat":0}`), false},
		{"repeat 1.0", withTrials(`{"task":"a","repeat":1.0}`), false},
		{"unknown member", withTrials(`{"task":"a","repeat":0,"x":1}`), false},
		{"control character", withTrials(`{"task":"a\u0007","repeat":0}`), false},
		{"bidi", withTrials(`{"task":"a` + "\u202e" + `","repeat":0}`), false},
		{"bad digest", strings.Replace(scanSeedPlan, `"1111`, `"X111`, 1), false},
		{"unknown top-level", strings.Replace(scanSeedPlan, `"name":"n"`, `"name":"n","extra":1`, 1), false},
		{"trials twice", strings.Replace(scanSeedPlan, `"name":"n"`, `"name":"n","trials":[]`, 1), false},
		{"syntax", scanSeedPlan[:len(scanSeedPlan)-1], false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkScan(t, []byte(tc.plan)); got != tc.vouch {
				t.Errorf("vouched = %v; want %v", got, tc.vouch)
			}
		})
	}
}

// TestScanSeedsWritten keeps the seed corpus of FuzzScan in the tree.
func TestScanSeedsWritten(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzScan"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no seeds in testdata/fuzz/FuzzScan: %v", err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzScan", e.Name()))
		if err != nil || !bytes.HasPrefix(b, []byte("go test fuzz v1\n")) {
			t.Errorf("%s is not a fuzz seed: %v", e.Name(), err)
		}
	}
}

// TestScanFingerprintCollision: folders whose fingerprints match are
// compared exactly, so distinct folders that collide still stream.
func TestScanFingerprintCollision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, []byte(scanSeedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	s, ok := Scan(path, Options{})
	if !ok {
		t.Fatal("declined the seed plan")
	}
	defer s.Close()
	s.collisions = map[uint64]bool{}
	for _, dir := range []string{"j/a0", "j/b2"} {
		b, fp := s.dirKey(dir)
		s.collisions[uint64(b)<<32|uint64(fp)] = true
	}
	if !s.confirmDirs() {
		t.Error("distinct folders with matching fingerprints were taken for a duplicate")
	}
}
