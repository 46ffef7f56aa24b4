package upload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/upload/ingesttest"
)

const (
	testToken = "tok-CANARY-7f3a9c1e"
	testRun   = "run-1"
)

// defaultSpec has 99 observations (4 batches: 32, 32, 32, 3) and 3
// trajectories: 9 requests, 104 records.
var defaultSpec = ingesttest.SnapshotSpec{Trials: 100, Trajectories: 3}

const defaultRecords = 1 + 1 + 99 + 3

func newSnapshot(t testing.TB, spec ingesttest.SnapshotSpec) (string, *snapshot.Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	m, err := ingesttest.WriteSnapshot(dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

func newReceiver(t testing.TB) *ingesttest.Receiver {
	t.Helper()
	r := ingesttest.New()
	t.Cleanup(r.Close)
	r.AddToken(testToken, testRun)
	return r
}

// waits records the retry waits chosen instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) wait(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func testConfig(endpoint string, w *waits) Config {
	return Config{
		Endpoint: endpoint, RunID: testRun, Token: testToken,
		MaxTries: 4, RequestTimeout: 2 * time.Second, Wait: w.wait,
	}
}

// wantState is the receiver state a snapshot must produce, built from the
// snapshot files independently of the client's encoder.
func wantState(t testing.TB, dir string) map[string]*ingesttest.Round {
	t.Helper()
	m, err := snapshot.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	proto, err := jcs.Marshal(map[string]any{
		"digest_rules": m.Protocol.DigestRules, "dataset_digest": m.Protocol.DatasetDigest,
		"cohort_digest": m.Protocol.CohortDigest, "verifier_digest": m.Protocol.VerifierDigest,
		"settings_digest": m.Protocol.SettingsDigest, "split": m.Protocol.Split,
		"name": m.Name, "format": m.Format, "outcome_rules": m.OutcomeRules,
		"source":     map[string]any{"format": m.Source.Format, "revision": m.Source.Revision, "format_verified": m.Source.FormatVerified},
		"checkpoint": map[string]any{"ref": m.Checkpoint.Ref, "served_as": m.Checkpoint.ServedAs},
	})
	if err != nil {
		t.Fatal(err)
	}
	expected := m.Counts.Expected
	rd := &ingesttest.Round{
		Protocol: proto, Expected: &expected,
		Events:       map[ingesttest.Identity]json.RawMessage{},
		Trajectories: map[ingesttest.Identity]json.RawMessage{},
	}
	err = snapshot.ReadObservations(dir, func(o snapshot.Observation) error {
		ev := map[string]any{
			"trial_id": o.TrialID, "task": o.Task, "repeat": o.Repeat, "trial_attempt": o.TrialAttempt,
			"status": o.Status, "trainable": o.Trainable,
		}
		if o.Reward != nil {
			ev["reward"] = *o.Reward
		}
		if o.ExceptionType != nil {
			ev["exception_type"] = *o.ExceptionType
		}
		if o.Reason != "" {
			ev["reason"] = o.Reason
		}
		b, err := jcs.Marshal(ev)
		rd.Events[ingesttest.Identity{TrialID: o.TrialID, TrialAttempt: o.TrialAttempt}] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range m.Files {
		if !strings.HasPrefix(name, "trajectories/") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var id struct {
			TrialID      string `json:"trial_id"`
			TrialAttempt int    `json:"trial_attempt"`
		}
		if err := json.Unmarshal(raw, &id); err != nil {
			t.Fatal(err)
		}
		canon, err := jcs.Transform(raw)
		if err != nil {
			t.Fatal(err)
		}
		rd.Trajectories[ingesttest.Identity{TrialID: id.TrialID, TrialAttempt: id.TrialAttempt}] = canon
	}
	return map[string]*ingesttest.Round{m.RoundID: rd}
}

// stateOnly drops the receiver's filing counters, which depend on how
// many replays the faults caused, and compares only what is stored.
var stateOnly = cmp.FilterPath(func(p cmp.Path) bool {
	switch p.Last().String() {
	case ".Accepted", ".Duplicates", ".Conflicts":
		return true
	}
	return false
}, cmp.Ignore())

// faultCase is one row of the fault matrix.
type faultCase struct {
	name   string
	faults []ingesttest.Fault
	// want is the client summary's (accepted, duplicates); -1 means
	// only their sum is fixed (the order of a slow commit and its
	// replay is a race).
	accepted, duplicates int
	retries              int
	// minRetries, when set, makes retries a lower bound: on a loaded
	// machine a short timeout may fire more than once.
	minRetries bool
	wantWait   func(t *testing.T, d []time.Duration, c clock)
	// batchRace: which observations batch meets the fault depends on
	// the order concurrent requests arrive in, so with more than one
	// in flight only the sum of accepted and duplicates is fixed.
	batchRace bool
	timeout   time.Duration // of one try; 0: 20s
}

// clock is what a row's wait check may depend on: the HTTP-date its
// "date" Retry-After stands for and the clock around the upload. Waits
// are checked against bounds taken from it, not against a fixed slack,
// so a loaded machine cannot break them.
type clock struct {
	dateAt     time.Time // a whole second, 30 s after the row started
	httpDate   string
	start, end time.Time // around the upload
}

// faultMatrix returns the rows. A Retry-After of "date" is replaced by an
// HTTP-date 30 s after the row starts.
func faultMatrix() []faultCase {
	return []faultCase{
		{name: "no fault", accepted: defaultRecords},
		{name: "drop before commit", faults: []ingesttest.Fault{{Action: ingesttest.DropBeforeCommit, Kind: KindObservations, After: 1}},
			accepted: defaultRecords, retries: 1},
		{name: "lost ack on observations", faults: []ingesttest.Fault{{Action: ingesttest.DropAfterCommit, Kind: KindObservations, After: 1}},
			accepted: defaultRecords - 32, duplicates: 32, retries: 1, batchRace: true},
		{name: "lost ack on the last short batch", faults: []ingesttest.Fault{{Action: ingesttest.DropAfterCommit, Kind: KindObservations, After: 3}},
			accepted: defaultRecords - 3, duplicates: 3, retries: 1, batchRace: true},
		{name: "lost ack on protocol", faults: []ingesttest.Fault{{Action: ingesttest.DropAfterCommit, Kind: KindProtocol}},
			accepted: defaultRecords - 1, duplicates: 1, retries: 1},
		{name: "lost ack on total", faults: []ingesttest.Fault{{Action: ingesttest.DropAfterCommit, Kind: KindTotal}},
			accepted: defaultRecords - 1, duplicates: 1, retries: 1},
		{name: "lost ack on trajectory", faults: []ingesttest.Fault{{Action: ingesttest.DropAfterCommit, Kind: KindTrajectory, After: 2}},
			accepted: defaultRecords - 1, duplicates: 1, retries: 1},
		{name: "500 twice", faults: []ingesttest.Fault{{Action: ingesttest.Status500, Kind: KindTotal, Times: 2}},
			accepted: defaultRecords, retries: 2},
		{name: "503 with retry-after seconds", faults: []ingesttest.Fault{{Action: ingesttest.Status503, Kind: KindObservations, RetryAfter: "7"}},
			accepted: defaultRecords, retries: 1,
			wantWait: func(t *testing.T, d []time.Duration, _ clock) {
				if !slices.Equal(d, []time.Duration{7 * time.Second}) {
					t.Errorf("waits %v, want [7s] from Retry-After", d)
				}
			}},
		{name: "429 with retry-after date", faults: []ingesttest.Fault{{Action: ingesttest.Status429, RetryAfter: "date", After: 4}},
			accepted: defaultRecords, retries: 1,
			wantWait: func(t *testing.T, d []time.Duration, c clock) {
				// The wait is the date minus the moment the answer came,
				// which lies between the start and the end of the upload.
				lo, hi := c.dateAt.Sub(c.end), c.dateAt.Sub(c.start)
				if len(d) != 1 || d[0] < lo || d[0] > hi {
					t.Errorf("waits %v, want one within [%v, %v] from the HTTP-date %s", d, lo, hi, c.httpDate)
				}
			}},
		{name: "429 without retry-after uses backoff", faults: []ingesttest.Fault{{Action: ingesttest.Status429, Times: 3}},
			accepted: defaultRecords, retries: 3,
			wantWait: func(t *testing.T, d []time.Duration, _ clock) {
				for i, w := range d {
					hi := DefaultBaseDelay << i
					if w < hi/2 || w > hi {
						t.Errorf("wait %d is %v, want within [%v, %v]", i, w, hi/2, hi)
					}
				}
			}},
		{name: "slow within timeout", faults: []ingesttest.Fault{{Action: ingesttest.Slow, Delay: 50 * time.Millisecond, Times: 3}},
			accepted: defaultRecords},
		// The one row that needs a timeout to fire: the server holds the
		// request several times the timeout, so it fires however loaded
		// the machine; other requests of this row may time out too.
		{name: "slow past timeout commits late", faults: []ingesttest.Fault{{Action: ingesttest.Slow, Kind: KindObservations, Delay: 2 * time.Second}},
			accepted: -1, retries: 1, minRetries: true, timeout: 300 * time.Millisecond},
		{name: "every fault at once", faults: []ingesttest.Fault{
			{Action: ingesttest.DropAfterCommit, Kind: KindProtocol},
			{Action: ingesttest.Status503, Kind: KindTotal, RetryAfter: "1"},
			{Action: ingesttest.DropBeforeCommit, Kind: KindObservations},
			{Action: ingesttest.DropAfterCommit, Kind: KindObservations, After: 1},
			{Action: ingesttest.Status500, Kind: KindTrajectory},
			{Action: ingesttest.Status429, Kind: KindTrajectory, After: 1, RetryAfter: "2"},
		}, accepted: defaultRecords - 1 - 32, duplicates: 33, retries: 6, batchRace: true},
	}
}

func TestFaultMatrix(t *testing.T) {
	for _, conc := range []int{1, DefaultConcurrency} {
		for i := range faultMatrix() {
			tt := faultMatrix()[i]
			t.Run(fmt.Sprintf("concurrency=%d/%s", conc, tt.name), func(t *testing.T) {
				if conc > 1 && tt.batchRace {
					tt.accepted = -1
				}
				testFaults(t, tt, conc)
			})
		}
	}
}

// testFaults uploads the default snapshot with the faults of tt injected
// and conc requests in flight, and checks the receiver holds every record
// exactly once and the summary counts them.
func testFaults(t *testing.T, tt faultCase, conc int) {
	dir, m := newSnapshot(t, defaultSpec)
	r := newReceiver(t)
	var c clock
	c.dateAt = time.Now().Add(30 * time.Second).Truncate(time.Second)
	c.httpDate = c.dateAt.UTC().Format(http.TimeFormat)
	for _, f := range tt.faults {
		if f.RetryAfter == "date" {
			f.RetryAfter = c.httpDate
		}
		r.Inject(f)
	}
	w := &waits{}
	cfg := testConfig(r.URL, w)
	// Long enough for any answer on a loaded machine, except in the row
	// that tests a try timing out.
	cfg.RequestTimeout = 20 * time.Second
	if tt.timeout > 0 {
		cfg.RequestTimeout = tt.timeout
	}
	cfg.Concurrency = conc
	c.start = time.Now()
	sum, err := Snapshot(context.Background(), dir, cfg)
	c.end = time.Now()
	if err != nil {
		t.Fatalf("upload failed: %v", err)
	}
	if diff := cmp.Diff(wantState(t, dir), r.State(testRun), stateOnly); diff != "" {
		t.Errorf("receiver state mismatch (-want +got):\n%s", diff)
	}
	if tt.accepted >= 0 {
		if sum.Accepted != tt.accepted || sum.Duplicates != tt.duplicates {
			t.Errorf("summary accepted %d duplicates %d, want %d and %d", sum.Accepted, sum.Duplicates, tt.accepted, tt.duplicates)
		}
	} else if sum.Accepted+sum.Duplicates != defaultRecords {
		t.Errorf("summary accepted %d + duplicates %d, want %d records", sum.Accepted, sum.Duplicates, defaultRecords)
	}
	if sum.Conflicts != 0 || !sum.Complete || sum.RoundID != m.RoundID {
		t.Errorf("summary %+v", sum)
	}
	if sum.Retries != tt.retries && !(tt.minRetries && sum.Retries > tt.retries) {
		t.Errorf("retries %d, want %d (waits %v)", sum.Retries, tt.retries, w.d)
	}
	if tt.wantWait != nil {
		tt.wantWait(t, w.d, c)
	}
	// Every record the receiver stored was stored once: its filing
	// counters never accept more than the snapshot holds.
	rd := r.State(testRun)[m.RoundID]
	if rd.Accepted != defaultRecords {
		t.Errorf("receiver accepted %d records, want %d", rd.Accepted, defaultRecords)
	}
}

func TestKeepAlive(t *testing.T) {
	for _, conc := range []int{1, 3} {
		t.Run(fmt.Sprintf("concurrency=%d", conc), func(t *testing.T) {
			dir, _ := newSnapshot(t, defaultSpec)
			r := newReceiver(t)
			cfg := testConfig(r.URL, &waits{})
			cfg.Concurrency = conc
			sum, err := Snapshot(context.Background(), dir, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n := r.Connections(); sum.Requests != 9 || n < 1 || n > conc {
				t.Errorf("%d requests over %d connections, want 9 over 1…%d (one per request in flight)", sum.Requests, n, conc)
			}
		})
	}
}

func TestReuploadIsIdempotent(t *testing.T) {
	dir, _ := newSnapshot(t, defaultSpec)
	r := newReceiver(t)
	if _, err := Snapshot(context.Background(), dir, testConfig(r.URL, &waits{})); err != nil {
		t.Fatal(err)
	}
	sum, err := Snapshot(context.Background(), dir, testConfig(r.URL, &waits{}))
	if err != nil {
		t.Fatal(err)
	}
	want := Tally{Duplicates: 99}
	if sum.Accepted != 0 || sum.Duplicates != defaultRecords || sum.Events != want {
		t.Errorf("re-upload: %+v", sum)
	}
	if diff := cmp.Diff(wantState(t, dir), r.State(testRun), stateOnly); diff != "" {
		t.Errorf("receiver state mismatch (-want +got):\n%s", diff)
	}
}

func TestChangedRewardIsANewRound(t *testing.T) {
	a, ma := newSnapshot(t, defaultSpec)
	spec := defaultSpec
	spec.ChangedReward = true
	b, mb := newSnapshot(t, spec)
	if ma.RoundID == mb.RoundID {
		t.Fatal("a changed reward kept the round ID")
	}
	r := newReceiver(t)
	for _, dir := range []string{a, b} {
		sum, err := Snapshot(context.Background(), dir, testConfig(r.URL, &waits{}))
		if err != nil {
			t.Fatal(err)
		}
		if sum.Accepted != defaultRecords || sum.Conflicts != 0 {
			t.Errorf("%s: %+v", dir, sum)
		}
	}
	want := wantState(t, a)
	want[mb.RoundID] = wantState(t, b)[mb.RoundID]
	if diff := cmp.Diff(want, r.State(testRun), stateOnly); diff != "" {
		t.Errorf("receiver state mismatch (-want +got):\n%s", diff)
	}
}

func TestConflicts(t *testing.T) {
	t.Run("event", func(t *testing.T) {
		dir, m := newSnapshot(t, defaultSpec)
		r := newReceiver(t)
		// Plant a different record under the identity of task-00000#0.
		seed := func(body string) {
			if err := r.Seed(testRun, []byte(body)); err != nil {
				t.Fatal(err)
			}
		}
		seed(fmt.Sprintf(`{"kind":"validation_protocol","run_id":%q,"round_id":%q,"protocol":{"other":true}}`, testRun, m.RoundID))
		seed(fmt.Sprintf(`{"kind":"observations","run_id":%q,"round_id":%q,"events":[{"trial_id":"task-00000#0","task":"task-00000","repeat":0,"trial_attempt":0,"status":"failure","reward":0,"trainable":true}]}`, testRun, m.RoundID))
		sum, err := Snapshot(context.Background(), dir, testConfig(r.URL, &waits{}))
		var ce *ConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("error %v, want a *ConflictError", err)
		}
		if diff := cmp.Diff([]string{"task-00000#0"}, ce.TrialIDs); diff != "" {
			t.Errorf("conflict IDs (-want +got):\n%s", diff)
		}
		if sum.Conflicts != 2 || sum.Protocol.Conflicts != 1 || sum.Events.Conflicts != 1 || sum.Accepted != defaultRecords-2 || !sum.Complete {
			t.Errorf("summary %+v", sum)
		}
		if !strings.Contains(err.Error(), "task-00000#0") {
			t.Errorf("error does not name the trial: %v", err)
		}
	})
	t.Run("trajectory after a different redaction", func(t *testing.T) {
		a, ma := newSnapshot(t, defaultSpec)
		spec := defaultSpec
		spec.Redaction = "[REDACTED:other]"
		b, mb := newSnapshot(t, spec)
		if ma.RoundID != mb.RoundID {
			t.Fatal("redaction changed the round ID")
		}
		r := newReceiver(t)
		if _, err := Snapshot(context.Background(), a, testConfig(r.URL, &waits{})); err != nil {
			t.Fatal(err)
		}
		sum, err := Snapshot(context.Background(), b, testConfig(r.URL, &waits{}))
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Count != 3 || len(ce.TrialIDs) != 3 {
			t.Fatalf("error %v, want 3 trajectory conflicts", err)
		}
		if sum.Trajectories != (Tally{Conflicts: 3}) || sum.Events != (Tally{Duplicates: 99}) {
			t.Errorf("summary %+v", sum)
		}
		// First wins: the receiver still holds snapshot a.
		if diff := cmp.Diff(wantState(t, a), r.State(testRun), stateOnly); diff != "" {
			t.Errorf("receiver state mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestPerRunIsolation(t *testing.T) {
	dir, _ := newSnapshot(t, defaultSpec)
	r := newReceiver(t)
	r.AddToken("tok-B", "run-B")
	if _, err := Snapshot(context.Background(), dir, testConfig(r.URL, &waits{})); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(r.URL, &waits{})
	cfg.RunID, cfg.Token = "run-B", "tok-B"
	sum, err := Snapshot(context.Background(), dir, cfg)
	if err != nil || sum.Accepted != defaultRecords {
		t.Fatalf("run B: %v %+v", err, sum)
	}
	if diff := cmp.Diff(r.State(testRun), r.State("run-B"), stateOnly); diff != "" {
		t.Errorf("runs differ (-A +B):\n%s", diff)
	}
	// A token of run A cannot write into run B.
	cfg.Token = testToken
	_, err = Snapshot(context.Background(), dir, cfg)
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusForbidden {
		t.Fatalf("error %v, want HTTP 403", err)
	}
}

func TestTokenExpiresMidUpload(t *testing.T) {
	dir, _ := newSnapshot(t, defaultSpec)
	r := newReceiver(t)
	r.Inject(ingesttest.Fault{Action: ingesttest.ExpireToken, Kind: KindObservations, After: 2})
	// One request at a time, so which requests got through is exact.
	cfg := testConfig(r.URL, &waits{})
	cfg.Concurrency = 1
	sum, err := Snapshot(context.Background(), dir, cfg)
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
		t.Fatalf("error %v, want HTTP 401", err)
	}
	if sum == nil || sum.Complete || sum.Requests != 5 || sum.Retries != 0 {
		t.Fatalf("summary %+v: want 5 requests (2 + 2 batches + the refused one) and no retry", sum)
	}
	// The platform issues a new token for the run; re-running completes
	// the upload and the first two batches come back as duplicates.
	r.AddToken("tok-fresh", testRun)
	cfg = testConfig(r.URL, &waits{})
	cfg.Token = "tok-fresh"
	sum, err = Snapshot(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Duplicates != 2+64 || sum.Accepted != defaultRecords-66 {
		t.Errorf("resume summary %+v", sum)
	}
	if diff := cmp.Diff(wantState(t, dir), r.State(testRun), stateOnly); diff != "" {
		t.Errorf("receiver state mismatch (-want +got):\n%s", diff)
	}
}

func TestRetriesExhausted(t *testing.T) {
	for _, action := range []ingesttest.Action{ingesttest.Status500, ingesttest.Status503, ingesttest.DropBeforeCommit, ingesttest.DropAfterCommit} {
		t.Run(string(action), func(t *testing.T) {
			dir, _ := newSnapshot(t, defaultSpec)
			r := newReceiver(t)
			r.Inject(ingesttest.Fault{Action: action, Kind: KindObservations, Times: 1000})
			for _, conc := range []int{1, DefaultConcurrency} {
				w := &waits{}
				cfg := testConfig(r.URL, w)
				cfg.Concurrency = conc
				sum, err := Snapshot(context.Background(), dir, cfg)
				var te *TransportError
				if !errors.As(err, &te) || te.Tries != 4 || te.Kind != KindObservations {
					t.Fatalf("concurrency %d: error %v, want a *TransportError after 4 tries", conc, err)
				}
				// With more in flight, the other batches were retrying
				// too when the first one gave up.
				if sum.Complete || conc == 1 && len(w.d) != 3 || len(w.d) < 3 {
					t.Errorf("concurrency %d: summary %+v waits %v", conc, sum, w.d)
				}
				if strings.Contains(err.Error(), testToken) {
					t.Error("token in the error")
				}
			}
		})
	}
	t.Run("retry-after longer than tpctl waits", func(t *testing.T) {
		dir, _ := newSnapshot(t, defaultSpec)
		r := newReceiver(t)
		r.Inject(ingesttest.Fault{Action: ingesttest.Status429, RetryAfter: "3600"})
		w := &waits{}
		_, err := Snapshot(context.Background(), dir, testConfig(r.URL, w))
		var te *TransportError
		if !errors.As(err, &te) || te.Tries != 1 || !strings.Contains(err.Error(), "1h0m0s") || len(w.d) != 0 {
			t.Fatalf("error %v waits %v: want to give up at once, naming the 1h wait", err, w.d)
		}
	})
}

// TestPermanentStatuses checks each non-retried status gives one request
// and its own message.
func TestPermanentStatuses(t *testing.T) {
	tests := []struct {
		status int
		want   string
	}{
		{400, "malformed (HTTP 400): bad thing"},
		{401, "wrong or has expired"},
		{403, "not an ingest token or is not scoped to this run"},
		{404, "check TUNEPLANE_JOB_ENDPOINT"},
		{413, "over a limit (HTTP 413)"},
		{422, "could not process the validation_protocol request (HTTP 422)"},
	}
	dir, _ := newSnapshot(t, defaultSpec)
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			var n int
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n++
				w.WriteHeader(tt.status)
				// A careless server echoes the token back.
				fmt.Fprintf(w, `{"error":"bad thing; you sent %s"}`, r.Header.Get("Authorization"))
			}))
			defer srv.Close()
			_, err := Snapshot(context.Background(), dir, testConfig(srv.URL, &waits{}))
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != tt.status || !he.Permanent() {
				t.Fatalf("error %v, want a permanent HTTP %d", err, tt.status)
			}
			if n != 1 {
				t.Errorf("%d requests, want 1 (no retry)", n)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), testToken) || !strings.Contains(err.Error(), "[REDACTED]") {
				t.Errorf("token not scrubbed from %q", err)
			}
		})
	}
}

