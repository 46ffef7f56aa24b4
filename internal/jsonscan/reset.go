package jsonscan

import "io"

// ResetBytes makes d a decoder over data with d's options, as NewBytes
// does, but keeps the memory d has grown (its container stack and text
// buffer): a caller decoding many small documents, such as the lines of a
// JSON Lines file, then allocates nothing per document.
func (d *Decoder) ResetBytes(data []byte) {
	*d = Decoder{
		buf:     data,
		rerr:    io.EOF,
		opts:    d.opts,
		errOff:  -1,
		stack:   d.stack[:0],
		keys:    d.keys[:0],
		scratch: d.scratch[:0],
	}
}
