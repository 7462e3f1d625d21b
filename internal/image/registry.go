// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package image builds kit images without a daemon, with go-containerregistry. It
// takes a base image from a registry, appends one layer with the kit files, and pushes
// the result by digest to the platform's registry. Every failure is an *Error whose
// Reason tells the caller which condition to write and whether to retry (IsRetryable).
package image

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is where kit images are pushed, and base images named without a host are
// pulled from: the platform's spec.build.registry.
type Registry struct {
	// Address is the registry's host[:port]; a leading http:// or https:// is ignored.
	Address string
	// Insecure allows plain HTTP and TLS certificates that cannot be verified.
	Insecure bool
	// Auth gives the credentials for Address; nil means anonymous.
	Auth authn.Authenticator
	// Organization prefixes every repository pushed to, when set.
	Organization string
	// CACertificates are PEM certificates trusted for Address besides the
	// system's: a registry whose certificate a private CA signed.
	CACertificates []byte
}

// PushTarget parses REGISTRY[/REPOSITORY], a destination of pushes, into the registry, with the
// docker configuration's credentials for it (as docker push reads them), and the repository prefix.
func PushTarget(target string, insecure bool) (Registry, string, error) {
	host, prefix, _ := strings.Cut(strings.TrimSuffix(target, "/"), "/")
	reg, err := name.NewRegistry(host)
	if err != nil {
		return Registry{}, "", fmt.Errorf("registry %q: %w", host, err)
	}
	auth, err := authn.DefaultKeychain.Resolve(reg)
	if err != nil {
		return Registry{}, "", fmt.Errorf("reading the credentials of %s: %w", host, err)
	}
	return Registry{Address: host, Insecure: insecure, Auth: auth}, prefix, nil
}

// retryBackoff bounds go-containerregistry's own retries of transient HTTP failures
// within one call. It waits about 0.75 s at most: its waits do not watch the context, so
// they are kept short; longer outages are the caller's to retry, with backoff.
var retryBackoff = remote.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 3}

// host returns Address without scheme, path or trailing slash.
func (r Registry) host() string {
	h := strings.TrimSpace(r.Address)
	h = strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://")
	h, _, _ = strings.Cut(h, "/")
	return h
}

// repo returns the repository that repository names in r, under the organization.
func (r Registry) repo(repository string) (name.Repository, error) {
	path := strings.Trim(strings.TrimSpace(repository), "/")
	if path == "" {
		return name.Repository{}, fmt.Errorf("no kit image repository given")
	}
	if org := strings.Trim(strings.TrimSpace(r.Organization), "/"); org != "" {
		path = org + "/" + path
	}
	// The host is always written out, so that an organization that looks like a host
	// ("my.org") is not taken for one.
	repo, err := name.NewRepository(r.host()+"/"+path, r.nameOptions()...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("kit image repository %q: %w", path, err)
	}
	return repo, nil
}

// parse parses ref, looking names without a registry host up in r. References to r
// honour Insecure; references to other registries are always verified.
func (r Registry) parse(ref string) (name.Reference, error) {
	host := r.host()
	if host == "" {
		return nil, fmt.Errorf("no registry address: set the platform's spec.build.registry.address")
	}
	parsed, err := name.ParseReference(strings.TrimSpace(ref), name.WithDefaultRegistry(host))
	if err != nil {
		return nil, fmt.Errorf("parsing image reference %q: %w", ref, err)
	}
	if r.Insecure && r.owns(parsed) {
		parsed, err = name.ParseReference(strings.TrimSpace(ref), r.nameOptions()...)
		if err != nil {
			return nil, fmt.Errorf("parsing image reference %q: %w", ref, err)
		}
	}
	return parsed, nil
}

// nameOptions are the options to parse names in r.
func (r Registry) nameOptions() []name.Option {
	opts := []name.Option{name.WithDefaultRegistry(r.host())}
	if r.Insecure {
		opts = append(opts, name.Insecure)
	}
	return opts
}

// owns tells whether ref lives in r.
func (r Registry) owns(ref name.Reference) bool {
	return ref.Context().RegistryStr() == r.host()
}

// options returns the remote options to reach ref: r's credentials and transport for
// a reference in r, anonymous and verified TLS for any other registry.
func (r Registry) options(ctx context.Context, ref name.Reference) []remote.Option {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithRetryBackoff(retryBackoff)}
	if !r.owns(ref) {
		return append(opts, remote.WithAuth(authn.Anonymous))
	}
	return append(opts, remote.WithAuth(r.authenticator()), remote.WithTransport(r.transport()))
}

func (r Registry) authenticator() authn.Authenticator {
	if r.Auth == nil {
		return authn.Anonymous
	}
	return r.Auth
}

// transport returns an HTTP transport that skips TLS verification when r is Insecure,
// and trusts r's CA certificates besides the system's otherwise.
func (r Registry) transport() http.RoundTripper {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	switch {
	case r.Insecure:
		// The platform asked for it (spec.build.registry.insecure): a registry with a
		// self-signed certificate is common in development clusters.
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec
	case len(r.CACertificates) > 0:
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		// The caller checked that every block is a certificate.
		pool.AppendCertsFromPEM(r.CACertificates)
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return t
}

// Qualify writes ref with its registry host, looking a name without one up in r, as
// base images are.
func (r Registry) Qualify(ref string) (string, error) {
	parsed, err := r.parse(ref)
	if err != nil {
		return "", err
	}
	return parsed.Name(), nil
}
