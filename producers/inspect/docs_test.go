package inspect

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestDocsInSync: docs/outcomes.md's Inspect table lists Table()'s rows in
// order, and names every reason, the rules version and every
// infrastructure class.
func TestDocsInSync(t *testing.T) {
	doc, err := os.ReadFile("../../docs/outcomes.md")
	if err != nil {
		t.Fatal(err)
	}
	var docRows, codeRows []string
	for _, m := range regexp.MustCompile("(?m)^\\| i\\d+ \\|.*\\| `([a-z_]+)` \\| `([a-z_]+)` \\|$").FindAllSubmatch(doc, -1) {
		docRows = append(docRows, string(m[1])+" "+string(m[2]))
	}
	for _, r := range Table() {
		codeRows = append(codeRows, string(r.Status)+" "+r.Reason)
	}
	if !slices.Equal(docRows, codeRows) {
		t.Errorf("docs/outcomes.md's Inspect table\n%q\ndiffers from Table()\n%q", docRows, codeRows)
	}
	for _, want := range []string{RulesVersion, InfraListVersion} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("docs/outcomes.md does not name %s", want)
		}
	}
	for _, c := range InfraClasses() {
		if !bytes.Contains(doc, []byte("`"+c.Class+"`")) {
			t.Errorf("docs/outcomes.md does not list %s", c.Class)
		}
	}
}
