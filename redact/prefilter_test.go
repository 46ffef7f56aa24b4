package redact

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// reference is the redaction as it was before the shared prefilter: each
// detector checks its own literals on the current text; what the scan
// would find once the text is decoded or its folds joined is masked
// after, as Redact does.
func reference(s string) string {
	for _, d := range detectors {
		if d.candidate(s) {
			s = d.redact(s)
		}
	}
	if decodable(s) || hasLineBreak(s) {
		s = patternsOnly().Mask(s)
	}
	return s
}

var prefilterSeeds = []string{
	"", "sk-", "xsk-ant-", "SECRET", "SeCrEt", "ſecret", "\xffsecret", "eyJ", "ey", "AKI", "AKIA", "ACCA", "AIza",
	"xox", "hf_", "ghp_", "gh_", "github_pat_", "BEARER", "Bearer x", "PRIVATE KEY-----", "PRIVATE KEY----",
	fakeOpenAI, fakeAnthropic, fakeGitHub, fakeAWSID, fakeJWT, fakePEM, "aws_secret_key=" + fakeAWSSecret,
	strings.Repeat("the quick brown fox jumps over the lazy dog_", 10) + "hf_",
}

// FuzzPrefilter: the one-pass prefilter finds exactly the detectors each
// detector's own literal check finds, redaction is unchanged, and a scan
// given redaction's prefilter result finds what a scan of its own finds.
func FuzzPrefilter(f *testing.F) {
	for _, s := range prefilterSeeds {
		f.Add(s)
	}
	sc := NewScanner([]string{"API_KEY=" + fakeOpenAI[:12], "TUNEPLANE_JOB_TOKEN=job-secret-1234"})
	f.Fuzz(func(t *testing.T, s string) {
		mask := candidates(s)
		if by := candidatesByByte(s); by != mask {
			t.Fatalf("%q: candidates %b, candidatesByByte %b", s, mask, by)
		}
		for _, d := range detectors {
			if got, want := mask&d.bit != 0, d.candidate(s); got != want {
				t.Fatalf("%q: prefilter says %s is a candidate: %v, its literals say %v", s, d.kind, got, want)
			}
		}
		got, _ := Secrets().Redact(context.Background(), s)
		if want := reference(s); got != want {
			t.Fatalf("%q: redacted %q, want %q", s, got, want)
		}
		red, c, err := Secrets().(PrefilterRedactor).RedactPrefiltered(context.Background(), s)
		if err != nil || red != got {
			t.Fatalf("%q: RedactPrefiltered gave %q, %v; Redact %q", s, red, err, got)
		}
		for _, text := range []string{red, s, s + "ghp_" + strings.Repeat("a", 36)} {
			if a, b := fmt.Sprint(sc.ScanPrefiltered("f", text, c)), fmt.Sprint(sc.Scan("f", text)); a != b {
				t.Fatalf("%q: ScanPrefiltered %s, Scan %s", text, a, b)
			}
		}
	})
}

// FuzzFindAll: a scan pattern searched without its leading \b (findFast)
// finds exactly what the pattern itself, lead group included, finds.
func FuzzFindAll(f *testing.F) {
	key := strings.Repeat("a1B2", 6)
	for _, s := range append(prefilterSeeds, "task-"+key, "xsk-"+key+"-sk-"+key, "sk-"+key+"sk-"+key, "é"+"sk-"+key,
		"_eyJ"+key+".eyJ"+key+".x", "hf_"+key+key+" xhf_"+key+key, "\xffsk-"+key, "-sk-ant-"+key+key,
		"task-00001 sk-"+key[:19]+" sk-"+key, "sk-ant-"+key[:19]+"!sk-ant-"+key, "sk-sk-"+key, `\tsk-`+key, `a\x1bsk-`+key, `\u202esk-proj-`+key, `x\\tsk-`+key, `\zsk-`+key) {
		f.Add(s)
	}
	sc := NewScanner(nil)
	n := 0
	for _, p := range sc.patterns {
		if p.nb != nil {
			n++
		}
	}
	if n < 4 {
		f.Fatalf("only %d patterns have a prefix form", n)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range sc.patterns {
			if p.nb == nil {
				continue
			}
			if got, want := p.findFast(s), p.findRegexp(s); !slices.Equal(got, want) {
				t.Fatalf("%s on %q: findFast %v, findRegexp %v", p.kind, s, got, want)
			}
		}
	})
}

// TestPrefilterAnchors: every literal's anchor pair lies within it, and
// the pair search and the single-byte search agree on the seeds.
func TestPrefilterAnchors(t *testing.T) {
	for c, ls := range preByByte {
		for _, l := range ls {
			if l.anchor+1 >= len(l.s) || !strings.EqualFold(string(rune(c)), l.s[l.anchor:l.anchor+1]) {
				t.Errorf("literal %q anchored at %d under byte %q", l.s, l.anchor, byte(c))
			}
		}
	}
	for _, s := range prefilterSeeds {
		if a, b := candidates(s), candidatesByByte(s); a != b {
			t.Errorf("%q: candidates %b, candidatesByByte %b", s, a, b)
		}
	}
}
