package install

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
)

// MinAdmissionVersion is the first Kubernetes version that serves
// MutatingAdmissionPolicy in admissionregistration.k8s.io/v1, which the
// admission policies need.
var MinAdmissionVersion = version.MajorMinor(1, 36)

// MinValidatingAdmissionVersion is the first Kubernetes version that serves
// ValidatingAdmissionPolicy v1, which the policies need at least (ValidatingOnly).
var MinValidatingAdmissionVersion = version.MajorMinor(1, 30)

// CheckAdmissionServed refuses a cluster that does not serve ValidatingAdmissionPolicy v1
// (validating), saying what to do; gitVersion is the version its /version reports, for the
// message. A cluster built from source reports no release version, so what it serves decides.
func CheckAdmissionServed(gitVersion string, validating bool) error {
	if validating {
		return nil
	}
	v, err := version.ParseGeneric(gitVersion)
	if err != nil || !v.LessThan(MinValidatingAdmissionVersion) {
		return fmt.Errorf("the cluster (Kubernetes %s) does not serve ValidatingAdmissionPolicy in admissionregistration.k8s.io/v1, which the admission policies need: turn it on in the API server, or install with --skip-admission (the operators then mirror their labels themselves, and the API server does not check who may assign resources to which operator)", gitVersion)
	}
	return fmt.Errorf("the cluster runs Kubernetes %s, and the admission policies need %s or later (ValidatingAdmissionPolicy v1): upgrade the cluster, or install with --skip-admission (the operators then mirror their labels themselves, and the API server does not check who may assign resources to which operator)",
		gitVersion, MinValidatingAdmissionVersion.String())
}

// ValidatingOnlyGuarantees says what the API server enforces, and what it does not, when the
// admission policies are installed ValidatingOnly.
const ValidatingOnlyGuarantees = `the cluster serves no MutatingAdmissionPolicy (Kubernetes before 1.36): ` +
	`the API server enforces who may assign work to which operator (the verb use, unassigned work ` +
	`included), the namespaces an operator serves, and the operators' confinement; ` +
	`the operators mirror the operator-id label themselves, so a move reaches its new operator ` +
	`after the label is mirrored rather than at once`
