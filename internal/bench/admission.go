package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/install"
)

const admissionNamespace = "bench-admission"

// runAdmission measures what the admission policies cost the API server
// on each create of an assigned Integration. It measures them against the
// number of operators they know: for each M of counts, M registrations,
// first serving every namespace, then each limited to a namespace (each
// then with the RBAC grants by which the namespaces policy knows it). No
// operator runs: the API server's and etcd's CPU is the creates' alone.
func runAdmission(ctx context.Context, e *env, n int, counts []int) (*result.Admission, error) {
	res := &result.Admission{Creates: n}
	counts = slices.Sorted(slices.Values(counts))
	ids := make([]string, counts[len(counts)-1])
	for i := range ids {
		ids[i] = fmt.Sprintf("adm-%d", i)
	}
	defer e.removeAdmissionOperators(ids)
	if err := e.createNamespace(ctx, admissionNamespace); err != nil {
		return nil, err
	}
	for _, limited := range []bool{false, true} {
		for _, m := range counts {
			if err := e.registerAdmissionOperators(ctx, ids[:m], limited); err != nil {
				return nil, err
			}
			p, err := e.admissionPoint(ctx, n, ids[0])
			if err != nil {
				return nil, err
			}
			p.Operators, p.Limited = m, limited
			res.Points = append(res.Points, p)
			fmt.Fprintf(e.progress, "admission: M=%d (limited %t, %d registrations on the cluster): %.2f ms of API server CPU a create\n",
				m, limited, p.Registrations, p.APIServerMillisPerCreate)
		}
	}
	return res, e.deleteNamespace(ctx, admissionNamespace)
}

// registerAdmissionOperators creates or updates the registrations of ids and installs the
// admission policies. With limited, each serves the admission namespace and the bench's alone,
// with the grants of the namespaces policy that `caravan install` gives a limited operator.
func (e *env) registerAdmissionOperators(ctx context.Context, ids []string, limited bool) error {
	var grants []client.Object
	for _, id := range ids {
		iop := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id}}
		if _, err := controllerutil.CreateOrUpdate(ctx, e.client, iop, func() error {
			iop.Spec.WatchNamespaces = nil
			if limited {
				// The bench's own namespace too: installAdmission probes there.
				iop.Spec.WatchNamespaces = []string{admissionNamespace, operatorNamespace}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("registering %s: %w", id, err)
		}
		grants = append(grants, admissionGrants(id)...)
	}
	installer := &install.Installer{Client: e.client, Out: io.Discard}
	if !limited {
		if err := deleteAll(ctx, e.client, grants); err != nil {
			return err
		}
	} else if err := installer.Install(ctx, operatorNamespace, grants); err != nil {
		return fmt.Errorf("granting the operators their namespaces: %w", err)
	}
	return e.installAdmission(ctx, ids[:1])
}

// admissionGrants are the grants of the namespaces policy of operator id
// limited to the admission namespace and the bench's.
func admissionGrants(id string) []client.Object {
	return install.NamespacesGrants(install.Config{ID: id, Namespace: operatorNamespace,
		WatchNamespaces: []string{admissionNamespace, operatorNamespace}})
}

// deleteAll deletes objs, those that exist.
func deleteAll(ctx context.Context, c client.Client, objs []client.Object) error {
	for _, o := range objs {
		if err := client.IgnoreNotFound(c.Delete(ctx, o)); err != nil {
			return fmt.Errorf("deleting %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	return nil
}

// admissionPoint creates n Integrations assigned to id in one burst and
// returns the time it took and the control plane's CPU a create, then
// deletes them.
func (e *env) admissionPoint(ctx context.Context, n int, id string) (result.AdmissionPoint, error) {
	regs := &camelv1alpha1.IntegrationOperatorList{}
	if err := e.client.List(ctx, regs); err != nil {
		return result.AdmissionPoint{}, err
	}
	objs := make([]client.Object, n)
	for i := range objs {
		objs[i] = newIntegration(admissionNamespace, fmt.Sprintf("adm-%05d", i), id, 0, Image)
	}
	before, err := e.controlPlaneCPU()
	if err != nil {
		return result.AdmissionPoint{}, err
	}
	start := time.Now()
	if err := createAll(ctx, e.client, objs); err != nil {
		return result.AdmissionPoint{}, err
	}
	seconds := time.Since(start).Seconds()
	cpu, err := e.controlPlaneCPUSince(before)
	if err != nil {
		return result.AdmissionPoint{}, err
	}
	p := result.AdmissionPoint{
		Registrations:            len(regs.Items),
		CreateSeconds:            measure.Round3(seconds),
		APIServerMillisPerCreate: measure.Round3(cpu["kube-apiserver"] * 1000 / float64(n)),
		EtcdMillisPerCreate:      measure.Round3(cpu["etcd"] * 1000 / float64(n)),
	}
	if err := e.client.DeleteAllOf(ctx, &camelv1.Integration{}, client.InNamespace(admissionNamespace)); err != nil {
		return p, err
	}
	for {
		left := &camelv1.IntegrationList{}
		if err := e.client.List(ctx, left, client.InNamespace(admissionNamespace), client.Limit(1)); err != nil {
			return p, err
		}
		if len(left.Items) == 0 {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// removeAdmissionOperators deletes the registrations of ids and their
// grants. It needs no context: it also runs after the bench was
// interrupted.
func (e *env) removeAdmissionOperators(ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range ids {
		_ = e.client.Delete(ctx, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id}})
		_ = deleteAll(ctx, e.client, admissionGrants(id))
	}
}
