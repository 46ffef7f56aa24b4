package planfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	s.SortIn(t.TempDir())
	var got bytes.Buffer
	type handed struct {
		t     Trial
		index int
	}
	var each []handed
	werr := s.WriteCanonical(&got, func(t Trial, index int) error {
		each = append(each, handed{t, index})
		return nil
	})
	p, rep, err := Load(path, Options{})
	if err != nil || p == nil {
		t.Fatalf("Scan vouched for a plan Load cannot read: %v", err)
	}
	if errors.Is(werr, ErrDuplicateTrial) {
		// Scan cannot see a trial listed twice out of order; the sort can.
		if s.InOrder() || !slices.ContainsFunc(rep.Findings, func(f Finding) bool { return f.Code == CodeDuplicateTrial && f.Severity == SeverityError }) {
			t.Fatalf("WriteCanonical found a trial twice in a plan in order %v or without duplicate_trial: %+v", s.InOrder(), rep.Findings)
		}
		return false
	}
	if werr != nil {
		t.Fatal(werr)
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
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("canonical form differs:\n%s\nwant\n%s", got.Bytes(), want)
	}
	var back []Trial
	if err := ReadCanonicalTrials(bytes.NewReader(want), func(tr Trial) error { back = append(back, tr); return nil }); err != nil {
		t.Fatal(err)
	}
	// each was handed the trials plan.json holds, in its order, each with
	// its index in the file.
	if len(each) != len(back) {
		t.Fatalf("each was handed %d trials; plan.json holds %d", len(each), len(back))
	}
	for k, h := range each {
		i := h.index
		if d := cmp.Diff(back[k], h.t, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("trial %d handed to each differs from plan.json's (-file +each):\n%s", k, d)
		}
		if i < 0 || i >= len(p.Trials) || p.Trials[i].Task != h.t.Task || p.Trials[i].Repeat != h.t.Repeat {
			t.Fatalf("each was given index %d for trial %s; the file's trial there is not it", i, h.t.ID())
		}
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
		{"out of order", withTrials(`{"task":"b","repeat":0},{"task":"a","repeat":0}`), true},
		{"repeats out of order", withTrials(`{"task":"a","repeat":1,"attempts":[{"retry":0,"dir":"x"}]},{"task":"b","repeat":0},{"task":"a","repeat":0,"attempts":[{"retry":0,"dir":"y"}]}`), true},
		{"repeat twice", withTrials(`{"task":"a","repeat":0},{"task":"a","repeat":0}`), false},
		{"repeat twice out of order", withTrials(`{"task":"a","repeat":0},{"task":"b","repeat":0},{"task":"a","repeat":0}`), false},
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

// TestScanSortsInRuns: a plan out of canonical order is sorted through
// scratch files in many runs, each trial handed with its index, to the
// very bytes NormalizedJSON gives; a trial listed twice in different runs
// is ErrDuplicateTrial. No scratch file is left behind.
func TestScanSortsInRuns(t *testing.T) {
	defer func(r int) { sortRunBytes = r }(sortRunBytes)
	sortRunBytes = 700
	// shuffled lists n trials, the first head of them in order and the
	// rest shuffled; dup adds one of them again at the end.
	shuffled := func(n, head int, dup bool) string {
		order := make([]int, n)
		for i := range order {
			order[i] = (i * 7919) % n // a permutation: 7919 is prime and n is not a multiple
		}
		for i := range head {
			order[i] = i
		}
		rest := order[head:]
		for i := range rest {
			rest[i] = head + (i*7919)%(n-head)
		}
		var sb strings.Builder
		for k, i := range order {
			if k > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"task":"t%03d","repeat":%d,"attempts":[{"retry":0,"dir":"j/%d"},{"retry":2,"dir":"j/%d-2"}]}`, i/3, i%3, i, i)
		}
		if dup {
			sb.WriteString(`,{"task":"t000","repeat":1}`)
		}
		i := strings.Index(scanSeedPlan, `"trials":[`)
		return scanSeedPlan[:i] + `"trials":[` + sb.String() + `]}`
	}
	for _, tc := range []struct {
		name  string
		plan  string
		vouch bool
	}{
		{"shuffled", shuffled(500, 0, false), true},
		{"shuffled with a trial twice", shuffled(500, 0, true), false},
		{"in order, then shuffled", shuffled(500, 200, false), true},
		{"in order, then shuffled, a trial of the head twice", shuffled(500, 200, true), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkScan(t, []byte(tc.plan)); got != tc.vouch {
				t.Errorf("vouched = %v; want %v", got, tc.vouch)
			}
		})
	}
}

// TestScanScratchRemoved: the scratch files of a sort are gone once the
// Streamed is closed (at once where an open file can be removed).
func TestScanScratchRemoved(t *testing.T) {
	defer func(r int) { sortRunBytes = r }(sortRunBytes)
	sortRunBytes = 100
	path := filepath.Join(t.TempDir(), "plan.json")
	plan := strings.Replace(scanSeedPlan, `{"task":"a","repeat":0,`, `{"task":"zz","repeat":0},{"task":"a","repeat":0,`, 1)
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	s, ok := Scan(path, Options{})
	if !ok || s.InOrder() {
		t.Fatalf("Scan: ok %v, in order %v; want a plan out of order vouched for", ok, ok && s.InOrder())
	}
	dir := t.TempDir()
	s.SortIn(dir)
	if err := s.WriteCanonical(io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if len(s.scratches) < 1 {
		t.Fatalf("%d scratch files; the test wants runs on disk", len(s.scratches))
	}
	s.Close()
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("scratch files left: %v", left)
	}
}

// TestScanSortedHeadChanged: a plan out of order whose trials changed
// between Scan and WriteCanonical (here one in the ordered head) fails
// with ErrPlanChanged.
func TestScanSortedHeadChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	plan := strings.Replace(scanSeedPlan, `{"task":"a","repeat":0,`, `{"task":"a","repeat":0},{"task":"zz","repeat":0},{"task":"a","repeat":5,`, 1)
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	s, ok := Scan(path, Options{})
	if !ok || s.InOrder() {
		t.Fatalf("Scan: ok %v, in order %v; want a plan out of order vouched for", ok, ok && s.InOrder())
	}
	defer s.Close()
	s.SortIn(t.TempDir())
	// The same length, another repeat in the head.
	changed := strings.Replace(plan, `{"task":"a","repeat":0},{"task":"zz"`, `{"task":"a","repeat":1},{"task":"zz"`, 1)
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteCanonical(io.Discard, nil); !errors.Is(err, ErrPlanChanged) {
		t.Fatalf("err = %v; want ErrPlanChanged", err)
	}
}
