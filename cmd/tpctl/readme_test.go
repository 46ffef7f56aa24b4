package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/report"
)

// readmeMarker precedes every README code block that TestREADME runs.
const readmeMarker = "<!-- README-test: run -->"

// readmeCommand is one command line of a runnable README block.
type readmeCommand struct {
	line int    // in README.md
	cmd  string // as written, without a trailing "# …" comment
	exit int    // expected exit status ("# exit N"), 0 by default
}

var exitComment = regexp.MustCompile(`#\s*exit (\d+)\b`)

// readmeCommands extracts the runnable blocks' commands in order.
func readmeCommands(readme []byte) ([]readmeCommand, error) {
	var cmds []readmeCommand
	sc := bufio.NewScanner(bytes.NewReader(readme))
	n, armed, inBlock := 0, false, false
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == readmeMarker:
			armed = true
		case armed && !inBlock && strings.HasPrefix(line, "```"):
			if line != "```sh" {
				return nil, fmt.Errorf("README.md:%d: a %s block must be ```sh", n, readmeMarker)
			}
			inBlock = true
		case armed && inBlock && strings.HasPrefix(line, "```"):
			armed, inBlock = false, false
		case inBlock:
			t := strings.TrimSpace(line)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			c := readmeCommand{line: n, cmd: t}
			if m := exitComment.FindStringSubmatch(t); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
			}
			cmds = append(cmds, c)
		case armed && strings.TrimSpace(line) != "":
			return nil, fmt.Errorf("README.md:%d: %s must be followed by a code block", n, readmeMarker)
		}
	}
	return cmds, sc.Err()
}

// copyWorkTree copies the files a fresh clone would have (tracked ones,
// and new ones not ignored, so uncommitted work is tested too) to dst.
func copyWorkTree(t *testing.T, src, dst string) {
	t.Helper()
	out, err := exec.Command("git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git work tree (%v): TestREADME needs git ls-files to copy a fresh clone", err)
	}
	for _, rel := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join(src, rel))
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestREADME runs every command of the README's runnable blocks, in order,
// from the root of a fresh copy of the repository, with the tpctl that the
// README's own install step builds, and checks each exit status.
func TestREADME(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	if testing.Short() {
		t.Skip("builds tpctl and runs the whole README; skipped with -short")
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := readmeCommands(readme)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 20 {
		t.Fatalf("only %d runnable README commands found; the blocks must be marked %s", len(cmds), readmeMarker)
	}
	work := filepath.Join(t.TempDir(), "tpctl")
	copyWorkTree(t, mustAbs(t, repoRoot), work)
	gobin := t.TempDir()

	// One bash script, so that `&`, $! and exports behave as in a shell.
	var script strings.Builder
	script.WriteString("set -u\n")
	// A failing command must not leave the receiver running behind it.
	script.WriteString(`trap 'kill $(jobs -p) 2>/dev/null' EXIT` + "\n")
	script.WriteString(`check() { if [ "$1" -ne "$2" ]; then echo "README.md:$3: exit $1, want $2: $4" >&2; exit 1; fi; }` + "\n")
	for _, c := range cmds {
		fmt.Fprintf(&script, "echo %s\n", shellQuote(fmt.Sprintf("+ README.md:%d: %s", c.line, c.cmd)))
		fmt.Fprintf(&script, "%s\ncheck $? %d %d %s\n", c.cmd, c.exit, c.line, shellQuote(c.cmd))
	}
	script.WriteString("echo README-OK\n")

	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = work
	var env []string
	for _, kv := range os.Environ() {
		// The user's own settings must not leak into the walk-through.
		if strings.HasPrefix(kv, "TUNEPLANE_") || strings.HasPrefix(kv, "GITHUB_") || strings.HasPrefix(kv, "GOBIN=") || strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "NO_COLOR=") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "GOBIN="+gobin, "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out.String()), "README-OK") {
		t.Fatalf("README walk-through failed (%v); the output up to the failure:\n%s", err, tail(out.String(), 60))
	}
	t.Logf("ran %d README commands", len(cmds))
	// The install step built the tpctl the walk-through used.
	if _, err := os.Stat(filepath.Join(gobin, "tpctl")); err != nil {
		t.Errorf("the README's install step did not put tpctl in GOBIN: %v", err)
	}
	// out/ is where everything went, and git ignores it.
	if err := exec.Command("git", "-C", mustAbs(t, repoRoot), "check-ignore", "-q", "out/round-1").Run(); err != nil {
		t.Errorf("out/ is not git-ignored: %v", err)
	}
}

