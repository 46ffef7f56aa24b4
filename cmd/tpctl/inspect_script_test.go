package main

import (
	"errors"
	"os"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tuneplane/tpctl/internal/fixtures"
)

// Scripts over the shared Inspect logs: $INSPECT_FIXTURES is their folder,
// and [inspect_fixtures] is true when it is there. Absent, a script skips
// on it, except under TPCTL_REQUIRE_FIXTURES=1, where the condition fails
// the script.
func init() {
	scriptConditions["inspect_fixtures"] = func() (bool, error) {
		if _, ok := fixtures.InspectDir(); ok {
			return true, nil
		}
		if os.Getenv(fixtures.RequireEnv) == "1" {
			return false, errors.New("shared Inspect fixtures not present; " + fixtures.RequireEnv + "=1 requires them")
		}
		return false, nil
	}
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		dir, _ := fixtures.InspectDir()
		env.Setenv("INSPECT_FIXTURES", dir)
		return nil
	})
}
