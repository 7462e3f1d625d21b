package pipecontroller

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/render"
)

// KeptForAnnotation marks an Integration that another operator (Camel K's) made from a binding,
// which this operator runs as it is: its value is the binding's generation the Integration was
// made for, "0" when the binding changed since. The binding's operator replaces the Integration
// with its own once the binding's generation is another.
const KeptForAnnotation = "caravan.dev/kept-for-generation"

// reconcileForeign takes over the Integration that an operator other than Caravan's made from
// this binding: one the binding controls and Caravan did not apply (render.Applied). It assigns it to this operator, keeping its spec, so that its pods run on (the
// Integration controller keeps its Deployment); while the binding is as that operator last
// compiled it, nothing else is written. A binding changed since is compiled and its Integration
// replaced (see reconcileIntegration).
func (r *Reconciler) reconcileForeign(ctx context.Context, s *scope) (reconcile.Result, error) {
	it := s.integration
	if it == nil {
		it = &camelv1.Integration{}
		err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.binding), it)
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		if err != nil {
			return reconcile.Result{}, err
		}
	}
	if !metav1.IsControlledBy(it, s.binding) || render.Applied(it) {
		return reconcile.Result{}, nil
	}
	generation := strconv.FormatInt(s.binding.GetGeneration(), 10)
	keptFor, recorded := it.Annotations[KeptForAnnotation]
	if !recorded {
		keptFor = "0"
		if s.status.ObservedGeneration == s.binding.GetGeneration() {
			keptFor = generation
		}
		if mine, err := r.stillMine(ctx, s.binding); err != nil || !mine {
			s.Quiet = !mine
			return reconcile.Result{}, err
		}
		if err := r.assignForeign(ctx, it, keptFor); err != nil {
			return reconcile.Result{}, err
		}
		ctrl.LoggerFrom(ctx).Info("Took over the Integration another operator made", "keptAsItIs", keptFor != "0")
	}
	if keptFor != generation {
		s.replaceForeign = true
		return reconcile.Result{}, nil
	}
	s.integration = it
	s.Done = true
	return reconcile.Result{}, nil
}

// assignForeign assigns it, an Integration another operator made, to this operator, labelled for
// it, and marks it kept for the binding's generation keptFor. Its spec and owners stay.
func (r *Reconciler) assignForeign(ctx context.Context, it *camelv1.Integration, keptFor string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": it.ResourceVersion,
		"annotations":     map[string]string{camelv1.OperatorIDAnnotation: r.OperatorID, KeptForAnnotation: keptFor},
		"labels":          map[string]string{camelv1.OperatorIDLabel: r.OperatorID},
	}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("taking over Integration %s, which another operator made: %w", it.Name, err)
	}
	return nil
}
