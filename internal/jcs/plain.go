package jcs

// plain marks the bytes a JSON string holds as they are, in every form
// (RFC 8785's and the one encoding/json writes): printable ASCII and DEL,
// but the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// PlainLen returns the length of the longest prefix of s whose bytes a
// JSON string holds as they are (plain). One table lookup a byte is
// cheaper than the four comparisons it replaces, and cheaper than testing
// eight bytes a word at a time for the short strings (statuses, IDs,
// digests) tpctl writes.
func PlainLen[T ~string | ~[]byte](s T) int {
	i := 0
	for i < len(s) && plain[s[i]] {
		i++
	}
	return i
}
