package digest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestIsTheHandRecipe: the manifests tpctl builds digest to what
// docs/digest-rules.md's hand-typed recipe gives (printf the manifest,
// then tpctl digest json).
func TestManifestIsTheHandRecipe(t *testing.T) {
	dir := t.TempDir()
	tasks := map[string]string{}
	for _, name := range []string{"fix-git", "hello-world"} {
		td := filepath.Join(dir, name)
		for _, sub := range []string{"tests", "environment"} {
			if err := os.MkdirAll(filepath.Join(td, sub), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(td, sub, "file.txt"), []byte(name+" "+sub+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tasks[name] = td
	}
	dirDigest := func(p string) string {
		d, err := Dir(p, DirOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	byHand := func(manifest string) string {
		d, err := JSON([]byte(manifest))
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	ctx := context.Background()
	v, err := HarborVerifier(ctx, tasks)
	if err != nil {
		t.Fatal(err)
	}
	want := byHand(fmt.Sprintf(`{"rules":"tpctl-digest/1","hello-world":"%s","fix-git":"%s"}`,
		dirDigest(filepath.Join(tasks["hello-world"], "tests")), dirDigest(filepath.Join(tasks["fix-git"], "tests"))))
	if v.String() != want {
		t.Errorf("verifier %s, by hand %s", v, want)
	}
	cfg := []byte(`{"type": "docker", "kwargs": {}}`)
	e, err := HarborEnvironment(ctx, tasks, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want = byHand(fmt.Sprintf(`{"rules":"tpctl-digest/1","config":"%s","fix-git":"%s","hello-world":"%s"}`, byHand(`{"kwargs":{},"type":"docker"}`),
		dirDigest(filepath.Join(tasks["fix-git"], "environment")), dirDigest(filepath.Join(tasks["hello-world"], "environment"))))
	if e.String() != want {
		t.Errorf("environment %s, by hand %s", e, want)
	}
	commit := strings.Repeat("ab", 20)
	h, err := HarborHarness(commit, []byte(`{"name":"terminus-2","kwargs":{"temperature":0.7}}`))
	if err != nil {
		t.Fatal(err)
	}
	want = byHand(fmt.Sprintf(`{"rules":"tpctl-digest/1","harbor":"%s","agent":"%s"}`, commit, byHand(`{"kwargs":{"temperature":0.7},"name":"terminus-2"}`)))
	if h.String() != want {
		t.Errorf("harness %s, by hand %s", h, want)
	}

	// A task without environment/ contributes its task.toml.
	bare := filepath.Join(dir, "bare")
	if err := os.MkdirAll(filepath.Join(bare, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bare, "task.toml"), []byte("[environment]\ndocker_image = \"x@sha256:00\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eb, err := HarborEnvironment(ctx, map[string]string{"bare": bare}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tomlDigest, _ := File(filepath.Join(bare, "task.toml"))
	if want := byHand(fmt.Sprintf(`{"rules":"tpctl-digest/1","config":"%s","bare":"%s"}`, byHand(`{"kwargs":{},"type":"docker"}`), tomlDigest)); eb.String() != want {
		t.Errorf("environment of a task without environment/: %s, by hand %s", eb, want)
	}
	if f := HarborEnvironmentFiles(map[string]string{"bare": bare, "fix-git": tasks["fix-git"]}); f["bare"] != "task.toml" || f["fix-git"] != "environment" {
		t.Errorf("environment files %v", f)
	}

	// Refusals: a missing tests/ folder, a task named like a member, a
	// commit that is not one.
	if _, err := HarborVerifier(ctx, map[string]string{"x": filepath.Join(dir, "nowhere")}); err == nil || !strings.Contains(err.Error(), `task "x"`) {
		t.Errorf("missing folder: err = %v", err)
	}
	if _, err := HarborEnvironment(ctx, map[string]string{"config": tasks["fix-git"]}, cfg); err == nil {
		t.Error("a task named config was accepted")
	}
	if _, err := HarborHarness("v0.22.0", []byte(`{}`)); err == nil {
		t.Error("a version was accepted as a commit")
	}
	if _, err := HarborVerifier(ctx, nil); err == nil {
		t.Error("no tasks was accepted")
	}
}
