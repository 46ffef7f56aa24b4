package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/preflight"
)

func init() {
	// Scripts get a fresh copy of testdata/preflight in $WORK/pf and a
	// pinned report clock, so reports are the same on every run.
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		env.Setenv("TPCTL_TEST_NOW", "2026-03-01T12:00:00Z")
		return pfCopyDir("../../testdata/preflight", filepath.Join(env.WorkDir, "pf"))
	})
	if v := os.Getenv("TPCTL_TEST_NOW"); v != "" {
		if now, err := time.Parse(time.RFC3339, v); err == nil {
			preflightNow = func() time.Time { return now }
		}
	}
}

func pfCopyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// TestNewCmdPreflight pins how arguments and flags become options.
func TestNewCmdPreflight(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     preflightOptions
		wantCode exitCode
	}{
		{"defaults", []string{"preflight", "job.yaml", "--catalog", "cat.yaml"},
			preflightOptions{Job: "job.yaml", Catalog: "cat.yaml", SourceTimeout: 10 * time.Minute}, exitOK},
		{"all flags", []string{"preflight", "j.json", "--catalog", "c.json", "--report", "r.json", "--git", "/usr/bin/git", "--source-timeout", "30s", "--skip-source"},
			preflightOptions{Job: "j.json", Catalog: "c.json", Report: "r.json", Git: "/usr/bin/git", SourceTimeout: 30 * time.Second, SkipSource: true}, exitOK},
		{"catalog required", []string{"preflight", "job.yaml"}, preflightOptions{}, exitUsage},
		{"negative timeout", []string{"preflight", "job.yaml", "--catalog", "c", "--source-timeout", "-1s"}, preflightOptions{}, exitUsage},
		{"one job only", []string{"preflight", "a.yaml", "b.yaml", "--catalog", "c"}, preflightOptions{}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got preflightOptions
			called := false
			streams, _, _, _ := ui.Test()
			a := &app{io: streams}
			root := newRootCmd(a)
			for _, c := range root.Commands() {
				if c.Name() == "preflight" {
					root.RemoveCommand(c)
				}
			}
			stub := newPreflightCmd(a, func(_ context.Context, _ *app, o *preflightOptions) error {
				called = true
				o.Now = nil
				got = *o
				return nil
			})
			stub.Args = typedArgs(stub.Args)
			root.AddCommand(stub)
			root.SetArgs(tt.args)
			root.SetOut(streams.Out)
			root.SetErr(streams.ErrOut)
			err := root.Execute()
			code := codeOf(err)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d (err %v)", code, tt.wantCode, err)
			}
			if tt.wantCode != exitOK {
				if called {
					t.Error("run was called despite a usage error")
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPreflightTable renders the terminal table and checks that styles
// come only from the streams (no escape codes when colour is off) and
// that it fits 80 columns with every reason whole, wrapped, not cut.
func TestPreflightTable(t *testing.T) {
	dir := t.TempDir()
	if err := pfCopyDir("../../testdata/preflight", dir); err != nil {
		t.Fatal(err)
	}
	for _, color := range []bool{false, true} {
		streams, _, out, _ := ui.Test()
		streams.SetTTY(true, true)
		streams.SetColorEnabled(color)
		streams.SetWidth(80)
		a := &app{io: streams, output: outputText}
		err := preflightRun(context.Background(), a, &preflightOptions{
			Job: filepath.Join(dir, "job-not-ready.yaml"), Catalog: filepath.Join(dir, "catalog.yaml"), SkipSource: true, Now: time.Now,
		})
		if codeOf(err) != exitFinding {
			t.Fatalf("err = %v, want a finding", err)
		}
		s := out.String()
		for _, want := range []string{"CHECK", "STATUS", "REASON", "runtime.image", "worker.mounts", "not ready", ": 5 pass, 4 fail, 5 unchecked"} {
			if !strings.Contains(s, want) {
				t.Errorf("color=%v: output lacks %q:\n%s", color, want, s)
			}
		}
		for _, l := range strings.Split(s, "\n") {
			if w := ansi.StringWidth(l); w > 80 {
				t.Errorf("color=%v: a line of %d cells: %q", color, w, l)
			}
		}
		words := strings.Join(strings.Fields(ansi.Strip(s)), " ")
		for _, want := range []string{
			"global_batch_size must be a multiple of micro_batch_size × nodes × gpus_per_node - /config/global_batch_size: read by rule",
			"/params/learning_rate: maximum: got 0.01, want 0.001",
		} {
			if !strings.Contains(words, want) {
				t.Errorf("color=%v: a reason was cut; no %q in\n%s", color, want, s)
			}
		}
		if hasEsc := strings.Contains(s, "\x1b["); hasEsc != color {
			t.Errorf("color=%v but escape codes present=%v", color, hasEsc)
		}
	}
}

// TestPreflightExitCodes pins the documented exit codes, including an
// interruption while the source is being cloned: 130 and no report saved.
func TestPreflightExitCodes(t *testing.T) {
	dir := t.TempDir()
	if err := pfCopyDir("../../testdata/preflight", dir); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	job, _ := os.ReadFile(p("job.yaml"))
	gitJob := strings.Replace(string(job), "  archive:\n    path: source.tar\n    sha256: 2e335a5f6fa24e4a203ead229200a0d5b6ed764e8da489b939a32360a8432625",
		"  git: {url: https://git.example.invalid/r.git, commit: "+strings.Repeat("a", 40)+"}", 1)
	if gitJob == string(job) {
		t.Fatal("example job changed; update this test")
	}
	os.WriteFile(p("git-job.yaml"), []byte(gitJob), 0o644)
	marker := p("cloning")
	os.WriteFile(p("slow-git"), []byte("#!/bin/sh\ntouch '"+marker+"'\nsleep 60\n"), 0o755)
	report := p("report.json")

	tests := []struct {
		name   string
		args   []string
		cancel bool
		want   exitCode
	}{
		{"ready", []string{"preflight", p("job.yaml"), "--catalog", p("catalog.yaml")}, false, exitOK},
		{"not ready", []string{"preflight", p("job-not-ready.yaml"), "--catalog", p("catalog.yaml")}, false, exitFinding},
		{"bad job", []string{"preflight", p("catalog.yaml"), "--catalog", p("catalog.yaml")}, false, exitUsage},
		{"missing catalog", []string{"preflight", p("job.yaml"), "--catalog", p("nope.yaml")}, false, exitUsage},
		{"verify unusable report", []string{"preflight", "verify-report", p("job.yaml"), p("job.yaml")}, false, exitUsage},
		{"interrupted while cloning", []string{"preflight", p("git-job.yaml"), "--catalog", p("catalog.yaml"), "--git", p("slow-git"), "--report", report}, true, exitInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				go func() {
					for i := 0; i < 1000; i++ {
						if _, err := os.Stat(marker); err == nil {
							cancel()
							return
						}
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}
			streams, _, _, errOut := ui.Test()
			if got := exitCode(runWith(ctx, streams, tt.args)); got != tt.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", got, tt.want, errOut)
			}
		})
	}
	if _, err := os.Stat(report); !os.IsNotExist(err) {
		t.Errorf("an interrupted run saved a report (stat: %v)", err)
	}
}

// TestPreflightEscapesControlCharacters: job and catalog text (rule names,
// reasons quoting values) reaches the screen with its control characters
// escaped, on a terminal and off it, so a crafted job or catalog cannot
// send terminal escape sequences (e.g. to recolour a fail as a pass).
func TestPreflightEscapesControlCharacters(t *testing.T) {
	const esc = "\x1b[32mpass\x1b]0;t\x07"
	rep := &preflight.Report{
		Job: "job\x1b[2J.yaml",
		Checks: []preflight.Check{
			{ID: "config.rule:r" + esc, Status: preflight.StatusFail, Reason: "rule " + esc},
			{ID: "hardware", Status: preflight.StatusFail, Reason: "two\x1b[0m", Problems: []preflight.Problem{
				{In: "job", Pointer: "/a", Message: "x" + esc}, {In: "job", Pointer: "/b", Message: "y\u009b31m"},
			}},
		},
	}
	for _, tty := range []bool{false, true} {
		streams, _, out, _ := ui.Test()
		streams.SetTTY(tty, tty)
		if err := printPreflight(streams, nil, rep, ""); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }); i >= 0 {
			t.Errorf("tty=%v: control character %q in output:\n%s", tty, s[i], s)
		}
		for _, want := range []string{`job\x1b[2J.yaml`, `config.rule:r\x1b[32mpass\x1b]0;t\a`, `y\u009b31m`} {
			if !strings.Contains(s, want) {
				t.Errorf("tty=%v: output lacks %q:\n%s", tty, want, s)
			}
		}
	}
}
