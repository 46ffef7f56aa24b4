package harbor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/transcript"
)

// writeBig writes an ATIF file of about size bytes: agent steps with tool
// calls and long observations, a planted key now and then.
func writeBig(b *testing.B, size int) string {
	b.Helper()
	var sb strings.Builder
	sb.WriteString(`{"schema_version":"ATIF-v1.6","agent":{"name":"bench","version":"1"},"steps":[`)
	sb.WriteString(`{"step_id":1,"source":"user","message":"Fix the failing test in the repository."}`)
	output := strings.Repeat("ok   github.com/example/pkg/sub\t0.123s coverage: 81.2% of statements — ünïcode ✓\n", 24)
	for i := 2; sb.Len() < size; i++ {
		key := ""
		if i%50 == 0 {
			key = " token " + fakeGitHub
		}
		fmt.Fprintf(&sb, `,{"step_id":%d,"source":"agent","message":"Step %d: running the tests again.%s",`+
			`"tool_calls":[{"tool_call_id":"call_%d","function_name":"bash","arguments":{"command":"go test ./... -run TestX%d","timeout":120}}],`+
			`"observation":{"results":[{"source_call_id":"call_%d","content":%s}]},`+
			`"metrics":{"prompt_tokens":%d,"completion_tokens":57}}`, i, i, key, i, i, i, jsonStr(output), 1000+i)
	}
	sb.WriteString("]}")
	p := filepath.Join(b.TempDir(), "trajectory.json")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkBuild converts and redacts (builtin:secrets) an 8 MiB
// trajectory per iteration. Run with -benchtime=128x for the 128
// trajectories; peak-heap-MB is the largest live heap seen meanwhile and
// must stay near one trajectory's budget, not grow with the count.
func BenchmarkBuild(b *testing.B) {
	for _, bc := range []struct {
		name string
		lim  transcript.Limits
	}{
		{"platform-limits", transcript.DefaultLimits},                            // 1,024 messages / 1 MiB kept
		{"keep-all", transcript.Limits{MaxMessages: 1 << 30, MaxBytes: 1 << 30}}, // every byte redacted and kept
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := writeBig(b, 8<<20)
			fi, _ := os.Stat(p)
			sc := redact.NewScanner([]string{"TUNEPLANE_JOB_TOKEN=" + fakeJob})
			var peak atomic.Uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				var ms runtime.MemStats
				for {
					runtime.ReadMemStats(&ms)
					if ms.HeapAlloc > peak.Load() {
						peak.Store(ms.HeapAlloc)
					}
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
				}
			}()
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for b.Loop() {
				tr, err := buildATIF(context.Background(), p, redact.Secrets(), sc, bc.lim)
				if err != nil {
					b.Fatal(err)
				}
				if tr.TotalMessages == 0 {
					b.Fatal("no messages")
				}
			}
			close(stop)
			<-done
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
		})
	}
}
