package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/upload/ingesttest"
)

// TestSecretNeverLeavesSavedSnapshot is issue 26 item 1 for the commands
// that read a saved snapshot: one saved where the secret was unknown (or
// edited since and re-hashed, so that it verifies) carries it in a
// trajectory message, escaped once, as JSON text inside the message (tool
// arguments: twice) or as \u escapes. Where the secret is known —
// from the environment or only from the config file — report, upload
// (also --dry-run and -o json) and snapshot show (text and -o json) must
// neither write, send nor print it in any form of leakForms.
func TestSecretNeverLeavesSavedSnapshot(t *testing.T) {
	secrets := []struct {
		name, env, value string
		config           bool
	}{
		{"job token", "TUNEPLANE_JOB_TOKEN", "tok-SAVED-CANARY-0b7e41c2", false},
		{"quoted password", "DB_PASSWORD", `pa"ss\SAVED-CANARY-19a4`, false},
		{"openai key", "", "sk-proj-SAVEDcanary0123456789abcdefXYZ", false},
		{"config-only token", "", "tok-SAVED-CONFIG-CANARY-6c2d", true},
	}
	t.Setenv("TUNEPLANE_CONFIG", "")
	os.Unsetenv("TUNEPLANE_CONFIG")
	for _, sec := range secrets {
		for _, encoding := range gateEncodings {
			t.Run(sec.name+"/"+encoding, func(t *testing.T) {
				base := t.TempDir()
				snap := filepath.Join(base, "snap")
				if _, err := ingesttest.WriteSnapshot(snap, ingesttest.SnapshotSpec{Trials: 3, Trajectories: 1, Messages: 1, Redaction: gateMarker}); err != nil {
					t.Fatal(err)
				}
				var planted string
				switch encoding {
				case "once":
					planted = jsonInner("my secret is " + sec.value)
				case "twice":
					planted = jsonInner(`{"cmd":"login","password":"` + jsonInner(sec.value) + `"}`)
				default:
					planted = "my secret is " + uEscape(sec.value)
				}
				plantInSnapshot(t, snap, gateMarker, planted)

				recv := ingesttest.New()
				defer recv.Close()
				token := sec.value
				if sec.env != "TUNEPLANE_JOB_TOKEN" && !sec.config {
					token = "tok-upload-0123456789"
				}
				recv.AddToken(token, "run-1")
				t.Setenv("TUNEPLANE_JOB_ENDPOINT", recv.URL)
				t.Setenv("TUNEPLANE_JOB_RUN_ID", "run-1")
				t.Setenv("TUNEPLANE_JOB_TOKEN", token)
				if sec.env != "" {
					t.Setenv(sec.env, sec.value)
				}
				if sec.config {
					cfg := filepath.Join(base, "tpctl.yaml")
					if err := os.WriteFile(cfg, []byte("job-token: '"+sec.value+"'\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					t.Setenv("TUNEPLANE_CONFIG", cfg)
					os.Unsetenv("TUNEPLANE_JOB_TOKEN")
				}
				page := filepath.Join(base, "report.html")
				for _, args := range [][]string{
					{"report", snap, "--out", page},
					{"report", snap, "--out", "-"},
					{"upload", snap},
					{"upload", snap, "--dry-run"},
					{"upload", snap, "-o", "json"},
					{"snapshot", "show", snap, "--trial", "task-00000#0"},
					{"snapshot", "show", snap, "--trial", "task-00000#0", "-o", "json"},
				} {
					streams, _, out, errOut := ui.Test()
					code := runWith(context.Background(), streams, args)
					for name, b := range map[string][]byte{"stdout": out.Bytes(), "stderr": errOut.Bytes()} {
						if f := leaked(b, sec.value); f != "" {
							t.Errorf("%v (exit %d): the secret appears in %s as %s:\n%s", args, code, name, f, b)
						}
					}
					if args[0] == "upload" && code == 0 {
						t.Errorf("%v: exit 0 for a snapshot carrying a known secret\n%s%s", args, out, errOut)
					}
				}
				if b, err := os.ReadFile(page); err == nil {
					if f := leaked(b, sec.value); f != "" {
						t.Errorf("the report page holds the secret as %s", f)
					}
				}
				if n := len(recv.Log()); n != 0 {
					t.Errorf("%d requests were sent", n)
				}
			})
		}
	}
}

// plantInSnapshot replaces marker in the snapshot's trajectory files with
// planted (bytes as they are in the file) and re-hashes the manifest, as
// an edit made after import would.
func plantInSnapshot(t *testing.T, snap, marker, planted string) {
	t.Helper()
	manifest := readJSONMap(t, filepath.Join(snap, "snapshot.json"))
	files := manifest["files"].(map[string]any)
	n := 0
	for name := range files {
		if !strings.HasPrefix(name, "trajectories/") {
			continue
		}
		p := filepath.Join(snap, filepath.FromSlash(name))
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		edited := bytes.ReplaceAll(raw, []byte(marker), []byte(planted))
		if bytes.Equal(edited, raw) {
			continue
		}
		n++
		if err := os.WriteFile(p, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = sha256Hex(edited)
	}
	if n == 0 {
		t.Fatalf("no trajectory holds the marker %q", marker)
	}
	writeJSONFile(t, filepath.Join(snap, "snapshot.json"), manifest)
	streams, _, out, errOut := ui.Test()
	if code := runWith(context.Background(), streams, []string{"snapshot", "verify", snap}); code != 0 {
		t.Fatalf("the edited snapshot does not verify (exit %d):\n%s%s", code, out, errOut)
	}
}

// TestSecretNeverPrintedInMessages is issue 26 item 1 for messages:
// values quoted with %q and JSON-encoded again (plan check -o json), a
// member name in its JSON-pointer form, a server's error that echoes a
// secret folded by a line break or cut at 300 characters, and an exec
// redactor's stderr tail cut through a secret. No form of the secret, and
// no half of it, is printed.
func TestSecretNeverPrintedInMessages(t *testing.T) {
	const pw = `pa"ss\Zq7/Wv9Kp3Xr5Ty1Ub8Nm`
	t.Setenv("DB_PASSWORD", pw)
	t.Setenv("TUNEPLANE_CONFIG", "")
	os.Unsetenv("TUNEPLANE_CONFIG")
	// A fragment of the secret longer than any word of tpctl's own.
	halves := []string{"Zq7/Wv9K", "Zq7~1Wv9K", "Xr5Ty1Ub8Nm"}
	check := func(t *testing.T, args []string, out, errOut []byte) {
		t.Helper()
		for name, b := range map[string][]byte{"stdout": out, "stderr": errOut} {
			if f := leaked(b, pw); f != "" {
				t.Errorf("%v: the secret appears in %s as %s:\n%s", args, name, f, b)
			}
			for _, h := range halves {
				if bytes.Contains(b, []byte(h)) {
					t.Errorf("%v: a part of the secret (%s) appears in %s:\n%s", args, h, name, b)
				}
			}
		}
	}

	t.Run("plan check", func(t *testing.T) {
		plan := readJSONMap(t, filepath.Join("..", "..", "testdata", "example", "import-plan.json"))
		firstTrial(&gateInputs{plan: plan})[pw] = map[string]any{"x": 1}
		p := filepath.Join(t.TempDir(), "plan.json")
		writeJSONFile(t, p, plan)
		for _, o := range []string{"text", "json", "github"} {
			args := []string{"plan", "check", p, "-o", o}
			streams, _, out, errOut := ui.Test()
			if code := runWith(context.Background(), streams, args); code != int(exitFinding) {
				t.Errorf("%v: exit %d, want %d\n%s%s", args, code, exitFinding, out, errOut)
			}
			if !strings.Contains(out.String()+errOut.String(), "[REDACTED:env:DB_PASSWORD]") {
				t.Errorf("%v: the finding does not show the masked name:\n%s%s", args, out, errOut)
			}
			check(t, args, out.Bytes(), errOut.Bytes())
		}
	})

	t.Run("server echo", func(t *testing.T) {
		snap := filepath.Join(t.TempDir(), "snap")
		if _, err := ingesttest.WriteSnapshot(snap, ingesttest.SnapshotSpec{Trials: 3}); err != nil {
			t.Fatal(err)
		}
		for _, body := range []string{
			// Folded by a line break, in a JSON message and in plain text.
			`{"message":"rejected: ` + jsonInner(pw[:12]+"\n"+pw[12:]) + `"}`,
			"rejected: " + pw[:12] + "\r\n" + pw[12:],
			// The cut at 300 characters falls inside the secret.
			`{"error":"` + strings.Repeat("x", 290) + " " + jsonInner(pw) + `"}`,
		} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, body)
			}))
			t.Setenv("TUNEPLANE_JOB_ENDPOINT", srv.URL)
			t.Setenv("TUNEPLANE_JOB_RUN_ID", "run-1")
			t.Setenv("TUNEPLANE_JOB_TOKEN", "tok-echo-0123456789")
			for _, o := range []string{"text", "json"} {
				args := []string{"upload", snap, "-o", o}
				streams, _, out, errOut := ui.Test()
				if code := runWith(context.Background(), streams, args); code != int(exitTransport) {
					t.Errorf("%v: exit %d, want %d\n%s%s", args, code, exitTransport, out, errOut)
				}
				check(t, args, out.Bytes(), errOut.Bytes())
			}
			srv.Close()
		}
	})

	t.Run("exec redactor stderr tail", func(t *testing.T) {
		dir := t.TempDir()
		// It prints the secret and then enough that the 2,048-byte tail
		// starts inside it, and fails.
		red := filepath.Join(dir, "red.sh")
		script := "#!/bin/sh\nprintf '%s%s\\n' \"$DB_PASSWORD\" \"$(head -c 2030 /dev/zero | tr '\\0' y)\" >&2\nexit 3\n"
		if err := os.WriteFile(red, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		example := filepath.Join("..", "..", "testdata", "example")
		args := []string{"import", "--plan", filepath.Join(example, "import-plan.json"), "--root", example,
			"--out", filepath.Join(dir, "snap"), "--trace-limit", "1", "--redactor", "exec:" + red}
		streams, _, out, errOut := ui.Test()
		code := runWith(context.Background(), streams, args)
		if code == 0 || !strings.Contains(errOut.String(), "its stderr ends with") {
			t.Errorf("%v: exit %d without the redactor's stderr:\n%s%s", args, code, out, errOut)
		}
		check(t, args, out.Bytes(), errOut.Bytes())
	})
}

