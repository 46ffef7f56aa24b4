package attest

import (
	"context"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/redact"
)

// Written says what an attest command wrote.
type Written struct {
	Attestation   string    `json:"attestation"`
	KeyID         string    `json:"keyid"`
	PredicateType string    `json:"predicate_type"`
	Subjects      []Subject `json:"subjects"`
	// Changed is false when the bundle already held this exact envelope.
	Changed bool `json:"changed"`
}

// signInto signs st and adds it to the bundle at out (beside dirs).
func signInto(st *Statement, key *PrivateKey, gate *redact.Scanner, out string, dirs ...string) (*Written, error) {
	line, err := SignStatement(st, key, gate)
	if err != nil {
		return nil, err
	}
	changed, err := AddToBundle(out, line, dirs...)
	if err != nil {
		return nil, err
	}
	return &Written{Attestation: out, KeyID: key.Public.KeyID, PredicateType: st.PredicateType, Subjects: st.Subject, Changed: changed}, nil
}

// Snapshot attests a verified snapshot into the bundle out (default
// DefaultBundlePath(dir)). gate is the invocation's registry of secrets
// (SignStatement).
func Snapshot(dir string, key *PrivateKey, gate *redact.Scanner, out string, producer Producer) (*Written, error) {
	if out == "" {
		out = DefaultBundlePath(dir)
	}
	if err := checkOutside(out, dir); err != nil {
		return nil, err
	}
	st, err := SnapshotStatement(dir, producer)
	if err != nil {
		return nil, err
	}
	return signInto(st, key, gate, out, dir)
}

// DefaultComparisonPath is the bundle of a comparison by default: beside
// the candidate, CANDIDATE.compare.intoto.jsonl.
func DefaultComparisonPath(candDir string) string {
	return DefaultBundlePath(candDir + ".compare")
}

// Comparison compares two snapshots and attests the comparison into out
// (default DefaultComparisonPath(candDir)). It returns the comparison
// too, comparable or not.
func Comparison(ctx context.Context, baseDir, candDir string, key *PrivateKey, gate *redact.Scanner, out string, producer Producer) (*Written, *compare.Result, error) {
	if out == "" {
		out = DefaultComparisonPath(candDir)
	}
	for _, d := range []string{baseDir, candDir} {
		if err := checkOutside(out, d); err != nil {
			return nil, nil, err
		}
	}
	st, res, err := ComparisonStatement(ctx, baseDir, candDir, producer)
	if err != nil {
		return nil, nil, err
	}
	w, err := signInto(st, key, gate, out, baseDir, candDir)
	return w, res, err
}

// ProvenanceOf attests how `tpctl eval run` produced a snapshot (SLSA
// provenance) into out (default DefaultBundlePath(dir)).
func ProvenanceOf(dir string, key *PrivateKey, gate *redact.Scanner, out string, producer Producer) (*Written, error) {
	if out == "" {
		out = DefaultBundlePath(dir)
	}
	if err := checkOutside(out, dir); err != nil {
		return nil, err
	}
	st, err := ProvenanceStatement(dir, producer)
	if err != nil {
		return nil, err
	}
	return signInto(st, key, gate, out, dir)
}

// Summary is the one line a report shows for a sound attestation.
func (r *Report) Summary() string {
	return "signed by keyid " + r.KeyID + ", verified"
}
