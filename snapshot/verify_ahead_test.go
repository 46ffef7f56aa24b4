package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/digest"
)

// TestObservationsAhead: reading ahead on a goroutine gives what
// ReadObservations gives, the same observations in order and the same
// error, whether the file or the consumer fails first, at or around a
// batch boundary, or the consumer stops before the end.
func TestObservationsAhead(t *testing.T) {
	line := func(i int) string {
		return fmt.Sprintf(`{"trial_id":"t#%d","task":"t","repeat":%d,"status":"success"}`, i, i)
	}
	tests := []struct {
		name    string
		lines   int
		badLine int // 1-based line that does not decode; 0 for none
		failAt  int // 1-based observation the consumer refuses; 0 for none
	}{
		{"clean", 3*aheadBatch + 7, 0, 0},
		{"empty", 0, 0, 0},
		{"bad line after a full batch", aheadBatch + 5, aheadBatch + 1, 0},
		{"bad last line", 2 * aheadBatch, 2 * aheadBatch, 0},
		{"consumer fails before the bad line", 3 * aheadBatch, aheadBatch + 1, aheadBatch},
		{"bad line before the consumer would fail", 3 * aheadBatch, 10, 20},
		{"consumer stops early in a long file", 40 * aheadBatch, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var b strings.Builder
			for i := 1; i <= tt.lines; i++ {
				if i == tt.badLine {
					b.WriteString(`{"trial_id":` + "\n")
					continue
				}
				b.WriteString(line(i) + "\n")
			}
			if err := os.WriteFile(filepath.Join(dir, ObservationsFile), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(each func(func(Observation) error) error) ([]string, error) {
				var seen []string
				n := 0
				err := each(func(o Observation) error {
					n++
					// Kept past fn: a copy (readObservationsAhead).
					seen = append(seen, strings.Clone(o.TrialID))
					if n == tt.failAt {
						return errors.New("refused")
					}
					return nil
				})
				return seen, err
			}
			want, werr := run(func(fn func(Observation) error) error { return ReadObservations(dir, fn) })
			a := readObservationsAhead(dir, nil)
			got, gerr := run(a.each)
			a.stop()
			if !slices.Equal(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("ahead: %d observations, %v; ReadObservations: %d, %v", len(got), gerr, len(want), werr)
			}
			if tt.failAt == 0 && tt.badLine == 0 && (werr != nil || len(want) != tt.lines) {
				t.Fatalf("the clean file gave %d observations, %v", len(want), werr)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		dir := t.TempDir()
		a := readObservationsAhead(dir, nil)
		defer a.stop()
		err := a.each(func(Observation) error { return nil })
		if werr := ReadObservations(dir, func(Observation) error { return nil }); err == nil || err.Error() != werr.Error() {
			t.Fatalf("ahead: %v; ReadObservations: %v", err, werr)
		}
	})
}

// TestObservationsAheadLines: the chunks are cut by ReadObservations' own
// line rules (a CR before the newline dropped, a last line without one, an
// empty line refused, a line over MaxObservationLine an error after the
// lines before it), and with a capture the file's SHA-256 is taken only
// when every line was handed over.
func TestObservationsAheadLines(t *testing.T) {
	line := func(i int) string {
		return fmt.Sprintf(`{"trial_id":"t#%d","task":"t","repeat":%d,"status":"success"}`, i, i)
	}
	many := func(n int, sep string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(line(i) + sep)
		}
		return b.String()
	}
	long := `{"trial_id":"` + strings.Repeat("x", MaxObservationLine) + `"}`
	tests := map[string]string{
		"CRLF":                  many(aheadBatch+3, "\r\n"),
		"no final newline":      strings.TrimSuffix(many(aheadBatch*2, "\n"), "\n"),
		"empty line":            many(aheadBatch+1, "\n") + "\n" + many(3, "\n"),
		"line too long":         many(aheadBatch*2+5, "\n") + long + "\n" + many(2, "\n"),
		"long line at the end":  many(5, "\n") + long,
		"just under the limit":  line(1) + "\n" + `{"trial_id":"` + strings.Repeat("x", MaxObservationLine-16) + `"}` + "\n",
		"wide lines in a chunk": many(3, strings.Repeat(" ", aheadBytes/2)+"\n"),
		"nothing":               "",
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ObservationsFile), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			var want []string
			werr := ReadObservations(dir, func(o Observation) error { want = append(want, o.TrialID); return nil })
			c := &capture{}
			a := readObservationsAhead(dir, c)
			var got []string
			gerr := a.each(func(o Observation) error { got = append(got, strings.Clone(o.TrialID)); return nil })
			a.stop()
			if !slices.Equal(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("ahead: %d observations, %v; ReadObservations: %d, %v", len(got), gerr, len(want), werr)
			}
			if fails := strings.Contains(name, "long") || name == "empty line"; fails != (werr != nil) {
				t.Fatalf("ReadObservations: %v (the case is meant to fail: %v)", werr, fails)
			}
			if wantSum := digest.Bytes([]byte(content)).String(); werr == nil && c.obsSum != wantSum {
				t.Errorf("captured SHA-256 %q, want %q", c.obsSum, wantSum)
			} else if werr != nil && c.obsSum != "" {
				t.Errorf("a file that did not read cleanly has a captured SHA-256 %q", c.obsSum)
			}
		})
	}
}

