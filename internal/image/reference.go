// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import (
	"fmt"

	"github.com/distribution/reference"
	"github.com/google/go-containerregistry/pkg/name"
)

// ValidateReference refuses an image reference that no registry can
// serve, as a kubelet refuses it (InvalidImageName). That is one with
// upper case in its repository, white space, an empty path component or
// tag, or a malformed digest. A reference without registry or tag is
// valid; it means the default ones. The kubelet's parser decides, then
// the one Caravan pulls and pushes with.
func ValidateReference(ref string) error {
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	if _, err := name.ParseReference(ref); err != nil {
		return fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	return nil
}
