package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/auth/rbac/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/install"
)

// rightsEvery is how many heartbeats apart an operator checks that it
// holds its rights: every 30s with the default heartbeat.
const rightsEvery = 3

// reasonMissingRights is the reason of the condition, the Event and the
// registration's Ready=False while rights are missing.
const reasonMissingRights = "MissingRights"

// RightsCheck checks that the operator's identity holds every rule it needs, and says what is
// missing. It runs one SelfSubjectRulesReview in each namespace the operator serves against
// install.RequiredRules. When rules are missing, /readyz fails, the registration gets the
// MissingRights condition, and a Warning Event and a log line name the rules, once per change. An
// operator whose RoleBindings were removed, or that was installed by hand with too few rights, says
// so instead of looping on "forbidden". Every replica checks, leader or not.
type RightsCheck struct {
	Client          client.Client
	ID, Namespace   string
	WatchNamespaces []string
	// PodName names the operator's pod, which the Events are about; when
	// empty (an operator that is not a pod), they are about the
	// registration.
	PodName  string
	Recorder events.EventRecorder
	Interval time.Duration

	mu      sync.Mutex
	checked bool
	missing string
}

// required are the rules the operator needs in each namespace it serves.
type required struct {
	namespace string
	rules     []rbacv1.PolicyRule
}

// NeedLeaderElection makes every replica check its rights.
func (r *RightsCheck) NeedLeaderElection() bool { return false }

// Start checks the rights until ctx ends.
func (r *RightsCheck) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithValues("operatorID", r.ID)
	interval := r.Interval
	if interval <= 0 {
		interval = 30 * time.Second
	}
	var need []required
	for _, ns := range install.ServedNamespaces(r.Namespace, r.WatchNamespaces) {
		rules, err := install.RequiredRules(r.ID, r.Namespace, ns)
		if err != nil {
			return err
		}
		need = append(need, required{ns, rules})
	}
	for {
		missing, err := r.check(ctx, need)
		if err != nil {
			log.Error(err, "Checking the operator's rights failed")
		} else if r.changed(missing) {
			r.report(ctx, missing)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// Missing is what the operator's identity lacks, or "".
func (r *RightsCheck) Missing() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.missing
}

// ReadyCheck fails until the rights were checked, and while some lack.
func (r *RightsCheck) ReadyCheck(*http.Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.checked:
		return errors.New("the operator's rights are not checked yet")
	case r.missing != "":
		return errors.New(r.missing)
	}
	return nil
}

func (r *RightsCheck) changed(missing string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := !r.checked || missing != r.missing
	r.checked, r.missing = true, missing
	return changed
}

// check returns a message naming the rules the operator lacks in each
// namespace it serves (need), or "" when it holds them all.
func (r *RightsCheck) check(ctx context.Context, need []required) (string, error) {
	var lacks []string
	for _, n := range need {
		ns, want := n.namespace, n.rules
		review := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}
		if err := r.Client.Create(ctx, review); err != nil {
			return "", fmt.Errorf("reviewing the operator's rules in namespace %s: %w", ns, err)
		}
		held := make([]rbacv1.PolicyRule, 0, len(review.Status.ResourceRules))
		for _, rule := range review.Status.ResourceRules {
			held = append(held, rbacv1.PolicyRule{Verbs: rule.Verbs, APIGroups: rule.APIGroups,
				Resources: rule.Resources, ResourceNames: rule.ResourceNames})
		}
		if covered, uncovered := validation.Covers(held, want); !covered {
			note := ""
			if review.Status.Incomplete {
				note = " (the authorizer could not list every rule: " + review.Status.EvaluationError + ")"
			}
			lacks = append(lacks, "in namespace "+ns+": "+describeRules(uncovered)+note)
		}
	}
	if len(lacks) == 0 {
		return "", nil
	}
	return fmt.Sprintf("the identity of operator %s lacks rights it needs, %s; re-install it (caravan install -n %s -x %s --force) or restore its RoleBindings",
		r.ID, strings.Join(lacks, "; "), r.Namespace, r.ID), nil
}

// describeRules lists rules broken down to one verb and resource each as
// "verb,verb resource.group" items.
func describeRules(rules []rbacv1.PolicyRule) string {
	verbs := map[string][]string{}
	for _, rule := range rules {
		for _, group := range rule.APIGroups {
			for _, res := range rule.Resources {
				key := res
				if group != "" {
					key += "." + group
				}
				if len(rule.ResourceNames) > 0 {
					key += "/" + strings.Join(rule.ResourceNames, ",")
				}
				verbs[key] = append(verbs[key], rule.Verbs...)
			}
		}
	}
	keys := make([]string, 0, len(verbs))
	for k := range verbs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	items := make([]string, 0, len(keys))
	for _, k := range keys {
		v := verbs[k]
		sort.Strings(v)
		items = append(items, strings.Join(slices.Compact(v), ",")+" "+k)
	}
	return strings.Join(items, ", ")
}

// report logs the change, records an Event, and sets or clears the registration's MissingRights
// condition. The Event and the condition need the registration to exist and the operator to be
// allowed to write its status.
func (r *RightsCheck) report(ctx context.Context, missing string) {
	log := ctrl.LoggerFrom(ctx).WithValues("operatorID", r.ID)
	iop := &camelv1alpha1.IntegrationOperator{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: r.ID}, iop); err != nil {
		if missing != "" {
			log.Info("Missing rights", "missing", missing)
		}
		return
	}
	// An Event about the pod goes to the operator's namespace, where a
	// limited operator may write Events; one about the cluster-scoped
	// registration would go to the default namespace.
	var regarding runtime.Object = iop
	if r.PodName != "" {
		regarding = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.PodName}}
	}
	if missing != "" {
		log.Info("Missing rights", "missing", missing)
		controller.Event(r.Recorder, regarding, iop, corev1.EventTypeWarning, reasonMissingRights, "CheckRights", eventNote(missing))
	} else if meta.FindStatusCondition(iop.Status.Conditions, camelv1alpha1.ConditionMissingRights) != nil {
		log.Info("The operator's rights are complete again")
		controller.Event(r.Recorder, regarding, iop, corev1.EventTypeNormal, "RightsRestored", "CheckRights",
			fmt.Sprintf("operator %s holds every right it needs again", r.ID))
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := r.Client.Get(ctx, client.ObjectKey{Name: r.ID}, iop); err != nil {
			return err
		}
		var changed bool
		if missing == "" {
			changed = meta.RemoveStatusCondition(&iop.Status.Conditions, camelv1alpha1.ConditionMissingRights)
		} else {
			changed = meta.SetStatusCondition(&iop.Status.Conditions, metav1.Condition{
				Type: camelv1alpha1.ConditionMissingRights, Status: metav1.ConditionTrue,
				Reason: reasonMissingRights, Message: missing, ObservedGeneration: iop.Generation})
		}
		if !changed {
			return nil
		}
		return r.Client.Status().Update(ctx, iop)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		log.Error(err, "Recording the missing rights on the registration failed")
	}
}

// eventNote is message, cut to fit an Event's note with a pointer to the condition that holds it whole.
func eventNote(message string) string {
	return controller.CutNote(message, " ... (the MissingRights condition of the IntegrationOperator lists them all)")
}
