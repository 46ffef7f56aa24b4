package digest

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/internal/safefs"
)

const helloSHA = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" // sha256sum of "hello\n"

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"valid", helloSHA, ""},
		{"zero", strings.Repeat("0", 64), ""},
		{"empty", "", "length 0"},
		{"short", helloSHA[:63], "length 63"},
		{"long", helloSHA + "0", "length 65"},
		{"uppercase", strings.ToUpper(helloSHA), "uppercase hex"},
		{"prefixed", "sha256:" + helloSHA, "length 71"},
		{"non-hex", "g" + helloSHA[1:], `character 'g' at offset 0`},
		{"space", helloSHA[:63] + " ", `character ' ' at offset 63`},
		{"huge", strings.Repeat("a", 1<<20), "length 1048576"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if d.String() != tt.in {
					t.Errorf("String() = %q, want %q", d.String(), tt.in)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse error = %v, want *ParseError containing %q", err, tt.wantErr)
			}
			if !d.IsZero() {
				t.Errorf("failed Parse returned non-zero digest %v", d)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error message not truncated: %d bytes", len(err.Error()))
			}
		})
	}
}

func TestDigestJSON(t *testing.T) {
	d := Bytes([]byte("hello\n"))
	b, err := json.Marshal(struct {
		D Digest `json:"d"`
	}{d})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"d":"`+helloSHA+`"}`, string(b)); diff != "" {
		t.Errorf("marshal mismatch (-want +got):\n%s", diff)
	}
	var back struct {
		D Digest `json:"d"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.D != d {
		t.Errorf("round trip gave %v, want %v", back.D, d)
	}
	for _, bad := range []string{`{"d":"ABC"}`, `{"d":1}`, `{"d":"` + strings.ToUpper(helloSHA) + `"}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("Unmarshal(%s) succeeded, want error", bad)
		}
	}
	if !(Digest{}).IsZero() || d.IsZero() {
		t.Error("IsZero wrong")
	}
}

func TestReaderAndBytes(t *testing.T) {
	got, err := Reader(strings.NewReader("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != helloSHA || Bytes([]byte("hello\n")).String() != helloSHA {
		t.Errorf("Reader = %v, want %s", got, helloSHA)
	}
	// SHA-256 of nothing, from FIPS 180-2 test vectors.
	if got := Bytes(nil).String(); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("Bytes(nil) = %s", got)
	}
}

// mkfiles writes files (slash paths) under dir; a path ending in "*" is
// made executable (the star is not part of the name).
func mkfiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(rel, "*") {
			rel, mode = strings.TrimSuffix(rel, "*"), 0o755
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // umask may have dropped bits
			t.Fatal(err)
		}
	}
}

func TestFile(t *testing.T) {
	dir := t.TempDir()
	mkfiles(t, dir, map[string]string{"hello.txt": "hello\n"})
	if err := os.Symlink("hello.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := File(filepath.Join(dir, "hello.txt"))
	if err != nil || got.String() != helloSHA {
		t.Fatalf("File = %v, %v; want %s", got, err, helloSHA)
	}

	var ue *UnsupportedFileError
	if _, err := File(filepath.Join(dir, "link")); !errors.As(err, &ue) || ue.Mode&fs.ModeSymlink == 0 {
		t.Errorf("File(symlink) error = %v, want *UnsupportedFileError for a symlink", err)
	} else if !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), "link") {
		t.Errorf("symlink error does not name the problem and path: %v", err)
	}
	// A named pipe must be refused, not block the process waiting for a writer.
	if _, err := File(filepath.Join(dir, "fifo")); !errors.As(err, &ue) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("File(fifo) error = %v, want *UnsupportedFileError naming a named pipe", err)
	}
	var ke *KindError
	if _, err := File(dir); !errors.As(err, &ke) || ke.Want != "regular file" {
		t.Errorf("File(folder) error = %v, want *KindError", err)
	}
	if _, err := File(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("File(missing) error = %v, want fs.ErrNotExist naming the path", err)
	}
}

func TestJSON(t *testing.T) {
	// sha256 of the canonical text {"a":"x","b":[1,2.5,true,null]},
	// computed with python3 hashlib over those exact bytes.
	const want = "eefd48e492206a5b6adb10ad876ec7cc056518581617631bafb28ef496c571f9"
	for _, in := range []string{
		`{"a":"x","b":[1,2.5,true,null]}`,
		"{ \"b\" : [ 1.0, 25e-1, true, null ],\n  \"a\": \"\\u0078\" }\n",
	} {
		got, err := JSON([]byte(in))
		if err != nil {
			t.Fatalf("JSON(%q): %v", in, err)
		}
		if got.String() != want {
			t.Errorf("JSON(%q) = %s, want %s", in, got, want)
		}
	}
	var je *InvalidJSONError
	for _, bad := range []string{"", "{", `{"a":1}x`, `{"a":1,"a":2}`, "\xff", `[NaN]`} {
		if _, err := JSON([]byte(bad)); !errors.As(err, &je) {
			t.Errorf("JSON(%q) error = %v, want *InvalidJSONError", bad, err)
		}
	}
}

func TestJSONFile(t *testing.T) {
	dir := t.TempDir()
	mkfiles(t, dir, map[string]string{"a.json": `{"b":1,"a":2}`, "bad.json": `{"a":`})
	p := filepath.Join(dir, "a.json")
	got, err := JSONFile(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := Bytes([]byte(`{"a":2,"b":1}`)); got != want {
		t.Errorf("JSONFile = %v, want %v", got, want)
	}
	var tl *safefs.TooLargeError
	if _, err := JSONFile(p, 5); !errors.As(err, &tl) {
		t.Errorf("JSONFile over the limit: error = %v, want *safefs.TooLargeError", err)
	}
	var je *InvalidJSONError
	if _, err := JSONFile(filepath.Join(dir, "bad.json"), 0); !errors.As(err, &je) || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("JSONFile(bad) error = %v, want *InvalidJSONError naming the file", err)
	}
	if err := os.Symlink("a.json", filepath.Join(dir, "l.json")); err != nil {
		t.Fatal(err)
	}
	var ue *UnsupportedFileError
	if _, err := JSONFile(filepath.Join(dir, "l.json"), 0); !errors.As(err, &ue) {
		t.Errorf("JSONFile(symlink) error = %v, want *UnsupportedFileError", err)
	}
}
