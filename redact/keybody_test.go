package redact

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pemBody is the base64 lines of a PEM block without its armour lines.
func pemBody(typ string, der []byte) string {
	p := string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	lines := strings.Split(strings.TrimSpace(p), "\n")
	return strings.Join(lines[1:len(lines)-1], "\n")
}

// TestKeyBody: the body of a private key found without its BEGIN line (a
// PEM block cut from the front) is found by its structure (issue 35
// finding 2) — PKCS#8 of every algorithm, PKCS#1, SEC1, OpenSSH, on lines
// or in one run, with or without its END line — and a certificate, a
// public key, a CSR or random base64 of the same length is not.
func TestKeyBody(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	pk8 := func(k any) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sec1, _ := x509.MarshalECPrivateKey(ecKey)
	spki, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ecKey.PublicKey, ecKey)
	if err != nil {
		t.Fatal(err)
	}
	csr, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x"}}, ecKey)
	random := make([]byte, 1200)
	_, _ = rand.Read(random)

	secrets := map[string]string{
		"pkcs8 rsa":       pemBody("PRIVATE KEY", pk8(rsaKey)),
		"pkcs8 ec":        pemBody("PRIVATE KEY", pk8(ecKey)),
		"pkcs8 ed25519":   pemBody("PRIVATE KEY", pk8(edKey)),
		"pkcs1 rsa":       pemBody("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)),
		"sec1 ec":         pemBody("EC PRIVATE KEY", sec1),
		"one run":         base64.StdEncoding.EncodeToString(pk8(rsaKey)),
		"with END line":   pemBody("PRIVATE KEY", pk8(rsaKey)) + "\n-----END PRIVATE KEY-----",
		"in a sentence":   "the key was " + pemBody("PRIVATE KEY", pk8(ecKey)) + " (do not share)",
		"CRLF lines":      strings.ReplaceAll(pemBody("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), "\n", "\r\n"),
		"json escaped":    `{"output": "` + strings.ReplaceAll(pemBody("PRIVATE KEY", pk8(rsaKey)), "\n", `\n`) + `"}`,
		"cut at the tail": pemBody("PRIVATE KEY", pk8(rsaKey))[:300],
	}
	if path, err := exec.LookPath("ssh-keygen"); err == nil {
		f := filepath.Join(t.TempDir(), "id")
		if out, err := exec.Command(path, "-q", "-t", "ed25519", "-N", "", "-f", f).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
		b, _ := os.ReadFile(f)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		secrets["openssh"] = strings.Join(lines[1:len(lines)-1], "\n")
	}
	notSecrets := map[string]string{
		"certificate":    pemBody("CERTIFICATE", cert),
		"public key":     pemBody("PUBLIC KEY", spki),
		"rsa public key": pemBody("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)),
		"csr":            pemBody("CERTIFICATE REQUEST", csr),
		"random":         pemBody("DATA", random),
		"random M":       "MIIB" + base64.StdEncoding.EncodeToString(random)[4:],
	}
	sc := NewScanner(nil)
	for name, text := range secrets {
		t.Run(name, func(t *testing.T) {
			if h := sc.Scan("", text); len(h) == 0 {
				t.Errorf("scan found nothing in %q", text[:40])
			}
			masked := sc.Mask(text)
			if !strings.Contains(masked, "[REDACTED:private_key_body]") || strings.Contains(masked, text[20:60]) {
				t.Errorf("mask left the body: %q", masked)
			}
			red, _ := Secrets().Redact(t.Context(), text)
			if strings.Contains(red, text[20:60]) {
				t.Errorf("builtin:secrets left the body: %q", red)
			}
		})
	}
	for name, text := range notSecrets {
		t.Run("not "+name, func(t *testing.T) {
			if h := sc.Scan("", text); len(h) != 0 {
				t.Errorf("scan found %v in a %s", h, name)
			}
		})
	}
}
