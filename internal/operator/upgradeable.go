package operator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	operatorsv2 "github.com/operator-framework/api/pkg/operators/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// OperatorConditionEnv names the OperatorCondition that OLM made for the operator; OLM sets it in
// the Deployments it runs.
const OperatorConditionEnv = "OPERATOR_CONDITION_NAME"

// Reasons of the Upgradeable condition.
const (
	ReasonCanaryInProgress = "CanaryInProgress"
	ReasonNoCanary         = "NoCanaryInProgress"
)

// upgradeableEvery is how often the Upgradeable condition is computed again.
const upgradeableEvery = 10 * time.Second

// Upgradeable keeps the Upgradeable condition of the operator's OLM OperatorCondition. It is False
// while a canary moves resources to or from the operator, so that OLM holds an upgrade of the
// operator until the canary ends, and True otherwise.
type Upgradeable struct {
	// Client reads IntegrationOperators and writes OperatorConditions (see NewUpgradeableClient).
	Client client.Client
	ID     string
	// Namespace and Name name the OperatorCondition.
	Namespace, Name string
}

// NewUpgradeableClient is a client of cfg that knows IntegrationOperators and OperatorConditions.
func NewUpgradeableClient(cfg *rest.Config) (client.Client, error) {
	s := runtime.NewScheme()
	if err := camelv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := operatorsv2.AddToScheme(s); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: s})
}

// Start syncs the condition every upgradeableEvery until ctx ends. A failed sync is logged and
// tried again at the next tick.
func (u *Upgradeable) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithValues("operatorCondition", u.Namespace+"/"+u.Name)
	ticker := time.NewTicker(upgradeableEvery)
	defer ticker.Stop()
	for {
		if err := u.Sync(ctx); err != nil {
			log.Error(err, "Could not set the Upgradeable condition")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// NeedLeaderElection makes the leader alone write the condition.
func (u *Upgradeable) NeedLeaderElection() bool { return true }

// Sync sets the Upgradeable condition from the canaries that move resources to or from the operator.
func (u *Upgradeable) Sync(ctx context.Context) error {
	ops := &camelv1alpha1.IntegrationOperatorList{}
	if err := u.Client.List(ctx, ops); err != nil {
		return fmt.Errorf("listing the operators: %w", err)
	}
	var canaries []string
	for _, op := range ops.Items {
		c := op.Status.Canary
		if c == nil || (c.Phase != camelv1alpha1.CanaryPhaseProgressing && c.Phase != camelv1alpha1.CanaryPhaseRollingBack) {
			continue
		}
		if op.Name == u.ID || c.Spec.From == u.ID {
			canaries = append(canaries, fmt.Sprintf("from %s to %s (%s)", c.Spec.From, op.Name, c.Phase))
		}
	}
	slices.Sort(canaries)
	cond := metav1.Condition{Type: operatorsv2.Upgradeable, Status: metav1.ConditionTrue, Reason: ReasonNoCanary,
		Message: "no canary moves resources to or from operator " + u.ID}
	if len(canaries) > 0 {
		cond = metav1.Condition{Type: operatorsv2.Upgradeable, Status: metav1.ConditionFalse, Reason: ReasonCanaryInProgress,
			Message: "operator " + u.ID + " is in a canary that moves resources, " + strings.Join(canaries, ", ") +
				": an upgrade waits until it ends"}
	}
	oc := &operatorsv2.OperatorCondition{}
	if err := u.Client.Get(ctx, client.ObjectKey{Namespace: u.Namespace, Name: u.Name}, oc); err != nil {
		return fmt.Errorf("reading the OperatorCondition: %w", err)
	}
	// No observedGeneration: writing the condition changes the spec, and so the generation.
	before := oc.DeepCopy()
	meta.SetStatusCondition(&oc.Spec.Conditions, cond)
	if equality.Semantic.DeepEqual(before.Spec.Conditions, oc.Spec.Conditions) {
		return nil
	}
	if err := u.Client.Update(ctx, oc); err != nil {
		return fmt.Errorf("writing the Upgradeable condition: %w", err)
	}
	return nil
}
