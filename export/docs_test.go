package export_test

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/export"
)

var update = flag.Bool("update", false, "rewrite the generated column lists in docs/export.md")

// columnsDoc is the generated part of docs/export.md: one table per export
// table, from the struct tags that also define the files.
func columnsDoc() string {
	var b strings.Builder
	for i, table := range export.Tables {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n\n| column | type | null | meaning |\n|---|---|---|---|\n", table)
		for _, c := range export.Columns(table) {
			null := ""
			if c.Nullable {
				null = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.Name, c.Type, null, strings.ReplaceAll(c.Doc, "|", `\|`))
		}
		fmt.Fprintf(&b, "\nDuckDB, for the text formats: `read_csv('exports/*/%s.csv', header = true, quote = '\"', escape = '\"', columns = %s)`\n", table, export.DuckDBColumns(table))
	}
	return b.String()
}

var columnsSection = regexp.MustCompile(`(?s)(<!-- columns:begin[^>]*-->\n).*?(<!-- columns:end -->)`)

// TestDocsColumns: docs/export.md lists exactly the columns the files have.
func TestDocsColumns(t *testing.T) {
	const path = "../docs/export.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !columnsSection.Match(doc) {
		t.Fatal("docs/export.md has no columns:begin/columns:end section")
	}
	want := columnsSection.ReplaceAllString(string(doc), "${1}"+strings.ReplaceAll(columnsDoc(), "$", "$$")+"${2}")
	if want == string(doc) {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Error("docs/export.md's column lists are stale; run go test ./export -run TestDocsColumns -update")
}
