// Package timestamp verifies an RFC 3161 time-stamp token over a file: a
// CMS SignedData whose TSTInfo's message imprint is the file's SHA-256,
// signed by a time-stamping authority whose certificate the caller trusts.
// It gives the time the authority vouches the file existed by. Only what
// tpctl needs: a token or a whole TimeStampResp in DER, a SHA-256 (or
// SHA-384/512) imprint, signed attributes, RSA PKCS #1 v1.5 or ECDSA
// signatures. The standard library only.
package timestamp

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// MaxTokenSize caps a token file: a few kilobytes with its certificates.
const MaxTokenSize = 1 << 20

var (
	oidSignedData    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidTSTInfo       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}
	oidContentType   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSHA256        = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidSHA384        = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 2}
	oidSHA512        = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 3}
	oidRSA           = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
	oidRSASHA256     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidRSASHA384     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 12}
	oidRSASHA512     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 13}
	oidECDSASHA256   = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidECDSASHA384   = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 3}
	oidECDSASHA512   = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 4}
	oidECPublicKey   = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
)

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"explicit,tag:0"`
}

type timeStampResp struct {
	Status asn1.RawValue
	Token  contentInfo `asn1:"optional"`
}

type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type signedData struct {
	Version          int
	DigestAlgorithms asn1.RawValue
	EncapContentInfo encapContentInfo
	Certificates     asn1.RawValue `asn1:"optional,tag:0"`
	CRLs             asn1.RawValue `asn1:"optional,tag:1"`
	SignerInfos      []signerInfo  `asn1:"set"`
}

type encapContentInfo struct {
	EContentType asn1.ObjectIdentifier
	EContent     []byte `asn1:"explicit,tag:0"`
}

type signerInfo struct {
	Version            int
	SID                asn1.RawValue
	DigestAlgorithm    algorithmIdentifier
	SignedAttrs        asn1.RawValue `asn1:"optional,tag:0"`
	SignatureAlgorithm algorithmIdentifier
	Signature          []byte
	UnsignedAttrs      asn1.RawValue `asn1:"optional,tag:1"`
}

type attribute struct {
	Type   asn1.ObjectIdentifier
	Values asn1.RawValue
}

type messageImprint struct {
	HashAlgorithm algorithmIdentifier
	HashedMessage []byte
}

type tstInfo struct {
	Version        int
	Policy         asn1.ObjectIdentifier
	MessageImprint messageImprint
	SerialNumber   *big.Int
	GenTime        time.Time     `asn1:"generalized"`
	Rest           asn1.RawValue `asn1:"optional"`
}

// Token is a verified time-stamp token.
type Token struct {
	// Time is the authority's genTime: the file existed by then.
	Time   time.Time
	Serial *big.Int
	// Authority is the subject of the certificate that verified it.
	Authority string
}

// Error is a token that does not hold for the file, or cannot be read.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func fail(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// VerifyFiles reads the token, the authority's certificate (PEM or DER)
// and the file, and verifies the token over the file's bytes.
func VerifyFiles(tokenPath, certPath string, data []byte) (*Token, error) {
	tok, err := safefs.ReadFileCapped(tokenPath, MaxTokenSize)
	if err != nil {
		return nil, fail("timestamp %s cannot be read: %v", tokenPath, err)
	}
	cb, err := safefs.ReadFileCapped(certPath, MaxTokenSize)
	if err != nil {
		return nil, fail("TSA certificate %s cannot be read: %v", certPath, err)
	}
	if b, _ := pem.Decode(cb); b != nil {
		cb = b.Bytes
	}
	cert, err := x509.ParseCertificate(cb)
	if err != nil {
		return nil, fail("TSA certificate %s is not an X.509 certificate: %v", certPath, err)
	}
	t, err := Verify(tok, cert, data)
	if err != nil {
		return nil, fail("timestamp %s: %v", tokenPath, err)
	}
	return t, nil
}

// Verify checks an RFC 3161 token (or a TimeStampResp holding one) in DER
// over data: the TSTInfo's message imprint is data's digest, the signed
// attributes carry the TSTInfo's digest and content type, and cert's key
// made the signature over them.
func Verify(der []byte, cert *x509.Certificate, data []byte) (*Token, error) {
	ci, err := parseToken(der)
	if err != nil {
		return nil, err
	}
	var sd signedData
	if rest, err := asn1.Unmarshal(ci.Content.Bytes, &sd); err != nil || len(rest) > 0 {
		return nil, fail("not a CMS SignedData: %v", err)
	}
	if !sd.EncapContentInfo.EContentType.Equal(oidTSTInfo) {
		return nil, fail("the signed content is %v, not a TSTInfo", sd.EncapContentInfo.EContentType)
	}
	var info tstInfo
	if _, err := asn1.Unmarshal(sd.EncapContentInfo.EContent, &info); err != nil {
		return nil, fail("the TSTInfo cannot be read: %v", err)
	}
	h, ok := hashOf(info.MessageImprint.HashAlgorithm.Algorithm)
	if !ok {
		return nil, fail("the message imprint uses hash %v; tpctl checks SHA-256, SHA-384 and SHA-512", info.MessageImprint.HashAlgorithm.Algorithm)
	}
	if !bytes.Equal(digest(h, data), info.MessageImprint.HashedMessage) {
		return nil, fail("the token is over other bytes: its message imprint is %x, the file's %s is %x", info.MessageImprint.HashedMessage, h, digest(h, data))
	}
	if len(sd.SignerInfos) != 1 {
		return nil, fail("the token has %d signers, want one", len(sd.SignerInfos))
	}
	si := sd.SignerInfos[0]
	if len(si.SignedAttrs.FullBytes) == 0 {
		return nil, fail("the token has no signed attributes")
	}
	sh, ok := hashOf(si.DigestAlgorithm.Algorithm)
	if !ok {
		return nil, fail("the signer uses digest %v", si.DigestAlgorithm.Algorithm)
	}
	// The signature is over the attributes as a SET (tag 0x31), not as
	// the [0] IMPLICIT they are carried in.
	signed := append([]byte{0x31}, si.SignedAttrs.FullBytes[1:]...)
	var attrs []attribute
	if _, err := asn1.UnmarshalWithParams(signed, &attrs, "set"); err != nil {
		return nil, fail("the signed attributes cannot be read: %v", err)
	}
	var gotDigest, gotType bool
	for _, a := range attrs {
		switch {
		case a.Type.Equal(oidMessageDigest):
			var d []byte
			if _, err := asn1.Unmarshal(a.Values.Bytes, &d); err != nil || !bytes.Equal(d, digest(sh, sd.EncapContentInfo.EContent)) {
				return nil, fail("the signed message digest is not the TSTInfo's")
			}
			gotDigest = true
		case a.Type.Equal(oidContentType):
			var t asn1.ObjectIdentifier
			if _, err := asn1.Unmarshal(a.Values.Bytes, &t); err != nil || !t.Equal(oidTSTInfo) {
				return nil, fail("the signed content type is not a TSTInfo")
			}
			gotType = true
		}
	}
	if !gotDigest || !gotType {
		return nil, fail("the signed attributes lack the message digest or the content type")
	}
	alg, err := sigAlg(si.SignatureAlgorithm.Algorithm, sh, cert)
	if err != nil {
		return nil, err
	}
	if err := cert.CheckSignature(alg, signed, si.Signature); err != nil {
		return nil, fail("the signature does not verify with the TSA certificate %q: %v", cert.Subject.String(), err)
	}
	return &Token{Time: info.GenTime.UTC(), Serial: info.SerialNumber, Authority: cert.Subject.String()}, nil
}

func parseToken(der []byte) (*contentInfo, error) {
	var ci contentInfo
	if rest, err := asn1.Unmarshal(der, &ci); err == nil && len(rest) == 0 && ci.ContentType.Equal(oidSignedData) {
		return &ci, nil
	}
	var resp timeStampResp
	if rest, err := asn1.Unmarshal(der, &resp); err != nil || len(rest) > 0 {
		return nil, errors.New("not an RFC 3161 time-stamp token or response in DER")
	}
	var status struct {
		Status int
		Rest   asn1.RawValue `asn1:"optional"`
	}
	if _, err := asn1.Unmarshal(resp.Status.FullBytes, &status); err != nil || status.Status > 1 {
		return nil, fmt.Errorf("the time-stamp response is not granted (status %d)", status.Status)
	}
	if !resp.Token.ContentType.Equal(oidSignedData) {
		return nil, errors.New("the time-stamp response holds no token")
	}
	return &resp.Token, nil
}

func hashOf(oid asn1.ObjectIdentifier) (crypto.Hash, bool) {
	switch {
	case oid.Equal(oidSHA256):
		return crypto.SHA256, true
	case oid.Equal(oidSHA384):
		return crypto.SHA384, true
	case oid.Equal(oidSHA512):
		return crypto.SHA512, true
	}
	return 0, false
}

func digest(h crypto.Hash, b []byte) []byte {
	switch h {
	case crypto.SHA384:
		s := sha512.Sum384(b)
		return s[:]
	case crypto.SHA512:
		s := sha512.Sum512(b)
		return s[:]
	}
	s := sha256.Sum256(b)
	return s[:]
}

// sigAlg maps the signer's signature algorithm (and its digest, for a
// bare rsaEncryption or an EC key) to x509's.
func sigAlg(oid asn1.ObjectIdentifier, h crypto.Hash, cert *x509.Certificate) (x509.SignatureAlgorithm, error) {
	byHash := func(a, b, c x509.SignatureAlgorithm) x509.SignatureAlgorithm {
		switch h {
		case crypto.SHA384:
			return b
		case crypto.SHA512:
			return c
		}
		return a
	}
	switch {
	case oid.Equal(oidRSA):
		return byHash(x509.SHA256WithRSA, x509.SHA384WithRSA, x509.SHA512WithRSA), nil
	case oid.Equal(oidRSASHA256):
		return x509.SHA256WithRSA, nil
	case oid.Equal(oidRSASHA384):
		return x509.SHA384WithRSA, nil
	case oid.Equal(oidRSASHA512):
		return x509.SHA512WithRSA, nil
	case oid.Equal(oidECDSASHA256):
		return x509.ECDSAWithSHA256, nil
	case oid.Equal(oidECDSASHA384):
		return x509.ECDSAWithSHA384, nil
	case oid.Equal(oidECDSASHA512):
		return x509.ECDSAWithSHA512, nil
	case oid.Equal(oidECPublicKey) && cert.PublicKeyAlgorithm == x509.ECDSA:
		return byHash(x509.ECDSAWithSHA256, x509.ECDSAWithSHA384, x509.ECDSAWithSHA512), nil
	}
	return 0, fail("the token is signed with %v, which tpctl does not check (RSA and ECDSA)", oid)
}
