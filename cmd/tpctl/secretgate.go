package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/tuneplane/tpctl/internal/configfile"
	"github.com/tuneplane/tpctl/redact"
)

// secrets is the registry of the secrets of one invocation
// (docs/redactors.md): built here, and only here, from the process
// environment and the config file (tpctl has no flag that takes a
// secret), and passed explicitly to every printer, writer, uploader and
// signer. No package outside cmd/tpctl reads the environment for secrets
// (TestNoEnvironmentOutsideCmd).
type secrets struct {
	p atomic.Pointer[redact.Scanner]
}

// newSecrets is the registry of environ alone: what the output streams
// mask from the first byte, before the config file is read.
func newSecrets(environ []string) *secrets {
	s := &secrets{}
	s.p.Store(redact.NewScanner(environ))
	return s
}

// scanner is the registry as a Scanner. A nil registry (an app made by
// a unit test of flags) is the credential patterns alone: runWith always
// makes one.
func (s *secrets) scanner() *redact.Scanner {
	if s == nil {
		return redact.NewScanner(nil)
	}
	return s.p.Load()
}

// mask is Mask of the registry, for the cut and folded text of
// ui.Columns and ui.Wrap.
func (s *secrets) mask(text string) string { return s.scanner().Mask(text) }

// writer masks every Write to w with the registry as it is when written.
func (s *secrets) writer(w io.Writer) io.Writer { return &secretsWriter{s: s, w: w} }

type secretsWriter struct {
	s *secrets
	w io.Writer
}

func (m *secretsWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(m.w, m.s.mask(string(p))); err != nil {
		return 0, err
	}
	// The caller wrote all of p, even when masking changed its length.
	return len(p), nil
}

// Fd is the descriptor of the wrapped writer when it has one (a terminal's
// width is asked of it), else ^uintptr(0), which no terminal has.
func (m *secretsWriter) Fd() uintptr {
	if f, ok := m.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// load makes the registry the secrets of environ and of the config file
// (its job-token, so that a token given only there is masked and refused
// like one in TUNEPLANE_JOB_TOKEN), and notes each job token too short to
// be looked for (redact.MinSecretLen) unless the output is JSON (whose
// stderr carries JSON messages only).
func (s *secrets) load(environ []string, cf *configfile.File, errOut io.Writer, jsonOutput bool) {
	var known []redact.Secret
	if v, ok := cf.Lookup("job-token"); ok && len(v.Values) == 1 && v.Values[0] != "" {
		known = append(known, redact.Secret{Name: "config:job-token", Value: v.Values[0]})
	}
	s.p.Store(redact.NewScanner(environ, known...))
	if jsonOutput {
		return
	}
	for _, name := range redact.ShortSecrets(environ, known...) {
		fmt.Fprintf(errOut, "tpctl: note: %s is shorter than %d characters, so the secret gate neither looks for it nor masks it in what tpctl writes, prints and sends (a value that short would match ordinary words); it still looks for every longer secret of the environment and for credential patterns\n", name, redact.MinSecretLen)
	}
}

// processEnviron is the environment the registry is built from.
func processEnviron() []string { return os.Environ() }
