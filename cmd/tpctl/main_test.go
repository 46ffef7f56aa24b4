package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptCmds are the programs testscript puts on PATH; other test files
// add substitutes (fake harbor, ingest receiver, redactors) in init.
var scriptCmds = map[string]func(){
	"tpctl": func() { os.Exit(run()) },
}

func TestMain(m *testing.M) {
	testscript.Main(m, scriptCmds)
}

// scriptSetups lets other test files prepare the script environment.
var scriptSetups []func(*testscript.Env) error

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("TPCTL_UPDATE_SCRIPTS") != "",
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
