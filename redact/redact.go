// Package redact provides the redaction plug-ins that every outgoing
// transcript string goes through (SPEC §4), and the secret scan that runs
// after them.
//
// A Redactor maps a string to a string. Four kinds are opened from a spec:
//
//	builtin:secrets     credentials of common providers → [REDACTED:<kind>]
//	rules:FILE          ordered regex → replacement rules (YAML or JSON)
//	exec:COMMAND        a long-lived child speaking JSON lines on stdin/stdout
//	MODULE:FUNCTION     a Python function str -> str, run by an embedded shim
//
// Failure is never silent: a redactor that errors, answers with something
// other than a string, hangs or dies makes Redact return an error, and the
// caller must abort rather than write unredacted text.
package redact

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Redactor maps text to its redacted form.
//
// Redact must be called from one goroutine at a time (implementations
// serialise anyway), unless Concurrent reports that it may not. Once Redact has returned an error the redactor stays
// broken and every later call fails. Close releases the redactor (for
// process-backed kinds: stops and reaps the child); it is safe to call more
// than once.
type Redactor interface {
	Name() string
	Redact(ctx context.Context, s string) (string, error)
	Close() error
}

// Options tunes process-backed redactors. The zero value means defaults.
type Options struct {
	// Timeout bounds each request to an exec or Python redactor
	// (default DefaultTimeout).
	Timeout time.Duration
	// Dir is the working folder of the child (default: the current one).
	Dir string
	// Env is the child's environment (default: this process's).
	Env []string
	// Gate is the invocation's registry of secrets (cmd/tpctl builds it),
	// which masks the child's stderr and answers quoted in errors; nil:
	// the credential patterns and the secret values of Env.
	Gate *Scanner
}

// DefaultTimeout is how long a child redactor may take to answer a request.
const DefaultTimeout = 30 * time.Second

// Error is a redactor failure. It aborts an import: nothing that should
// have been redacted by this redactor may be written.
type Error struct {
	Redactor string // the spec, e.g. "exec:./scrub"
	Err      error
	// Stderr is the tail of the child's standard error, when there is one.
	Stderr string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("redactor %q failed: %v", e.Redactor, e.Err)
	if e.Stderr != "" {
		s += "; its stderr ends with: " + strings.TrimSpace(e.Stderr)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// pythonSpec matches MODULE:FUNCTION with dotted Python identifiers.
var pythonSpec = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$`)

const specHelp = "use builtin:secrets, rules:FILE, exec:COMMAND or MODULE:FUNCTION"

// CheckSpec checks the form of a redactor spec without opening anything,
// so a typo is reported as a usage error before any work is done: the
// kind must be builtin:secrets, rules:FILE, exec:COMMAND or
// MODULE:FUNCTION, with its argument present.
func CheckSpec(spec string) error {
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "builtin":
		if arg != "secrets" {
			return fmt.Errorf("unknown built-in redactor %q; the built-in one is builtin:secrets", spec)
		}
		return nil
	case "rules":
		if arg == "" {
			return fmt.Errorf("redactor %q names no file; write rules:FILE with a YAML or JSON rules file", spec)
		}
		return nil
	case "exec":
		if len(strings.Fields(arg)) == 0 {
			return fmt.Errorf("redactor %q names no command; write exec:COMMAND [ARGS...]", spec)
		}
		return nil
	}
	if !pythonSpec.MatchString(spec) {
		return fmt.Errorf("unknown redactor %q; %s", spec, specHelp)
	}
	return nil
}

// Open opens the redactor named by spec with default Options.
func Open(ctx context.Context, spec string) (Redactor, error) {
	return OpenWith(ctx, spec, Options{})
}

// OpenWith opens the redactor named by spec. Process-backed redactors are
// started and probed with one empty request, so a missing program, module
// or function is reported here rather than halfway through an import.
func OpenWith(ctx context.Context, spec string, opts Options) (Redactor, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if err := CheckSpec(spec); err != nil {
		return nil, err
	}
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "builtin":
		return Secrets(), nil
	case "rules":
		return LoadRules(spec, arg)
	case "exec":
		return startProcess(ctx, spec, strings.Fields(arg), opts)
	}
	return startPython(ctx, spec, opts)
}

// OpenAll opens every spec in order and chains them. If one fails, those
// already opened are closed.
func OpenAll(ctx context.Context, specs []string) (Redactor, error) {
	return OpenAllWith(ctx, specs, Options{})
}

// OpenAllWith is OpenAll with Options for the process-backed redactors.
func OpenAllWith(ctx context.Context, specs []string, opts Options) (Redactor, error) {
	if len(specs) == 0 {
		return nil, errors.New("no redactor given; " + specHelp)
	}
	var rs []Redactor
	for _, s := range specs {
		r, err := OpenWith(ctx, s, opts)
		if err != nil {
			for _, o := range rs {
				o.Close()
			}
			return nil, err
		}
		rs = append(rs, r)
	}
	return Chain(rs...), nil
}

// Chain applies redactors in order: the output of one is the input of the
// next. Close closes all of them.
func Chain(rs ...Redactor) Redactor {
	if len(rs) == 1 {
		return rs[0]
	}
	return chain(rs)
}

type chain []Redactor

var _ Redactor = chain(nil)

// Name lists the chained redactors, comma-separated, in order.
func (c chain) Name() string {
	names := make([]string, len(c))
	for i, r := range c {
		names[i] = r.Name()
	}
	return strings.Join(names, ",")
}

func (c chain) Redact(ctx context.Context, s string) (string, error) {
	for _, r := range c {
		var err error
		if s, err = r.Redact(ctx, s); err != nil {
			return "", err
		}
	}
	return s, nil
}

func (c chain) Close() error {
	var errs []error
	for _, r := range c {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// Concurrent reports whether r's Redact may be called from several
// goroutines at once with the same results as one call after another:
// r is builtin:secrets, a rules: file, or a chain of those (they hold
// only compiled expressions). A process-backed redactor answers its
// requests in order and may depend on that order (a pseudonym numbered
// by first sight), so it is not.
func Concurrent(r Redactor) bool {
	switch r := r.(type) {
	case secrets, *rules:
		return true
	case chain:
		for _, p := range r {
			if !Concurrent(p) {
				return false
			}
		}
		return true
	}
	return false
}

// Names returns the specs of r's parts, in order (for a manifest).
func Names(r Redactor) []string {
	if c, ok := r.(chain); ok {
		var out []string
		for _, p := range c {
			out = append(out, Names(p)...)
		}
		return out
	}
	return []string{r.Name()}
}
