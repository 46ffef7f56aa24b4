package planfile_test

import (
	"fmt"
	"path/filepath"

	"github.com/tuneplane/tpctl/planfile"
)

func ExampleLoad() {
	root := filepath.Join("..", "testdata", "example")
	plan, report, err := planfile.Load(filepath.Join(root, "import-plan.json"), planfile.Options{Root: root})
	if err != nil {
		fmt.Println("unreadable:", err)
		return
	}
	fmt.Println("valid:", report.Valid, "trials:", report.Trials, "findings:", len(report.Findings))
	for _, t := range plan.Trials[:2] {
		fmt.Println(t.ID(), len(t.Attempts), "attempt(s)")
	}
	// Output:
	// valid: true trials: 8 findings: 0
	// harbor/hello-world#0 1 attempt(s)
	// harbor/hello-world#1 1 attempt(s)
}

func ExampleParse() {
	_, findings := planfile.Parse([]byte(`{"version": 1, "name": "x", "name": "y"}`), "plan.json", planfile.Options{})
	for _, f := range findings {
		if f.Code != planfile.CodeDuplicateKey {
			continue // the other findings: missing fields, settings
		}
		fmt.Printf("%d:%d %s %s %s\n", f.Line, f.Column, f.Severity, f.Code, f.Pointer)
	}
	// Output:
	// 1:29 error duplicate_key /name
}