func TestRedirects(t *testing.T) {
	dir, _ := newSnapshot(t, defaultSpec)
	t.Run("to another host is refused", func(t *testing.T) {
		var leaked []string
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			leaked = append(leaked, r.Header.Get("Authorization"))
		}))
		defer other.Close()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		defer srv.Close()
		_, err := Snapshot(context.Background(), dir, testConfig(srv.URL, &waits{}))
		var re *RedirectError
		if !errors.As(err, &re) {
			t.Fatalf("error %v, want a *RedirectError", err)
		}
		if len(leaked) != 0 {
			t.Errorf("the other host received %d requests", len(leaked))
		}
	})
	t.Run("within the origin is followed with the same body", func(t *testing.T) {
		r := newReceiver(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.URL.Path == "/old"+IngestPath {
				http.Redirect(w, req, IngestPath, http.StatusPermanentRedirect)
				return
			}
			// Proxy to the receiver, so the origin stays this server.
			req.URL.Scheme, req.URL.Host, req.RequestURI = "http", strings.TrimPrefix(r.URL, "http://"), ""
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				w.WriteHeader(502)
				return
			}
			defer resp.Body.Close()
			w.WriteHeader(resp.StatusCode)
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf)
			w.Write(buf[:n])
		}))
		defer srv.Close()
		if _, err := Snapshot(context.Background(), dir, testConfig(srv.URL+"/old", &waits{})); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantState(t, dir), r.State(testRun), stateOnly); diff != "" {
			t.Errorf("receiver state mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestCancel(t *testing.T) {
	dir, _ := newSnapshot(t, defaultSpec)
	r := newReceiver(t)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := testConfig(r.URL, &waits{})
	cfg.Concurrency = 1 // so no other request is in flight at the third answer
	cfg.Progress = func(p Progress) {
		if p.Done == 3 {
			cancel()
		}
	}
	sum, err := Snapshot(ctx, dir, cfg)
	if !errors.Is(err, context.Canceled) || sum.Requests != 3 {
		t.Fatalf("error %v after %d requests, want context.Canceled after 3", err, sum.Requests)
	}
	// Cancelled during a retry wait: the real timer returns at once.
	r.Inject(ingesttest.Fault{Action: ingesttest.Status503, RetryAfter: "60"})
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	cfg = testConfig(r.URL, nil)
	cfg.Wait = nil
	start := time.Now()
	_, err = Snapshot(ctx, dir, cfg)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("error %v after %v", err, time.Since(start))
	}
	// Already cancelled: nothing is read or sent.
	_, err = Snapshot(ctx, filepath.Join(t.TempDir(), "absent"), testConfig(r.URL, &waits{}))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
}

