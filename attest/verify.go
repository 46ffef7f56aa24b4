package attest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/tuneplane/tpctl/redact"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/snapshot"
)

// SignStatement signs st with key and returns the envelope as one bundle
// line (compact JSON, no newline). What is signed is published: the
// payload is gated first, and a known secret of gate (the invocation's
// registry, built in cmd/tpctl; nil: the credential patterns only) in any
// field refuses it with a *redact.PayloadError naming the field by JSON
// pointer. Every signing command signs through here, so none can skip it.
func SignStatement(st *Statement, key *PrivateKey, gate *redact.Scanner) ([]byte, error) {
	payload, err := st.Payload()
	if err != nil {
		return nil, fmt.Errorf("statement: %w", err)
	}
	if gate == nil {
		gate = redact.NewScanner(nil)
	}
	if err := gate.CheckJSON("the "+st.PredicateType+" statement to sign", payload); err != nil {
		return nil, err
	}
	env, err := Sign(PayloadType, payload, key)
	if err != nil {
		return nil, err
	}
	return env.Marshal()
}

// Problem codes of a verification, each a reason for exit status 1.
const (
	ProblemNotSigned     = "not_signed_by_key"
	ProblemPayloadType   = "payload_type"
	ProblemStatement     = "statement_invalid"
	ProblemPredicateType = "predicate_type"
	ProblemSubject       = "subject_mismatch"
	ProblemSnapshot      = "snapshot_invalid"
	ProblemPredicate     = "predicate_mismatch"
)

// Problem is one reason an attestation does not hold for the snapshot in
// hand.
type Problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Report is the result of Verify; OK when Problems is empty.
type Report struct {
	OK          bool   `json:"ok"`
	Attestation string `json:"attestation"`
	// Line is the bundle line that was checked (0 when none was signed by
	// the key).
	Line          int       `json:"line"`
	KeyID         string    `json:"keyid"`
	PredicateType string    `json:"predicate_type"`
	Snapshots     []string  `json:"snapshots"`
	RoundIDs      []string  `json:"round_ids"`
	Problems      []Problem `json:"problems"`
}

func (r *Report) add(code, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Code: code, Message: fmt.Sprintf(format, args...)})
}

// maxPredicateDiffs bounds the predicate members named one by one.
const maxPredicateDiffs = 20