// TestShortJobTokenIsNotASecret: a job token under redact.MinSecretLen is
// not looked for (it would garble every "token" printed), and tpctl says
// so, in text output only (stderr of -o json carries JSON only).
func TestShortJobTokenIsNotASecret(t *testing.T) {
	t.Setenv("TUNEPLANE_JOB_TOKEN", "tok")
	t.Setenv("TUNEPLANE_CONFIG", "")
	m := readJSONMap(t, filepath.Join("..", "..", "testdata", "example", "import-plan.json"))
	m["tokenizer"] = "x" // quoted in an unknown_field finding
	plan := filepath.Join(t.TempDir(), "plan.json")
	writeJSONFile(t, plan, m)
	streams, _, out, errOut := ui.Test()
	runWith(context.Background(), streams, []string{"plan", "check", plan})
	if !strings.Contains(errOut.String(), "tpctl: note: TUNEPLANE_JOB_TOKEN is shorter than 8 characters, so the secret gate neither looks for it nor masks it") {
		t.Errorf("no note about the short token:\n%s", errOut)
	}
	if strings.Contains(out.String(), "REDACTED") || !strings.Contains(out.String(), `unknown field "tokenizer"`) {
		t.Errorf("the short token was masked in ordinary text:\n%s", out)
	}
	streams, _, _, errOut = ui.Test()
	runWith(context.Background(), streams, []string{"plan", "check", plan, "-o", "json"})
	if strings.Contains(errOut.String(), "note:") {
		t.Errorf("a text note on the stderr of -o json:\n%s", errOut)
	}
}

