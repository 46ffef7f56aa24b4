package snapshot

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkOpenTrialsTrajectories opens, as tpctl import does after
// writing, a snapshot with 32 trajectory files of about 1 MiB each
// (issue 36): the trajectories are hashed and their few fields read.
func BenchmarkOpenTrialsTrajectories(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "snap")
	w, err := Create(dir, []byte(sortedPlan), Options{FormatVerified: true, OutcomeRules: "tpctl-outcomes/1"})
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range testObservations() {
		if err := w.Add(&o); err != nil {
			b.Fatal(err)
		}
	}
	id, _ := w.RoundID()
	step := `{"role":"assistant","content":"` + strings.Repeat(`let me look at the \"file\" {x: [1, 2]} `, 20) + `","tool_calls":[{"name":"bash","arguments":{"cmd":"ls -la /tmp"}}],"usage":{"in":1234,"out":56}}`
	steps := strings.Repeat(step+",", (1<<20)/(len(step)+1))
	var total int64
	for i := range 32 {
		tr := fmt.Sprintf(`{"schema":"tpctl-trajectory/1","round_id":%q,"trial_id":"t#%d","trial_attempt":0,"truncated":false,"complete":false,"capture_policy":"sampled","steps":[%s{}]}`, id, i, steps)
		total += int64(len(tr))
		if err := w.AddTrajectory([]byte(tr), false); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Commit(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(total)
	for b.Loop() {
		n := 0
		_, err := OpenTrials(dir, func(*Manifest, []byte) (Visit, error) {
			return func(PlannedTrial) error { n++; return nil }, nil
		})
		if err != nil || n == 0 {
			b.Fatalf("OpenTrials: %v after %d trials", err, n)
		}
	}
}
