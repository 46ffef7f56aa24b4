package jsonscan

// What a typed walker needs besides the tokens: where a token starts, what
// follows the last value, and a way to try one reading of a value and fall
// back to another.

// Start is the offset of the first byte of the token Next last returned
// (a string's opening quote, a bracket).
func (d *Decoder) Start() int64 {
	// A scalar leaves scanp at its end (vend); a bracket leaves scanp just
	// past itself, beyond the end of any scalar read before it.
	if d.vend == d.scanp {
		return d.scanned + int64(d.vstart)
	}
	return d.scanned + int64(d.scanp) - 1
}

// Rest skips the white space after the last token and reports whether
// anything follows it (ok), and at which offset. A document is one value:
// after it, Rest tells trailing data apart from the end of the input.
func (d *Decoder) Rest() (off int64, ok bool) {
	_, err := d.peek()
	return d.InputOffset(), err == nil
}

// Mark is a decoder position saved by Decoder.Mark.
type Mark struct {
	scanp, vstart, vend int
	plain               bool
	state, depth        int
	errOff              int64
}

// Mark saves the position between two tokens, so that a walker can try a
// quick reading of the next value and, when the value does not fit it,
// Rewind and read the same tokens again another way.
func (d *Decoder) Mark() Mark {
	return Mark{d.scanp, d.vstart, d.vend, d.plain, d.state, len(d.stack), d.errOff}
}

// Rewind returns to a position saved by Mark. Only a decoder over bytes
// (NewBytes) without Options.DuplicateKeys can rewind, and only while the
// array or object open at the Mark is still open: the walker tries one
// value, not what comes after it.
func (d *Decoder) Rewind(m Mark) {
	if d.r != nil || d.opts.DuplicateKeys || len(d.stack) < m.depth {
		panic("jsonscan: Rewind needs a decoder from NewBytes, without DuplicateKeys, inside the container open at Mark")
	}
	d.scanp, d.vstart, d.vend, d.plain = m.scanp, m.vstart, m.vend, m.plain
	d.state, d.stack, d.errOff = m.state, d.stack[:m.depth], m.errOff
}