// Verify checks an attestation bundle against snapshots in hand: one
// snapshot for a snapshot or provenance attestation, base and candidate
// for a comparison. It checks, and names each failure of: a signature by
// key over the DSSE encoding, the payload and Statement types, a subject
// digest equal to the sha256 of each snapshot.json, the full snapshot
// verification, and that the predicate agrees with what tpctl derives from
// the snapshots now. The error is for unusable input only: an unreadable
// bundle (*BundleError) or a folder that is no snapshot.
func Verify(ctx context.Context, dirs []string, bundlePath string, key *PublicKey) (*Report, error) {
	lines, err := ReadBundle(bundlePath)
	if err != nil {
		return nil, err
	}
	rep := &Report{Attestation: bundlePath, KeyID: key.KeyID, Snapshots: slices.Clone(dirs), RoundIDs: []string{}, Problems: []Problem{}}
	vs := make([]*verified, len(dirs))
	for i, d := range dirs {
		if vs[i], err = readVerified(d); err != nil {
			return nil, err
		}
		defer vs[i].Close()
		rep.RoundIDs = append(rep.RoundIDs, vs[i].m.RoundID)
	}

	var signed []BundleLine
	var others []string
	for _, l := range lines {
		if l.Envelope.SignedBy(key) {
			signed = append(signed, l)
		} else {
			others = append(others, l.Envelope.KeyIDs()...)
		}
	}
	if len(signed) == 0 {
		rep.add(ProblemNotSigned, "no envelope in %s is signed by keyid %s (its signatures name keyid %s); check that --key is the public half of the signing key",
			bundlePath, key.KeyID, strings.Join(slices.Compact(slices.Sorted(slices.Values(others))), ", "))
		return finish(rep), nil
	}

	// Pick the envelope to check: of the signed ones about this kind of
	// subject, the first whose subjects include every snapshot.json in
	// hand, else the last (the newest line).
	wantTypes := []string{PredicateSnapshot, PredicateProvenance}
	if len(dirs) == 2 {
		wantTypes = []string{PredicateComparison}
	}
	var (
		chosen *BundleLine
		st     *Statement
		fault  []Problem
	)
	for i := range signed {
		l := &signed[i]
		s, probs := decodeSigned(l.Envelope)
		if s == nil || !slices.Contains(wantTypes, s.PredicateType) {
			if s != nil {
				probs = append(probs, Problem{ProblemPredicateType, fmt.Sprintf("line %d is a %s attestation; these %d snapshot(s) need %s", l.Line, s.PredicateType, len(dirs), strings.Join(wantTypes, " or "))})
			}
			if chosen == nil {
				fault = probs
			}
			continue
		}
		matches := true
		for _, v := range vs {
			if !s.HasDigest(v.sha256) {
				matches = false
			}
		}
		if chosen == nil || matches {
			chosen, st, fault = l, s, probs
		}
		if matches {
			break
		}
	}
	if chosen == nil {
		rep.Problems = append(rep.Problems, fault...)
		return finish(rep), nil
	}
	rep.Line, rep.PredicateType = chosen.Line, st.PredicateType
	rep.Problems = append(rep.Problems, fault...)

	for i, v := range vs {
		name := snapshot.ManifestFile
		if len(dirs) == 2 {
			name = []string{SubjectBase, SubjectCandidate}[i]
		}
		if got, ok := st.subjectDigest(name); !ok {
			rep.add(ProblemSubject, "the attestation has no subject %q", name)
		} else if got != v.sha256 {
			rep.add(ProblemSubject, "the attestation is about %s with sha256 %s; %s in %q has sha256 %s", name, got, snapshot.ManifestFile, v.dir, v.sha256)
		}
		for _, p := range v.problems {
			rep.add(ProblemSnapshot, "%s: %s: %s: %s", v.dir, p.File, p.Code, p.Message)
		}
	}
	switch st.PredicateType {
	case PredicateSnapshot:
		checkSnapshotPredicate(rep, st, vs[0])
	case PredicateProvenance:
		checkProvenance(rep, st, vs[0])
	case PredicateComparison:
		if err := checkComparison(ctx, rep, st, vs); err != nil {
			return nil, err
		}
	}
	return finish(rep), nil
}

func finish(r *Report) *Report {
	r.OK = len(r.Problems) == 0
	return r
}

// decodeSigned checks the envelope's payload type and decodes its
// Statement; a Statement that cannot be decoded is returned as nil.
func decodeSigned(e *Envelope) (*Statement, []Problem) {
	var probs []Problem
	if e.PayloadType != PayloadType {
		probs = append(probs, Problem{ProblemPayloadType, fmt.Sprintf("payloadType is %q, not %q", e.PayloadType, PayloadType)})
	}
	st, err := ParseStatement(e.Payload)
	if err != nil {
		return nil, append(probs, Problem{ProblemStatement, err.Error()})
	}
	return st, probs
}

func checkSnapshotPredicate(rep *Report, st *Statement, v *verified) {
	if !hasSubject(st, roundSubject(v.m.RoundID)) {
		rep.add(ProblemSubject, "the attestation has no subject for round %s", v.m.RoundID)
	}
	var signed struct {
		Producer Producer `json:"producer"`
	}
	if err := json.Unmarshal(st.Predicate, &signed); err != nil {
		rep.add(ProblemStatement, "predicate: %v", err)
		return
	}
	// The producer is what the signer says it ran; it cannot be derived.
	want, err := v.statement(signed.Producer)
	if err != nil {
		rep.add(ProblemPredicate, "cannot derive the predicate from %q: %v", v.dir, err)
		return
	}
	diffPredicate(rep, st.Predicate, want.Predicate)
}

