package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// minKeyBody is the shortest base64 run taken for a key body: an Ed25519
// PKCS#8 key, the smallest, is 64 characters.
const minKeyBody = 60

// keyOIDs are the algorithms of a PKCS#8 PrivateKeyInfo tpctl recognises
// (DER contents of the OBJECT IDENTIFIER): RSA, RSASSA-PSS, EC, DSA,
// Ed25519, Ed448, X25519, X448.
var keyOIDs = [][]byte{
	{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01},
	{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a},
	{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01},
	{0x2a, 0x86, 0x48, 0xce, 0x38, 0x04, 0x01},
	{0x2b, 0x65, 0x70}, {0x2b, 0x65, 0x71}, {0x2b, 0x65, 0x6e}, {0x2b, 0x65, 0x6f},
}

// isKeyBody reports whether m, a base64 run (line breaks and padding
// allowed), decodes to the start of a private key: an OpenSSH private key
// ("openssh-key-v1\0"), or a DER SEQUENCE whose first member is the
// version INTEGER and whose second is what a PKCS#8 PrivateKeyInfo
// (an AlgorithmIdentifier of a key algorithm), a PKCS#1 RSA or DSA key
// (a long INTEGER) or a SEC1 EC key (an OCTET STRING) holds there. A
// certificate, a public key, a CSR or any other base64 does not pass.
func isKeyBody(m string) bool {
	s := strings.TrimRight(strings.NewReplacer("\r", "", "\n", "").Replace(m), "=")
	if len(s) < minKeyBody {
		return false
	}
	s = s[:len(s)/4*4] // a cut body decodes up to its last whole quantum
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return false
	}
	if bytes.HasPrefix(b, []byte("openssh-key-v1\x00")) {
		return true
	}
	// SEQUENCE, its length (short or long form), then INTEGER 0 or 1.
	if len(b) < 2 || b[0] != 0x30 {
		return false
	}
	i := 2
	if b[1] >= 0x80 {
		n := int(b[1] & 0x7f)
		if n < 1 || n > 3 {
			return false
		}
		i += n
	}
	if len(b) < i+5 || b[i] != 0x02 || b[i+1] != 0x01 || b[i+2] > 1 {
		return false
	}
	version, rest := b[i+2], b[i+3:]
	switch rest[0] {
	case 0x30: // PKCS#8: AlgorithmIdentifier { OID, … }
		if len(rest) < 4 || rest[2] != 0x06 {
			return false
		}
		n := int(rest[3])
		if len(rest) < 4+n {
			return false
		}
		for _, oid := range keyOIDs {
			if bytes.Equal(rest[4:4+n], oid) {
				return true
			}
		}
		return false
	case 0x02: // PKCS#1 RSA (modulus) or DSA (p): a long INTEGER
		return version == 0 && rest[1] >= 0x81
	case 0x04: // SEC1 ECPrivateKey: the private key octets
		return version == 1 && rest[1] >= 0x18 && rest[1] <= 0x42
	}
	return false
}
