package snapshot

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkDecodeObservations reads 10,000 lines as the writer writes
// them, through readObservations (what verify, compare and upload run).
func BenchmarkDecodeObservations(b *testing.B) {
	var file bytes.Buffer
	for i := range 10_000 {
		sha := fmt.Sprintf("%064x", i)
		o := Observation{
			TrialID: TrialID(fmt.Sprintf("task-%05d", i/2), i%2), Task: fmt.Sprintf("task-%05d", i/2), Repeat: i % 2,
			Attempts: 1, Status: StatusSuccess, Reason: "reward_success", Reward: ptr(1.0), Trainable: true,
			Evidence:        Evidence{ResultSHA256: &sha, TaskChecksum: ptr("ck")},
			AttemptOutcomes: []AttemptOutcome{{Status: StatusSuccess, Reason: "reward_success", Reward: ptr(1.0), ResultSHA256: &sha}},
		}
		line, err := appendObservation(nil, &o)
		if err != nil {
			b.Fatal(err)
		}
		file.Write(append(line, '\n'))
	}
	b.SetBytes(int64(file.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := readObservations(bytes.NewReader(file.Bytes()), func(Observation) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
