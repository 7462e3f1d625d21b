// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
)

// DefaultTruststoreDir is where the truststore of jvm.caCertificates is mounted without
// jvm.caCertMountPath, Camel K's.
const DefaultTruststoreDir = "/etc/camel/conf.d/_truststore"

// truststoreFile is the truststore's file name in its directory, Camel K's.
const truststoreFile = "truststore.jks"

// Truststore is the truststore the jvm trait has an init container build, for the JVM to trust
// private CAs: jvm.caCertificates on jvm.baseTruststore, or the deprecated caCert. The files it
// names are in the pod, mounted by the mount trait.
type Truststore struct {
	// Dir is the directory of an empty volume the truststore is written to.
	Dir string
	// Certs are the PEM certificates imported, in order.
	Certs []string
	// Base and BasePassword are a truststore to start from and the file of its password.
	Base, BasePassword string
	// Password is the file of the new truststore's password.
	Password string
}

// Path is the truststore's file.
func (ts Truststore) Path() string { return ts.Dir + "/" + truststoreFile }

// Commands are the keytool command lines that build the truststore, one per init container,
// in order: the base's copy, then each certificate's import. No shell runs them: keytool reads
// the passwords from their files.
func (ts Truststore) Commands() [][]string {
	var cmds [][]string
	if ts.Base != "" {
		cmds = append(cmds, []string{"keytool", "-importkeystore", "-noprompt", "-srckeystore", ts.Base,
			"-srcstorepass:file", ts.BasePassword, "-destkeystore", ts.Path(), "-deststoretype", "JKS",
			"-deststorepass:file", ts.Password})
	}
	for i, cert := range ts.Certs {
		cmds = append(cmds, []string{"keytool", "-importcert", "-noprompt", "-alias", "custom-ca-" + strconv.Itoa(i),
			"-storetype", "JKS", "-keystore", ts.Path(), "-storepass:file", ts.Password, "-file", cert})
	}
	return cmds
}

// Options are the JVM's options to trust the truststore. A JKS truststore's certificates are
// read without its password, so the password is on no command line.
func (ts Truststore) Options() []string {
	return []string{"-Djavax.net.ssl.trustStore=" + ts.Path(), "-Djavax.net.ssl.trustStoreType=JKS"}
}

// parseTruststore reads the jvm trait's CA certificates with Camel K's rules; nil without any.
func parseTruststore(o *object) *Truststore {
	ts := &Truststore{Dir: DefaultTruststoreDir, Password: o.str("truststorePasswordPath")}
	if raw, ok := o.value("caCertificates"); ok {
		var certs []struct {
			CertPath string `json:"certPath"`
		}
		if err := json.Unmarshal(raw, &certs); err != nil {
			o.fail("caCertificates", "must be a list of objects with a certPath", raw)
		}
		for i, c := range certs {
			if c.CertPath == "" {
				o.failItem("caCertificates", i, "must have a certPath, the path of a PEM certificate", "")
				continue
			}
			ts.Certs = append(ts.Certs, c.CertPath)
		}
	}
	newForm := len(ts.Certs) > 0
	if cert, pass := o.str("caCert"), o.str("caCertPassword"); cert != "" || pass != "" {
		if cert == "" || pass == "" {
			o.fail("caCertPassword", "is required with caCert, and caCert with it (both are deprecated: use caCertificates)", json.RawMessage(strconv.Quote(pass)))
		}
		if cert != "" && !slices.Contains(ts.Certs, cert) {
			ts.Certs = append(ts.Certs, cert)
		}
		if ts.Password == "" {
			ts.Password = pass
		}
	}
	if raw, ok := o.value("baseTruststore"); ok {
		var base struct {
			TruststorePath string `json:"truststorePath"`
			PasswordPath   string `json:"passwordPath"`
		}
		if err := json.Unmarshal(raw, &base); err != nil || (base.TruststorePath == "") != (base.PasswordPath == "") {
			o.fail("baseTruststore", "must have both a truststorePath and a passwordPath", raw)
		}
		ts.Base, ts.BasePassword = base.TruststorePath, base.PasswordPath
		if ts.Password == "" {
			ts.Password = base.PasswordPath
		}
	}
	if len(ts.Certs) == 0 {
		return nil
	}
	if newForm && ts.Password == "" {
		o.fail("truststorePasswordPath", "is required with caCertificates and no baseTruststore: the path of a file holding the new truststore's password", json.RawMessage(`""`))
	}
	if dir := o.str("caCertMountPath"); dir != "" {
		if err := checkPath(dir); err != nil {
			o.fail("caCertMountPath", err.Error(), json.RawMessage(strconv.Quote(dir)))
		}
		ts.Dir = dir
	}
	for _, p := range append([]string{ts.Password, ts.Base, ts.BasePassword}, ts.Certs...) {
		if p != "" && (!path.IsAbs(p) || path.Clean(p) != p) {
			o.errs = append(o.errs, fmt.Errorf("trait jvm: %q must be a clean absolute path, of a file the mount trait mounts", p))
		}
	}
	return ts
}
