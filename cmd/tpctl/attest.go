package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/attest"
	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/planlock"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/timestamp"
)

// attestOptions are the resolved inputs of tpctl attest.
type attestOptions struct {
	Dirs       []string // one snapshot, or BASE and CANDIDATE
	Key        string
	Out        string
	Provenance bool
}

// attestKeygenOptions are the resolved inputs of tpctl attest keygen.
type attestKeygenOptions struct {
	Out       string
	Algorithm string
}

// attestVerifyOptions are the resolved inputs of tpctl attest verify.
type attestVerifyOptions struct {
	Dirs        []string
	Key         string
	Attestation string
	// Lock is a plan lock to check instead of an attestation bundle.
	Lock, Timestamp, TSACert string
}

// attestPredicateOptions are the resolved inputs of tpctl attest predicate.
type attestPredicateOptions struct {
	Dir string
}

// producer is the tpctl build named in every predicate.
func producer() attest.Producer {
	v, r := toolVersion()
	return attest.Producer{Name: "tpctl", Version: v, Revision: r}
}

// newAttestCmd is tpctl attest (its verbs are added in the root's list);
// runF nil is attestRun.
func newAttestCmd(a *app, runF func(context.Context, *app, *attestOptions) error) *cobra.Command {
	if runF == nil {
		runF = attestRun
	}
	o := &attestOptions{}
	cmd := &cobra.Command{
		Use:   "attest SNAPSHOT [CANDIDATE] --key KEY",
		Short: "Sign an in-toto attestation of a snapshot or a comparison (DSSE)",
		Long: `Sign an in-toto Statement v1 about a verified snapshot, in a DSSE envelope, and
add it as a line of an in-toto bundle file beside the snapshot (never inside it:
snapshot verify refuses unlisted files). The default file is SNAPSHOT.intoto.jsonl.

Subjects are snapshot.json (its sha256) and the round ID; the predicate
(https://tuneplane.dev/attestation/snapshot/v1) carries the protocol digests,
checkpoint, Harbor revision, counts, rates and statistics, label, transcripts
and the producer, with assurance self_attested. With two snapshots, BASE and
CANDIDATE are compared (as tpctl compare does) and the comparison is attested
instead, subjects both snapshot.json files, into CANDIDATE.compare.intoto.jsonl.
--provenance signs SLSA provenance of a round written by 'tpctl eval run'.

KEY is an Ed25519 or ECDSA P-256 private key in PKCS#8 PEM, as 'tpctl attest
keygen' or 'openssl genpkey' writes it. There are no timestamps and both
schemes sign deterministically (ECDSA with RFC 6979 nonces): the same snapshot
and key give the same bytes, and attesting twice leaves the file unchanged.

Exit status: 0 written; 2 a bad key, an unusable path, or a snapshot that is
not one or fails verification. See docs/attestation.md.`,
		Example: `  tpctl attest keygen --out tpctl.key
  tpctl attest out/round-1 --key tpctl.key
  tpctl attest verify out/round-1 --key tpctl.key.pub
  tpctl attest out/round-1 out/round-2 --key tpctl.key`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Key == "" {
				return usageErr(errors.New("--key is required"), "pass --key KEY (make one with 'tpctl attest keygen --out KEY')")
			}
			if o.Provenance && len(args) == 2 {
				return usageErr(errors.New("--provenance attests one snapshot, not a comparison"))
			}
			o.Dirs = args
			return runF(cmd.Context(), a, o)
		},
	}
	cmd.Flags().StringVar(&o.Key, "key", "", "the private key to sign with (PKCS#8 PEM: Ed25519 or ECDSA P-256)")
	cmd.Flags().StringVar(&o.Out, "out", "", "the bundle file to add the envelope to (default beside the snapshot)")
	cmd.Flags().BoolVar(&o.Provenance, "provenance", false, "sign SLSA provenance of a round written by 'tpctl eval run' instead (as eval run --attest does)")
	return cmd
}

