// Package version holds the version of this build of Caravan.
package version

import "runtime/debug"

// Version is the version of this build when it is set at link time, with
// -ldflags "-X github.com/caravan-dev/caravan/internal/version.Version=v1.2.3".
// Without it, the module version from the build information is used, or
// "dev" for a build from a source tree.
var Version = ""

// Get returns the version of this build.
func Get() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return Development
}

// Development is the version of a build that is no release: its operator image is made on the
// local cluster only.
const Development = "dev"

// OperatorImage is the operator image a released build installs by default, by digest, set at
// link time by the release: -X github.com/caravan-dev/caravan/internal/version.OperatorImage=REF.
var OperatorImage = ""

// DefaultOperatorImage is the operator image this build installs unless told otherwise: the
// release's image by digest, else caravan/operator:<version>.
func DefaultOperatorImage() string {
	if OperatorImage != "" {
		return OperatorImage
	}
	return OperatorImageOf(Get())
}

// OperatorImageOf is the operator image of version v, by tag, as a release pushes it.
func OperatorImageOf(v string) string { return "caravan/operator:" + v }