func checkComparison(ctx context.Context, rep *Report, st *Statement, vs []*verified) error {
	for _, v := range vs {
		if len(v.problems) > 0 {
			// compare refuses a snapshot that fails verification; the
			// problems are named already.
			return nil
		}
	}
	var signed struct {
		Producer Producer `json:"producer"`
	}
	if err := json.Unmarshal(st.Predicate, &signed); err != nil {
		rep.add(ProblemStatement, "predicate: %v", err)
		return nil
	}
	// The snapshots verified above, not a second verification of the
	// folders.
	r, err := compare.Snapshots(ctx, vs[0].snap, vs[1].snap)
	if err != nil {
		return err
	}
	want, err := comparisonPredicate(r, signed.Producer)
	if err != nil {
		return err
	}
	diffPredicate(rep, st.Predicate, want)
	return nil
}

func hasSubject(st *Statement, want Subject) bool {
	for _, s := range st.Subject {
		if s.Name == want.Name && maps.Equal(s.Digest, want.Digest) {
			return true
		}
	}
	return false
}

// diffPredicate names every member where the signed predicate differs
// from the one derived now, by JSON pointer.
func diffPredicate(rep *Report, signed, derived []byte) {
	if equalJSON(signed, derived) {
		return
	}
	var a, b any
	if err := decodeNumbers(signed, &a); err != nil {
		rep.add(ProblemStatement, "predicate: %v", err)
		return
	}
	if err := decodeNumbers(derived, &b); err != nil {
		rep.add(ProblemPredicate, "derived predicate: %v", err)
		return
	}
	var diffs []string
	diffValues("", a, b, &diffs)
	if len(diffs) == 0 { // numbers spelled differently, same values
		return
	}
	for i, d := range diffs {
		if i == maxPredicateDiffs {
			rep.add(ProblemPredicate, "… and %d more predicate differences", len(diffs)-i)
			break
		}
		rep.add(ProblemPredicate, "%s", d)
	}
}

func decodeNumbers(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// diffValues appends "pointer: signed X, snapshot says Y" for every leaf
// (or differently shaped value) where a and b differ.
func diffValues(ptr string, a, b any, out *[]string) {
	if am, ok := a.(map[string]any); ok {
		if bm, ok := b.(map[string]any); ok {
			keys := slices.Sorted(maps.Keys(am))
			for k := range bm {
				if _, ok := am[k]; !ok {
					keys = append(keys, k)
				}
			}
			for _, k := range keys {
				av, aok := am[k]
				bv, bok := bm[k]
				p := ptr + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
				switch {
				case !aok:
					*out = append(*out, fmt.Sprintf("predicate%s: absent from the attestation, the snapshot says %s", p, show(bv)))
				case !bok:
					*out = append(*out, fmt.Sprintf("predicate%s: the attestation says %s, the snapshot has no such member", p, show(av)))
				default:
					diffValues(p, av, bv, out)
				}
			}
			return
		}
	}
	if al, ok := a.([]any); ok {
		if bl, ok := b.([]any); ok && len(al) == len(bl) {
			for i := range al {
				diffValues(ptr+"/"+strconv.Itoa(i), al[i], bl[i], out)
			}
			return
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !equalJSON(ja, jb) {
		*out = append(*out, fmt.Sprintf("predicate%s: the attestation says %s, the snapshot says %s", ptr, show(a), show(b)))
	}
}

// show is a value's JSON, cut short for a message.
func show(v any) string {
	b, _ := json.Marshal(v)
	if r := []rune(string(b)); len(r) > 120 {
		return string(r[:117]) + "…"
	}
	return string(b)
}
