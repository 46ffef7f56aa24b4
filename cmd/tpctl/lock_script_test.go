package main

import (
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
)

// $TSDATA is timestamp/testdata (read only): a lock of the example's round
// 3 plan, its signer's key, and RFC 3161 tokens over it made by openssl ts
// from a local test authority (its README says how).
func init() {
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		abs, err := filepath.Abs("../../timestamp/testdata")
		if err != nil {
			return err
		}
		env.Setenv("TSDATA", abs)
		return nil
	})
}