func TestProgress(t *testing.T) {
	dir, _ := newSnapshot(t, defaultSpec)
	r := newReceiver(t)
	r.Inject(ingesttest.Fault{Action: ingesttest.Status503, Kind: KindTotal, RetryAfter: "3"})
	var got []Progress
	cfg := testConfig(r.URL, &waits{})
	cfg.Progress = func(p Progress) { got = append(got, p) }
	if _, err := Snapshot(context.Background(), dir, cfg); err != nil {
		t.Fatal(err)
	}
	if len(got) != 11 {
		t.Fatalf("%d progress reports, want the verify phase + 9 requests + 1 retry", len(got))
	}
	if got[0].Phase != PhaseVerifying || got[0].Done != 0 || got[0].Bytes != 0 {
		t.Errorf("first report %+v, want the verifying phase before anything is sent", got[0])
	}
	got = got[1:]
	for _, p := range got {
		if p.Phase != PhaseUploading {
			t.Errorf("report %+v not in the uploading phase", p)
		}
	}
	retry := got[1]
	if retry.Kind != KindTotal || retry.Retry != 2 || retry.RetryIn != 3*time.Second || retry.RetryWhy != "HTTP 503" || retry.Done != 1 {
		t.Errorf("retry report %+v", retry)
	}
	// The refused round_total was sent but not acknowledged.
	if retry.Acked != got[0].Acked || retry.Bytes <= retry.Acked {
		t.Errorf("retry report counts unacknowledged bytes: acked %d (first request %d), sent %d", retry.Acked, got[0].Acked, retry.Bytes)
	}
	last := got[len(got)-1]
	dry, err := Plan(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantAcked := dry.Bytes + int64(dry.Requests*len(testRun))
	if last.Done != 9 || last.Total != 9 || last.Acked != wantAcked || last.Bytes <= last.Acked {
		t.Errorf("last report %+v; want acked = %d (every body once), sent > acked (one retry)", last, wantAcked)
	}
}

func TestRefusesTamperedSnapshot(t *testing.T) {
	dir, _ := newSnapshot(t, defaultSpec)
	p := filepath.Join(dir, snapshot.ObservationsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"reward":0`, `"reward":1`, 1))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := newReceiver(t)
	for name, call := range map[string]func() error{
		"Snapshot": func() error { _, err := Snapshot(context.Background(), dir, testConfig(r.URL, &waits{})); return err },
		"Plan":     func() error { _, err := Plan(dir, nil); return err },
	} {
		var te *snapshot.VerifyError
		if err := call(); !errors.As(err, &te) || len(te.Problems) == 0 {
			t.Errorf("%s: error %v, want a *snapshot.VerifyError", name, err)
		}
	}
	if n := len(r.Log()); n != 0 {
		t.Errorf("%d requests sent for a tampered snapshot", n)
	}
	_, err = Plan(t.TempDir(), nil)
	if !snapshot.IsNotSnapshot(err) {
		t.Errorf("empty folder: %v", err)
	}
}

func TestLocalLimits(t *testing.T) {
	long := strings.Repeat("x", 2000)
	tests := []struct {
		name string
		spec ingesttest.SnapshotSpec
		code string
	}{
		{"too many messages", ingesttest.SnapshotSpec{Trials: 4, Trajectories: 1, Messages: MaxTrajectoryMessages + 1}, CodeTooManyMessages},
		{"trajectory over 1 MiB", ingesttest.SnapshotSpec{Trials: 4, Trajectories: 1, Messages: 600, Redaction: long}, CodeTrajectoryTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := newSnapshot(t, tt.spec)
			r := newReceiver(t)
			_, err := Snapshot(context.Background(), dir, testConfig(r.URL, &waits{}))
			var re *RecordError
			if !errors.As(err, &re) || re.Code != tt.code || re.File != "trajectories/0001.json" || re.TrialID != "task-00000#0" {
				t.Fatalf("error %v, want a *RecordError %s", err, tt.code)
			}
			if n := len(r.Log()); n != 0 {
				t.Errorf("%d requests sent before the local limit check", n)
			}
		})
	}
	// Exactly at the limit is fine.
	dir, _ := newSnapshot(t, ingesttest.SnapshotSpec{Trials: 4, Trajectories: 1, Messages: MaxTrajectoryMessages})
	r := newReceiver(t)
	if _, err := Snapshot(context.Background(), dir, testConfig(r.URL, &waits{})); err != nil {
		t.Fatalf("1,024 messages: %v", err)
	}
}

func TestEventLimit(t *testing.T) {
	o := snapshot.Observation{TrialID: "t#0", Task: "t", Status: "success"}
	for _, tt := range []struct {
		reasonLen int
		ok        bool
	}{{100, true}, {MaxEventBytes - 200, true}, {MaxEventBytes, false}} {
		o.Reason = strings.Repeat("r", tt.reasonLen)
		b, err := encodeEvent(o)
		var re *RecordError
		if tt.ok != (err == nil) || (!tt.ok && (!errors.As(err, &re) || re.Code != CodeEventTooLarge || re.TrialID != "t#0")) {
			t.Errorf("reason of %d bytes: %d bytes, error %v", tt.reasonLen, len(b), err)
		}
	}
}

func TestPlan(t *testing.T) {
	dir, m := newSnapshot(t, defaultSpec)
	got, err := Plan(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &DryRun{Dir: dir, RoundID: m.RoundID, Expected: 100, Events: 99, Batches: 4, Trajectories: 3, Requests: 9}
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		s := p.Last().String()
		return s == ".Bytes" || s == ".LargestEvent" || s == ".LargestTrajectory"
	}, cmp.Ignore())
	if diff := cmp.Diff(want, got, ignore); diff != "" {
		t.Errorf("dry run mismatch (-want +got):\n%s", diff)
	}
	// The dry run's bytes are what an upload sends, less the run ID.
	r := newReceiver(t)
	sum, err := Snapshot(context.Background(), dir, testConfig(r.URL, &waits{}))
	if err != nil {
		t.Fatal(err)
	}
	if wantBytes := got.Bytes + int64(len(testRun)*got.Requests); sum.Bytes != wantBytes {
		t.Errorf("upload sent %d bytes, the dry run predicted %d", sum.Bytes, wantBytes)
	}
}

func TestResponseAccounting(t *testing.T) {
	dir, _ := newSnapshot(t, defaultSpec)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"accepted":2,"duplicates":0,"conflicts":0}`)
	}))
	defer srv.Close()
	_, err := Snapshot(context.Background(), dir, testConfig(srv.URL, &waits{}))
	var re *ResponseError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "accounts for 2 records but 1 were sent") {
		t.Fatalf("error %v", err)
	}
}