// newAttestKeygenCmd is tpctl attest keygen; runF nil is attestKeygenRun.
func newAttestKeygenCmd(a *app, runF func(context.Context, *app, *attestKeygenOptions) error) *cobra.Command {
	if runF == nil {
		runF = attestKeygenRun
	}
	o := &attestKeygenOptions{}
	cmd := &cobra.Command{
		Use:   "keygen --out KEY",
		Short: "Write a new signing key pair (KEY mode 0600, KEY.pub)",
		Long: `Write a new key pair: the PKCS#8 PEM private key at KEY (mode 0600) and its
public key (SubjectPublicKeyInfo PEM) at KEY.pub. Neither may exist. The
private key is written only there and never printed; the keyid (SHA-256 of the
public key's SubjectPublicKeyInfo) is printed.`,
		Example: "  tpctl attest keygen --out tpctl.key\n  tpctl attest keygen --out tpctl-p256.key --algorithm ecdsa-p256",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Out == "" {
				return usageErr(errors.New("--out is required"), "pass --out KEY; the public key is written to KEY.pub")
			}
			return runF(cmd.Context(), a, o)
		},
	}
	cmd.Flags().StringVar(&o.Out, "out", "", "the private key file to write (the public key goes to FILE.pub)")
	cmd.Flags().StringVar(&o.Algorithm, "algorithm", attest.AlgEd25519, "key algorithm: "+strings.Join(attest.Algorithms, " or "))
	return cmd
}

// newAttestVerifyCmd is tpctl attest verify; runF nil is attestVerifyRun.
func newAttestVerifyCmd(a *app, runF func(context.Context, *app, *attestVerifyOptions) error) *cobra.Command {
	if runF == nil {
		runF = attestVerifyRun
	}
	o := &attestVerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify SNAPSHOT [CANDIDATE] --key PUBKEY [--attestation FILE] | verify --lock LOCK --key PUBKEY",
		Short: "Check an attestation against the snapshot(s) in hand",
		Long: `Check an attestation bundle against the snapshot in hand (or BASE and CANDIDATE
for a comparison): an envelope signed by PUBKEY over the DSSE encoding, the
in-toto payload and Statement types, a subject digest equal to the sha256 of
each snapshot.json, the full snapshot verify, and that the predicate agrees with
what tpctl derives from the snapshots now. Every mismatch is named.

--attestation defaults to SNAPSHOT.intoto.jsonl for one snapshot. PUBKEY is the
public key (KEY.pub, or any SubjectPublicKeyInfo PEM); a private key file works
too.

--lock LOCK checks a plan lock (tpctl plan lock) instead: signed by PUBKEY, an
in-toto Statement of a plan lock whose subjects are its plan and policy digests
and whose locked policy has its digest; --timestamp FILE --tsa-cert FILE also
verifies an RFC 3161 token over the lock.

Exit status: 0 sound; 1 any mismatch; 2 an unreadable key, bundle or snapshot.`,
		Example: "  tpctl attest verify out/round-1 --key tpctl.key.pub\n  tpctl attest verify out/round-1 out/round-2 --attestation out/round-2.compare.intoto.jsonl --key tpctl.key.pub",
		Args:    cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Key == "" {
				return usageErr(errors.New("--key is required"), "pass --key PUBKEY, the public key of the signer")
			}
			switch {
			case o.Lock != "" && (len(args) > 0 || o.Attestation != ""):
				return usageErr(errors.New("--lock checks a plan lock alone; give no snapshot and no --attestation"))
			case o.Lock == "" && len(args) == 0:
				return usageErr(errors.New("give a SNAPSHOT (or BASE CANDIDATE), or --lock LOCK"))
			case (o.Timestamp == "") != (o.TSACert == ""):
				return usageErr(errors.New("--timestamp and --tsa-cert go together"))
			case o.Timestamp != "" && o.Lock == "":
				return usageErr(errors.New("--timestamp checks a token over a plan lock; give --lock"))
			case o.Lock != "":
				return runF(cmd.Context(), a, o)
			}
			if o.Attestation == "" {
				if len(args) == 2 {
					return usageErr(errors.New("--attestation is required with two snapshots"), "pass --attestation "+ui.Quote(attest.DefaultComparisonPath(args[1])))
				}
				o.Attestation = attest.DefaultBundlePath(args[0])
			}
			o.Dirs = args
			return runF(cmd.Context(), a, o)
		},
	}
	cmd.Flags().StringVar(&o.Key, "key", "", "the signer's public key (SPKI PEM)")
	cmd.Flags().StringVar(&o.Attestation, "attestation", "", "the bundle file (default SNAPSHOT.intoto.jsonl)")
	cmd.Flags().StringVar(&o.Lock, "lock", "", "a plan lock (tpctl plan lock) to check instead")
	cmd.Flags().StringVar(&o.Timestamp, "timestamp", "", "RFC 3161 time-stamp token over the lock (with --lock)")
	cmd.Flags().StringVar(&o.TSACert, "tsa-cert", "", "certificate of the time-stamping authority")
	return cmd
}

