package plandraft

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/planfile"
)

// harborJob is a job written with Harbor v0.22.0's own models
// (testdata/harbor-v0.22.0/README.md).
var harborJob = filepath.Join("..", "..", "..", "testdata", "harbor-v0.22.0", "jobs", "2026-09-01__10-00-00")

func TestFromJobHarbor(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		counts Counts
		trials []planfile.Trial
	}{
		{"terminus-2", Options{Model: "gpt-5.4", Split: "heldout"}, Counts{Finished: 4, Interrupted: 1, NeverStarted: 1}, []planfile.Trial{
			{Task: "build-a-distributed-key-value-store-with-paxos", Repeat: 0, Attempts: []planfile.Attempt{{Dir: "build-a-distributed-key-value-st__NimPPV7"}}},
			{Task: "build-a-distributed-key-value-store-with-paxos", Repeat: 1, Attempts: []planfile.Attempt{}},
			{Task: "build-a-distributed-key-value-store-with-raft", Repeat: 0, Attempts: []planfile.Attempt{{Dir: "build-a-distributed-key-value-st__C3UU68A"}}},
			{Task: "build-a-distributed-key-value-store-with-raft", Repeat: 1, Attempts: []planfile.Attempt{{Dir: "build-a-distributed-key-value-st__JCh93Ko"}}},
			{Task: "hello-world", Repeat: 0, Attempts: []planfile.Attempt{{Dir: "hello-world__pmtszBJ"}}},
			{Task: "hello-world", Repeat: 1, Attempts: []planfile.Attempt{{Dir: "hello-world__FeH4E87"}}},
		}},
		// claude-code's interrupted trial has only a lock.json (Trial.create
		// was cut short): still its planned trial, found by the lock.
		{"claude-code", Options{Agent: "claude-code"}, Counts{Finished: 4, Interrupted: 1, NeverStarted: 1}, []planfile.Trial{
			{Task: "build-a-distributed-key-value-store-with-paxos", Repeat: 0, Attempts: []planfile.Attempt{{Dir: "build-a-distributed-key-value-st__ibuwZT7"}}},
			{Task: "build-a-distributed-key-value-store-with-paxos", Repeat: 1, Attempts: []planfile.Attempt{}},
			{Task: "build-a-distributed-key-value-store-with-raft", Repeat: 0, Attempts: []planfile.Attempt{{Dir: "build-a-distributed-key-value-st__NYfWUFE"}}},
			{Task: "build-a-distributed-key-value-store-with-raft", Repeat: 1, Attempts: []planfile.Attempt{{Dir: "build-a-distributed-key-value-st__GxwGeH5"}}},
			{Task: "hello-world", Repeat: 0, Attempts: []planfile.Attempt{{Dir: "hello-world__mix8yNe"}}},
			{Task: "hello-world", Repeat: 1, Attempts: []planfile.Attempt{{Dir: "hello-world__EJnrLMn"}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := FromJob(harborJob, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.trials, d.Plan.Trials); diff != "" {
				t.Errorf("trials (-want +got):\n%s", diff)
			}
			if d.Counts != tt.counts || !d.Declared {
				t.Errorf("counts %+v declared %v; want %+v", d.Counts, d.Declared, tt.counts)
			}
			if d.Plan.Source.Revision != "4407eb5227a2ff4f0d3f16b2eb48849382fdf276" {
				t.Errorf("revision %q", d.Plan.Source.Revision)
			}
			if want := tt.opts.Split; (want == "" && d.Plan.Split != planfile.PlaceholderSplit) || (want != "" && d.Plan.Split != want) {
				t.Errorf("split %q", d.Plan.Split)
			}
			if d.Plan.Settings["repeats"] != 2 || d.Plan.Settings["agent"] != d.Pair.Agent {
				t.Errorf("settings %v", d.Plan.Settings)
			}
			// The draft is a valid plan but for its placeholders.
			b, _ := planfile.DraftJSON(d.Plan)
			_, fs := planfile.Parse(b, "d.json", planfile.Options{Root: harborJob})
			for _, f := range fs {
				if f.Severity == planfile.SeverityError && f.Code != planfile.CodeDigestPlaceholder && f.Code != planfile.CodeCheckpointUnpinned && f.Code != planfile.CodePlaceholder {
					t.Errorf("draft finding %+v", f)
				}
			}
		})
	}
}

// TestHarborLockDigest pins the rule of docs/digest-rules.md (harbor-lock)
// against a value computed independently (Python hashlib over the same
// lines of the job lock).
func TestHarborLockDigest(t *testing.T) {
	d, err := FromJob(harborJob, Options{Model: "gpt-5.4"})
	if err != nil {
		t.Fatal(err)
	}
	const want = "f7362cb41bca1313223c0d243ee46a5c43f41e7e1a64f2d90dbeb5b0067b2b62"
	if d.Plan.Protocol.DatasetDigest != want {
		t.Errorf("dataset digest %s; want %s", d.Plan.Protocol.DatasetDigest, want)
	}
	// Order of the tasks given does not matter; one changed digest does.
	a := HarborLockDigest(map[string]string{"a": "01", "b": "02"})
	if a != HarborLockDigest(map[string]string{"b": "02", "a": "01"}) || a == HarborLockDigest(map[string]string{"a": "01", "b": "03"}) {
		t.Error("HarborLockDigest depends on order or ignores a digest")
	}
}

func TestFromJobRefusals(t *testing.T) {
	_, err := FromJob(harborJob, Options{})
	var pe *PairsError
	if !errors.As(err, &pe) || len(pe.Pairs) != 2 || pe.Counts[0] != 6 || pe.Counts[1] != 6 || pe.NoMatch {
		t.Errorf("no --model: %v; want a PairsError naming both pairs", err)
	}
	_, err = FromJob(harborJob, Options{Agent: "terminus-2", Model: "claude"})
	if !errors.As(err, &pe) || !pe.NoMatch || len(pe.Pairs) != 2 {
		t.Errorf("unknown model: %v; want a NoMatch PairsError listing the pairs", err)
	}
}

func TestReadJobFacts(t *testing.T) {
	f, err := ReadJobFacts(harborJob, []string{"hello-world__pmtszBJ"})
	if err != nil || f == nil {
		t.Fatalf("ReadJobFacts = %v, %v", f, err)
	}
	if f.Planned != 6 || f.Source != "lock.json" || len(f.Pairs) != 1 || f.Pairs[0] != (Pair{"terminus-2", "gpt-5.4"}) {
		t.Errorf("facts %+v", f)
	}
	h := f.Harbor
	if h == nil || *h.NTotalTrials != 12 || *h.NCompleted != 8 || *h.NRetries != 1 || len(h.Evals) != 1 || h.Evals["terminus-2__gpt-5.4__tasks"].NTrials != 3 {
		t.Errorf("harbor numbers %+v", h)
	}
	if f, err := ReadJobFacts(t.TempDir(), []string{"x__1"}); f != nil || err != nil {
		t.Errorf("no job: %v, %v; want nil, nil", f, err)
	}
}
