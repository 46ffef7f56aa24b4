package harbor

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/ctrf"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/snapshot"
)

// The files Harbor's verifier writes in an attempt's folder (its
// /logs/verifier): the test runner's CTRF report, its standard output
// and the reward it wrote.
const (
	VerifierCTRF   = "verifier/ctrf.json"
	VerifierStdout = "verifier/test-stdout.txt"
	VerifierReward = "verifier/reward.json"
)

// Bounds of the verifier's words: the last stdoutLines lines of its
// output within snapshot.MaxVerifierText bytes, from a file of at most
// maxStdoutRead bytes (a larger one is not read: its end cannot be reached
// through a capped read); a reward file is a few bytes.
const (
	stdoutLines   = 20
	maxStdoutRead = 4 << 20
	maxRewardRead = 64 << 10
	// maxWordsLine bounds the one-line summary that becomes the detail.
	maxWordsLine = 300
)

// verifierWords reads what the verifier said about the attempt in dir:
// the failed tests of its CTRF report with their messages; else the last
// lines of its standard output; else what its reward file holds. It
// returns the words (nil when the verifier left none that can be read)
// and a one-line summary for the detail. A file that is missing, too
// large or not what it should be is passed over for the next; nothing
// here fails the attempt.
func verifierWords(files producers.Files, dir string) (*snapshot.VerifierOutput, string) {
	noFolder := false
	read := func(name string, max int64) []byte {
		if noFolder {
			return nil
		}
		b, err := files.ReadFile(dir+"/"+name, max)
		if err != nil {
			// The files share one folder: when a component of its path
			// is missing (a verifier that never ran), so are the others.
			var pe *safefs.PathError
			noFolder = errors.As(err, &pe) && pe.Code == safefs.CodeMissing
			return nil
		}
		return bytes.Clone(b) // the bytes are ours only until the next read
	}
	if b := read(VerifierCTRF, ctrf.MaxSize); b != nil {
		if r, err := ctrf.Parse(b); err == nil && len(r.Failed) > 0 {
			return &snapshot.VerifierOutput{Source: VerifierCTRF, Text: r.Text(snapshot.MaxVerifierText)}, r.Line(maxWordsLine)
		}
	}
	if b := read(VerifierStdout, maxStdoutRead); len(bytes.TrimSpace(b)) > 0 {
		text := Tail(b, stdoutLines, snapshot.MaxVerifierText)
		last := text[strings.LastIndexByte(text, '\n')+1:]
		return &snapshot.VerifierOutput{Source: VerifierStdout, Text: text},
			ctrf.Cut("the verifier's output ends: "+strings.TrimSpace(last), maxWordsLine)
	}
	// reward.json may name several rewards; reward.txt holds only the
	// number the reward column already shows, so it is not read.
	if b := read(VerifierReward, maxRewardRead); len(bytes.TrimSpace(b)) > 0 {
		text := Tail(b, stdoutLines, snapshot.MaxVerifierText)
		return &snapshot.VerifierOutput{Source: VerifierReward, Text: text},
			ctrf.Cut(VerifierReward+" holds "+strings.Join(strings.Fields(text), " "), maxWordsLine)
	}
	return nil, ""
}

// Tail is the end of b as text: at most lines lines and max bytes, cut
// at a line start (a last line longer than max keeps its end), control
// characters but line feeds made spaces, invalid UTF-8 replaced, trailing
// blank lines dropped.
func Tail(b []byte, lines, max int) string {
	s := strings.ToValidUTF8(string(bytes.TrimRight(b, " \t\r\n")), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029':
			return ' '
		}
		return r
	}, s)
	ls := strings.Split(s, "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	s = strings.Join(ls, "\n")
	for len(s) > max {
		i := strings.IndexByte(s, '\n')
		if i < 0 || len(ls) == 1 {
			// One line longer than max: keep its end.
			cut := len(s) - max + len("…")
			for cut < len(s) && !utf8.RuneStart(s[cut]) {
				cut++
			}
			return "…" + s[cut:]
		}
		s = s[i+1:]
		ls = ls[1:]
	}
	return s
}

// wantsVerifierWords says whether an attempt judged o gets the verifier's
// words: a scored failure, where they say why.
func wantsVerifierWords(o outcome.Outcome) bool { return o.Status == outcome.Failure }
