package inspect

import (
	"fmt"
	"strconv"
)

// Error is a log, or a part of one, that cannot be read: it names the log,
// the zip member (for an .eval) and the JSON pointer where that is known.
type Error struct {
	Log     string // the log's name as the caller gave it
	Member  string // zip member ("samples/1_epoch_1.json"), "" for a .json log
	Pointer string // JSON pointer inside the document, "" when not known
	Err     error
}

func (e *Error) Error() string {
	s := e.Log
	if e.Member != "" {
		s += ": " + e.Member
	}
	if e.Pointer != "" {
		s += ": " + e.Pointer
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// VersionError is a log of a format version tpctl does not read. Inspect's
// own reader refuses versions above its LOG_SCHEMA_VERSION (2 at the
// validated commit, src/inspect_ai/_util/constants.py); tpctl reads
// exactly version 2, so an older or newer layout is never guessed at.
type VersionError struct {
	Log     string
	Version string // as the log writes it ("3", "\"2\"", …)
}

// SupportedVersion is the one Inspect log format version tpctl reads.
const SupportedVersion = 2

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s: Inspect log format version %s is not supported (tpctl reads version %d logs)",
		e.Log, e.Version, SupportedVersion)
}

// TooLargeError is a zip member or JSON document over its size cap (a zip
// bomb is one): it names the member and the cap.
type TooLargeError struct {
	Log    string
	Member string // "" for a whole .json log
	Limit  int64
	What   string // "bytes" or "JSON values"
}

func (e *TooLargeError) Error() string {
	where := e.Log
	if e.Member != "" {
		where += ": " + e.Member
	}
	what := e.What
	if what == "" {
		what = "bytes"
	}
	return where + ": larger than the cap of " + strconv.FormatInt(e.Limit, 10) + " " + what + " (refused; a log this size is not read)"
}
