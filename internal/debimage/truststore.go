// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// caDir is where Debian's ca-certificates package ships its PEM certificates.
const caDir = "usr/share/ca-certificates"

// certificate is a trusted CA certificate and the name of the file it came from.
type certificate struct {
	name string
	pem  []byte
	cert *x509.Certificate
}

// readCertificates returns the CA certificates under root's caDir, sorted by path.
func readCertificates(root string) ([]certificate, error) {
	var certs []certificate
	err := filepath.WalkDir(filepath.Join(root, caDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading the CA certificates: %w", err)
		}
		if d.IsDir() || !strings.HasSuffix(p, ".crt") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("reading a CA certificate: %w", err)
		}
		block, _ := pem.Decode(data)
		if block == nil || block.Type != "CERTIFICATE" {
			return fmt.Errorf("the CA certificate %s holds no PEM certificate", filepath.Base(p))
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return fmt.Errorf("parsing the CA certificate %s: %w", filepath.Base(p), err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".crt")
		certs = append(certs, certificate{name: name, pem: pem.EncodeToMemory(block), cert: cert})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, errors.New("the image has no CA certificate: is the ca-certificates package in its set?")
	}
	return certs, nil
}

// withExtra adds the certificates of the PEM bundle extra that certs lack, in the
// bundle's order; a block that is no certificate is an error.
func withExtra(certs []certificate, extra []byte) ([]certificate, error) {
	have := map[string]bool{}
	for _, c := range certs {
		have[string(c.cert.Raw)] = true
	}
	for rest := extra; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return certs, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing an extra CA certificate: %w", err)
		}
		if have[string(cert.Raw)] {
			continue
		}
		have[string(cert.Raw)] = true
		sum := sha256.Sum256(cert.Raw)
		certs = append(certs, certificate{name: "extra-" + hex.EncodeToString(sum[:6]), pem: pem.EncodeToMemory(block), cert: cert})
	}
}

// pemBundle concatenates the certificates' PEM blocks, as /etc/ssl/certs/ca-certificates.crt.
func pemBundle(certs []certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		b.Write(c.pem)
	}
	return b.Bytes()
}

// javaTrustStore returns the certificates as a PKCS#12 trust store, neither encrypted nor
// MAC-protected, which is reproducible and which Java reads with any password or none.
// Java's default trust manager opens its store without a password, and so skips the
// certificates of a store that encrypts them.
func javaTrustStore(certs []certificate) ([]byte, error) {
	entries := make([]pkcs12.TrustStoreEntry, len(certs))
	for i, c := range certs {
		entries[i] = pkcs12.TrustStoreEntry{Cert: c.cert, FriendlyName: "debian:" + strings.ToLower(c.name) + ".pem"}
	}
	data, err := pkcs12.Passwordless.EncodeTrustStoreEntries(entries, "")
	if err != nil {
		return nil, fmt.Errorf("encoding the Java trust store: %w", err)
	}
	return data, nil
}