// TestStreamingFallback runs uploads of a snapshot too large to hold its
// events in memory: the file is streamed a second time instead.
func TestStreamingFallback(t *testing.T) {
	defer func(n int) { maxHeldEvents = n }(maxHeldEvents)
	maxHeldEvents = 1000
	dir, _ := newSnapshot(t, defaultSpec)
	r := newReceiver(t)
	r.Inject(ingesttest.Fault{Action: ingesttest.DropAfterCommit, Kind: KindObservations, After: 2})
	cfg := testConfig(r.URL, &waits{})
	cfg.Concurrency = 1 // so the third batch to arrive is the third of the file
	sum, err := Snapshot(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Events != (Tally{Accepted: 99 - 32, Duplicates: 32}) {
		t.Errorf("events %+v", sum.Events)
	}
	if diff := cmp.Diff(wantState(t, dir), r.State(testRun), stateOnly); diff != "" {
		t.Errorf("receiver state mismatch (-want +got):\n%s", diff)
	}
	// A send failure is reported as such, not as a read error of a line.
	r.Inject(ingesttest.Fault{Action: ingesttest.Status500, Kind: KindObservations, Times: 100})
	_, err = Snapshot(context.Background(), dir, testConfig(r.URL, &waits{}))
	var te *TransportError
	if !errors.As(err, &te) || strings.Contains(err.Error(), "observations.jsonl") {
		t.Fatalf("error %v", err)
	}
}

// TestLargeRoundSendsOnlyVerifiedBytes: a round too large to hold its
// events in memory (past maxHeldEvents, and past what snapshot.Open holds
// in memory, so its observations come back from a temporary file) sends
// exactly what was verified and passed the secret gate, even when
// observations.jsonl changes on disk after verification: here a reward is
// flipped and a secret planted once the first request is answered, before
// any event is read for sending. The limits are lowered so the round is
// small enough to be quick; the code path is the one a 300,000-trial
// round takes.
func TestLargeRoundSendsOnlyVerifiedBytes(t *testing.T) {
	defer func(n, m int) { maxHeldEvents, snapshot.MaxHeldObservations = n, m }(maxHeldEvents, snapshot.MaxHeldObservations)
	maxHeldEvents, snapshot.MaxHeldObservations = 1000, 1000
	dir, _ := newSnapshot(t, defaultSpec)
	if dry, err := Plan(dir, nil); err != nil || dry.Bytes < 10*int64(maxHeldEvents) {
		t.Fatalf("the round is not past the held-events limit: %+v, %v", dry, err)
	}
	want := wantState(t, dir)
	obsPath := filepath.Join(dir, snapshot.ObservationsFile)
	orig, err := os.ReadFile(obsPath)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.ReplaceAll(string(orig), `"reward":0`, `"reward":1`)
	changed = strings.Replace(changed, `"reason":"`, `"reason":"`+testToken, 1)
	if changed == string(orig) {
		t.Fatal("nothing to change in observations.jsonl")
	}
	r := newReceiver(t)
	cfg := testConfig(r.URL, &waits{})
	tampered := false
	cfg.Progress = func(p Progress) {
		if p.Kind == KindProtocol && !tampered {
			tampered = true
			if err := os.WriteFile(obsPath, []byte(changed), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	sum, err := Snapshot(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !tampered || !sum.Complete || sum.Events.Accepted != 99 {
		t.Fatalf("tampered %v, summary %+v", tampered, sum)
	}
	if diff := cmp.Diff(want, r.State(testRun), stateOnly); diff != "" {
		t.Errorf("the receiver holds other than the verified round (-verified +received):\n%s", diff)
	}
}

// TestServerConflictIDs pins that the trial IDs reported as conflicts are
// always trials of the request: the server's conflict_ids extension is
// taken only where it names them, never printed as it came (a foreign ID,
// or one carrying terminal escape sequences, from a broken server).
func TestServerConflictIDs(t *testing.T) {
	dir, _ := newSnapshot(t, ingesttest.SnapshotSpec{Trials: 3})
	// The snapshot's observations: trials 0 and 1 (trial 2 has no attempt).
	all := []string{"task-00000#0", "task-00000#1"}
	tests := []struct {
		name  string
		named string // the conflict_ids member of the answer, or ""
		want  []string
	}{
		{"named trial of the request", `,"conflict_ids":["task-00000#1"]`, []string{"task-00000#1"}},
		{"no names: every trial of the request", ``, all},
		{"foreign names only", `,"conflict_ids":["\u001b]0;pwned\u0007\u001b[2Jother#0"]`, all},
		{"foreign names beside a real one", `,"conflict_ids":["x#0","task-00000#0","task-00000#0"]`, []string{"task-00000#0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var req struct {
					Kind   string            `json:"kind"`
					Events []json.RawMessage `json:"events"`
				}
				if err := json.Unmarshal(body, &req); err != nil {
					t.Errorf("request: %v", err)
				}
				if req.Kind != KindObservations {
					fmt.Fprint(w, `{"accepted":1,"duplicates":0,"conflicts":0}`)
					return
				}
				fmt.Fprintf(w, `{"accepted":%d,"duplicates":0,"conflicts":1%s}`, len(req.Events)-1, tt.named)
			}))
			defer srv.Close()
			sum, err := Snapshot(context.Background(), dir, testConfig(srv.URL, &waits{}))
			var ce *ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *ConflictError", err)
			}
			if diff := cmp.Diff(tt.want, sum.ConflictIDs); diff != "" {
				t.Errorf("summary conflict IDs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, ce.TrialIDs); diff != "" {
				t.Errorf("error conflict IDs (-want +got):\n%s", diff)
			}
			if strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("error carries an escape sequence from the server: %q", err)
			}
		})
	}
}

