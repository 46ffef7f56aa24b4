package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tuneplane/tpctl/internal/configfile"
	"github.com/tuneplane/tpctl/redact"
)

// gateConfigSecrets tells the outgoing-text gate the secrets of the config file
// (its job-token), so that a token given only there is masked and refused
// like one in TUNEPLANE_JOB_TOKEN, and notes each job token too short to
// be looked for (redact.MinSecretLen) unless the output is JSON (whose
// stderr carries JSON messages only). It returns what undoes it.
func gateConfigSecrets(cf *configfile.File, errOut io.Writer, jsonOutput bool) func() {
	forget := func() {}
	if s, ok := cf.Lookup("job-token"); ok && len(s.Values) == 1 && s.Values[0] != "" {
		forget = redact.AddSecret("job-token", s.Values[0])
	}
	if jsonOutput {
		return forget
	}
	for _, name := range redact.ShortSecrets(os.Environ()) {
		fmt.Fprintf(errOut, "tpctl: note: %s is shorter than %d characters, so the secret gate neither looks for it nor masks it in what tpctl writes, prints and sends (a value that short would match ordinary words); it still looks for every longer secret of the environment and for credential patterns\n", name, redact.MinSecretLen)
	}
	return forget
}
