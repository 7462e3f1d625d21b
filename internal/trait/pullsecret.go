// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import "k8s.io/apimachinery/pkg/util/validation"

// PullSecret is the pull-secret trait, as in Camel K: the integration's pods pull their image
// with secretName, else, unless auto is false, with the platform's registry Secret.
// imagePullerDelegation is OpenShift's and is not acted on.
type PullSecret struct {
	disabled   bool
	auto       *bool
	secretName string
}

func parsePullSecret(o *object) PullSecret {
	if o.disabled() {
		return PullSecret{disabled: true}
	}
	return PullSecret{
		auto:       o.boolean("auto"),
		secretName: o.checked("secretName", validation.IsDNS1123Subdomain, "must be the name of a Secret (a DNS-1123 subdomain)"),
	}
}

// Secret is the Secret the pods pull with: secretName, else platformSecret (the platform's
// registry Secret, "" for none) unless auto is false; "" for none.
func (p PullSecret) Secret(platformSecret string) string {
	switch {
	case p.disabled:
		return ""
	case p.secretName != "":
		return p.secretName
	case p.auto != nil && !*p.auto:
		return ""
	}
	return platformSecret
}
