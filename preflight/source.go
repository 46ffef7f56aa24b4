package preflight

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// sourceNote is said with every source pass: reaching a source is not the
// same as it being the code the original job ran.
const sourceNote = "a reachable source does not prove it matches the original job's archive"

// sourceCheck materializes the job's source in a temporary folder that is
// removed before it returns, on every path. When ctx is cancelled the
// returned check is discarded by Run.
func (c *checker) sourceCheck(ctx context.Context) Check {
	src := c.job.Source
	ch := Check{ID: CheckSource, Field: "/source"}
	if c.opts.SkipSource {
		ch.Status, ch.Reason = StatusUnchecked, "skipped on request (--skip-source); source availability was not checked"
		return ch
	}
	if c.opts.SourceTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.SourceTimeout)
		defer cancel()
	}
	switch {
	case src.Git != nil:
		return c.gitCheck(ctx, *src.Git)
	case src.Archive != nil:
		return c.archiveCheck(ctx, *src.Archive)
	case src.Path != "":
		return c.pathCheck(src.Path)
	}
	ch.Status, ch.Reason = StatusFail, "/source names no git repository, archive or path"
	return ch
}

// withTempDir runs f with a new temporary folder and removes the folder
// afterwards whatever f returns (or if it panics).
func (c *checker) withTempDir(f func(dir string) Check) Check {
	dir, err := os.MkdirTemp(c.opts.TempDir, "tpctl-preflight-source-*")
	if err != nil {
		return Check{ID: CheckSource, Status: StatusUnchecked, Field: "/source",
			Reason: fmt.Sprintf("could not create a temporary folder for the source copy: %v; set TMPDIR to a writable folder", err)}
	}
	defer os.RemoveAll(dir)
	ch := f(dir)
	if err := os.RemoveAll(dir); err != nil {
		// The check result stands, but the leftover must not go unnoticed.
		ch.Reason += fmt.Sprintf(" (warning: temporary copy %q could not be removed: %v)", dir, err)
	}
	return ch
}

func (c *checker) resolvePath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.opts.BaseDir, p)
}

// cancelReason explains a failure caused by the source deadline.
func cancelReason(ctx context.Context, timeout time.Duration) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && timeout > 0 {
		return fmt.Sprintf("timed out after %s; raise --source-timeout or check that the source is reachable", timeout)
	}
	return ""
}

func (c *checker) gitCheck(ctx context.Context, g GitSource) Check {
	fail := func(field, reason string) Check {
		return Check{ID: CheckSource, Status: StatusFail, Field: field, Reason: reason,
			Problems: []Problem{{In: "job", Pointer: field, Message: reason}}}
	}
	if strings.HasPrefix(g.URL, "-") {
		return fail("/source/git/url", "/source/git/url may not start with '-'")
	}
	gitBin := c.opts.Git
	if gitBin == "" {
		gitBin = "git"
	}
	path, err := exec.LookPath(gitBin)
	if err != nil {
		return Check{ID: CheckSource, Status: StatusUnchecked, Field: "/source/git",
			Reason: fmt.Sprintf("git is needed to check /source/git but %q could not be run: %v; install git or pass --git PATH", gitBin, err)}
	}
	return c.withTempDir(func(tmp string) Check {
		repo := filepath.Join(tmp, "repo")
		run := func(args ...string) error { return runGit(ctx, path, c.opts.BaseDir, args...) }
		if err := run("clone", "--quiet", "--no-checkout", "--", g.URL, repo); err != nil {
			if r := cancelReason(ctx, c.opts.SourceTimeout); r != "" {
				return fail("/source/git/url", fmt.Sprintf("cloning %q %s", g.URL, r))
			}
			return fail("/source/git/url", fmt.Sprintf("/source/git/url %q could not be cloned: %v", g.URL, err))
		}
		has := func() bool { return run("-C", repo, "cat-file", "-e", g.Commit+"^{commit}") == nil }
		if !has() {
			// A commit on no branch is only reachable by fetching it by
			// ID, which some servers allow; a failure here is not an error.
			_ = run("-C", repo, "fetch", "--quiet", "origin", g.Commit)
		}
		if ctx.Err() != nil {
			return fail("/source/git/commit", "interrupted while looking for the commit "+cancelReason(ctx, c.opts.SourceTimeout))
		}
		if !has() {
			return fail("/source/git/commit", fmt.Sprintf("/source/git/commit %s is not in %q (not on any branch or tag, and the server did not serve it by ID); push it or fix the commit", g.Commit, g.URL))
		}
		if err := run("-C", repo, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", g.Commit); err != nil {
			if r := cancelReason(ctx, c.opts.SourceTimeout); r != "" {
				return fail("/source/git/commit", "checking out "+g.Commit+" "+r)
			}
			return fail("/source/git/commit", fmt.Sprintf("/source/git/commit %s could not be checked out: %v", g.Commit, err))
		}
		return Check{ID: CheckSource, Status: StatusPass, Field: "/source/git",
			Reason: fmt.Sprintf("commit %s of %q was cloned and checked out in a temporary copy, since removed; %s", g.Commit, g.URL, sourceNote)}
	})
}

