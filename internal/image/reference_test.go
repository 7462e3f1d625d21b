// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import "testing"

func TestAnImageReferenceNoRegistryCanServeIsRefused(t *testing.T) {
	for ref, valid := range map[string]bool{
		"example/hello:1":                    true,
		"orders":                             true,
		"127.0.0.1:5000/caravan/kit:abc":     true,
		"quay.io/me/app@sha256:" + sha256Hex: true,
		"UPPER CASE/with spaces:":            false,
		"Example/hello:1":                    false,
		"example/hello:":                     false,
		"example/hello@sha256:short":         false,
		"example//hello:1":                   false,
		"example/hello-:1":                   false,
		"":                                   false,
	} {
		if err := ValidateReference(ref); (err == nil) != valid {
			t.Errorf("%q: error %v, want valid %v", ref, err, valid)
		}
	}
}

const sha256Hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
