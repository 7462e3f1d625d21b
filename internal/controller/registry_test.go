package controller

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestCACertificatesMustBePEMCertificates(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "corp CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	keyDER, _ := x509.MarshalECPrivateKey(key)
	for _, tc := range []struct {
		name, data, want string
	}{
		{name: "one certificate", data: cert},
		{name: "a bundle", data: cert + "\n" + cert},
		{name: "empty", data: "", want: "holds no PEM certificate"},
		{name: "DER, not PEM", data: string(der), want: "holds something other than PEM certificates after certificate 0"},
		{name: "a key beside the certificate", data: cert + string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})),
			want: "block 2 is a EC PRIVATE KEY, not a CERTIFICATE"},
		{name: "a certificate block that does not parse", data: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")})),
			want: "certificate 1: x509:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := PEMCertificates([]byte(tc.data))
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
