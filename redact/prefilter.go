package redact

import (
	"context"
	"strings"
)

// The prefilter finds, in one pass over a text, every detector whose
// literal occurs in it (detector.candidate for all detectors at once):
// redaction and the post-redaction scan each run it once per string
// instead of one substring search per literal.
//
// Each literal is looked for at one anchor: the pair of adjacent bytes in
// it that is rarest in agent transcripts (so that common letters do not
// stop the pass), every case form of it for a case-folded literal. The
// pass tests each adjacent pair of the text against a bit set of the
// anchors (8 KiB, one load per byte) and confirms a literal in place
// only where an anchor occurs. candidatesByByte is the same search by one
// anchor byte, kept as the definition the fuzz test compares with.

// prelit is one prefilter literal.
type prelit struct {
	s      string
	anchor int // index in s of the anchor's first byte
	fold   bool
	bit    uint32
}

// preByByte lists, per byte value, the literals whose anchor pair starts
// with it (both cases of it for a case-folded literal).
var preByByte [256][]prelit

// prePairs has the bit c0<<8|c1 set for every anchor pair c0 c1.
var prePairs [1 << 16 / 64]uint64

// byteLits is candidatesByByte's table: literals by their rarest single
// byte.
var byteLits [256][]prelit

// allBits has one bit per detector.
var allBits uint32

// rarity ranks a byte by how seldom it appears in agent transcripts (code,
// logs, English): higher is rarer.
func rarity(c byte) int {
	const common = " etaoinsrhldcum-_/.pfgywb,:\"vk" // most common first
	if i := strings.IndexByte(common, c); i >= 0 {
		return i
	}
	if c >= 'A' && c <= 'Z' {
		return 100 + int(c) // upper case is rare in running text
	}
	return 50
}

// commonPairs are adjacent letters frequent in English and code
// ("github" has "gh"), never an anchor when the literal has another pair.
const commonPairs = "gh th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce be"

// foldRarity is c's rarity, the commoner case's for a case-folded literal.
func foldRarity(c byte, fold bool) int {
	if fold {
		return min(rarity(c), rarity(swapCase(c)))
	}
	return rarity(c)
}

// caseForms returns c and, when fold is set and c is a letter, its other
// case.
func caseForms(c byte, fold bool) []byte {
	if o := swapCase(c); fold && o != c {
		return []byte{c, o}
	}
	return []byte{c}
}

func init() {
	for i, d := range detectors {
		d.bit = 1 << i
		allBits |= d.bit
		for _, p := range d.pre {
			// The anchor pair: the one whose two bytes are rarest
			// together ("p_" in "ghp_", not "gh", which every
			// "github" has; a pair of common letters, as in "bearer",
			// only when there is nothing better).
			a := 0
			score := func(j int) int {
				if strings.Contains(commonPairs, strings.ToLower(p[j:j+2])) {
					return -1
				}
				return foldRarity(p[j], d.fold) + foldRarity(p[j+1], d.fold)
			}
			for j := 1; j+1 < len(p); j++ {
				if score(j) > score(a) {
					a = j
				}
			}
			l := prelit{s: p, anchor: a, fold: d.fold, bit: d.bit}
			for _, c0 := range caseForms(p[a], d.fold) {
				preByByte[c0] = append(preByByte[c0], l)
				for _, c1 := range caseForms(p[a+1], d.fold) {
					k := uint(c0)<<8 | uint(c1)
					prePairs[k/64] |= 1 << (k % 64)
				}
			}
			// candidatesByByte's anchor: the rarest single byte.
			b := 0
			for j := 1; j < len(p); j++ {
				if foldRarity(p[j], d.fold) > foldRarity(p[b], d.fold) {
					b = j
				}
			}
			lb := prelit{s: p, anchor: b, fold: d.fold, bit: d.bit}
			for _, c := range caseForms(p[b], d.fold) {
				byteLits[c] = append(byteLits[c], lb)
			}
		}
	}
}

