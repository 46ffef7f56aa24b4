package action_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestReleaseToAction is the distribution path end to end: make release's
// script (.ci/release) builds a stamped binary with its SHA256SUMS, which
// sha256sum -c accepts; served as a GitHub release, the Action's install
// step downloads it for the tag, checks it and installs exactly those
// bytes, which print the tag as their version.
//
// The release build is a cgo-free, -trimpath build, which shares nothing
// with the build cache of the other tests: from a cold cache it compiles
// the standard library and every dependency again, minutes on a 2-core
// machine. So it runs only where asked, with TPCTL_TEST_RELEASE_TO_ACTION=1
// (or TPCTL_TEST_RELEASE=1): .ci/run asks for it once, as a step of its own
// after go test ./..., and so does the release job through .ci/run.
func TestReleaseToAction(t *testing.T) {
	if os.Getenv("TPCTL_TEST_RELEASE_TO_ACTION") != "1" && os.Getenv("TPCTL_TEST_RELEASE") != "1" {
		t.Skip("set TPCTL_TEST_RELEASE_TO_ACTION=1 to build a release and install it as the Action does (.ci/run does)")
	}
	for _, tool := range []string{"curl", "sha256sum", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dist := t.TempDir()
	const tag = "v9.8.7"
	cmd := exec.Command("bash", "../.ci/release")
	cmd.Env = append(os.Environ(), "VERSION="+tag, "DIST="+dist, "PLATFORMS=linux/amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf(".ci/release: %v\n%s", err, out)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}  tpctl-linux-amd64\n$`).Match(sums) {
		t.Errorf("SHA256SUMS = %q, want one line for tpctl-linux-amd64", sums)
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = dist
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
	}

	srv := httptest.NewServer(http.StripPrefix("/"+tag, http.FileServer(http.Dir(dist))))
	defer srv.Close()
	r := install(t, srv.URL, tag)
	if r.code != 0 || !strings.Contains(r.ghOut, "installed=true") {
		t.Fatalf("install of the release: %+v", r)
	}
	got, err := os.ReadFile(filepath.Join(r.path, "tpctl"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dist, "tpctl-linux-amd64"))
	if !bytes.Equal(got, want) {
		t.Error("the installed binary is not the released one")
	}
	out, err := exec.Command(filepath.Join(r.path, "tpctl"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), tag) {
		t.Errorf("tpctl version: %v %q, want %s", err, out, tag)
	}
	// One changed byte after the sums were taken: refused, never run.
	want[len(want)-1] ^= 1
	if err := os.WriteFile(filepath.Join(dist, "tpctl-linux-amd64"), want, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := install(t, srv.URL, tag); r.code != 1 || strings.Contains(r.ghOut, "installed=true") || !strings.Contains(r.stdout, "does not match its SHA256SUMS") {
		t.Errorf("tampered release: %+v", r)
	}
}

// TestReleasePlatformsBuild: every platform make release builds by default
// compiles (a platform that does not would fail the tag's release job).
// Cross-compiling each takes minutes on a loaded machine, so it runs only
// with TPCTL_TEST_RELEASE=1; the release job's make release is the same
// check, made before anything is published.
func TestReleasePlatformsBuild(t *testing.T) {
	if os.Getenv("TPCTL_TEST_RELEASE") != "1" {
		t.Skip("set TPCTL_TEST_RELEASE=1 to cross-compile tpctl for every release platform")
	}
	script, err := os.ReadFile("../.ci/release")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`PLATFORMS=\$\{PLATFORMS:-([^}]*)\}`).FindSubmatch(script)
	if m == nil {
		t.Fatal(".ci/release has no default PLATFORMS")
	}
	for _, p := range strings.Fields(string(m[1])) {
		goos, goarch, _ := strings.Cut(p, "/")
		cmd := exec.Command("go", "build", "-trimpath", "-o", os.DevNull, "../cmd/tpctl")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: go build: %v\n%s", p, err, out)
		}
	}
}

// TestReleaseWorkflow: the tag workflow runs the tests, then make release
// with the tag as VERSION, and publishes every file of dist/ (the
// binaries and SHA256SUMS) as the tag's release — the files the Action
// downloads.
func TestReleaseWorkflow(t *testing.T) {
	b, err := os.ReadFile("../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On struct {
			Push struct {
				Tags []string `yaml:"tags"`
			} `yaml:"push"`
		} `yaml:"on"`
		Jobs map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	if len(wf.On.Push.Tags) != 1 || wf.On.Push.Tags[0] != "v*" {
		t.Errorf("on.push.tags = %v, want [v*]", wf.On.Push.Tags)
	}
	var order []string
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			switch {
			case strings.Contains(s.Run, ".ci/run"):
				order = append(order, "test")
			case strings.Contains(s.Run, `make release VERSION="$GITHUB_REF_NAME"`):
				order = append(order, "build")
			case strings.Contains(s.Run, "gh release create") && strings.Contains(s.Run, "dist/*"):
				order = append(order, "publish")
			}
		}
	}
	if strings.Join(order, ",") != "test,build,publish" {
		t.Errorf("release.yml steps %v, want test, build (make release with the tag), publish dist/*", order)
	}
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^release:\n\tVERSION=\$\(VERSION\) GO=\$\(GO\) \.ci/release$`).Match(mk) {
		t.Error("make release does not run .ci/release with VERSION")
	}
}
