package preflight

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// gitRepo creates a local repository with one commit and returns its
// folder and the commit ID; the test is skipped without git.
func gitRepo(t *testing.T) (dir, commit string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir = t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "--quiet")
	if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte("print('train')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "train.py")
	git("commit", "--quiet", "-m", "first")
	return dir, git("rev-parse", "HEAD")
}

// sourceRun runs only the source check with a private temporary parent
// and asserts that the parent is empty afterwards: the copy is removed.
func sourceRun(t *testing.T, ctx context.Context, src Source, mod func(*Options)) (Check, error) {
	t.Helper()
	job := exampleJob(t)
	job.Source = src
	o := opts()
	o.TempDir = t.TempDir()
	if mod != nil {
		mod(&o)
	}
	r, err := Run(ctx, job, exampleCatalog(t), o)
	assertNoLeftovers(t, o.TempDir)
	if err != nil {
		return Check{}, err
	}
	assertInvariants(t, r)
	return checkByID(t, r, CheckSource), nil
}

func assertNoLeftovers(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("temporary copy left behind: %s", filepath.Join(dir, e.Name()))
	}
}

func TestSourceGit(t *testing.T) {
	repo, commit := gitRepo(t)
	missing := strings.Repeat("0", 40)
	tests := []struct {
		name   string
		src    GitSource
		git    string
		want   Status
		field  string
		reason string
	}{
		{"commit present", GitSource{URL: repo, Commit: commit}, "", StatusPass, "/source/git", "does not prove it matches"},
		{"commit absent", GitSource{URL: repo, Commit: missing}, "", StatusFail, "/source/git/commit", "is not in"},
		{"repository absent", GitSource{URL: filepath.Join(repo, "nope"), Commit: commit}, "", StatusFail, "/source/git/url", "could not be cloned"},
		{"option-like url refused", GitSource{URL: "--upload-pack=touch /tmp/x", Commit: commit}, "", StatusFail, "/source/git/url", "may not start"},
		{"git not installed", GitSource{URL: repo, Commit: commit}, filepath.Join(t.TempDir(), "no-git"), StatusUnchecked, "/source/git", "install git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := sourceRun(t, context.Background(), Source{Git: &tt.src}, func(o *Options) { o.Git = tt.git })
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != tt.want || c.Field != tt.field || !strings.Contains(c.Reason, tt.reason) {
				t.Errorf("source = %s %s %q; want %s %s containing %q", c.Status, c.Field, c.Reason, tt.want, tt.field, tt.reason)
			}
		})
	}
	t.Run("relative url from the job folder", func(t *testing.T) {
		parent, name := filepath.Split(repo)
		c, err := sourceRun(t, context.Background(), Source{Git: &GitSource{URL: name, Commit: commit}}, func(o *Options) { o.BaseDir = parent })
		if err != nil || c.Status != StatusPass {
			t.Errorf("source = %+v, %v; want pass", c, err)
		}
	})
}

// slowGit writes a fake git that, for clone, starts filling the target
// folder, signals through a marker file and then hangs in a child process
// (as git's transport helpers do).
func slowGit(t *testing.T) (git, marker string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs a POSIX shell")
	}
	dir := t.TempDir()
	marker = filepath.Join(dir, "cloning")
	git = filepath.Join(dir, "git")
	script := `#!/bin/sh
for a in "$@"; do last="$a"; done
case " $* " in
*" clone "*) mkdir -p "$last" && echo partial > "$last/partial" && touch "` + marker + `" && sleep 60; exit 0 ;;
esac
exit 1
`
	if err := os.WriteFile(git, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return git, marker
}

func TestSourceGitCancelled(t *testing.T) {
	git, marker := slowGit(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for i := 0; i < 1000; i++ {
			if _, err := os.Stat(marker); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err := sourceRun(t, ctx, Source{Git: &GitSource{URL: "https://example.invalid/r.git", Commit: strings.Repeat("a", 40)}},
		func(o *Options) { o.Git = git })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled (no partial report)", err)
	}
	if _, serr := os.Stat(marker); serr != nil {
		t.Fatal("the fake git never started cloning; the test proves nothing")
	}
	// Without killing the process group, git's hanging child would hold the
	// run until exec's WaitDelay (5s).
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancellation took %s", d)
	}
}

func TestSourceGitTimeout(t *testing.T) {
	git, marker := slowGit(t)
	c, err := sourceRun(t, context.Background(), Source{Git: &GitSource{URL: "https://example.invalid/r.git", Commit: strings.Repeat("a", 40)}},
		func(o *Options) { o.Git = git; o.SourceTimeout = 500 * time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	if _, serr := os.Stat(marker); serr != nil {
		t.Fatal("the fake git never started cloning")
	}
	if c.Status != StatusFail || !strings.Contains(c.Reason, "timed out after 500ms") {
		t.Errorf("source = %s %q, want fail timed out", c.Status, c.Reason)
	}
}

func TestSourceArchiveAndPath(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join(exampleDir, "source.tar"))
	if err != nil {
		t.Fatal(err)
	}
	good := "2e335a5f6fa24e4a203ead229200a0d5b6ed764e8da489b939a32360a8432625"
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		src    Source
		skip   bool
		want   Status
		field  string
		reason string
	}{
		{"archive matches", Source{Archive: &ArchiveSource{Path: "source.tar", SHA256: good}}, false, StatusPass, "/source/archive", "does not prove"},
		{"archive absolute path", Source{Archive: &ArchiveSource{Path: abs, SHA256: good}}, false, StatusPass, "/source/archive", ""},
		{"archive digest differs", Source{Archive: &ArchiveSource{Path: "source.tar", SHA256: strings.Repeat("0", 64)}}, false, StatusFail, "/source/archive/sha256", good},
		{"archive missing", Source{Archive: &ArchiveSource{Path: "gone.tar", SHA256: good}}, false, StatusFail, "/source/archive/path", "cannot be opened"},
		{"archive is a folder", Source{Archive: &ArchiveSource{Path: "data", SHA256: good}}, false, StatusFail, "/source/archive/path", "not a regular file"},
		{"path present", Source{Path: "data"}, false, StatusPass, "/source/path", "not pinned"},
		{"path missing", Source{Path: "src"}, false, StatusFail, "/source/path", "not a readable source folder"},
		{"path is a file", Source{Path: file}, false, StatusFail, "/source/path", "not a folder"},
		{"empty source", Source{}, false, StatusFail, "/source", "names no"},
		{"skipped", Source{Path: "src"}, true, StatusUnchecked, "/source", "skipped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := sourceRun(t, context.Background(), tt.src, func(o *Options) { o.SkipSource = tt.skip })
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != tt.want || c.Field != tt.field || !strings.Contains(c.Reason, tt.reason) {
				t.Errorf("source = %s %s %q; want %s %s containing %q", c.Status, c.Field, c.Reason, tt.want, tt.field, tt.reason)
			}
		})
	}
}

func TestSourceArchiveCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := sourceRun(t, ctx, Source{Archive: &ArchiveSource{Path: "source.tar", SHA256: strings.Repeat("0", 64)}}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
