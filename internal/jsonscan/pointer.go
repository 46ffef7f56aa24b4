package jsonscan

import "strings"

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// EscapePointer escapes one JSON pointer reference token (RFC 6901): "~"
// becomes "~0" and "/" becomes "~1".
func EscapePointer(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return pointerEscaper.Replace(tok)
}

// AppendPointer appends "/" and the escaped tok to dst.
func AppendPointer(dst []byte, tok string) []byte {
	dst = append(dst, '/')
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; c {
		case '~':
			dst = append(dst, '~', '0')
		case '/':
			dst = append(dst, '~', '1')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
