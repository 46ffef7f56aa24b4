//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/harborgen"
)

// TestWritesOnAFullDisk is issue 35 item 4's ENOSPC through the binary,
// on a real full disk: each writer beside snapshots (trend's page through
// safefs.WriteBeside, report's streamed page through WriteBesideFrom,
// attest's bundle through WriteFile) and the import's save write to a
// 64 KiB tmpfs left with one page free, so the write fails mid-way. Each
// exits non-zero, names its --out and the fault, gives the I/O hint, and
// leaves the disk as it was: no file, no temporary, no folder. The tmpfs
// is mounted in a user and mount namespace of its own (unshare -rm), so no
// root is needed; the test skips where user namespaces are not allowed.
func TestWritesOnAFullDisk(t *testing.T) {
	if out, err := exec.Command("unshare", "-rm", "true").CombinedOutput(); err != nil {
		t.Skipf("no user namespace to mount a small tmpfs in (unshare -rm: %v %s)", err, out)
	}
	bin := filepath.Join(builtBinaries(t), "tpctl")
	job, snap, key := importedRound(t, bin, t.TempDir(), 60)
	// A filler leaves one 4 KiB page of the 64 KiB free: room to create
	// the file and start it, not to finish it (an attestation bundle, a
	// few KiB, gets no page).
	const size, page = 64 << 10, 4 << 10
	for _, tc := range []struct {
		name string
		args func(out string) []string
		out  string
		free int
	}{
		{"trend", func(out string) []string { return []string{"trend", snap, snap, "--out", out} }, "trend.html", page},
		{"report", func(out string) []string { return []string{"report", snap, "--out", out} }, "report.html", page},
		{"attest", func(out string) []string { return []string{"attest", snap, "--key", key, "--out", out} }, "round.intoto.jsonl", 0},
		{"import", func(out string) []string {
			return []string{"import", "--plan", job.PlanPath, "--root", job.Root, "--out", out}
		}, "snap", page},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disk := filepath.Join(t.TempDir(), "disk")
			if err := os.Mkdir(disk, 0o755); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(disk, tc.out)
			script := `mount -t tmpfs -o size=` + strconv.Itoa(size) + ` tmpfs "$DISK" || exit 99
head -c ` + strconv.Itoa(size-tc.free) + ` /dev/zero > "$DISK/filler" || exit 98
"$@" >"$DISK.out" 2>"$DISK.err"
echo "exit=$?"
ls -A "$DISK"`
			cmd := exec.Command("unshare", append([]string{"-rm", "sh", "-c", script, "sh", bin}, tc.args(out)...)...)
			cmd.Env = append(os.Environ(), "DISK="+disk, "TUNEPLANE_CONFIG=", "NO_COLOR=1")
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("the namespace's shell failed: %v\n%s", err, b)
			}
			stderr, _ := os.ReadFile(disk + ".err")
			got := strings.Fields(string(b))
			if len(got) == 0 || got[0] == "exit=0" || got[0] == "exit=2" && strings.Contains(string(stderr), "panic") {
				t.Fatalf("under a full disk: %q\n%s", got, stderr)
			}
			if rest := got[1:]; len(rest) != 1 || rest[0] != "filler" {
				t.Errorf("the full disk holds %q after the failed write, want the filler alone", rest)
			}
			msg := string(stderr)
			for _, want := range []string{strconv.Quote(out), "no space left on device", "tpctl: hint: an I/O error of this machine"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr does not say %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") {
				t.Errorf("a panic:\n%s", msg)
			}
		})
	}
}

// importedRound writes a Harbor job of n trials under base, imports it
// with the binary bin into base/snap and makes a signing key base/k.key:
// the inputs of the tests that run every command under a fault.
func importedRound(t *testing.T, bin, base string, n int) (job *harborgen.Job, snap, key string) {
	t.Helper()
	job, err := harborgen.Write(filepath.Join(base, "job"), n)
	if err != nil {
		t.Fatal(err)
	}
	snap, key = filepath.Join(base, "snap"), filepath.Join(base, "k.key")
	if b, err := exec.Command(bin, "import", "--plan", job.PlanPath, "--root", job.Root, "--out", snap).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, b)
	}
	if b, err := exec.Command(bin, "attest", "keygen", "--out", key).CombinedOutput(); err != nil {
		t.Fatalf("keygen: %v\n%s", err, b)
	}
	return job, snap, key
}
