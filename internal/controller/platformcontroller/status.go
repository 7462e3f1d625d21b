package platformcontroller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
)

// computeStatus writes the resolved settings into the platform's status: Ready, the only state a platform has.
// A reconcile that ended before the settings were resolved leaves the status as it was.
func computeStatus(s *scope) {
	if s.settings == nil {
		return
	}
	itp := s.itp
	itp.Status.IntegrationPlatformSpec = *s.settings
	itp.Status.Phase = camelv1.IntegrationPlatformPhaseReady
	itp.Status.Version = s.version
	itp.Status.ObservedGeneration = itp.Generation
	controller.SetProgress(&itp.Status.Conditions, itp.Generation, metav1.ConditionTrue, controller.Current,
		ReasonResolved, fmt.Sprintf("platform of operator %s", s.operatorID))
	setCatalog(s)
}