// TestSecretMaskedBeforeColumnsCut: a table cell cut to the terminal's
// width (ui.Columns) is masked first — cut first, the halves of a secret
// would pass the gate. The snapshot was saved where the secret was unknown.
func TestSecretMaskedBeforeColumnsCut(t *testing.T) {
	const secret = "tok-COLUMNS-CANARY-7Hq2Zx9Lm4Vb"
	t.Setenv("TUNEPLANE_CONFIG", "")
	example := filepath.Join("..", "..", "testdata", "example")
	plan := readJSONMap(t, filepath.Join(example, "import-plan.json"))
	for _, tr := range plan["trials"].([]any) {
		tr.(map[string]any)["task"] = "harbor/" + secret + "-" + tr.(map[string]any)["task"].(string)[len("harbor/"):]
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "plan.json")
	writeJSONFile(t, p, plan)
	snap := filepath.Join(dir, "snap")
	streams, _, out, errOut := ui.Test()
	if code := runWith(context.Background(), streams, []string{"import", "--plan", p, "--root", example, "--out", snap}); code != 0 {
		t.Fatalf("import exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("TUNEPLANE_JOB_TOKEN", secret)
	for _, width := range []int{0, 30, 40, 60, 80} {
		streams, _, out, errOut := ui.Test()
		streams.SetWidth(width)
		runWith(context.Background(), streams, []string{"snapshot", "show", snap, "--trials"})
		for name, b := range map[string][]byte{"stdout": out.Bytes(), "stderr": errOut.Bytes()} {
			for _, part := range []string{"COLUMNS-CAN", "CANARY-7Hq", "7Hq2Zx9Lm4Vb"} {
				if bytes.Contains(b, []byte(part)) {
					t.Errorf("width %d: %s holds a part of the secret (%s):\n%s", width, name, part, b)
				}
			}
		}
	}
}
