package attest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/internal/safefs"
)

var update = flag.Bool("update", false, "rewrite the golden envelopes under testdata/golden")

func signSnapshot(t *testing.T, dir, key string) []byte {
	t.Helper()
	st, err := SnapshotStatement(dir, testProducer)
	if err != nil {
		t.Fatal(err)
	}
	line, err := SignStatement(st, mustPrivate(t, key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// independentCheck verifies an envelope line without this package's
// code: encoding/json, base64, a PAE spelled out from the DSSE spec, the
// public key parsed by crypto/x509 and checked by crypto/ed25519 or
// crypto/ecdsa. It returns the decoded Statement.
func independentCheck(t *testing.T, line []byte, pubPEM string) map[string]any {
	t.Helper()
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
		Signatures  []struct {
			KeyID string `json:"keyid"`
			Sig   string `json:"sig"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		t.Fatal(err)
	}
	if env.PayloadType != "application/vnd.in-toto+json" {
		t.Fatalf("payloadType %q", env.PayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Signatures) != 1 {
		t.Fatalf("%d signatures", len(env.Signatures))
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		t.Fatal(err)
	}
	pae := fmt.Appendf(nil, "DSSEv1 %d %s %d %s", len(env.PayloadType), env.PayloadType, len(payload), payload)
	block, _ := pem.Decode([]byte(pubPEM))
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	spki := sha256.Sum256(block.Bytes)
	if env.Signatures[0].KeyID != hex.EncodeToString(spki[:]) {
		t.Errorf("keyid %s is not the SHA-256 of the SPKI", env.Signatures[0].KeyID)
	}
	switch p := pub.(type) {
	case ed25519.PublicKey:
		if !ed25519.Verify(p, pae, sig) {
			t.Fatal("crypto/ed25519 rejects the signature over the PAE")
		}
	case *ecdsa.PublicKey:
		h := sha256.Sum256(pae)
		if !ecdsa.VerifyASN1(p, h[:], sig) {
			t.Fatal("crypto/ecdsa rejects the signature over the PAE")
		}
	default:
		t.Fatalf("key %T", pub)
	}
	var st map[string]any
	if err := json.Unmarshal(payload, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestEnvelopeIndependently(t *testing.T) {
	manifest := mustRead(t, "testdata/round/snapshot.json")
	sum := sha256.Sum256(manifest)
	var m struct {
		RoundID string `json:"round_id"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ed25519", "p256"} {
		t.Run(k, func(t *testing.T) {
			line := signSnapshot(t, "testdata/round", k+".key")
			st := independentCheck(t, line, string(mustRead(t, "testdata/keys/"+k+".pub")))
			if st["_type"] != "https://in-toto.io/Statement/v1" {
				t.Errorf("_type %v", st["_type"])
			}
			if st["predicateType"] != PredicateSnapshot {
				t.Errorf("predicateType %v", st["predicateType"])
			}
			subj := st["subject"].([]any)
			first := subj[0].(map[string]any)
			if first["name"] != "snapshot.json" || first["digest"].(map[string]any)["sha256"] != hex.EncodeToString(sum[:]) {
				t.Errorf("subject[0] = %v, want snapshot.json with sha256 %x", first, sum)
			}
			if pred := st["predicate"].(map[string]any); pred["round_id"] != m.RoundID || pred["assurance"] != "self_attested" {
				t.Errorf("predicate round_id %v assurance %v", pred["round_id"], pred["assurance"])
			}
			if again := signSnapshot(t, "testdata/round", k+".key"); !bytes.Equal(again, line) {
				t.Error("signing twice gave different bytes")
			}
		})
	}
}

// The golden envelopes were checked by openssl, Python's cryptography
// and cosign (testdata/golden/README.md); tpctl must keep producing
// exactly them from the same snapshot and keys.
func TestGoldenEnvelopes(t *testing.T) {
	for _, k := range []string{"ed25519", "p256"} {
		t.Run(k, func(t *testing.T) {
			line := append(signSnapshot(t, "testdata/round", k+".key"), '\n')
			path := filepath.Join("testdata", "golden", "round."+k+BundleSuffix)
			if *update {
				if err := os.WriteFile(path, line, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want := mustRead(t, path); !bytes.Equal(line, want) {
				t.Fatalf("envelope differs from %s (run go test -update after checking it with the recipe in testdata/golden/README.md):\n got %s\nwant %s", path, line, want)
			}
		})
	}
}

// Python's cryptography signed the same PAE with ECDSA P-256 and
// deterministic (RFC 6979) nonces; Go's nil-random signing must agree to
// the byte, or "same snapshot, same bytes" would rest on an accident.
func TestECDSAIsRFC6979(t *testing.T) {
	env, err := ParseEnvelope(bytes.TrimSpace(mustRead(t, "testdata/golden/round.p256"+BundleSuffix)))
	if err != nil {
		t.Fatal(err)
	}
	want, err := hex.DecodeString(strings.TrimSpace(string(mustRead(t, "testdata/golden/round.p256.python-rfc6979.sig.hex"))))
	if err != nil {
		t.Fatal(err)
	}
	got, err := mustPrivate(t, "p256.key").sign(PAE(env.PayloadType, env.Payload))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("signature %x, Python RFC 6979 gives %x", got, want)
	}
}

func TestPAE(t *testing.T) {
	// The example of the DSSE protocol document.
	got := PAE("http://example.com/HelloWorld", []byte("hello world"))
	if want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"; string(got) != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
	if got := PAE("", nil); string(got) != "DSSEv1 0  0 " {
		t.Fatalf("empty PAE = %q", got)
	}
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	good := signSnapshot(t, "testdata/round", "ed25519.key")
	type tc struct {
		name  string
		setup func(t *testing.T, dir, bundle string)
		key   string
		codes []string
	}
	write := func(t *testing.T, path string, b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit := func(file, old, new string) func(t *testing.T, dir, bundle string) {
		return func(t *testing.T, dir, bundle string) {
			p := filepath.Join(dir, file)
			b := mustRead(t, p)
			if !bytes.Contains(b, []byte(old)) {
				t.Fatalf("%s has no %q", file, old)
			}
			write(t, p, bytes.Replace(b, []byte(old), []byte(new), 1))
		}
	}
	for _, c := range []tc{
		{name: "sound", key: "ed25519.pub"},
		{name: "sound with the private key file", key: "ed25519.key"},
		{name: "different key", key: "p256.pub", codes: []string{ProblemNotSigned}},
		{name: "observation tampered", key: "ed25519.pub",
			setup: edit("observations.jsonl", `"status":"failure"`, `"status":"success"`),
			codes: []string{ProblemSnapshot}},
		{name: "manifest tampered", key: "ed25519.pub",
			setup: edit("snapshot.json", `"name": "compare-test"`, `"name": "compare-tess"`),
			codes: []string{ProblemSubject, ProblemSnapshot, ProblemPredicate}},
		{name: "payload tampered", key: "ed25519.pub",
			setup: func(t *testing.T, dir, bundle string) {
				env, _ := ParseEnvelope(good)
				env.Payload = bytes.Replace(env.Payload, []byte(`"clean"`), []byte(`"dirty"`), 1)
				line, _ := env.Marshal()
				write(t, bundle, append(line, '\n'))
			},
			codes: []string{ProblemNotSigned}},
		{name: "wrong payload type, signed", key: "ed25519.pub",
			setup: func(t *testing.T, dir, bundle string) {
				env, _ := ParseEnvelope(good)
				env2, err := Sign("application/json", env.Payload, mustPrivate(t, "ed25519.key"))
				if err != nil {
					t.Fatal(err)
				}
				line, _ := env2.Marshal()
				write(t, bundle, append(line, '\n'))
			},
			codes: []string{ProblemPayloadType}},
		{name: "signed garbage", key: "ed25519.pub",
			setup: func(t *testing.T, dir, bundle string) {
				env, _ := Sign(PayloadType, []byte("not json"), mustPrivate(t, "ed25519.key"))
				line, _ := env.Marshal()
				write(t, bundle, append(line, '\n'))
			},
			codes: []string{ProblemStatement}},
		{name: "other key's line first", key: "ed25519.pub",
			setup: func(t *testing.T, dir, bundle string) {
				other := signSnapshot(t, dir, "p256.key")
				write(t, bundle, slices.Concat(other, []byte("\n"), good, []byte("\n")))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, "testdata/round")
			bundle := DefaultBundlePath(dir)
			write(t, bundle, append(slices.Clone(good), '\n'))
			if c.setup != nil {
				c.setup(t, dir, bundle)
			}
			rep, err := Verify(ctx, []string{dir}, bundle, mustPublic(t, c.key))
			if err != nil {
				t.Fatal(err)
			}
			var codes []string
			for _, p := range rep.Problems {
				if !slices.Contains(codes, p.Code) {
					codes = append(codes, p.Code)
				}
			}
			if !slices.Equal(codes, c.codes) || rep.OK != (len(c.codes) == 0) {
				t.Fatalf("ok %v, problem codes %v, want %v:\n%+v", rep.OK, codes, c.codes, rep.Problems)
			}
		})
	}
}

// A tampered snapshot.json is named member by member.
func TestVerifyNamesPredicateMembers(t *testing.T) {
	dir := copyDir(t, "testdata/round")
	bundle := DefaultBundlePath(dir)
	if _, err := AddToBundle(bundle, signSnapshot(t, dir, "ed25519.key"), dir); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "snapshot.json")
	b := bytes.Replace(mustRead(t, p), []byte(`"label": "clean"`), []byte(`"label": "degraded"`), 1)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(context.Background(), []string{dir}, bundle, mustPublic(t, "ed25519.pub"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range rep.Problems {
		if p.Code == ProblemPredicate && strings.HasPrefix(p.Message, `predicate/label: the attestation says "clean", the snapshot says "degraded"`) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no predicate/label problem in %+v", rep.Problems)
	}
}

func TestComparison(t *testing.T) {
	ctx := context.Background()
	st, res, err := ComparisonStatement(ctx, "testdata/round", "testdata/round-cand", testProducer)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Comparable {
		t.Fatalf("test rounds not comparable: %+v", res.Reasons)
	}
	if bytes.Contains(st.Predicate, []byte("testdata")) {
		t.Fatalf("predicate carries a folder path: %s", st.Predicate)
	}
	line, err := SignStatement(st, mustPrivate(t, "p256.key"), nil)
	if err != nil {
		t.Fatal(err)
	}
	stmt := independentCheck(t, line, string(mustRead(t, "testdata/keys/p256.pub")))
	pred := stmt["predicate"].(map[string]any)
	if pred["comparable"] != true || pred["delta"] == nil || pred["paired"] == nil {
		t.Fatalf("predicate %v", pred)
	}
	bundle := filepath.Join(t.TempDir(), "cmp"+BundleSuffix)
	if _, err := AddToBundle(bundle, line, "testdata/round", "testdata/round-cand"); err != nil {
		t.Fatal(err)
	}
	pub := mustPublic(t, "p256.pub")
	rep, err := Verify(ctx, []string{"testdata/round", "testdata/round-cand"}, bundle, pub)
	if err != nil || !rep.OK {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	// Swapped sides: the subjects no longer match.
	rep, err = Verify(ctx, []string{"testdata/round-cand", "testdata/round"}, bundle, pub)
	if err != nil || rep.OK || rep.Problems[0].Code != ProblemSubject {
		t.Fatalf("swapped: %v %+v", err, rep)
	}
	// One snapshot for a comparison attestation: wrong kind.
	rep, err = Verify(ctx, []string{"testdata/round"}, bundle, pub)
	if err != nil || rep.OK || rep.Problems[0].Code != ProblemPredicateType {
		t.Fatalf("one snapshot: %v %+v", err, rep)
	}
}

func TestAddToBundle(t *testing.T) {
	dir := copyDir(t, "testdata/round")
	bundle := DefaultBundlePath(dir)
	ed := signSnapshot(t, dir, "ed25519.key")
	p := signSnapshot(t, dir, "p256.key")
	steps := []struct {
		line    []byte
		changed bool
		lines   int
	}{{ed, true, 1}, {ed, false, 1}, {p, true, 2}, {ed, false, 2}}
	for i, s := range steps {
		changed, err := AddToBundle(bundle, s.line, dir)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := ReadBundle(bundle)
		if err != nil {
			t.Fatal(err)
		}
		if changed != s.changed || len(lines) != s.lines {
			t.Fatalf("step %d: changed %v lines %d, want %v %d", i, changed, len(lines), s.changed, s.lines)
		}
	}
	for _, inside := range []string{filepath.Join(dir, "x"+BundleSuffix), filepath.Join(dir, "trajectories", "..", "y.jsonl"), dir} {
		if _, err := AddToBundle(inside, ed, dir); err == nil {
			t.Errorf("%s: written inside the snapshot", inside)
		}
	}
	// Through a symbolic link to the snapshot's folder.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if _, err := AddToBundle(filepath.Join(link, "z"+BundleSuffix), ed, dir); err == nil {
		t.Error("written inside the snapshot through a link")
	}
	// A file that is not a bundle is not appended to.
	notBundle := filepath.Join(t.TempDir(), "notes.jsonl")
	if err := os.WriteFile(notBundle, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AddToBundle(notBundle, ed, dir); err == nil {
		t.Error("appended to a file that is not a bundle")
	}
	if b := mustRead(t, notBundle); string(b) != "hello\n" {
		t.Errorf("notes.jsonl changed: %q", b)
	}
}

// TestAddToBundleConcurrently: attests running at once into one bundle
// each add their line; none replaces the file under another (each reads,
// appends and renames under safefs.Lock), and no lock file is left.
func TestAddToBundleConcurrently(t *testing.T) {
	dir := copyDir(t, "testdata/round")
	bundle := filepath.Join(t.TempDir(), "shared"+BundleSuffix)
	key := mustPrivate(t, "ed25519.key")
	const n = 24
	want := make([][]byte, n)
	for i := range want {
		// Another producer version is another predicate, so another line.
		st, err := SnapshotStatement(dir, Producer{Name: "tpctl", Version: fmt.Sprintf("v0.0.%d", i), Revision: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if want[i], err = SignStatement(st, key, nil); err != nil {
			t.Fatal(err)
		}
	}
	start := make(chan struct{})
	errs := make(chan error, n)
	for _, line := range want {
		go func() {
			<-start
			changed, err := AddToBundle(bundle, line, dir)
			if err == nil && !changed {
				err = errors.New("a new line left the bundle unchanged")
			}
			errs <- err
		}()
	}
	close(start)
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got := map[string]int{}
	for l := range bytes.Lines(mustRead(t, bundle)) {
		got[string(bytes.TrimSuffix(l, []byte("\n")))]++
	}
	for i, line := range want {
		if got[string(line)] != 1 {
			t.Errorf("line %d is in the bundle %d times, want once", i, got[string(line)])
		}
	}
	if len(got) != n {
		t.Errorf("the bundle has %d distinct lines, want %d", len(got), n)
	}
	if _, err := os.Stat(bundle + safefs.LockSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the lock file is left beside the bundle: %v", err)
	}
}

func TestProvenance(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "run")
	spec, err := comparetest.ParseArgs([]string{
		`settings={"execution":{"rules":"tpctl-eval-settings/1","harbor_revision":"5f5618b8f5419dde63f2df6d86706782e597e8a3","agent":{"name":"oracle","kwargs":{},"env_names":["OPENAI_API_KEY"]}}}`,
		"checksum=c", "a#0=success", "a#1=failure", "b#0=success",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := comparetest.Build(dir, spec); err != nil {
		t.Fatal(err)
	}
	st, err := ProvenanceStatement(dir, testProducer)
	if err != nil {
		t.Fatal(err)
	}
	line, err := SignStatement(st, mustPrivate(t, "ed25519.key"), nil)
	if err != nil {
		t.Fatal(err)
	}
	stmt := independentCheck(t, line, string(mustRead(t, "testdata/keys/ed25519.pub")))
	if stmt["predicateType"] != "https://slsa.dev/provenance/v1" {
		t.Fatalf("predicateType %v", stmt["predicateType"])
	}
	var prov Provenance
	b, _ := json.Marshal(stmt["predicate"])
	if err := json.Unmarshal(b, &prov); err != nil {
		t.Fatal(err)
	}
	deps := prov.BuildDefinition.ResolvedDependencies
	if len(deps) != 3 || deps[0].Name != "harbor" || deps[1].Name != "task:a" || deps[1].Digest["sha256"] != strings.Repeat("c", 64) {
		t.Fatalf("resolvedDependencies %+v", deps)
	}
	if prov.BuildDefinition.ExternalParameters.Trials != 3 || !bytes.Contains(prov.BuildDefinition.ExternalParameters.Settings, []byte(`"env_names":["OPENAI_API_KEY"]`)) {
		t.Fatalf("externalParameters %+v", prov.BuildDefinition.ExternalParameters)
	}
	bundle := DefaultBundlePath(dir)
	if _, err := AddToBundle(bundle, line, dir); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(ctx, []string{dir}, bundle, mustPublic(t, "ed25519.pub"))
	if err != nil || !rep.OK || rep.PredicateType != PredicateProvenance {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	// An imported round has no run to attest.
	if _, err := ProvenanceStatement("testdata/round", testProducer); !errors.Is(err, ErrNotEvalRun) {
		t.Fatalf("imported round: err = %v", err)
	}
}

// The recorded runs of cosign, openssl and Python cryptography
// (testdata/golden/*-verify.txt) verified these exact files: the golden
// envelopes tpctl still writes (TestGoldenEnvelopes) over the snapshot in
// testdata/round. A changed envelope needs the references run again.
func TestRecordedReferenceVerifications(t *testing.T) {
	for _, tc := range []struct {
		record string
		want   []string // lines the record must hold
	}{
		{"cosign-verify.txt", []string{"Verified OK", "exit status 0", "Error: accepted signatures do not match threshold, Found: 0, Expected 1", "Error: no matching subject digest found"}},
		{"openssl-python-verify.txt", []string{"Signature Verified Successfully", "Verified OK", "python rfc6979 signature equals tpctl's: True", "ed25519 keyid matches sha256(SPKI): True", "p256 keyid matches sha256(SPKI): True", "subject[0]: snapshot.json True"}},
	} {
		t.Run(tc.record, func(t *testing.T) {
			rec := string(mustRead(t, filepath.Join("testdata", "golden", tc.record)))
			lines := strings.Split(rec, "\n")
			for _, w := range tc.want {
				if !slices.Contains(lines, w) {
					t.Errorf("the record has no line %q", w)
				}
			}
			if tc.record == "cosign-verify.txt" {
				// Both golden envelopes verified: the first two runs.
				runs := strings.Split(rec, "$ cosign ")
				if len(runs) < 3 || !strings.Contains(runs[1], "exit status 0") || !strings.Contains(runs[2], "exit status 0") {
					t.Error("the record does not show both golden envelopes verified")
				}
			}
			n := 0
			for _, l := range lines {
				sum, name, ok := strings.Cut(strings.TrimPrefix(l, "# sha256 "), "  ")
				if !ok || !strings.HasPrefix(l, "# sha256 ") {
					continue
				}
				n++
				got := sha256.Sum256(mustRead(t, filepath.Join("testdata", name)))
				if hex.EncodeToString(got[:]) != sum {
					t.Errorf("%s changed since the reference run; run it again (testdata/golden/README.md)", name)
				}
			}
			if n != 3 {
				t.Errorf("%d recorded file digests, want 3", n)
			}
		})
	}
}
