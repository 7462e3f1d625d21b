// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package imagetest runs a real OCI registry for tests. It is the distribution project's
// registry, built into Caravan's cache as the local cluster's is. It listens on a free
// loopback port and stores blobs in a test's temporary directory, optionally behind htpasswd
// basic auth and over TLS with a CA of its own.
package imagetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"golang.org/x/crypto/bcrypt"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/testca"
)

// Registry is a running test registry.
type Registry struct {
	// Address is the registry's 127.0.0.1:port; it stays the same across Stop and Start.
	Address string
	// Username and Password are the credentials it accepts, when started WithAuth.
	Username, Password string
	// CA is the certificate authority of its TLS certificate, when started WithTLS.
	CA *testca.CA

	t      testing.TB
	bin    string
	config string

	mu   sync.Mutex // guards the fields below
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	logs *lockedBuffer
}

// Option configures StartRegistry.
type Option func(*options)

type options struct {
	username, password string
	tls                bool
	host               string
}

// ListenOn makes the registry listen on host instead of 127.0.0.1: the local cluster's address,
// for one that pods in their own network namespaces push to.
func ListenOn(host string) Option {
	return func(o *options) { o.host = host }
}

// WithAuth makes the registry require basic auth with username and password.
func WithAuth(username, password string) Option {
	return func(o *options) { o.username, o.password = username, password }
}

// WithTLS makes the registry serve HTTPS only, with a certificate signed by a CA of the
// test's own (Registry.CA), which no client trusts by default.
func WithTLS() Option {
	return func(o *options) { o.tls = true }
}

// StartRegistry starts a registry and stops it when the test ends. It builds the
// registry into the cache first when the cache lacks it.
func StartRegistry(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	bin := findBinary(t)
	dir := t.TempDir()
	if o.host == "" {
		o.host = "127.0.0.1"
	}
	r := &Registry{
		Address:  net.JoinHostPort(o.host, freePort(t, o.host)),
		Username: o.username, Password: o.password,
		t: t, bin: bin, config: filepath.Join(dir, "config.yml"),
	}
	htpasswd := ""
	if o.username != "" {
		htpasswd = filepath.Join(dir, "htpasswd")
		writeHtpasswd(t, htpasswd, o.username, o.password)
	}
	var tlsFiles []string
	if o.tls {
		r.CA = testca.New(t, o.host)
		tlsFiles = []string{filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")}
		for i, data := range [][]byte{r.CA.ServerCertPEM, r.CA.ServerKeyPEM} {
			if err := os.WriteFile(tlsFiles[i], data, 0o600); err != nil {
				t.Fatalf("writing the test registry's TLS files: %v", err)
			}
		}
	}
	writeConfig(t, r.config, r.Address, filepath.Join(dir, "storage"), htpasswd, tlsFiles)
	t.Cleanup(r.Stop)
	r.Start()
	return r
}

// Config returns the image.Registry that reaches r, with its credentials if it has any,
// and its CA when it serves TLS.
func (r *Registry) Config() image.Registry {
	reg := image.Registry{Address: r.Address, Insecure: true}
	if r.CA != nil {
		reg.Insecure, reg.CACertificates = false, r.CA.PEM
	}
	if r.Username != "" {
		reg.Auth = &authn.Basic{Username: r.Username, Password: r.Password}
	}
	return reg
}

// Start starts the registry process, on the same address and storage as before, and
// waits until it answers. It does nothing when the registry is running.
func (r *Registry) Start() {
	r.t.Helper()
	r.mu.Lock()
	if r.cmd != nil {
		r.mu.Unlock()
		return
	}
	logs := &lockedBuffer{}
	cmd := exec.Command(r.bin, "serve", r.config)
	// A clean environment: REGISTRY_* variables would override the generated config.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Dir(r.config)}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = sysProcAttr()
	err := cmd.Start()
	if err == nil {
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		r.cmd, r.done, r.logs = cmd, done, logs
	}
	done := r.done
	r.mu.Unlock()
	if err != nil {
		r.t.Fatalf("starting the test registry %s: %v", r.bin, err)
	}
	if err := waitReady(r.Address, r.CA != nil, done); err != nil {
		r.Stop()
		r.t.Fatalf("the test registry on %s did not start: %v\n%s", r.Address, err, logs.String())
	}
}

// Stop stops the registry process and waits for it to exit; the address then refuses
// connections. Its storage is kept for Start. It does nothing when it is not running.
func (r *Registry) Stop() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.cmd, r.done = nil, nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Logs returns what the registry printed since it was last started.
func (r *Registry) Logs() string {
	r.mu.Lock()
	logs := r.logs
	r.mu.Unlock()
	if logs == nil {
		return ""
	}
	return logs.String()
}

func findBinary(t testing.TB) string {
	t.Helper()
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatalf("finding the registry: %v", err)
	}
	bin, err := localcluster.EnsureRegistry(context.Background(), cacheDir, os.Stderr)
	if err != nil {
		t.Fatalf("building the test registry: %v", err)
	}
	return bin
}

// freePort returns a loopback TCP port that is free now.
func freePort(t testing.TB, host string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func writeHtpasswd(t testing.TB, path, username, password string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatalf("hashing the test registry password: %v", err)
	}
	if err := os.WriteFile(path, fmt.Appendf(nil, "%s:%s\n", username, hash), 0o600); err != nil {
		t.Fatalf("writing the test registry htpasswd: %v", err)
	}
}

func writeConfig(t testing.TB, path, addr, storage, htpasswd string, tlsFiles []string) {
	t.Helper()
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %q
  delete:
    enabled: true
http:
  addr: %q
  secret: %q
`, storage, addr, hex.EncodeToString(secret))
	if len(tlsFiles) == 2 {
		cfg += fmt.Sprintf("  tls:\n    certificate: %q\n    key: %q\n", tlsFiles[0], tlsFiles[1])
	}
	if htpasswd != "" {
		cfg += fmt.Sprintf("auth:\n  htpasswd:\n    realm: caravan-test\n    path: %q\n", htpasswd)
	}
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatalf("writing the test registry config: %v", err)
	}
}

// waitReady polls the registry's API root until it answers (200, or 401 with auth),
// the process exits, or 15 seconds pass. Over TLS, it does not check the certificate.
func waitReady(addr string, overTLS bool, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	client := &http.Client{Timeout: time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a readiness probe of the test's own server
	scheme := "http://"
	if overTLS {
		scheme = "https://"
	}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, scheme+addr+"/v2/", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("the registry process exited")
		case <-ctx.Done():
			return fmt.Errorf("no answer on %s: %w", addr, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lockedBuffer is a buffer the process writes to while tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
