package harbor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jobSeeds are real Harbor files (testdata/harbor-v0.22.0, written with
// Harbor's own models) plus broken variants.
func jobSeeds(f *testing.F, names ...string) {
	f.Helper()
	job := filepath.Join("..", "..", "testdata", "harbor-v0.22.0", "jobs", "2026-09-01__10-00-00")
	for _, n := range names {
		for _, p := range []string{filepath.Join(job, n), filepath.Join(job, "hello-world__pmtszBJ", n)} {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
				f.Add(b[:len(b)/2])
			}
		}
	}
	for _, s := range []string{``, `{}`, `[]`, `{"trials":[{}]}`, `{"trials":[{"task":{"name":"t","digest":"sha256:x"}}]}`,
		`{"task":{"name":"t","digest":"sha256:` + strings.Repeat("a", 64) + `"},"agent":{"name":5}}`, `{"trial_name":"x","task":{}}`,
		`{"n_total_trials":"3"}`, `{"stats":{"evals":{"k":{"metrics":[{"mean":null}]}}}}`} {
		f.Add([]byte(s))
	}
}

// checkDecl is the property every declaration decoder keeps: an error is
// a *DeclError naming the file, with a pointer that is "" or starts
// with "/".
func checkDecl(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var de *DeclError
	if !errors.As(err, &de) {
		t.Fatalf("error %T %v is not a *DeclError", err, err)
	}
	if de.File != "f.json" || (de.Pointer != "" && de.Pointer[0] != '/') || de.Reason == "" {
		t.Fatalf("badly located error %+v", de)
	}
}

func FuzzDecodeJobLock(f *testing.F) {
	jobSeeds(f, "lock.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeJobLock(b, "f.json")
		checkDecl(t, err)
		if err != nil {
			return
		}
		for _, tl := range l.Trials {
			if tl.Task.Name == "" || !validLockDigest(tl.Task.Digest) || tl.Agent.Name == "" {
				t.Fatalf("accepted a TrialLock without its identity: %+v", tl)
			}
		}
	})
}

func FuzzDecodeTrialLock(f *testing.F) {
	jobSeeds(f, "lock.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		tl, err := DecodeTrialLock(b, "f.json")
		checkDecl(t, err)
		if err == nil && (tl.Task.Name == "" || !validLockDigest(tl.Task.Digest) || tl.Agent.Name == "") {
			t.Fatalf("accepted a TrialLock without its identity: %+v", tl)
		}
	})
}

func FuzzDecodeConfigs(f *testing.F) {
	jobSeeds(f, "config.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		jc, err := DecodeJobConfig(b, "f.json")
		checkDecl(t, err)
		if err == nil && (jc.NAttempts < 1 || len(jc.Agents) == 0) {
			t.Fatalf("job config without attempts or agents: %+v", jc)
		}
		tc, err := DecodeTrialConfig(b, "f.json")
		checkDecl(t, err)
		if err == nil && (tc.TrialName == "" || tc.Agent.Name == "") {
			t.Fatalf("trial config without its name or agent: %+v", tc)
		}
	})
}

func FuzzDecodeJobResult(f *testing.F) {
	jobSeeds(f, "result.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := DecodeJobResult(b, "f.json")
		checkDecl(t, err)
	})
}
