package jsonscan

import "io"

// Reset makes d a decoder over data, as NewBytes does, keeping the
// memory d grew (its nesting stack and text buffer), so a caller decoding
// many small documents can reuse one decoder instead of allocating it
// and its stack per document.
func (d *Decoder) Reset(data []byte, opts Options) {
	*d = Decoder{
		buf:     data,
		rerr:    io.EOF,
		opts:    opts,
		errOff:  -1,
		stack:   d.stack[:0],
		keys:    d.keys[:0],
		scratch: d.scratch[:0],
	}
}
