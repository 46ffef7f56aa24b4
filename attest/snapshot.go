package attest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/snapshot"
)

// Assurance levels: how far a verifier can trust who signed. A local key
// proves only that its holder signed; nothing says who holds it.
const AssuranceSelfAttested = "self_attested"

// ServedAsCaveat is carried in every predicate beside checkpoint.served_as.
const ServedAsCaveat = "served_as is the routing name the model was served under; it proves nothing about the weights that were loaded"

// Producer identifies the tpctl build that signed.
type Producer struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Revision string `json:"revision"`
}

// verified is a snapshot read through snapshot.Open, or, when it failed
// verification, its snapshot.json read only to name what differs.
type verified struct {
	dir      string
	manifest []byte // snapshot.json as verified (or as found, with problems)
	sha256   string // of manifest
	m        *snapshot.Manifest
	problems []snapshot.Problem
	// snap is the verified snapshot; nil when problems is not empty.
	snap *snapshot.Snapshot
}

// readVerified opens dir with snapshot.Open, which verifies it fully and
// hands out the bytes it verified. A snapshot that fails verification is
// returned with its problems, not an error: attest refuses it, attest
// verify names them. Errors are for a folder that is no snapshot. Close
// the result.
func readVerified(dir string) (*verified, error) {
	s, err := snapshot.Open(dir)
	if err == nil {
		return &verified{dir: dir, manifest: s.ManifestJSON(), sha256: digest.Bytes(s.ManifestJSON()).String(), m: s.Manifest(), snap: s}, nil
	}
	var ve *snapshot.VerifyError
	if !errors.As(err, &ve) {
		return nil, err
	}
	raw, err := safefs.ReadFileCapped(filepath.Join(dir, snapshot.ManifestFile), snapshot.MaxManifestSize)
	if err != nil {
		return nil, &snapshot.NotSnapshotError{Dir: dir, Err: err}
	}
	m, err := snapshot.DecodeManifest(raw)
	if err != nil {
		return nil, &snapshot.NotSnapshotError{Dir: dir, Err: err}
	}
	return &verified{dir: dir, manifest: raw, sha256: digest.Bytes(raw).String(), m: m, problems: ve.Problems}, nil
}

// Close releases the verified snapshot.
func (v *verified) Close() {
	if v.snap != nil {
		v.snap.Close()
	}
}

// SnapshotPredicate is the predicate of PredicateSnapshot. The rate and
// statistics members are copied as the manifest holds them, so the
// predicate says exactly what snapshot.json says.
type SnapshotPredicate struct {
	RoundID      string           `json:"round_id"`
	Name         string           `json:"name"`
	Format       string           `json:"format"`
	RoundFormat  string           `json:"round_format"`
	DigestRules  string           `json:"digest_rules"`
	OutcomeRules string           `json:"outcome_rules"`
	Split        string           `json:"split"`
	Protocol     ProtocolDigests  `json:"protocol"`
	Checkpoint   CheckpointClaim  `json:"checkpoint"`
	Harbor       HarborSource     `json:"harbor"`
	Counts       json.RawMessage  `json:"counts"`
	Rates        json.RawMessage  `json:"rates"`
	Statistics   json.RawMessage  `json:"statistics"`
	Label        string           `json:"label"`
	Transcripts  TranscriptsClaim `json:"transcripts"`
	Producer     Producer         `json:"producer"`
	Assurance    string           `json:"assurance"`
}

// ProtocolDigests are the four digests two rounds must share.
type ProtocolDigests struct {
	Dataset  string `json:"dataset_digest"`
	Cohort   string `json:"cohort_digest"`
	Verifier string `json:"verifier_digest"`
	Settings string `json:"settings_digest"`
}

// CheckpointClaim is the checkpoint with the caveat on served_as.
type CheckpointClaim struct {
	Ref            string `json:"ref"`
	ServedAs       string `json:"served_as"`
	ServedAsCaveat string `json:"served_as_caveat"`
}

// HarborSource is the native format the round was imported from.
type HarborSource struct {
	Format         string `json:"format"`
	Revision       string `json:"revision"`
	FormatVerified bool   `json:"format_verified"`
}

// TranscriptsClaim counts the exported transcripts and names the
// redactors run over them.
type TranscriptsClaim struct {
	Count     int      `json:"count"`
	Truncated int      `json:"truncated"`
	Redactors []string `json:"redactors"`
}

// rateMembers are the manifest members copied into predicate.rates.
var rateMembers = []string{"success_rate", "success_rate_ci95", "coverage", "coverage_ci95"}

