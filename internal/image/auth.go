// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// dockerAuth is one entry of a Docker config's "auths".
type dockerAuth struct {
	Auth          string `json:"auth,omitempty"`
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// AuthFromDockerConfig returns the credentials for registry (host[:port]) found in data.
// data is the payload of a kubernetes.io/dockerconfigjson Secret (`{"auths": {...}}`) or
// of a legacy kubernetes.io/dockercfg one (the same map without "auths"). An entry
// matches when its key, without scheme and path, is the registry's host[:port]; it gives
// either "auth" (base64 of user:password) or username and password, or a token. It fails
// when data is not such a document or has no usable entry for registry.
func AuthFromDockerConfig(data []byte, registry string) (authn.Authenticator, error) {
	var doc struct {
		Auths map[string]dockerAuth `json:"auths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("reading docker config: %w", err)
	}
	auths := doc.Auths
	if auths == nil {
		if err := json.Unmarshal(data, &auths); err != nil {
			return nil, fmt.Errorf("reading docker config: no \"auths\" and not a legacy config: %w", err)
		}
	}
	want := registryKey(registry)
	for _, key := range slices.Sorted(maps.Keys(auths)) {
		if registryKey(key) != want {
			continue
		}
		cfg, err := auths[key].config()
		if err != nil {
			return nil, fmt.Errorf("reading docker config entry %q: %w", key, err)
		}
		return authn.FromConfig(cfg), nil
	}
	return nil, fmt.Errorf("docker config has no credentials for registry %s (it has %s)",
		want, strings.Join(slices.Sorted(maps.Keys(auths)), ", "))
}

// config decodes the entry's credentials.
func (a dockerAuth) config() (authn.AuthConfig, error) {
	cfg := authn.AuthConfig{
		Username: a.Username, Password: a.Password,
		IdentityToken: a.IdentityToken, RegistryToken: a.RegistryToken,
	}
	if a.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(a.Auth))
		if err != nil {
			return authn.AuthConfig{}, fmt.Errorf("decoding \"auth\": %w", err)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return authn.AuthConfig{}, fmt.Errorf("\"auth\" is not base64 of user:password")
		}
		cfg.Username, cfg.Password = user, pass
	}
	if cfg.Username == "" && cfg.IdentityToken == "" && cfg.RegistryToken == "" {
		return authn.AuthConfig{}, fmt.Errorf("no \"auth\", username or token")
	}
	return cfg, nil
}

// registryKey returns the host[:port] of a docker config key or registry address:
// "https://host:5000/v1/" and "host:5000" give "host:5000".
func registryKey(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	s, _, _ = strings.Cut(s, "/")
	return strings.ToLower(s)
}
