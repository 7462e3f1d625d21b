package install

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
)

// MinAdmissionVersion is the first Kubernetes version that serves
// MutatingAdmissionPolicy in admissionregistration.k8s.io/v1, which the
// admission policies need.
var MinAdmissionVersion = version.MajorMinor(1, 36)

// CheckServerVersion refuses a cluster of gitVersion (as its /version
// reports it) that is older than MinAdmissionVersion, saying what to do.
func CheckServerVersion(gitVersion string) error {
	v, err := version.ParseGeneric(gitVersion)
	if err != nil {
		return fmt.Errorf("the cluster reports Kubernetes version %q, which cannot be read: %w", gitVersion, err)
	}
	if v.LessThan(MinAdmissionVersion) {
		return fmt.Errorf("the cluster runs Kubernetes %s, and the admission policies need %s or later (MutatingAdmissionPolicy v1): upgrade the cluster, or install with --skip-admission (the operators then mirror their labels themselves, and the API server does not check who may assign resources to which operator)",
			gitVersion, MinAdmissionVersion.String())
	}
	return nil
}
