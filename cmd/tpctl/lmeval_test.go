package main

import (
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// $LMEVAL is the lm-eval wing's fixtures (producers/lmeval/testdata:
	// written the way lm-eval writes its files; see its README.md).
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		abs, err := filepath.Abs(filepath.Join("..", "..", "producers", "lmeval", "testdata"))
		if err != nil {
			return err
		}
		env.Setenv("LMEVAL", abs)
		return nil
	})
}
