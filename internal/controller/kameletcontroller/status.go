package kameletcontroller

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/kamelet"
)

// computeStatus derives the phase and conditions from what reconcileDefinition found.
// A valid Kamelet is Ready with its properties and their defaults; an invalid one is in Error
// and Stalled, since only the user can fix it.
func computeStatus(s *scope) {
	k, st := s.k, &s.k.Status
	st.ObservedGeneration = k.Generation
	st.Properties = properties(k)
	if s.Failure == nil {
		st.Phase = camelv1.KameletPhaseReady
		controller.SetProgress(&st.Conditions, k.Generation, metav1.ConditionTrue, controller.Current, ReasonValid, "the Kamelet is valid")
		return
	}
	st.Phase = camelv1.KameletPhaseError
	controller.SetProgress(&st.Conditions, k.Generation, metav1.ConditionFalse, controller.Stuck, s.Failure.Reason, s.Failure.Message)
}

// properties lists the definition's properties, sorted by name, with
// their defaults; none when the definition cannot be read.
func properties(k *camelv1.Kamelet) []camelv1.KameletProperty {
	props, _, err := kamelet.Properties(k)
	if err != nil || len(props) == 0 {
		return nil
	}
	out := make([]camelv1.KameletProperty, 0, len(props))
	for _, name := range slices.Sorted(maps.Keys(props)) {
		out = append(out, camelv1.KameletProperty{Name: name, Default: props[name].DefaultValue()})
	}
	return out
}
