package attest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/snapshot"
)

// Subject names of a comparison's two snapshot.json files.
const (
	SubjectBase      = "base/" + snapshot.ManifestFile
	SubjectCandidate = "candidate/" + snapshot.ManifestFile
)

// comparisonPredicate is the predicate of PredicateComparison: the
// comparison's JSON (docs/compare.md) without the two folder paths, which
// are the signer's machine's, plus producer and assurance.
func comparisonPredicate(r *compare.Result, producer Producer) (json.RawMessage, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return nil, err
	}
	for _, side := range []string{"base", "candidate"} {
		var s map[string]json.RawMessage
		if err := json.Unmarshal(members[side], &s); err != nil {
			return nil, err
		}
		delete(s, "dir")
		if members[side], err = json.Marshal(s); err != nil {
			return nil, err
		}
	}
	if members["producer"], err = json.Marshal(producer); err != nil {
		return nil, err
	}
	members["assurance"], _ = json.Marshal(AssuranceSelfAttested)
	return jcs.Marshal(members)
}

// ComparisonStatement verifies two snapshots, compares them and returns
// the Statement tpctl signs: subjects both snapshot.json files (the bytes
// that were verified and compared), the comparison as predicate, whether
// or not the rounds are comparable. Errors are those of compare.Rounds.
func ComparisonStatement(ctx context.Context, baseDir, candDir string, producer Producer) (*Statement, *compare.Result, error) {
	base, cand, err := compare.Open(ctx, baseDir, candDir)
	if err != nil {
		return nil, nil, err
	}
	defer base.Close()
	defer cand.Close()
	r, err := compare.Snapshots(ctx, base, cand)
	if err != nil {
		return nil, nil, err
	}
	sha := func(s *snapshot.Snapshot) string { return digest.Bytes(s.ManifestJSON()).String() }
	st, err := comparisonStatement(r, sha(base), sha(cand), producer)
	if err != nil {
		return nil, nil, err
	}
	return st, r, nil
}

func comparisonStatement(r *compare.Result, baseSHA, candSHA string, producer Producer) (*Statement, error) {
	p, err := comparisonPredicate(r, producer)
	if err != nil {
		return nil, fmt.Errorf("comparison predicate: %w", err)
	}
	return &Statement{
		Type: StatementType,
		Subject: []Subject{
			{Name: SubjectBase, Digest: map[string]string{"sha256": baseSHA}},
			{Name: SubjectCandidate, Digest: map[string]string{"sha256": candSHA}},
		},
		PredicateType: PredicateComparison,
		Predicate:     p,
	}, nil
}

// subjectDigest returns the sha256 of the subject named name, if any.
func (s *Statement) subjectDigest(name string) (string, bool) {
	for _, sub := range s.Subject {
		if sub.Name == name {
			d, ok := sub.Digest["sha256"]
			return d, ok
		}
	}
	return "", false
}

// equalJSON reports whether two JSON texts are the same value.
func equalJSON(a, b []byte) bool {
	ca, err1 := jcs.Transform(a)
	cb, err2 := jcs.Transform(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}
