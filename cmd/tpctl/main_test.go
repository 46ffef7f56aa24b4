package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
)

// scriptCmds are the programs testscript puts on PATH; other test files
// add substitutes (fake harbor, ingest receiver, redactors) in init.
var scriptCmds = map[string]func(){
	"tpctl": func() { os.Exit(run()) },
}

func TestMain(m *testing.M) {
	if scriptCmds[strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")] == nil {
		// The test run itself (not a script's command): a CI runner's
		// GITHUB_ACTIONS=true would turn every finding command's output
		// into annotations (docs/ci.md). Scripts set it where they test it.
		os.Unsetenv("GITHUB_ACTIONS")
		parallelByDefault()
	}
	testscript.Main(cleaningM{m}, scriptCmds)
}

// parallelByDefault raises -test.parallel, unless it was given, from
// GOMAXPROCS to twice that (at least 4): the parallel tests of this
// package (the scripts, the tests of a killed or interrupted binary, the
// README walk-through) spend much of their time waiting on child
// processes, a grace period or a build, so with one test per core a
// 2-core machine sat idle behind them.
func parallelByDefault() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(4, 2*runtime.GOMAXPROCS(0))))
	}
}

// scriptConditions lets other test files add script conditions ([name]).
var scriptConditions = map[string]func() (bool, error){}

func scriptCondition(cond string) (bool, error) {
	if c, ok := scriptConditions[cond]; ok {
		return c()
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// scriptSetups lets other test files prepare the script environment.
var scriptSetups []func(*testscript.Env) error

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("TPCTL_UPDATE_SCRIPTS") != "",
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"cmpjson": cmpJSON, "maxwidth": maxWidth, "samesummary": sameSummary},
		Condition:           scriptCondition,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			for _, s := range scriptSetups {
				if err := s(env); err != nil {
					return err
				}
			}
			return nil
		},
	})
}

// cmpJSON is the script command "cmpjson FILE WANT": FILE (or stdout) is
// one line of compact JSON, as ui.JSON writes every --output json, and
// indented by two spaces it is WANT byte for byte (member order and
// escapes included). Goldens stay readable; the output stays one line.
func cmpJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpjson FILE WANT")
	}
	got := []byte(ts.ReadFile(args[0]))
	if n := bytes.Count(got, []byte("\n")); n != 1 || !bytes.HasSuffix(got, []byte("\n")) {
		ts.Fatalf("%s: %d lines, want one line of JSON", args[0], n)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, got); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	if compact.String() != strings.TrimSuffix(string(got), "\n") {
		ts.Fatalf("%s is not compact JSON", args[0])
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, got, "", "  "); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	want := ts.ReadFile(args[1])
	if diff := cmp.Diff(want, strings.TrimRight(indented.String(), "\n")+"\n"); diff != "" {
		ts.Fatalf("%s indented differs from %s (-want +got):\n%s", args[0], args[1], diff)
	}
}

// maxWidth is the script command "maxwidth FILE N": no line of FILE (or
// stdout) is wider than N terminal cells; with ! some line is.
func maxWidth(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: maxwidth FILE N")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("maxwidth: %v", err)
	}
	widest, line := 0, ""
	for _, l := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if w := ansi.StringWidth(l); w > widest {
			widest, line = w, l
		}
	}
	switch {
	case !neg && widest > n:
		ts.Fatalf("%s: a line of %d cells, over %d: %q", args[0], widest, n, line)
	case neg && widest <= n:
		ts.Fatalf("%s: every line fits %d cells (widest %d)", args[0], n, widest)
	}
}

// sameSummary is the script command "samesummary IMPORT SHOW": the round's
// summary in IMPORT (tpctl import's output, tallied as the observations
// were saved) is the one in SHOW (tpctl snapshot show's, from a verified
// read of the saved snapshot): the rows from "snapshot" to
// "trajectories" and the failures block to the end. What only an import
// prints (the producer's own figures, warnings) sits between the two.
func sameSummary(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: samesummary IMPORT SHOW")
	}
	parts := func(name string) (rows, triage string) {
		text := ts.ReadFile(name)
		start := strings.Index(text, "snapshot ")
		end := strings.Index(text, "\ntrajectories ")
		if start != 0 || end < 0 {
			ts.Fatalf("%s: no summary rows from snapshot to trajectories:\n%s", name, text)
		}
		end += strings.IndexByte(text[end+1:], '\n') + 2
		t := strings.Index(text, "\nnot a success: ")
		if t < 0 {
			t = strings.Index(text, "\nevery one of ")
		}
		if t < end {
			ts.Fatalf("%s: no failures block after the rows:\n%s", name, text)
		}
		return text[:end], text[t:]
	}
	r1, t1 := parts(args[0])
	r2, t2 := parts(args[1])
	if r1 != r2 {
		ts.Fatalf("summary rows differ:\n%s\n%s\n%s", r1, args[1], r2)
	}
	if t1 != t2 {
		ts.Fatalf("failures blocks differ:\n%s\n%s\n%s", t1, args[1], t2)
	}
}

// writeTxtarFiles writes the files of a txtar archive under dir.
func writeTxtarFiles(t *testing.T, dir, archive string) {
	t.Helper()
	ar, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