// newAttestPredicateCmd is tpctl attest predicate; runF nil is
// attestPredicateRun.
func newAttestPredicateCmd(a *app, runF func(context.Context, *app, *attestPredicateOptions) error) *cobra.Command {
	if runF == nil {
		runF = attestPredicateRun
	}
	o := &attestPredicateOptions{}
	return &cobra.Command{
		Use:   "predicate SNAPSHOT",
		Short: "Print the snapshot predicate, for another signer (GitHub actions/attest)",
		Long: `Print the predicate tpctl would sign for a verified snapshot, as RFC 8785
canonical JSON on one line (the predicate itself, no envelope), for a signer of
your choice: GitHub's actions/attest with predicate-type
https://tuneplane.dev/attestation/snapshot/v1 and subject-path
SNAPSHOT/snapshot.json signs it keylessly in CI (verify with 'gh attestation
verify'). See docs/attestation.md.`,
		Example: "  tpctl attest predicate out/round-1 > predicate.json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir = args[0]
			return runF(cmd.Context(), a, o)
		},
	}
}

// attestInputErr maps the attest package's errors to exit statuses: all
// of them are input tpctl cannot use (2), with a hint where one helps.
func attestInputErr(err error) error {
	if err, ok := verifyErr(err); ok {
		return err
	}
	var se *compare.SnapshotError
	var be *attest.BundleError
	switch {
	case errors.As(err, &be):
		return inputErr(err, "give the …intoto.jsonl file 'tpctl attest' wrote")
	case snapshot.IsNotSnapshot(err), errors.As(err, &se):
		return inputErr(err, "give the folder written by tpctl import --out or tpctl eval run")
	}
	// Key errors, ErrNotEvalRun and paths inside a snapshot say what to
	// do in their message.
	return inputErr(err)
}

func attestRun(ctx context.Context, a *app, o *attestOptions) error {
	key, err := attest.LoadPrivateKey(o.Key)
	if err != nil {
		return attestInputErr(err)
	}
	var w *attest.Written
	a.startProgress().Phase("verifying snapshot", 0, "")
	switch {
	case len(o.Dirs) == 2:
		w, _, err = attest.Comparison(ctx, o.Dirs[0], o.Dirs[1], key, o.Out, producer())
	case o.Provenance:
		w, err = attest.ProvenanceOf(o.Dirs[0], key, o.Out, producer())
	default:
		w, err = attest.Snapshot(o.Dirs[0], key, o.Out, producer())
	}
	a.endProgress()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		return attestInputErr(err)
	}
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*attest.Written
		}{"attestation", w})
	}
	return writeAttestWritten(a.io.Out, a.io.Width(), w)
}

func attestKeygenRun(_ context.Context, a *app, o *attestKeygenOptions) error {
	pub, err := attest.Keygen(o.Out, o.Algorithm)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return usageErr(err, "keygen never overwrites a key; choose another --out")
		}
		return inputErr(err)
	}
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string `json:"message_type"`
			PrivateKey  string `json:"private_key"`
			PublicKey   string `json:"public_key"`
			KeyID       string `json:"keyid"`
			Algorithm   string `json:"algorithm"`
		}{"key_pair", o.Out, attest.PublicKeyPath(o.Out), pub.KeyID, pub.Alg})
	}
	_, err = fmt.Fprintln(a.io.Out, ui.Wrap(fmt.Sprintf("wrote %s private key %s (mode 0600) and public key %s; keyid %s",
		pub.Alg, termsafe.Escape(o.Out), termsafe.Escape(attest.PublicKeyPath(o.Out)), pub.KeyID), a.io.Width()))
	return err
}

func attestVerifyRun(ctx context.Context, a *app, o *attestVerifyOptions) error {
	key, err := attest.LoadPublicKey(o.Key)
	if err != nil {
		return attestInputErr(err)
	}
	if o.Lock != "" {
		return attestVerifyLock(a, o, key)
	}
	a.startProgress().Phase("verifying attestation", 0, "")
	rep, err := attest.Verify(ctx, o.Dirs, o.Attestation, key)
	a.endProgress()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		return attestInputErr(err)
	}
	if a.jsonOutput() {
		if err := a.io.JSON(struct {
			MessageType string `json:"message_type"`
			*attest.Report
		}{"attestation_verification", rep}); err != nil {
			return err
		}
	} else if err := writeAttestReport(a.io.Out, a.io.Width(), rep); err != nil {
		return err
	}
	if !rep.OK {
		return silentFinding(fmt.Errorf("the attestation %q does not hold for %v: %s", o.Attestation, o.Dirs, ui.Plural(len(rep.Problems), "problem")))
	}
	return nil
}

