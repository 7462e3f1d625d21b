package cmdutil

// This file holds what the commands that create, change and assign
// resources share: the check that an operator id is registered, the
// server-side apply that keeps others' fields and assignments, the
// printing of what they apply, and the watch of integrations that --wait
// reads.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/platform"
	camelruntime "github.com/caravan-dev/caravan/internal/runtime"
)

// PlatformProvider is the runtime provider the platform of the registered operator reg builds on;
// nil when there is no registration or its platform cannot be read.
func PlatformProvider(ctx context.Context, c client.Reader, reg *camelv1alpha1.IntegrationOperator) camelruntime.Provider {
	if reg == nil || reg.Status.Namespace == "" {
		return nil
	}
	itp := &camelv1.IntegrationPlatform{}
	if c.Get(ctx, client.ObjectKey{Namespace: reg.Status.Namespace, Name: reg.Name}, itp) != nil {
		return nil
	}
	p, err := camelruntime.ProviderNamed(platform.Resolve(itp.Spec).Build.RuntimeProvider)
	if err != nil {
		return nil
	}
	return p
}

// CheckOperatorRegistered is the check before a command assigns resources
// to the operator id: exactly one GET of the IntegrationOperator named id.
//
//   - Registered and live: nil.
//   - Registered, heartbeat stale or never renewed: a warning on warn, nil.
//   - Not registered: an error naming the registered ids (a LIST, only
//     then) and --force.
//   - The GET is forbidden: a warning on warn, nil; the API server's
//     admission policy still decides whether the assignment is allowed.
//   - Any other failure: an error.
func CheckOperatorRegistered(ctx context.Context, c client.Reader, id string, now time.Time, warn io.Writer) error {
	_, err := ReadRegistration(ctx, c, id, now, warn)
	return err
}

// ReadRegistration is checkOperatorRegistered's check, which also returns the
// registration it read: nil when it could not be read and that is no error.
func ReadRegistration(ctx context.Context, c client.Reader, id string, now time.Time, warn io.Writer) (*camelv1alpha1.IntegrationOperator, error) {
	iop := &camelv1alpha1.IntegrationOperator{}
	err := c.Get(ctx, client.ObjectKey{Name: id}, iop)
	switch {
	case apierrors.IsNotFound(err):
		return nil, notRegisteredError(ctx, c, id)
	case apierrors.IsForbidden(err):
		fmt.Fprintf(warn, "Warning: cannot check that operator %q is registered: %v\n", id, err)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("checking that operator %q is registered: %w", id, err)
	}
	reg := ownership.FromOperator(iop)
	if reg.Live(now) {
		return iop, nil
	}
	if reg.Heartbeat.IsZero() {
		fmt.Fprintf(warn, "Warning: operator %q is registered but has never renewed its registration: "+
			"its resources wait until it runs\n", id)
		return iop, nil
	}
	fmt.Fprintf(warn, "Warning: operator %q is registered but its heartbeat is stale (last renewed %s ago, at %s): "+
		"its resources wait until it runs again\n",
		id, now.Sub(reg.Heartbeat).Round(time.Second), reg.Heartbeat.UTC().Format(time.RFC3339))
	return iop, nil
}

// notRegisteredError names the registered ids when the caller may list
// them, and says how to go on anyway.
func notRegisteredError(ctx context.Context, c client.Reader, id string) error {
	const hint = "(use --force to assign it anyway)"
	list := &camelv1alpha1.IntegrationOperatorList{}
	if err := c.List(ctx, list); err != nil {
		return fmt.Errorf("operator id %q is not registered %s", id, hint)
	}
	ids := make([]string, 0, len(list.Items))
	for _, iop := range list.Items {
		ids = append(ids, iop.Name)
	}
	slices.Sort(ids)
	registered := "none"
	if len(ids) > 0 {
		registered = strings.Join(ids, ", ")
	}
	return fmt.Errorf("operator id %q is not registered; registered: %s %s", id, registered, hint)
}

// ValidateOperatorIDFlag checks the value of an operator id flag, naming the flag.
func ValidateOperatorIDFlag(flag, id string) error {
	if err := ownership.ValidateID(id); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}

// caravanFieldManager is the field manager of what the CLI applies.
const caravanFieldManager = "caravan"

// ValidateOutputFormat accepts the -o values of the commands that print
// the object they apply.
func ValidateOutputFormat(format string) error {
	switch format {
	case "", "yaml", "json":
		return nil
	}
	return fmt.Errorf("-o/--output %q is not supported: use yaml or json", format)
}