// inFlight wraps a handler and records how many requests it handles at
// once and in which order they start. The first gate requests after the
// round total are held until gate of them are in flight together: a client
// that sent one at a time would never release them.
type inFlight struct {
	h    http.Handler
	gate int

	mu      sync.Mutex
	now     int
	max     int
	starts  []string // kind, with the number in flight when it started
	held    int
	release chan struct{}
}

func (f *inFlight) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(strings.NewReader(string(body)))
	var head struct {
		Kind string `json:"kind"`
	}
	json.Unmarshal(body, &head)
	f.mu.Lock()
	f.starts = append(f.starts, fmt.Sprintf("%s@%d", head.Kind, f.now))
	f.now++
	f.max = max(f.max, f.now)
	wait := false
	if head.Kind == KindObservations || head.Kind == KindTrajectory {
		if f.held < f.gate {
			f.held++
			wait = true
			if f.held == f.gate {
				close(f.release)
			}
		}
	}
	f.mu.Unlock()
	if wait {
		select {
		case <-f.release:
		case <-req.Context().Done():
		}
	}
	f.h.ServeHTTP(w, req)
	f.mu.Lock()
	f.now--
	f.mu.Unlock()
}

// TestConcurrency checks the protocol and the round total go first, alone,
// then events and trajectories with up to Concurrency requests in flight,
// never more.
func TestConcurrency(t *testing.T) {
	// 15 observation batches and 5 trajectories.
	dir, _ := newSnapshot(t, ingesttest.SnapshotSpec{Trials: 481, Trajectories: 5})
	for _, conc := range []int{2, 4} {
		t.Run(fmt.Sprintf("concurrency=%d", conc), func(t *testing.T) {
			r := newReceiver(t)
			f := &inFlight{h: r, gate: conc, release: make(chan struct{})}
			srv := httptest.NewServer(f)
			defer srv.Close()
			cfg := testConfig(srv.URL, &waits{})
			cfg.Concurrency = conc
			// Held requests wait for the others, longer than one try.
			cfg.RequestTimeout = time.Minute
			sum, err := Snapshot(context.Background(), dir, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Requests != 2+15+5 || sum.Accepted != 2+480+5 || sum.Retries != 0 {
				t.Errorf("summary %+v", sum)
			}
			if diff := cmp.Diff(wantState(t, dir), r.State(testRun), stateOnly); diff != "" {
				t.Errorf("receiver state mismatch (-want +got):\n%s", diff)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.starts) < 2 || f.starts[0] != KindProtocol+"@0" || f.starts[1] != KindTotal+"@0" {
				t.Errorf("requests started %v, want the protocol, then the total, each alone", f.starts)
			}
			if f.max != conc {
				t.Errorf("at most %d requests were in flight, want %d", f.max, conc)
			}
		})
	}
}
