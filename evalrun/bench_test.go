package evalrun

import (
	"testing"
)

// BenchmarkCheckPlan checks a full 128-trial plan: schema, task folders,
// secret scan and 128 generated TrialConfigs validated against the
// embedded schema.
func BenchmarkCheckPlan(b *testing.B) {
	tasks := []task{{name: "alpha", repeats: 64}, {name: "beta", repeats: 64}}
	dir := b.TempDir()
	path := writePlan(b, dir, basePlan(b, tasks...), tasks...)
	b.ReportAllocs()
	for b.Loop() {
		ev, _, err := CheckPlan(path, nil)
		if err != nil || ev == nil || len(ev.Trials) != 128 {
			b.Fatalf("CheckPlan: %v", err)
		}
	}
}