// runGit runs git without prompts, hooks or the ext:: transport, in its
// own process group so cancellation stops git and every helper it started.
func runGit(ctx context.Context, git, dir string, args ...string) error {
	full := append([]string{"-c", "protocol.ext.allow=never", "-c", "core.hooksPath=" + os.DevNull}, args...)
	cmd := exec.CommandContext(ctx, git, full...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never", "GIT_ASKPASS=", "SSH_ASKPASS=", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &capped{buf: &stderr, limit: 4096}
	cmd.Stdout = io.Discard
	cmd.WaitDelay = 5 * time.Second
	setProcessGroup(cmd)
	err := cmd.Run()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if ctx.Err() != nil {
			return fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		if msg != "" {
			return fmt.Errorf("git %s: %s", firstArg(args), oneLine(msg))
		}
		return fmt.Errorf("git %s: %w", firstArg(args), err)
	}
	return nil
}

// gitEnv is the environment without variables that would point git at
// another repository than the temporary clone (as set inside git hooks).
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func firstArg(args []string) string {
	for i, a := range args {
		if a == "-C" || a == "-c" {
			continue
		}
		if i > 0 && (args[i-1] == "-C" || args[i-1] == "-c") {
			continue
		}
		return a
	}
	return ""
}

// capped keeps at most limit bytes of a child's stderr.
type capped struct {
	buf   *bytes.Buffer
	limit int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

func (c *checker) archiveCheck(ctx context.Context, a ArchiveSource) Check {
	fail := func(field, reason string) Check {
		return Check{ID: CheckSource, Status: StatusFail, Field: field, Reason: reason,
			Problems: []Problem{{In: "job", Pointer: field, Message: reason}}}
	}
	f, err := safefs.OpenRegular(c.resolvePath(a.Path))
	if err != nil {
		return fail("/source/archive/path", fmt.Sprintf("/source/archive/path %q cannot be opened: %v (relative paths are read from the job file's folder)", a.Path, err))
	}
	defer f.Close()
	return c.withTempDir(func(tmp string) Check {
		out, err := os.Create(filepath.Join(tmp, "source.archive"))
		if err != nil {
			return Check{ID: CheckSource, Status: StatusUnchecked, Field: "/source/archive",
				Reason: fmt.Sprintf("could not create the temporary copy: %v", err)}
		}
		defer out.Close()
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(out, h), &ctxReader{ctx: ctx, r: f}); err != nil {
			if r := cancelReason(ctx, c.opts.SourceTimeout); r != "" {
				return fail("/source/archive/path", "copying the archive "+r)
			}
			return fail("/source/archive/path", fmt.Sprintf("/source/archive/path %q could not be read: %v", a.Path, err))
		}
		got := hex.EncodeToString(h.Sum(nil))
		if got != a.SHA256 {
			return fail("/source/archive/sha256", fmt.Sprintf("/source/archive/sha256 is %s but %q has SHA-256 %s; the archive changed or the digest is wrong", a.SHA256, a.Path, got))
		}
		return Check{ID: CheckSource, Status: StatusPass, Field: "/source/archive",
			Reason: fmt.Sprintf("archive %q was copied to a temporary folder, since removed, and matches /source/archive/sha256; %s", a.Path, sourceNote)}
	})
}

// ctxReader stops a long copy promptly when ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func (c *checker) pathCheck(p string) Check {
	ch := Check{ID: CheckSource, Field: "/source/path"}
	full := c.resolvePath(p)
	fi, err := os.Stat(full)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a folder")
	}
	if err == nil {
		var d *os.File
		if d, err = os.Open(full); err == nil {
			_, err = d.ReadDir(1)
			if errors.Is(err, io.EOF) {
				err = errors.New("the folder is empty")
			}
			d.Close()
		}
	}
	if err != nil {
		ch.Status = StatusFail
		ch.Reason = fmt.Sprintf("/source/path %q is not a readable source folder: %v (relative paths are read from the job file's folder)", p, err)
		ch.Problems = []Problem{{In: "job", Pointer: "/source/path", Message: ch.Reason}}
		return ch
	}
	ch.Status = StatusPass
	ch.Reason = fmt.Sprintf("/source/path %q is a readable folder; it is not pinned by a commit or digest, so its content may change before submission and is not covered by the fingerprint", p)
	return ch
}
