package pipecontroller

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
)

// computeStatus derives the binding's phase and conditions from what the steps observed. Its own
// failure or wait comes first, else the generated Integration's state. The phase is a label for the
// user; no step reads it.
func computeStatus(s *scope) {
	st := s.status
	st.ObservedGeneration = s.binding.GetGeneration()
	if it := s.integration; it != nil {
		st.Replicas = it.Status.Replicas
		st.Selector = it.Status.Selector
	}
	var ready metav1.Condition
	st.Phase, ready = readiness(s)
	progress := controller.ProgressOf(st.Phase, camelv1.PipePhaseReady, camelv1.PipePhaseError)
	if builtNotDeployed(s) {
		// As done as it gets until a client deploys its Integration.
		progress = controller.Current
	}
	controller.SetProgress(&st.Conditions, st.ObservedGeneration, ready.Status, progress, controller.Reason(ready.Reason), ready.Message)
	// The orphan controller marks bindings whose operator is missing; the
	// owner reconciling it is the proof that it is not.
	meta.RemoveStatusCondition(&st.Conditions, camelv1.ConditionOperatorAvailable)
	setKameletsAvailable(s)
	setDataTypesIgnored(s)
}

// ConditionDataTypesIgnored, on a binding, is True while its endpoints name data types, which
// Caravan keeps and does not act on.
const ConditionDataTypesIgnored = "DataTypesIgnored"

// DataTypeKameletAnnotation, on a binding, names the Kamelet Camel K calls for its data types in
// place of data-type-action.
const DataTypeKameletAnnotation = "camel.apache.org/kamelet.data.type"

// setDataTypesIgnored names the data types the binding's endpoints set, which take no effect, and
// removes the condition once they set none.
func setDataTypesIgnored(s *scope) {
	var c *metav1.Condition
	if len(s.ignoredDataTypes) > 0 {
		action := "the data-type-action Kamelet that Camel K calls for them does not start on Camel 4.18"
		if name := s.binding.GetAnnotations()[DataTypeKameletAnnotation]; name != "" {
			action = fmt.Sprintf("nor is the Kamelet %s that %s names called for them", name, DataTypeKameletAnnotation)
		}
		c = &metav1.Condition{Type: ConditionDataTypesIgnored, Status: metav1.ConditionTrue, Reason: string(ReasonDataTypesNotApplied),
			Message: fmt.Sprintf("%s are kept and do nothing: the messages reach the next endpoint unconverted (%s); "+
				"convert them with a step instead", strings.Join(s.ignoredDataTypes, ", "), action)}
	}
	setCompiledCondition(s, ConditionDataTypesIgnored, c)
}

// ConditionKameletsAvailable, on a binding, is Unknown while it calls Kamelets the cluster lacks,
// which the runtime is to find on its classpath, as on Camel K.
const ConditionKameletsAvailable = "KameletsAvailable"

// setKameletsAvailable sets KameletsAvailable while the binding calls Kamelets the cluster lacks,
// and removes it once it calls none.
func setKameletsAvailable(s *scope) {
	var c *metav1.Condition
	if len(s.missing) > 0 {
		c = &metav1.Condition{Type: ConditionKameletsAvailable, Status: metav1.ConditionUnknown, Reason: string(ReasonKameletNotFound),
			Message: fmt.Sprintf("the Kamelets %s are in neither namespace %s nor the operator's: the runtime looks for them on its classpath, where a "+
				"dependency such as mvn:org.apache.camel.kamelets:camel-kamelets brings them; create them, or fix their names, if none does",
				strings.Join(s.missing, ", "), s.binding.GetNamespace())}
	}
	setCompiledCondition(s, ConditionKameletsAvailable, c)
}

// setCompiledCondition sets c, or removes the condition of type typ when c is nil, as the binding's
// compile found them. A reconcile that did not compile leaves it as it was.
func setCompiledCondition(s *scope, typ string, c *metav1.Condition) {
	switch {
	case !s.compiledRead:
	case c != nil:
		c.ObservedGeneration = s.status.ObservedGeneration
		meta.SetStatusCondition(&s.status.Conditions, *c)
	default:
		meta.RemoveStatusCondition(&s.status.Conditions, typ)
	}
}

// builtNotDeployed tells whether the binding's up-to-date Integration is built and not deployed.
// The binding passes the dont-run-after-build annotation that asks for it on to its Integration.
func builtNotDeployed(s *scope) bool {
	it := s.integration
	return s.Failure == nil && s.Waiting == nil && !s.applied && it != nil &&
		it.Status.ObservedGeneration >= it.Generation && it.Status.Phase == camelv1.IntegrationPhaseBuildComplete
}

// readiness returns the phase and the Ready condition.
func readiness(s *scope) (camelv1.PipePhase, metav1.Condition) {
	switch {
	case s.Failure != nil:
		return camelv1.PipePhaseError, controller.Cond(metav1.ConditionFalse, s.Failure.Reason, s.Failure.Message)
	case s.Waiting != nil:
		return camelv1.PipePhaseCreating, controller.Cond(metav1.ConditionFalse, s.Waiting.Reason, s.Waiting.Message)
	case s.integration == nil || s.applied:
		return camelv1.PipePhaseCreating, controller.Cond(metav1.ConditionFalse, ReasonIntegrationApplied,
			fmt.Sprintf("Integration %s is being created or updated", s.binding.GetName()))
	}
	return integrationReadiness(s.integration)
}

// integrationReadiness is the binding's phase and Ready condition for the state of its Integration.
// The phase is Ready when the Integration is Running, Error when it is in Error, else Creating; the
// Ready condition is the Integration's.
func integrationReadiness(it *camelv1.Integration) (camelv1.PipePhase, metav1.Condition) {
	if it.Status.ObservedGeneration < it.Generation {
		return camelv1.PipePhaseCreating, controller.Cond(metav1.ConditionFalse, ReasonIntegrationReconciling,
			fmt.Sprintf("waiting for Integration %s to act on its latest spec", it.Name))
	}
	ready := controller.Cond(metav1.ConditionFalse, ReasonIntegrationNotReady,
		fmt.Sprintf("Integration %s is in phase %q", it.Name, it.Status.Phase))
	if c := meta.FindStatusCondition(it.Status.Conditions, camelv1.ConditionReady); c != nil {
		ready = controller.Cond(c.Status, controller.Reason(c.Reason), fmt.Sprintf("Integration %s: %s", it.Name, c.Message))
	}
	switch it.Status.Phase {
	case camelv1.IntegrationPhaseRunning:
		if ready.Status == metav1.ConditionTrue {
			return camelv1.PipePhaseReady, ready
		}
	case camelv1.IntegrationPhaseError:
		ready.Status = metav1.ConditionFalse
		return camelv1.PipePhaseError, ready
	}
	ready.Status = metav1.ConditionFalse
	return camelv1.PipePhaseCreating, ready
}
