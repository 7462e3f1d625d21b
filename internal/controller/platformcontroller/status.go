package platformcontroller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/platform"
)

// computeStatus writes the resolved settings into the platform's status: Ready, the only state a platform has.
// A reconcile that ended before the settings were resolved leaves the status as it was.
func computeStatus(s *scope) {
	if s.settings == nil {
		return
	}
	itp := s.itp
	itp.Status.IntegrationPlatformSpec = *s.settings
	itp.Status.Version = s.version
	itp.Status.ObservedGeneration = itp.Generation
	if _, _, err := platform.BuildSettingsOf(s.settings.Build); err != nil {
		itp.Status.Phase = camelv1.IntegrationPlatformPhaseError
		controller.SetProgress(&itp.Status.Conditions, itp.Generation, metav1.ConditionFalse, controller.Stuck,
			ReasonInvalidBuildConfiguration, fmt.Sprintf("no kit can build: %v", err))
	} else {
		itp.Status.Phase = camelv1.IntegrationPlatformPhaseReady
		controller.SetProgress(&itp.Status.Conditions, itp.Generation, metav1.ConditionTrue, controller.Current,
			ReasonResolved, fmt.Sprintf("platform of operator %s", s.operatorID))
	}
	setCatalog(s)
	setKameletRepositories(itp)
}

// ConditionKameletRepositories is Camel K's condition of a platform that names Kamelet
// repositories, which both Camel K and Caravan have given up.
const ConditionKameletRepositories = "KameletsCatalogRepositoryDeprecated"

// setKameletRepositories says, while spec.kamelet.repositories names some, that Caravan does not
// read them and what to do instead, as Camel K says they are deprecated.
func setKameletRepositories(itp *camelv1.IntegrationPlatform) {
	if len(itp.Spec.Kamelet.Repositories) == 0 {
		meta.RemoveStatusCondition(&itp.Status.Conditions, ConditionKameletRepositories)
		return
	}
	meta.SetStatusCondition(&itp.Status.Conditions, metav1.Condition{Type: ConditionKameletRepositories, Status: metav1.ConditionTrue,
		Reason: string(ReasonKameletRepositoriesNotRead), ObservedGeneration: itp.Generation, Message: fmt.Sprintf(
			"spec.kamelet.repositories (%d) are not read: the platform installs the Kamelet catalog of its Camel version; "+
				"apply other Kamelets to the cluster, or bundle them into a Maven dependency, where the runtime finds them on its classpath",
			len(itp.Spec.Kamelet.Repositories))})
}
