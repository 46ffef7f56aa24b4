package main

import (
	"testing"
)

func TestNewCmdAttest(t *testing.T) {
	checkArgv(t, "attest", newAttestCmd, []argvCase[attestOptions]{
		{"snapshot", "attest d --key k", &attestOptions{Dirs: []string{"d"}, Key: "k"}, ""},
		{"comparison", "attest a b --key k --out c.intoto.jsonl", &attestOptions{Dirs: []string{"a", "b"}, Key: "k", Out: "c.intoto.jsonl"}, ""},
		{"provenance", "attest d --key k --provenance", &attestOptions{Dirs: []string{"d"}, Key: "k", Provenance: true}, ""},
		{"provenance of two", "attest a b --key k --provenance", nil, "--provenance attests one snapshot"},
		{"no key", "attest d", nil, "--key is required"},
		{"three", "attest a b c --key k", nil, `unexpected argument "c"`},
	})
}

func TestNewCmdAttestKeygen(t *testing.T) {
	checkArgv(t, "attest keygen", newAttestKeygenCmd, []argvCase[attestKeygenOptions]{
		{"default algorithm", "attest keygen --out k", &attestKeygenOptions{Out: "k", Algorithm: "ed25519"}, ""},
		{"p256", "attest keygen --out k --algorithm ecdsa-p256", &attestKeygenOptions{Out: "k", Algorithm: "ecdsa-p256"}, ""},
		{"no out", "attest keygen", nil, "--out is required"},
		{"argument", "attest keygen k", nil, "unexpected argument"},
	})
}

func TestNewCmdAttestVerify(t *testing.T) {
	checkArgv(t, "attest verify", newAttestVerifyCmd, []argvCase[attestVerifyOptions]{
		{"default bundle", "attest verify out/r1/ --key k.pub", &attestVerifyOptions{Dirs: []string{"out/r1/"}, Key: "k.pub", Attestation: "out/r1.intoto.jsonl"}, ""},
		{"comparison", "attest verify a b --key k.pub --attestation c", &attestVerifyOptions{Dirs: []string{"a", "b"}, Key: "k.pub", Attestation: "c"}, ""},
		{"comparison without bundle", "attest verify a b --key k.pub", nil, "--attestation is required with two snapshots"},
		{"no key", "attest verify a", nil, "--key is required"},
		{"lock", "attest verify --lock l --key k.pub --timestamp t --tsa-cert c", &attestVerifyOptions{Key: "k.pub", Lock: "l", Timestamp: "t", TSACert: "c"}, ""},
		{"lock and snapshot", "attest verify a --lock l --key k.pub", nil, "--lock checks a plan lock alone"},
		{"nothing", "attest verify --key k.pub", nil, "give a SNAPSHOT"},
	})
}

func TestNewCmdAttestPredicate(t *testing.T) {
	checkArgv(t, "attest predicate", newAttestPredicateCmd, []argvCase[attestPredicateOptions]{
		{"snapshot", "attest predicate d", &attestPredicateOptions{Dir: "d"}, ""},
		{"none", "attest predicate", nil, "SNAPSHOT"},
	})
}

// The flags other commands take for attestations.
func TestNewCmdAttestFlags(t *testing.T) {
	checkArgv(t, "compare", newCompareCmd, []argvCase[compareOptions]{
		{"attest", "compare a b --attest k --attest-out c.jsonl", &compareOptions{Base: "a", Candidate: "b", ListLimit: defaultListLimit, AttestKey: "k", AttestOut: "c.jsonl"}, ""},
	})
	checkArgv(t, "eval run", newEvalRunCmd, []argvCase[evalRunOptions]{
		{"attest", "eval run e.json --out o --attest k", &evalRunOptions{Plan: "e.json", Out: "o", AttestKey: "k"}, ""},
	})
	checkArgv(t, "report", newReportCmd, []argvCase[reportOptions]{
		{"attestation", "report a --out a.html --attestation a.intoto.jsonl --key k.pub", &reportOptions{Dirs: []string{"a"}, Out: "a.html", Attestation: "a.intoto.jsonl", Key: "k.pub"}, ""},
		{"attestation without key", "report a --out a.html --attestation a.intoto.jsonl", nil, "--attestation and --key go together"},
	})
}
