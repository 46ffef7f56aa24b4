package tpctl_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// envReaders are the calls that read the process environment.
var envReaders = map[string][]string{
	"os":      {"Environ", "Getenv", "LookupEnv", "ExpandEnv"},
	"syscall": {"Environ", "Getenv"},
}

// envAllowed are the files outside cmd/tpctl that may read the process
// environment, each for a reason that is not a secret: the registry of
// secrets is built once, in cmd/tpctl (secretgate.go), and passed to
// every printer, writer, uploader and signer (issue 35).
var envAllowed = map[string]string{
	"internal/ui/streams.go":              "NO_COLOR, CLICOLOR_FORCE, TERM and COLUMNS decide colour and width",
	"internal/ui/pager.go":                "TUNEPLANE_PAGER, PAGER, LESS and LV choose and set up the pager, which inherits the environment",
	"preflight/source.go":                 "the environment git is started with (passed on, never scanned)",
	"evalrun/child.go":                    "the environment Harbor is started with (passed on without TUNEPLANE_*, never scanned)",
	"internal/fakeharbor/fakeharbor.go":   "a test double of Harbor, driven by FAKE_HARBOR_* (not part of tpctl)",
	"internal/benchcmd/benchcmd.go":       "benchmark settings (TPCTL_BENCH_ROUNDS; not part of tpctl)",
	"internal/browsertest/browsertest.go": "test settings (TPCTL_REQUIRE_BROWSER, TPCTL_SCREENSHOT_DIR; not part of tpctl)",
	"internal/fixtures/fixtures.go":       "test settings (whether absent fixtures fail; not part of tpctl)",
}

// TestNoEnvironmentOutsideCmd fails when a package outside cmd/tpctl reads
// the process environment (os.Environ, os.Getenv, os.LookupEnv,
// os.ExpandEnv, syscall.Getenv) in non-test code, except the files of
// envAllowed: a package that builds its own scanner from os.Environ()
// gates with a registry that misses the config file's secrets, which is
// how attest came to sign a known secret (issue 35).
func TestNoEnvironmentOutsideCmd(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch {
			case path == "cmd", d.Name() == "testdata", strings.HasPrefix(d.Name(), ".") && path != ".":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]string{} // local name → import path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if _, ok := envReaders[p]; !ok {
				continue
			}
			n := p
			if im.Name != nil {
				n = im.Name.Name
			}
			names[n] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			pkg, ok := names[id.Name]
			if !ok || !slices.Contains(envReaders[pkg], sel.Sel.Name) {
				return true
			}
			slash := filepath.ToSlash(path)
			if _, ok := envAllowed[slash]; ok {
				seen[slash] = true
				return true
			}
			t.Errorf("%s: %s.%s reads the process environment outside cmd/tpctl; take the invocation's *redact.Scanner (built in cmd/tpctl/secretgate.go) or the value as a parameter instead",
				fset.Position(sel.Pos()), id.Name, sel.Sel.Name)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range envAllowed {
		if !seen[f] {
			t.Errorf("%s is allowed to read the environment but no longer does: remove it from envAllowed", f)
		}
	}
}