// printObjectAs prints obj, whose apiVersion and kind must be set, as
// yaml or json.
func printObjectAs(obj runtime.Object, format string, out io.Writer) error {
	var p printers.ResourcePrinter
	switch format {
	case "yaml":
		p = &printers.YAMLPrinter{}
	case "json":
		p = &printers.JSONPrinter{}
	default:
		return ValidateOutputFormat(format)
	}
	return p.PrintObj(obj, out)
}

// PrintApplyResult prints obj in format, or a line saying what happened.
func PrintApplyResult(out io.Writer, obj client.Object, format, kind, result string) error {
	if format != "" {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			u = u.DeepCopy()
			u.SetManagedFields(nil)
			obj = u
		}
		return printObjectAs(obj, format, out)
	}
	_, err := fmt.Fprintf(out, "%s %q %s\n", kind, obj.GetName(), result)
	return err
}

// ApplyAsCaravan creates or updates obj (TypeMeta set) by server-side
// apply with the field manager caravan, forcing ownership of the fields it
// sets: fields others set and caravan does not are kept. Unless assign is
// true, an operator-id annotation that caravan applied before is applied
// again as it is, with the resourceVersion read as a precondition (retried
// on a conflict), so that the apply never drops or changes an assignment.
// It returns "created", "updated" or "unchanged", and the object applied.
func ApplyAsCaravan(ctx context.Context, c client.Client, obj client.Object, assign bool, opts ...client.ApplyOption) (string, *unstructured.Unstructured, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	var result string
	var applied *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(gvk)
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		found := err == nil
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("converting %s for apply: %w", gvk.Kind, err)
		}
		want := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(want.Object, "status")
		unstructured.RemoveNestedField(want.Object, "metadata", "creationTimestamp")
		if found && !assign && CaravanAppliedOperatorID(existing) {
			// Leaving it out would make the apply remove it: keep it
			// as it is, unless it changed since it was read.
			ann := want.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[camelv1.OperatorIDAnnotation] = existing.GetAnnotations()[camelv1.OperatorIDAnnotation]
			want.SetAnnotations(ann)
			want.SetResourceVersion(existing.GetResourceVersion())
		}
		err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(want),
			append([]client.ApplyOption{client.FieldOwner(caravanFieldManager), client.ForceOwnership}, opts...)...)
		if err != nil {
			return err
		}
		applied = want
		switch {
		case !found:
			result = "created"
		case want.GetResourceVersion() == existing.GetResourceVersion():
			result = "unchanged"
		default:
			result = "updated"
		}
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("applying %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return result, applied, nil
}

// CaravanAppliedOperatorID tells whether the field manager caravan owns,
// by apply, the operator-id annotation of obj: an apply that leaves it out
// removes it.
func CaravanAppliedOperatorID(obj metav1.Object) bool {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != caravanFieldManager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Metadata struct {
				Annotations map[string]json.RawMessage `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if json.Unmarshal(mf.FieldsV1.Raw, &fields) == nil {
			if _, ok := fields.Metadata.Annotations["f:"+camelv1.OperatorIDAnnotation]; ok {
				return true
			}
		}
	}
	return false
}

// IntegrationListWatch lists and watches Integrations with opts, for
// watchtools.UntilWithSync.
func IntegrationListWatch(c client.WithWatch, opts ...client.ListOption) cache.ListerWatcher {
	withRaw := func(raw metav1.ListOptions) []client.ListOption {
		return append([]client.ListOption{&client.ListOptions{Raw: &raw}}, opts...)
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, raw metav1.ListOptions) (runtime.Object, error) {
			list := &camelv1.IntegrationList{}
			return list, c.List(ctx, list, withRaw(raw)...)
		},
		WatchFuncWithContext: func(ctx context.Context, raw metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &camelv1.IntegrationList{}, withRaw(raw)...)
		},
	}
}

// ReadyMessage is the message of an integration's Ready condition, or "no message".
func ReadyMessage(it *camelv1.Integration) string {
	if c := meta.FindStatusCondition(it.Status.Conditions, camelv1.ConditionReady); c != nil && c.Message != "" {
		return c.Message
	}
	return "no message"
}

// DescribeWait says where an integration was when a wait ended.
func DescribeWait(it *camelv1.Integration) string {
	switch {
	case it == nil:
		return "it was not found"
	case it.OperatorID() == "":
		return "no operator has adopted it: is a default operator running?"
	case it.Status.Ownership.Owner != it.OperatorID():
		return fmt.Sprintf("operator %s has not taken it yet: is it running?", it.OperatorID())
	case it.Status.Phase == "":
		return fmt.Sprintf("operator %s has not reported a phase", it.OperatorID())
	}
	return fmt.Sprintf("phase %s: %s", it.Status.Phase, ReadyMessage(it))
}
