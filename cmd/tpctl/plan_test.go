package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// $TPCTL_EXAMPLE is the bundled example (read-only); scripts cd into
	// it so that reported plan paths stay relative and goldens portable.
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		abs, err := filepath.Abs(filepath.Join("..", "..", "testdata", "example"))
		if err != nil {
			return err
		}
		env.Setenv("TPCTL_EXAMPLE", abs)
		return nil
	})
	// mksparse FILE BYTES makes a sparse file of that size: a 100 MB plan
	// costs no disk and no time.
	scriptCmds["mksparse"] = func() {
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: mksparse FILE BYTES")
			os.Exit(2)
		}
		n, err := strconv.ParseInt(os.Args[2], 10, 64)
		if err == nil {
			var f *os.File
			if f, err = os.Create(os.Args[1]); err == nil {
				err = f.Truncate(n)
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}