// TestREADMETestCommandIsCI: .ci/run runs exactly the README's test
// commands, in order: the ```sh block that starts with the test command,
// and then no other command but what installs and configures (set, cd,
// the Chromium install, export, go version).
func TestREADMETestCommandIsCI(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	const testCmd = "go test ./..."
	block := regexp.MustCompile("(?s)```sh\n(" + regexp.QuoteMeta(testCmd) + "\n.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatalf("README.md has no ```sh block starting with %q", testCmd)
	}
	want := strings.Split(strings.TrimSpace(string(block[1])), "\n")
	setup := regexp.MustCompile(`^(#|set |cd |command -v |export |go version$)`)
	var got []string
	for _, line := range strings.Split(string(ci), "\n") {
		if line = strings.TrimSpace(line); line != "" && !setup.MatchString(line) {
			got = append(got, line)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf(".ci/run runs %q; the README's test commands are %q", got, want)
	}
}

func TestReadmeCommands(t *testing.T) {
	md := "x\n" + readmeMarker + "\n```sh\n# comment\ntpctl a\ntpctl b   # exit 1: why\n```\n```sh\nnot run\n```\n"
	got, err := readmeCommands([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].cmd != "tpctl a" || got[0].exit != 0 || got[1].exit != 1 || got[1].line != 6 {
		t.Errorf("commands %+v", got)
	}
	if _, err := readmeCommands([]byte(readmeMarker + "\ntext\n")); err == nil {
		t.Error("a marker without a block is accepted")
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestDocsStateTheCode: sentences of the README and docs/report.md that
// restate a fact of the code say what the code says (issue 27 item 9):
// the Go version is go.mod's go line, the "exactly what CI runs"
// sentence names every variable .ci/run exports, and the report's limits
// table gives the page's own constants (read from a page tpctl writes).
func TestDocsStateTheCode(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(repoRoot, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, gomod, ci, reportDoc := read("README.md"), read("go.mod"), read(".ci/run"), read("docs/report.md")

	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(gomod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	versions := regexp.MustCompile(`\bGo \(?(\d+\.\d+(?:\.\d+)?)\b`).FindAllStringSubmatch(readme, -1)
	if len(versions) == 0 {
		t.Error("README.md states no Go version")
	}
	for _, v := range versions {
		if v[1] != goLine[1] {
			t.Errorf("README.md says %q; go.mod's go line is %s", v[0], goLine[1])
		}
	}

	ciSentence := regexp.MustCompile(`(?s)\(this is exactly what CI runs:.*?\):`).FindString(readme)
	if ciSentence == "" {
		t.Fatal(`README.md has no "(this is exactly what CI runs: …):" sentence`)
	}
	exported := regexp.MustCompile(`(?m)^export (\w+)=`).FindAllStringSubmatch(ci, -1)
	if len(exported) == 0 {
		t.Fatal(".ci/run exports nothing: the check below would be empty")
	}
	for _, e := range exported {
		if !strings.Contains(ciSentence, e[1]) {
			t.Errorf(".ci/run sets %s; README.md's \"exactly what CI runs\" sentence does not say so", e[1])
		}
	}

	// The page's constants, as the written page states them.
	example := mustAbs(t, filepath.Join(repoRoot, "testdata", "example"))
	snap := filepath.Join(t.TempDir(), "snap")
	if code := runArgs(t, "import", "--plan", filepath.Join(example, "import-plan.json"), "--root", example, "--out", snap); code != 0 {
		t.Fatalf("import exited %d", code)
	}
	s, _, out, errOut := ui.Test()
	if code := runWith(context.Background(), s, []string{"report", snap, "--out", "-"}); code != 0 {
		t.Fatalf("report exited %d: %s", code, errOut)
	}
	page := out.String()
	for _, c := range []struct{ key, doc string }{
		{"page_size", `\| messages shown at once \| %s per page \|`},
		{"print_max", `\| printed trial table \| the first %s rows `},
	} {
		m := regexp.MustCompile(`"` + c.key + `":(\d+)`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("the report page has no %s", c.key)
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		if want := fmt.Sprintf(c.doc, regexp.QuoteMeta(ui.Count(n))); !regexp.MustCompile(want).MatchString(reportDoc) {
			t.Errorf("docs/report.md does not state the page's %s %s (want a line matching %s)", c.key, ui.Count(n), want)
		}
	}
	if want := "| trials in one report | " + ui.Count(report.MaxTrials) + " planned trials"; !strings.Contains(reportDoc, want) {
		t.Errorf("docs/report.md does not say %q (report.MaxTrials)", want)
	}
}

// TestMakeRunTwice: `make run`, the quick start's job, succeeds twice in
// a row (import never overwrites, so the target clears its own folder).
// The Makefile's recipe runs as written, from a scratch folder, with GO
// standing for a go command whose `run ./cmd/tpctl` is the built binary.
func TestMakeRunTwice(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	if testing.Short() {
		t.Skip("builds tpctl; skipped with -short")
	}
	bin := buildTpctl(t)
	dir := t.TempDir()
	goStandIn := filepath.Join(dir, "go")
	if err := os.WriteFile(goStandIn, []byte("#!/bin/sh\n[ \"$1 $2\" = \"run ./cmd/tpctl\" ] || { echo \"unexpected: go $*\" >&2; exit 9; }\nshift 2\nexec "+bin+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mustAbs(t, filepath.Join(repoRoot, "testdata")), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	makefile := mustAbs(t, filepath.Join(repoRoot, "Makefile"))
	for i := 1; i <= 2; i++ {
		cmd := exec.Command("make", "-f", makefile, "run", "GO="+goStandIn)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make run #%d: %v\n%s", i, err, out)
		}
	}
	if out, err := exec.Command(bin, "snapshot", "verify", filepath.Join(dir, "out", "make-run")).CombinedOutput(); err != nil {
		t.Errorf("after two make runs out/make-run is no intact snapshot: %v\n%s", err, out)
	}
}

// TestInstallMan: `make install-man PREFIX=DIR` puts every docs/man page
// where man finds it (man -M DIR/share/man -w), or, without man, into
// DIR/share/man/man1.
func TestInstallMan(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	prefix := t.TempDir()
	cmd := exec.Command("make", "install-man", "PREFIX="+prefix)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install-man: %v\n%s", err, out)
	}
	pages, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "man", "*.1"))
	if len(pages) == 0 {
		t.Fatal("docs/man holds no pages")
	}
	_, hasMan := exec.LookPath("man")
	for _, p := range pages {
		name := strings.TrimSuffix(filepath.Base(p), ".1")
		want := filepath.Join(prefix, "share", "man", "man1", filepath.Base(p))
		if hasMan != nil {
			if _, err := os.Stat(want); err != nil {
				t.Errorf("%s was not installed: %v", want, err)
			}
			continue
		}
		out, err := exec.Command("man", "-M", filepath.Join(prefix, "share", "man"), "-w", name).Output()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("man -M %s/share/man -w %s = %q (%v), want %s", prefix, name, out, err, want)
		}
	}
}
