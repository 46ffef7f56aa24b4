package evalrun

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/tuneplane/tpctl/redact"
)

// VersionUnknown is recorded when `harbor --version` gives no answer.
const VersionUnknown = "unknown"

// harborVersions is what `harbor --version` prints at each validated
// revision. Harbor's CLI prints importlib.metadata.version("harbor")
// from its eager --version/-v option (src/harbor/cli/main.py:41-43 at
// v0.22.0, :27-29 at 5f5618b8): the version in pyproject.toml:3, which is
// "0.22.0" at tag v0.22.0 and "0.3.0" at the upstream commit 5f5618b8.
// A version names a release, not a commit, so a matching answer is
// necessary, not sufficient: an install from another commit with the
// same version string passes (docs/eval.md says so).
var harborVersions = map[string]string{
	"4407eb5227a2ff4f0d3f16b2eb48849382fdf276": "0.22.0",
	"5f5618b8f5419dde63f2df6d86706782e597e8a3": "0.3.0",
}

// HarborVersion returns what `harbor --version` prints at a validated
// revision, and false for a revision tpctl does not know.
func HarborVersion(revision string) (string, bool) {
	v, ok := harborVersions[revision]
	return v, ok
}

// checkHarborVersion compares the answer of `harbor --version` with the
// version of the plan's revision. It returns the expected version and
// whether the answer matches it exactly.
func checkHarborVersion(revision, got string) (want string, ok bool) {
	want, known := HarborVersion(revision)
	if !known {
		return VersionUnknown, false
	}
	return want, got == want
}

// versionTimeout bounds `harbor --version`. Harbor imports its whole
// package before it answers (seconds on a busy machine), so the bound is
// generous: it only keeps a wedged program from holding the run.
const versionTimeout = time.Minute

// versionLine is the shape of a Python package version.
var versionLine = regexp.MustCompile(`^[0-9]+(\.[0-9A-Za-z+!-]+)+$`)

// harborVersion asks `<command> --version` and returns its answer, or
// VersionUnknown when it does not answer (fails, times out, prints
// nothing). Harbor's output and warnings share one stream, and Python
// warnings printed while Harbor imports come before the version: the
// answer is the last line shaped like a version, else the first line.
//
// The answer is untrusted child output shown in messages and recorded:
// masked by sc (the invocation's secrets; nil masks nothing) before it is
// cut to fit, so a cut never leaves part of a secret unrecognised.
func harborVersion(ctx context.Context, sc *redact.Scanner, path, dir string, env []string) string {
	buf := limitedBuffer{limit: 16 << 10}
	res := runChild(ctx, childSpec{Path: path, Args: []string{"--version"}, Dir: dir, Env: env, Output: &buf,
		Limit: versionTimeout, Grace: time.Second})
	if res.NotStarted || res.ExitCode != 0 || res.TimedOut || res.Cancelled {
		return VersionUnknown
	}
	return versionAnswer(sc, string(buf.b))
}

// maxAnswer is the most runes of an answer kept (then "…").
const maxAnswer = 80

// versionAnswer picks the version from the output of `harbor --version`,
// masked and then cut to maxAnswer runes (redact.Scanner.Clip).
func versionAnswer(sc *redact.Scanner, out string) string {
	first, found := "", ""
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if first == "" {
			first = l
		}
		if versionLine.MatchString(l) {
			found = l
		}
	}
	switch {
	case found != "":
		return sc.Clip(found, maxAnswer)
	case first != "":
		return sc.Clip(first, maxAnswer)
	}
	return VersionUnknown
}

// limitedBuffer keeps the first limit bytes written to it.
type limitedBuffer struct {
	b     []byte
	limit int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.limit - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
