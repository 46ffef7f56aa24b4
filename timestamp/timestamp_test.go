package timestamp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tuneplane/tpctl/timestamp"
)

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerify checks tokens made by openssl ts from a local test authority
// (testdata/README.md): a response and a bare token over the lock hold;
// over other bytes, from another authority or altered, they do not.
func TestVerify(t *testing.T) {
	lock := read(t, "plan.lock")
	want := time.Date(2026, 12, 3, 10, 21, 33, 0, time.UTC)
	for _, tok := range []string{"plan.lock.tsr", "plan.lock.tst"} {
		got, err := timestamp.VerifyFiles(filepath.Join("testdata", tok), filepath.Join("testdata", "tsa.crt"), lock)
		if err != nil {
			t.Fatalf("%s: %v", tok, err)
		}
		if !got.Time.Equal(want) || !strings.Contains(got.Authority, "tpctl test TSA") {
			t.Errorf("%s: time %v by %q, want %v by the test TSA", tok, got.Time, got.Authority, want)
		}
	}
	for _, tc := range []struct {
		name, token, cert string
		data              []byte
		want              string
	}{
		{"other bytes", "plan.lock.tsr", "tsa.crt", append([]byte("x"), lock...), "the token is over other bytes"},
		{"a token over another file", "other.tsr", "tsa.crt", lock, "the token is over other bytes"},
		{"another authority", "plan.lock.tsr", "other-tsa.crt", lock, "the signature does not verify with the TSA certificate"},
		{"not a token", "gate.yaml", "tsa.crt", lock, "not an RFC 3161 time-stamp token"},
		{"not a certificate", "plan.lock.tsr", "gate.yaml", lock, "is not an X.509 certificate"},
	} {
		_, err := timestamp.VerifyFiles(filepath.Join("testdata", tc.token), filepath.Join("testdata", tc.cert), tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// Any flipped byte of the token's signed part is refused.
	tok := read(t, "plan.lock.tst")
	cert := read(t, "tsa.crt")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tsa.crt"), cert, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(tok); i += 7 {
		bad := append([]byte(nil), tok...)
		bad[i] ^= 0x01
		p := filepath.Join(dir, "bad.tst")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := timestamp.VerifyFiles(p, filepath.Join(dir, "tsa.crt"), lock); err == nil && !got.Time.Equal(want) {
			t.Errorf("byte %d flipped: accepted with time %v", i, got.Time)
		}
	}
}

func FuzzVerify(f *testing.F) {
	f.Add(read(f, "plan.lock.tst"))
	f.Add(read(f, "plan.lock.tsr"))
	lock := read(f, "plan.lock")
	cert := read(f, "tsa.crt")
	dir := f.TempDir()
	cp := filepath.Join(dir, "tsa.crt")
	if err := os.WriteFile(cp, cert, 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "t")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = timestamp.VerifyFiles(p, cp, lock) // never panics
	})
}