// TestObservationsAheadArena: without a Visit the decoders write each
// chunk's lines into the arena its last lines used; every observation
// must still be exactly ReadObservations' when it is handed over, across
// many chunks of lines with and without each pointer member, in the exact
// form and others, and one
// with a Visit must stay so after the whole file (nothing reused). The
// round preimage built beside each chunk must be what the tally builds.
func TestObservationsAheadArena(t *testing.T) {
	rich := richObservations()
	// Four times the chunks that can be in flight: chunks come back.
	var b []byte
	n := 0
	for chunk := 0; len(b) < 4*(aheadChunks+2)*aheadBytes; chunk++ {
		for i, o := range rich {
			o.TrialID, o.Repeat = TrialID(o.Task, n), n
			if (chunk+i)%3 == 0 {
				o.Reward, o.AttemptOutcomes = nil, slices.Clone(o.AttemptOutcomes)
				for j := range o.AttemptOutcomes {
					o.AttemptOutcomes[j].Reward = nil
				}
			}
			line, err := appendObservation(nil, &o)
			if err != nil {
				t.Fatal(err)
			}
			// Some lines in other forms: for the walker, and with an
			// escape the exact reader unescapes.
			switch {
			case n%7 == 3:
				line = bytes.Replace(line, []byte(`"repeat":`), []byte(`"repeat": `), 1)
			case n%11 == 5:
				line = bytes.Replace(line, []byte(`"trial_id":"`), []byte(`"trial_id":"\u0061`), 1)
				line = bytes.Replace(line, []byte(`"task":"`), []byte(`"task":"a`), 1)
			}
			b = append(append(b, line...), '\n')
			n++
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ObservationsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var want []Observation
	if err := ReadObservations(dir, func(o Observation) error { want = append(want, o); return nil }); err != nil {
		t.Fatal(err)
	}
	var wantPre []byte
	for i := range want {
		wantPre = appendRoundAttempts(wantPre, &want[i])
	}
	for _, visit := range []bool{false, true} {
		t.Run(fmt.Sprintf("visit=%v", visit), func(t *testing.T) {
			var c *capture
			if visit {
				c = &capture{visit: func(PlannedTrial) error { return nil }}
			}
			a := readObservationsAhead(dir, c)
			defer a.stop()
			var kept []Observation
			var pre []byte
			a.preimage = func(p []byte) { pre = append(pre, p...) }
			i := 0
			err := a.each(func(o Observation) error {
				if i >= len(want) || !reflect.DeepEqual(o, want[i]) {
					return fmt.Errorf("observation %d differs from ReadObservations'", i+1)
				}
				kept = append(kept, o)
				i++
				return nil
			})
			if err != nil || i != len(want) {
				t.Fatalf("after %d of %d observations: %v", i, len(want), err)
			}
			if !bytes.Equal(pre, wantPre) {
				t.Error("the decoders' round preimage differs from the tally's")
			}
			if visit && !reflect.DeepEqual(kept, want) {
				t.Error("observations kept by a Visit changed after they were handed over")
			}
		})
	}
}