func attestPredicateRun(_ context.Context, a *app, o *attestPredicateOptions) error {
	p, err := attest.SnapshotPredicateJSON(o.Dir, producer())
	if err != nil {
		return attestInputErr(err)
	}
	_, err = fmt.Fprintf(a.io.Out, "%s\n", p)
	return err
}

// attestKind names a predicate type for people.
func attestKind(t string) string {
	switch t {
	case attest.PredicateSnapshot:
		return "a snapshot"
	case attest.PredicateComparison:
		return "a comparison"
	case attest.PredicateProvenance:
		return "an eval-run provenance"
	}
	return "an"
}

// writeAttestWritten says in one line (wrapped to width) what an attest
// command wrote.
func writeAttestWritten(out io.Writer, width int, w *attest.Written) error {
	verb := "wrote"
	if !w.Changed {
		verb = "unchanged: already holds"
	}
	_, err := fmt.Fprintln(out, ui.Wrap(fmt.Sprintf("%s %s attestation signed by keyid %s in %s", verb, attestKind(w.PredicateType), w.KeyID, termsafe.Escape(w.Attestation)), width))
	return err
}

// writeAttestReport writes a verification for a terminal: each problem
// on its line, or the verdict, wrapped to width.
func writeAttestReport(out io.Writer, width int, r *attest.Report) error {
	for _, p := range r.Problems {
		if _, err := fmt.Fprintln(out, ui.Wrap(fmt.Sprintf("problem %s: %s", p.Code, termsafe.Escape(p.Message)), width)); err != nil {
			return err
		}
	}
	if !r.OK {
		return nil
	}
	_, err := fmt.Fprintln(out, ui.Wrap(fmt.Sprintf("ok %s: %s (%s attestation, line %d of %s)", termsafe.Escape(strings.Join(r.Snapshots, " vs ")),
		r.Summary(), attestKind(r.PredicateType), r.Line, termsafe.Escape(r.Attestation)), width))
	return err
}

// attestVerifyLock is tpctl attest verify --lock: the lock's signature and
// consistency (planlock.Open), and a timestamp over it when given.
func attestVerifyLock(a *app, o *attestVerifyOptions, key *attest.PublicKey) error {
	l, err := planlock.Open(o.Lock, key)
	if err != nil {
		return lockErr(err)
	}
	lv := &lockView{File: o.Lock, KeyID: l.KeyID, PlanSHA256: l.Predicate.PlanSHA256, PlannedTrials: l.Predicate.PlannedTrials,
		PolicySHA256: l.Predicate.Policy.SHA256, Proves: planlock.Proves, DoesNotProve: planlock.DoesNotProve}
	if o.Timestamp != "" {
		tok, err := timestamp.VerifyFiles(o.Timestamp, o.TSACert, l.Bytes)
		if err != nil {
			return findingErr(err)
		}
		lv.LockedBefore, lv.TSA, lv.DoesNotProve = &tok.Time, tok.Authority, "who holds the key"
	}
	if a.jsonOutput() {
		return a.io.JSON(struct {
			MessageType string `json:"message_type"`
			OK          bool   `json:"ok"`
			*lockView
			Policy string `json:"policy"`
			Power  bool   `json:"power_plan"`
		}{"lock_report", true, lv, l.Predicate.Policy.File, string(l.Predicate.Power) != "null"})
	}
	s := fmt.Sprintf("ok %s: a plan lock signed by keyid %s: plan sha256 %s (%s), policy %s sha256 %s", ui.Printable(o.Lock), l.KeyID, l.Predicate.PlanSHA256,
		ui.Plural(l.Predicate.PlannedTrials, "planned trial"), ui.Printable(l.Predicate.Policy.File), l.Predicate.Policy.SHA256)
	if string(l.Predicate.Power) != "null" {
		s += ", with a power plan"
	}
	s += "; the signature proves " + planlock.Proves
	if lv.LockedBefore != nil {
		s += fmt.Sprintf("; locked before %s (RFC 3161 timestamp by %s)", lv.LockedBefore.Format(time.RFC3339), lv.TSA)
	} else {
		s += "; it does not prove " + planlock.DoesNotProve
	}
	fmt.Fprintln(a.io.Out, ui.Wrap(s, a.io.Width()))
	return nil
}