func swapCase(c byte) byte {
	switch {
	case c >= 'a' && c <= 'z':
		return c - 'a' + 'A'
	case c >= 'A' && c <= 'Z':
		return c - 'A' + 'a'
	}
	return c
}

// candidates returns the bits of the detectors whose literals occur in s;
// detector d is a candidate exactly when d.candidate(s). Every literal is
// at least two bytes long, so each occurrence starts its anchor pair
// before the last byte of s.
func candidates(s string) uint32 {
	var mask uint32
	if len(s) < 2 {
		return 0
	}
	// One load per byte: the pair ending at i is (c0, s[i]); the table
	// index is below 1<<16, so it needs no bounds check.
	c0 := s[0]
	for i := 1; i < len(s); i++ {
		c1 := s[i]
		k := uint(c0)<<8 | uint(c1)
		c0 = c1
		if prePairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		at := i - 1
		for _, l := range preByByte[s[at]] {
			st := at - l.anchor
			if mask&l.bit != 0 || st < 0 || st+len(l.s) > len(s) {
				continue
			}
			sub := s[st : st+len(l.s)]
			if sub == l.s || l.fold && strings.EqualFold(sub, l.s) {
				mask |= l.bit
				if mask == allBits {
					return mask
				}
			}
		}
	}
	return mask
}

// candidatesByByte is candidates by one anchor byte per literal: the
// prefilter as it was, slower on text with many common letters, kept as
// a second implementation the fuzz test compares with.
func candidatesByByte(s string) uint32 {
	var mask uint32
	for i := 0; i < len(s); i++ {
		for _, l := range byteLits[s[i]] {
			st := i - l.anchor
			if mask&l.bit != 0 || st < 0 || st+len(l.s) > len(s) {
				continue
			}
			sub := s[st : st+len(l.s)]
			if sub == l.s || l.fold && strings.EqualFold(sub, l.s) {
				mask |= l.bit
			}
		}
	}
	return mask
}

// Candidates is what the shared prefilter found in one text: which
// credential patterns may match it. The zero value knows nothing.
type Candidates struct {
	text  string
	mask  uint32
	known bool
	// clean: the credential patterns find nothing in text, its decoded
	// views or its line-joined view (builtin:secrets looked, to decide
	// whether to mask), so a scan need only look for known values.
	clean bool
}

// PrefilterRedactor is a Redactor that also returns the prefilter result
// for its output, so that scanning that output (ScanPrefiltered) passes
// over it once for both. builtin:secrets is one.
type PrefilterRedactor interface {
	Redactor
	RedactPrefiltered(ctx context.Context, s string) (string, Candidates, error)
}

// RedactPrefiltered is Redact, also returning the prefilter result for
// the redacted text.
func (secrets) RedactPrefiltered(ctx context.Context, s string) (string, Candidates, error) {
	if err := ctx.Err(); err != nil {
		return "", Candidates{}, err
	}
	s, mask := redactSecrets(s)
	// What Redact masks after the detectors (what the scan finds once
	// the text is decoded or its folds joined) is masked here too: the
	// same output as Redact, looked for first by the cheaper scan, since
	// Mask changes only a text in which the scan finds something. When
	// it finds nothing, the scan after redaction need not look again.
	c := Candidates{text: s, mask: mask, known: true}
	if decodable(s) || hasLineBreak(s) {
		if len(patternsOnly().scan(s, mask)) > 0 {
			s = patternsOnly().Mask(s)
			c = Candidates{text: s, mask: candidates(s), known: true}
		} else {
			c.clean = true
		}
	}
	return s, c, nil
}

// ScanPrefiltered is Scan; c saves the prefilter pass when it was found
// for this very text (it is ignored otherwise).
func (s *Scanner) ScanPrefiltered(field, text string, c Candidates) []Hit {
	if !c.known || c.text != text {
		return s.Scan(field, text)
	}
	if c.clean {
		// The patterns were searched in every view already: only the
		// known values are left (none, for most invocations).
		if len(s.values) == 0 {
			return nil
		}
		return (&Scanner{values: s.values}).scan(text, 0)
	}
	return s.scan(text, c.mask)
}
