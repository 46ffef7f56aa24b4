package attest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/snapshot"
)

// BuilderEvalRun is the SLSA builder ID of `tpctl eval run`.
const BuilderEvalRun = "https://tuneplane.dev/tpctl/eval-run"

// ErrNotEvalRun means a snapshot was not produced by `tpctl eval run`
// (its plan has no settings.execution), so it has no run to attest.
var ErrNotEvalRun = errors.New("the snapshot was not produced by 'tpctl eval run' (its plan.json has no settings.execution); attest it with 'tpctl attest' instead")

// Provenance is SLSA Provenance v1 (https://slsa.dev/provenance/v1) of an
// evaluation round. Every field is derived from the verified snapshot, so
// `attest verify` re-derives it; no timestamps, so it is deterministic.
type Provenance struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

// BuildDefinition says what ran: the eval plan as tpctl ran it (no model
// endpoint, environment variable names but never values) and what it
// depended on.
type BuildDefinition struct {
	BuildType            string               `json:"buildType"`
	ExternalParameters   ExternalParameters   `json:"externalParameters"`
	InternalParameters   map[string]any       `json:"internalParameters"`
	ResolvedDependencies []ResourceDescriptor `json:"resolvedDependencies"`
}

// ExternalParameters is the eval plan that was run, as the snapshot's
// plan.json normalizes it: the trial list is given by its count and the
// cohort digest.
type ExternalParameters struct {
	Name         string          `json:"name"`
	Split        string          `json:"split"`
	Trainable    bool            `json:"trainable"`
	Checkpoint   json.RawMessage `json:"checkpoint"`
	Protocol     json.RawMessage `json:"protocol"`
	Settings     json.RawMessage `json:"settings"`
	Trials       int             `json:"trials"`
	CohortDigest string          `json:"cohort_digest"`
}

// ResourceDescriptor is a SLSA resolved dependency.
type ResourceDescriptor struct {
	Name        string            `json:"name"`
	Digest      map[string]string `json:"digest"`
	Annotations map[string]any    `json:"annotations,omitempty"`
}

// RunDetails says who ran it; the invocation is the round.
type RunDetails struct {
	Builder  Builder  `json:"builder"`
	Metadata Metadata `json:"metadata"`
}

// Builder is the tpctl build that ran the evaluation.
type Builder struct {
	ID      string            `json:"id"`
	Version map[string]string `json:"version"`
}

// Metadata carries the round ID as SLSA's invocation ID.
type Metadata struct {
	InvocationID string `json:"invocationId"`
}

// provenance derives the predicate from a verified snapshot.
func (v *verified) provenance(producer Producer) (*Provenance, error) {
	if v.snap == nil {
		return nil, errors.New("the snapshot failed verification")
	}
	planJSON := v.snap.PlanJSON()
	// plan.json has the external parameters' members, but the trials
	// themselves where the predicate has their count (the shallower
	// Trials wins in encoding/json).
	var plan struct {
		ExternalParameters
		Trials []json.RawMessage `json:"trials"`
	}
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		return nil, fmt.Errorf("%s: %w", snapshot.PlanFile, err)
	}
	var settings map[string]json.RawMessage
	if err := json.Unmarshal(plan.Settings, &settings); err != nil || settings["execution"] == nil {
		return nil, ErrNotEvalRun
	}
	// Task digests: the Harbor task checksum each trial's result.json
	// recorded, one per task (the first recorded; compare and verify
	// look at every trial's).
	tasks := map[string]string{}
	for o, err := range v.snap.Observations() {
		if err != nil {
			return nil, err
		}
		if c := o.Evidence.TaskChecksum; c != nil && tasks[o.Task] == "" {
			tasks[o.Task] = *c
		}
	}
	var err error
	deps := []ResourceDescriptor{{
		Name:        "harbor",
		Digest:      map[string]string{"gitCommit": v.m.Source.Revision},
		Annotations: map[string]any{"format": v.m.Source.Format, "format_verified": v.m.Source.FormatVerified},
	}}
	for _, task := range slices.Sorted(maps.Keys(tasks)) {
		deps = append(deps, ResourceDescriptor{Name: "task:" + task, Digest: map[string]string{"sha256": tasks[task]}})
	}
	canon := func(b json.RawMessage) (json.RawMessage, error) {
		if len(b) == 0 {
			return json.RawMessage("null"), nil
		}
		return jcs.Transform(b)
	}
	ext := ExternalParameters{Name: plan.Name, Split: plan.Split, Trainable: plan.Trainable, Trials: len(plan.Trials), CohortDigest: v.m.Protocol.CohortDigest}
	for _, f := range []struct {
		dst *json.RawMessage
		src json.RawMessage
	}{{&ext.Checkpoint, plan.Checkpoint}, {&ext.Protocol, plan.Protocol}, {&ext.Settings, plan.Settings}} {
		if *f.dst, err = canon(f.src); err != nil {
			return nil, fmt.Errorf("%s: %w", snapshot.PlanFile, err)
		}
	}
	return &Provenance{
		BuildDefinition: BuildDefinition{
			BuildType:            BuildTypeEvalRun,
			ExternalParameters:   ext,
			InternalParameters:   map[string]any{"assurance": AssuranceSelfAttested, "served_as_caveat": ServedAsCaveat},
			ResolvedDependencies: deps,
		},
		RunDetails: RunDetails{
			Builder:  Builder{ID: BuilderEvalRun, Version: map[string]string{"tpctl": producer.Version, "revision": producer.Revision}},
			Metadata: Metadata{InvocationID: v.m.RoundID},
		},
	}, nil
}

// ProvenanceStatement returns the SLSA provenance Statement of a verified
// snapshot written by `tpctl eval run`: subjects snapshot.json and the
// round ID. Errors: *snapshot.VerifyError, ErrNotEvalRun, or a folder that is
// no snapshot.
func ProvenanceStatement(dir string, producer Producer) (*Statement, error) {
	return statementOf(dir, func(v *verified) (*Statement, error) { return v.provenanceStatement(producer) })
}

func (v *verified) provenanceStatement(producer Producer) (*Statement, error) {
	p, err := v.provenance(producer)
	if err != nil {
		return nil, err
	}
	return v.statementAbout(PredicateProvenance, p)
}

func checkProvenance(rep *Report, st *Statement, v *verified) {
	if v.snap == nil {
		return // the snapshot's problems are named; nothing verified to derive from
	}
	if !hasSubject(st, roundSubject(v.m.RoundID)) {
		rep.add(ProblemSubject, "the attestation has no subject for round %s", v.m.RoundID)
	}
	var signed Provenance
	if err := json.Unmarshal(st.Predicate, &signed); err != nil {
		rep.add(ProblemStatement, "predicate: %v", err)
		return
	}
	if signed.BuildDefinition.BuildType != BuildTypeEvalRun {
		rep.add(ProblemPredicateType, "buildType is %q, not %q", signed.BuildDefinition.BuildType, BuildTypeEvalRun)
		return
	}
	// The builder's version is what the signer says it ran.
	bv := signed.RunDetails.Builder.Version
	producer := Producer{Name: "tpctl", Version: bv["tpctl"], Revision: bv["revision"]}
	want, err := v.provenanceStatement(producer)
	if err != nil {
		rep.add(ProblemPredicate, "cannot derive the provenance from %q: %v", v.dir, err)
		return
	}
	diffPredicate(rep, st.Predicate, want.Predicate)
}
