package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/internal/iostreams"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/upload"
	"github.com/tuneplane/tpctl/upload/ingesttest"
)

func TestUploadErrorCodes(t *testing.T) {
	tests := []struct {
		err  error
		code exitCode
		hint string
	}{
		{&upload.TamperedError{Dir: "s"}, exitUsage, "tpctl snapshot verify 's p'"},
		{&snapshot.NotSnapshotError{Dir: "s", Err: errors.New("x")}, exitUsage, "tpctl import --out"},
		{&upload.RecordError{File: "f", Code: upload.CodeEventTooLarge}, exitUsage, "nothing was sent"},
		{&upload.ConflictError{Count: 1}, exitFinding, "kept its first copy"},
		{&upload.RedirectError{}, exitTransport, "final URL"},
		{&upload.TransportError{Err: errors.New("reset")}, exitTransport, "run tpctl upload 's p' later"},
		{&upload.HTTPError{Status: 401}, exitTransport, "fresh ingest token"},
		{&upload.HTTPError{Status: 403}, exitTransport, "ingest token of run"},
		{&upload.HTTPError{Status: 422}, exitTransport, "retrying will not help"},
		{&upload.ResponseError{}, exitTransport, "points at the TunePlane ingest API"},
		{fmt.Errorf("wrapped: %w", context.Canceled), exitInterrupted, "run tpctl upload 's p' to finish the upload"},
	}
	for _, tt := range tests {
		err := uploadError("s p", tt.err)
		if got := codeOf(err); got != tt.code {
			t.Errorf("%T: exit %d, want %d", tt.err, got, tt.code)
		}
		var ce *cliError
		if tt.hint != "" && (!errors.As(err, &ce) || !strings.Contains(strings.Join(ce.hints, "\n"), tt.hint)) {
			t.Errorf("%T: hints %v, want %q", tt.err, ce, tt.hint)
		}
	}
	if uploadError("s", nil) != nil {
		t.Error("nil error mapped to an error")
	}
}

func TestUploadQuote(t *testing.T) {
	for in, want := range map[string]string{"snap": "snap", "./a/b-1": "./a/b-1", "a b": "'a b'", "it's": `'it'\''s'`, "": "''"} {
		if got := uploadQuote(in); got != want {
			t.Errorf("uploadQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUploadProgress draws progress on a terminal stderr only, never in
// JSON mode, and clears the line before the summary.
func TestUploadProgress(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	if _, err := ingesttest.WriteSnapshot(dir, ingesttest.SnapshotSpec{Trials: 100, Trajectories: 1}); err != nil {
		t.Fatal(err)
	}
	r := ingesttest.New()
	defer r.Close()
	r.AddToken("tok", "run")
	r.Inject(ingesttest.Fault{Action: ingesttest.Status503, Kind: "observations", RetryAfter: "4"})
	t.Setenv("TUNEPLANE_JOB_ENDPOINT", r.URL)
	t.Setenv("TUNEPLANE_JOB_RUN_ID", "run")
	t.Setenv("TUNEPLANE_JOB_TOKEN", "tok")
	tests := []struct {
		name     string
		tty      bool
		args     []string
		progress bool
	}{
		{"terminal", true, nil, true},
		{"not a terminal", false, nil, false},
		{"json on a terminal", true, []string{"-o", "json"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, out, errOut := iostreams.Test()
			streams.SetTTY(false, tt.tty)
			if code := runWith(context.Background(), streams, append([]string{"upload", dir}, tt.args...)); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			got := errOut.String()
			if tt.progress {
				if !strings.Contains(got, "\r\x1b[Kuploading: ") || !strings.HasSuffix(got, "\r\x1b[K") {
					t.Errorf("no progress line, or not cleared: %q", got)
				}
				if tt.name == "terminal" && !strings.Contains(got, "HTTP 503 on observations, try 2 in 4s") {
					t.Errorf("retry not shown: %q", got)
				}
			} else if diff := cmp.Diff("", got); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if out.Len() == 0 {
				t.Error("no summary")
			}
		})
	}
}