// snapshotPredicate builds the predicate from verified snapshot.json.
func snapshotPredicate(manifest []byte, m *snapshot.Manifest, producer Producer) (*SnapshotPredicate, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(manifest, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", snapshot.ManifestFile, err)
	}
	member := func(name string) (json.RawMessage, error) {
		v, ok := raw[name]
		if !ok {
			return json.RawMessage("null"), nil
		}
		c, err := jcs.Transform(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", snapshot.ManifestFile, name, err)
		}
		return c, nil
	}
	rates := map[string]json.RawMessage{}
	for _, name := range rateMembers {
		v, err := member(name)
		if err != nil {
			return nil, err
		}
		rates[name] = v
	}
	ratesJSON, err := jcs.Marshal(rates)
	if err != nil {
		return nil, err
	}
	counts, err := member("counts")
	if err != nil {
		return nil, err
	}
	stats, err := member("statistics")
	if err != nil {
		return nil, err
	}
	redactors := m.Trajectories.Redactors
	if redactors == nil {
		redactors = []string{}
	}
	return &SnapshotPredicate{
		RoundID:      m.RoundID,
		Name:         m.Name,
		Format:       m.Format,
		RoundFormat:  snapshot.RoundFormat,
		DigestRules:  m.Protocol.DigestRules,
		OutcomeRules: m.OutcomeRules,
		Split:        m.Protocol.Split,
		Protocol: ProtocolDigests{
			Dataset:  m.Protocol.DatasetDigest,
			Cohort:   m.Protocol.CohortDigest,
			Verifier: m.Protocol.VerifierDigest,
			Settings: m.Protocol.SettingsDigest,
		},
		Checkpoint:  CheckpointClaim{Ref: m.Checkpoint.Ref, ServedAs: m.Checkpoint.ServedAs, ServedAsCaveat: ServedAsCaveat},
		Harbor:      HarborSource{Format: m.Source.Format, Revision: m.Source.Revision, FormatVerified: m.Source.FormatVerified},
		Counts:      counts,
		Rates:       ratesJSON,
		Statistics:  stats,
		Label:       m.Label,
		Transcripts: TranscriptsClaim{Count: m.Trajectories.Count, Truncated: m.Trajectories.Truncated, Redactors: redactors},
		Producer:    producer,
		Assurance:   AssuranceSelfAttested,
	}, nil
}

// roundSubject names the round ID as a subject: its name is the round ID,
// its sha256 the hex the round ID carries after its scheme ("native:").
func roundSubject(roundID string) Subject {
	_, hex, ok := strings.Cut(roundID, ":")
	if !ok {
		hex = roundID
	}
	return Subject{Name: roundID, Digest: map[string]string{"sha256": hex}}
}

// SnapshotStatement returns the Statement tpctl signs for a verified
// snapshot: subjects snapshot.json and the round ID, the snapshot
// predicate. A snapshot that fails verification is a *snapshot.VerifyError.
func SnapshotStatement(dir string, producer Producer) (*Statement, error) {
	return statementOf(dir, func(v *verified) (*Statement, error) { return v.statement(producer) })
}

// statementOf opens dir, refuses it when it fails verification (a
// *snapshot.VerifyError) and builds a Statement from it with build.
func statementOf(dir string, build func(*verified) (*Statement, error)) (*Statement, error) {
	v, err := readVerified(dir)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	if len(v.problems) > 0 {
		return nil, &snapshot.VerifyError{Dir: dir, Problems: v.problems}
	}
	return build(v)
}

func (v *verified) statement(producer Producer) (*Statement, error) {
	p, err := snapshotPredicate(v.manifest, v.m, producer)
	if err != nil {
		return nil, err
	}
	return v.statementAbout(PredicateSnapshot, p)
}

// statementAbout is the Statement of predicate about this snapshot: its
// subjects are snapshot.json and the round ID.
func (v *verified) statementAbout(predicateType string, predicate any) (*Statement, error) {
	pj, err := jcs.Marshal(predicate)
	if err != nil {
		return nil, err
	}
	return &Statement{
		Type: StatementType,
		Subject: []Subject{
			{Name: snapshot.ManifestFile, Digest: map[string]string{"sha256": v.sha256}},
			roundSubject(v.m.RoundID),
		},
		PredicateType: predicateType,
		Predicate:     pj,
	}, nil
}

// SnapshotPredicateJSON is the canonical predicate alone, for handing to
// another signer (GitHub's actions/attest with predicate-type
// PredicateSnapshot and subject-path snapshot.json).
func SnapshotPredicateJSON(dir string, producer Producer) ([]byte, error) {
	st, err := SnapshotStatement(dir, producer)
	if err != nil {
		return nil, err
	}
	return st.Predicate, nil
}
