// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import (
	"encoding/base64"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/google/go-containerregistry/pkg/authn"
)

func TestAuthFromDockerConfig(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name     string
		data     string
		registry string
		want     authn.AuthConfig
		wantErr  string
	}{
		{name: "an auth entry gives the user and password it encodes",
			data:     `{"auths":{"registry.test:5000":{"auth":"` + b64("ci:p:w") + `"}}}`,
			registry: "registry.test:5000", want: authn.AuthConfig{Username: "ci", Password: "p:w"}},
		{name: "a username and password entry is used as written",
			data:     `{"auths":{"registry.test":{"username":"ci","password":"pw"}}}`,
			registry: "registry.test", want: authn.AuthConfig{Username: "ci", Password: "pw"}},
		{name: "a key with a scheme and a path matches the bare host",
			data:     `{"auths":{"https://registry.test:5000/v1/":{"username":"ci","password":"pw"}}}`,
			registry: "registry.test:5000", want: authn.AuthConfig{Username: "ci", Password: "pw"}},
		{name: "a registry address with a scheme matches a bare key",
			data:     `{"auths":{"registry.test":{"username":"ci","password":"pw"}}}`,
			registry: "http://registry.test/", want: authn.AuthConfig{Username: "ci", Password: "pw"}},
		{name: "an identity token is kept",
			data:     `{"auths":{"registry.test":{"identitytoken":"tok"}}}`,
			registry: "registry.test", want: authn.AuthConfig{IdentityToken: "tok"}},
		{name: "a legacy dockercfg map is read too",
			data:     `{"registry.test":{"auth":"` + b64("ci:pw") + `"}}`,
			registry: "registry.test", want: authn.AuthConfig{Username: "ci", Password: "pw"}},
		{name: "another registry's entry is not used",
			data:     `{"auths":{"other.test":{"username":"ci","password":"pw"}}}`,
			registry: "registry.test", wantErr: "no credentials for registry registry.test (it has other.test)"},
		{name: "an auth that is not base64 is an error",
			data:     `{"auths":{"registry.test":{"auth":"%%%"}}}`,
			registry: "registry.test", wantErr: `entry "registry.test": decoding "auth"`},
		{name: "an auth without a colon is an error",
			data:     `{"auths":{"registry.test":{"auth":"` + b64("nocolon") + `"}}}`,
			registry: "registry.test", wantErr: "not base64 of user:password"},
		{name: "an empty entry is an error",
			data:     `{"auths":{"registry.test":{}}}`,
			registry: "registry.test", wantErr: "no \"auth\", username or token"},
		{name: "a document that is not JSON is an error", data: `auths: {}`, registry: "registry.test",
			wantErr: "reading docker config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			auth, err := AuthFromDockerConfig([]byte(tc.data), tc.registry)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			got, err := authn.Authorization(t.Context(), auth)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(*got).To(Equal(tc.want))
		})
	}
}
