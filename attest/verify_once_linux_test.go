package attest

import (
	"context"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tuneplane/tpctl/snapshot"
)

// opens counts the opens of the files under watch while fn runs: the
// kernel queues an inotify event as each open happens, so every open fn
// made is queued when it returns (no waiting, no clock).
func opens(t *testing.T, files []string, fn func()) map[string]int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(fd)
	names := map[int32]string{}
	for _, f := range files {
		wd, err := unix.InotifyAddWatch(fd, f, unix.IN_OPEN)
		if err != nil {
			t.Fatal(err)
		}
		names[int32(wd)] = f
	}
	fn()
	got := map[string]int{}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EAGAIN {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			got[names[ev.Wd]]++
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// TestVerifyComparisonReadsEachSnapshotOnce: attest verify of a comparison
// verifies each snapshot once and compares the bytes it verified, so each
// observations.jsonl is opened once (it was twice when the comparison
// verified the folders again).
func TestVerifyComparisonReadsEachSnapshotOnce(t *testing.T) {
	ctx := context.Background()
	dirs := []string{copyDir(t, "testdata/round"), copyDir(t, "testdata/round-cand")}
	st, _, err := ComparisonStatement(ctx, dirs[0], dirs[1], testProducer)
	if err != nil {
		t.Fatal(err)
	}
	line, err := SignStatement(st, mustPrivate(t, "p256.key"), nil)
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "cmp"+BundleSuffix)
	if _, err := AddToBundle(bundle, line, dirs...); err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(dirs[0], snapshot.ObservationsFile), filepath.Join(dirs[1], snapshot.ObservationsFile)}
	var rep *Report
	got := opens(t, files, func() {
		rep, err = Verify(ctx, dirs, bundle, mustPublic(t, "p256.pub"))
	})
	if err != nil || !rep.OK {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	for _, f := range files {
		if got[f] != 1 {
			t.Errorf("%s opened %d times during attest verify, want once", f, got[f])
		}
	}
	// And attesting the comparison reads each once too.
	got = opens(t, files, func() { _, _, err = ComparisonStatement(ctx, dirs[0], dirs[1], testProducer) })
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if got[f] != 1 {
			t.Errorf("%s opened %d times while attesting the comparison, want once", f, got[f])
		}
	}
}
