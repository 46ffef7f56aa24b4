package jcs

// PlainLen returns the length of the longest prefix of s whose bytes a
// JSON string holds as they are, in every form (RFC 8785's and the one
// encoding/json writes): printable ASCII and DEL, but the quote and the
// backslash. It tests eight bytes at a time while they all are: IDs and
// digests are most of what tpctl writes in strings.
func PlainLen[T ~string | ~[]byte](s T) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// A byte at or above 0x80, below 0x20 (w - 0x20 borrows in it),
		// or equal to the quote or the backslash (w xor it has a zero
		// byte): each test says whether there is one, exactly.
		q, bs := w^(ones*'"'), w^(ones*'\\')
		if (w|((w-ones*0x20)&^w)|((q-ones)&^q)|((bs-ones)&^bs))&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			break
		}
	}
	return i
}
