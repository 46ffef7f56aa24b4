package planfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// writeBenchPlan generates a plan of n trials, each with one attempt whose
// folder exists under root (jobs/<job>/<task>__<i>), like a real job.
func writeBenchPlan(b *testing.B, n int) (plan, root string) {
	b.Helper()
	root = b.TempDir()
	m := basePlan()
	trials := make([]any, 0, n)
	for i := 0; i < n; i++ {
		task := fmt.Sprintf("org/task-%03d", i%100)
		dir := fmt.Sprintf("jobs/2026-04-08__12-00-00/task-%03d__%07d", i%100, i)
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			b.Fatal(err)
		}
		trials = append(trials, map[string]any{"task": task, "repeat": i / 100,
			"attempts": []any{map[string]any{"retry": 0, "dir": dir}}})
	}
	m["trials"] = trials
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	plan = filepath.Join(root, "import-plan.json")
	if err := os.WriteFile(plan, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return plan, root
}

// BenchmarkPlanCheck measures Load (read, parse, schema, rules, lstat of
// every folder) on generated plans; compare the sizes to see that it is
// linear, and the Parse-only variant to see how much is I/O.
func BenchmarkPlanCheck(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		plan, root := writeBenchPlan(b, n)
		b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, rep, err := Load(plan, Options{Root: root})
				if err != nil || !rep.Valid {
					b.Fatalf("%v %+v", err, rep)
				}
			}
		})
		data, _ := os.ReadFile(plan)
		b.Run(fmt.Sprintf("parse-only/trials=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, fs := Parse(data, "plan.json", Options{}); HasErrors(fs) {
					b.Fatal(fs)
				}
			}
		})
	}
}
