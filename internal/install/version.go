package install

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
)

// MinAdmissionVersion is the first Kubernetes version that serves
// MutatingAdmissionPolicy in admissionregistration.k8s.io/v1, which the
// admission policies need.
var MinAdmissionVersion = version.MajorMinor(1, 36)

// CheckAdmissionServed refuses a cluster that does not serve
// MutatingAdmissionPolicy v1 (served), saying what to do; gitVersion is the
// version its /version reports, for the message. A cluster built from
// source reports no release version, so what it serves decides.
func CheckAdmissionServed(gitVersion string, served bool) error {
	if served {
		return nil
	}
	v, err := version.ParseGeneric(gitVersion)
	if err != nil || !v.LessThan(MinAdmissionVersion) {
		return fmt.Errorf("the cluster (Kubernetes %s) does not serve MutatingAdmissionPolicy in admissionregistration.k8s.io/v1, which the admission policies need: turn it on in the API server, or install with --skip-admission (the operators then mirror their labels themselves, and the API server does not check who may assign resources to which operator)", gitVersion)
	}
	return fmt.Errorf("the cluster runs Kubernetes %s, and the admission policies need %s or later (MutatingAdmissionPolicy v1): upgrade the cluster, or install with --skip-admission (the operators then mirror their labels themselves, and the API server does not check who may assign resources to which operator)",
		gitVersion, MinAdmissionVersion.String())
}
