package tpctl_test

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLayers holds the floors of docs/layout.md: what a package may
// import, directly or through another, checked with go list -deps.
func TestLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/tuneplane/tpctl"
	rules := []struct {
		name      string
		applies   func(pkg string) bool
		forbidden []string
		// pending names a rule another branch makes true; it is
		// reported, not failed, until that branch lands.
		pending bool
	}{
		{"only cmd/ and internal/ui draw terminal output or parse flags",
			func(p string) bool { return !strings.HasPrefix(p, mod+"/cmd/") && p != mod+"/internal/ui" },
			[]string{"github.com/charmbracelet/lipgloss", "github.com/spf13/cobra", "github.com/spf13/pflag"}, false},
		{"internal/ui imports no tpctl package but its own",
			func(p string) bool { return p == mod+"/internal/ui" },
			[]string{mod + "/"}, false},
		{"snapshot does not know Harbor", func(p string) bool { return p == mod+"/snapshot" }, []string{mod + "/producers/harbor"}, false},
		{"planfile does not know Harbor", func(p string) bool { return p == mod+"/planfile" }, []string{mod + "/producers/harbor"}, false},
		{"the readers of saved rounds do not know Harbor or run anything",
			func(p string) bool {
				return slices.Contains([]string{"compare", "attest", "round", "export", "trend", "gate"}, strings.TrimPrefix(p, mod+"/"))
			},
			[]string{mod + "/producers/harbor", mod + "/producers/harbor/atif", mod + "/importer", mod + "/evalrun", mod + "/upload"}, false},
	}
	// The wings of the producers (docs/layout.md, "Adding a producer"):
	// only cmd/tpctl, which builds the registry, the wings themselves,
	// evalrun (which runs Harbor) and the test helpers may import one.
	wings := []string{"producers/harbor", "producers/inspect", "producers/lmeval"}
	inWing := func(p string) bool {
		p = strings.TrimPrefix(p, mod+"/")
		return slices.ContainsFunc(wings, func(w string) bool { return p == w || strings.HasPrefix(p, w+"/") })
	}
	mayImportWings := func(p string) bool {
		p = strings.TrimPrefix(p, mod+"/")
		return strings.HasPrefix(p, "cmd/") || p == "evalrun" || inWing(mod+"/"+p) || slices.Contains(testHelpers, p) ||
			slices.ContainsFunc(testHelpers, func(h string) bool { return strings.HasPrefix(p, h+"/") })
	}
	var wingImports []string
	for _, w := range wings {
		wingImports = append(wingImports, mod+"/"+w, mod+"/"+w+"/")
	}
	rules = append(rules, struct {
		name      string
		applies   func(pkg string) bool
		forbidden []string
		pending   bool
	}{"the model imports no producer's wing (it reads producers through package producers)",
		func(p string) bool { return !mayImportWings(p) }, wingImports, false})
	for _, pkg := range strings.Fields(string(out)) {
		var deps []string
		for _, r := range rules {
			if !r.applies(pkg) {
				continue
			}
			if deps == nil {
				b, err := exec.Command("go", "list", "-deps", pkg).Output()
				if err != nil {
					t.Fatalf("go list -deps %s: %v", pkg, err)
				}
				deps = strings.Fields(string(b))
			}
			for _, d := range deps {
				for _, f := range r.forbidden {
					bad := d == f || strings.HasSuffix(f, "/") && strings.HasPrefix(d, f) && !strings.HasPrefix(d, pkg+"/")
					if !bad || d == pkg {
						continue
					}
					if r.pending {
						t.Logf("pending (%s): %s imports %s", r.name, pkg, d)
					} else {
						t.Errorf("%s: %s imports %s", r.name, pkg, d)
					}
				}
			}
		}
	}
}

// testHelpers are the packages only tests and benchmarks use
// (docs/layout.md, "Helpers for tests and benchmarks"), with the packages
// under them.
var testHelpers = []string{"compare/comparetest", "report/reporttest", "upload/ingesttest", "internal/fixtures",
	"internal/fakeharbor", "internal/harborgen", "internal/gen", "internal/browsertest", "internal/golden", "internal/benchcmd", "action"}

// TestLayoutDoc holds docs/layout.md to the tree: every package of
// go list ./... is named there, and its floors table is the floors as
// measured (one above the highest tpctl package a package imports, tests
// not counted) for every package the tpctl command is built from. The
// test helpers are named but stand on no floor.
func TestLayoutDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/tuneplane/tpctl"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(f[0], mod), "/")
		imports[pkg] = nil
		for _, im := range f[1:] {
			if strings.HasPrefix(im, mod+"/") {
				imports[pkg] = append(imports[pkg], strings.TrimPrefix(im, mod+"/"))
			}
		}
	}
	floor := map[string]int{}
	var measure func(string) int
	measure = func(p string) int {
		if f, ok := floor[p]; ok {
			return f
		}
		f := 1
		for _, d := range imports[p] {
			f = max(f, measure(d)+1)
		}
		floor[p] = f
		return f
	}
	// The packages tpctl is built from: cmd/tpctl and all it imports.
	built := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if built[p] {
			return
		}
		built[p] = true
		for _, d := range imports[p] {
			walk(d)
		}
	}
	walk("cmd/tpctl")

	doc, err := os.ReadFile("docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	documented := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue
		}
		for _, name := range strings.Split(cells[2], ",") {
			documented[strings.Trim(strings.TrimSpace(name), "`")] = n
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		if pkg == "" {
			continue // the root holds only this test
		}
		if !strings.Contains(text, "`"+pkg+"`") && !strings.Contains(text, "`"+pkg+"/`") {
			t.Errorf("docs/layout.md does not name package %s: say what it owns", pkg)
		}
		got, listed := documented[pkg]
		switch {
		case built[pkg] && !listed:
			t.Errorf("docs/layout.md's floors table lacks %s (floor %d)", pkg, measure(pkg))
		case built[pkg] && got != measure(pkg):
			t.Errorf("docs/layout.md puts %s on floor %d; it stands on floor %d", pkg, got, measure(pkg))
		case !built[pkg] && listed:
			t.Errorf("docs/layout.md's floors table lists %s, which tpctl is not built from (a test helper?)", pkg)
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(documented)) {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("docs/layout.md's floors table lists %s, which is not a package", pkg)
		}
	}
}
