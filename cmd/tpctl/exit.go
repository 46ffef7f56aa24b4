package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/snapshot"
)

// exitCode is tpctl's documented process status. The mapping from errors
// to codes happens only in this file.
type exitCode int

const (
	exitOK          exitCode = 0
	exitFinding     exitCode = 1 // plan invalid, not ready, evaluation incomplete, any other failure
	exitUsage       exitCode = 2 // bad flags or unreadable input
	exitTransport   exitCode = 3 // upload or network failure
	exitInterrupted exitCode = 130
	exitTerminated  exitCode = 143
)

// cliError carries an exit code and hints that name the next command to run.
// Commands wrap domain errors in it; domain packages never choose codes.
type cliError struct {
	code  exitCode
	err   error
	hints []string
	// quiet means the command already reported the problem (e.g. a findings
	// list) and only the exit code remains to be set.
	quiet bool
}

func (e *cliError) Error() string { return e.err.Error() }
func (e *cliError) Unwrap() error { return e.err }

// usageErr is a bad flag, argument or combination of them.
func usageErr(err error, hints ...string) error {
	return &cliError{code: exitUsage, err: err, hints: hints}
}

// inputErr is input that cannot be read or parsed at all.
func inputErr(err error, hints ...string) error {
	return &cliError{code: exitUsage, err: err, hints: hints}
}

// findingErr is a verdict: the input was read and found wanting.
func findingErr(err error, hints ...string) error {
	return &cliError{code: exitFinding, err: err, hints: hints}
}

// verifyErr maps a saved snapshot that failed verification (a
// *snapshot.VerifyError from snapshot.Open, whoever read it) to exit 2
// with the next steps, extra first; ok is false for any other error.
func verifyErr(err error, extra ...string) (_ error, ok bool) {
	var ve *snapshot.VerifyError
	if !errors.As(err, &ve) {
		return err, false
	}
	// Unquoted around the command, so the path can be quoted for a
	// shell: the hint must work when pasted.
	return inputErr(err, append(extra,
		"run "+ui.Command("snapshot", "verify", ve.Dir)+" for the full report",
		"a modified snapshot cannot be trusted: re-create it with 'tpctl import' from the source files")...), true
}

// transportErr is a failure to talk to the platform.
func transportErr(err error, hints ...string) error {
	return &cliError{code: exitTransport, err: err, hints: hints}
}

// silentFinding sets exit code 1 after the command printed its own report.
func silentFinding(err error) error {
	return &cliError{code: exitFinding, err: err, quiet: true}
}

// interrupted is returned when a signal cancelled the command.
type interrupted struct{ signal string }

func (i interrupted) Error() string { return "interrupted by " + i.signal }

// stoppedError replaces "context canceled" with what a person needs: the
// command was interrupted and what of its work was kept. It still unwraps to
// the cancellation, so the exit code stays 130/143.
type stoppedError struct {
	msg string
	err error
}

func (s *stoppedError) Error() string { return s.msg }
func (s *stoppedError) Unwrap() error { return s.err }

// secretHint is the one next step for a known secret found in anything
// tpctl was about to write, sign or send (a *redact.PayloadError), whatever
// the command: a report, a trend page, an attestation, an upload.
const secretHint = "nothing was written, signed or sent: remove the secret where it entered and re-create the snapshot with 'tpctl import' (the scan never prints the matching text)"

func codeOf(err error) exitCode {
	if err == nil {
		return exitOK
	}
	// A known secret in a payload is a finding (exit 1) for every
	// command, however the command wrapped it.
	var pe *redact.PayloadError
	if errors.As(err, &pe) && !errors.Is(err, context.Canceled) {
		return exitFinding
	}
	var ie interrupted
	if errors.As(err, &ie) {
		if ie.signal == "SIGTERM" {
			return exitTerminated
		}
		return exitInterrupted
	}
	var ce *cliError
	if errors.As(err, &ce) {
		return ce.code
	}
	// An output path no writer beside snapshots may use (safefs) is a
	// usage error for every command.
	if errors.As(err, new(*safefs.InsideSnapshotError)) || errors.As(err, new(*safefs.NotRegularError)) {
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	return exitFinding
}

// printError writes "tpctl: error: …" and hint lines; in JSON mode it also
// writes one JSON error object so machines need not parse prose.
func printError(w io.Writer, err error, jsonMode, quietFlag bool) {
	var ce *cliError
	var hints []string
	quiet := false
	if errors.As(err, &ce) {
		// A verdict the command already printed needs no prose again;
		// machines still get the exit_error object below. Under --quiet
		// the verdict was not printed, so its one line is the error.
		quiet = ce.quiet && !quietFlag
		hints = ce.hints
	}
	if hints == nil {
		// A command with a better next step (preflight's) says it.
		hints = defaultHints(err)
	}
	if isReadFault(err) {
		// Whatever the command guessed (a snapshot not written by
		// tpctl, a modified one), the machine failed: say that.
		hints = []string{ioHint}
	}
	msg := err.Error()
	if !quiet {
		for _, line := range strings.Split(msg, "\n") {
			// A message listing several problems keeps one line each;
			// blank lines would print as empty "tpctl: error:" lines.
			if strings.TrimSpace(line) != "" {
				fmt.Fprintf(w, "tpctl: error: %s\n", termsafe.Escape(line))
			}
		}
		for _, h := range hints {
			if quietFlag {
				break
			}
			fmt.Fprintf(w, "tpctl: hint: %s\n", termsafe.Escape(h))
		}
	}
	if jsonMode {
		if hints == nil {
			hints = []string{}
		}
		_ = ui.JSON(w, struct {
			MessageType string   `json:"message_type"`
			Code        int      `json:"code"`
			Message     string   `json:"message"`
			Hints       []string `json:"hints"`
		}{"exit_error", int(codeOf(err)), msg, hints})
	}
}

// defaultHints is the one next step for the errors every command may
// return the same way: a known secret in a payload, and an output path
// that the writer beside snapshots refuses (internal/safefs).
func defaultHints(err error) []string {
	var inside *safefs.InsideSnapshotError
	var notRegular *safefs.NotRegularError
	switch {
	case errors.As(err, new(*redact.PayloadError)):
		return []string{secretHint}
	case errors.As(err, &inside):
		return []string{"write it beside the snapshot, not inside it (e.g. in the folder that holds " + ui.Quote(inside.Dir) + ")"}
	case errors.As(err, &notRegular):
		return []string{"choose an --out that does not exist yet or is a regular file"}
	case errors.As(err, new(*snapshot.LimitError)):
		return []string{"look at the named trial's result.json: a value that long or that many distinct values are not evaluation results tpctl can save; leave the trial out of the plan or fix the source"}
	}
	return nil
}

// ioHint is the one next step for an I/O or resource error of the
// machine while reading (safefs.IsIOError, snapshot.ProblemReadError).
const ioHint = "an I/O error of this machine, not a problem of the input: fix the fault (too many open files: raise ulimit -n; no space: free some; EIO: check the disk) and run again"

// isReadFault reports whether err is an I/O or resource error of the
// machine, also one a snapshot's verification met on every problem.
func isReadFault(err error) bool {
	var ve *snapshot.VerifyError
	if errors.As(err, &ve) {
		return snapshot.OnlyReadErrors(ve.Problems)
	}
	var se *round.SnapshotError
	if errors.As(err, &se) && len(se.Problems) > 0 {
		return snapshot.OnlyReadErrors(se.Problems)
	}
	return safefs.IsIOError(err)
}
