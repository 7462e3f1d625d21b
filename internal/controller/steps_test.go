package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// trace is a scope that records which steps ran.
type trace struct {
	ran []string
	Outcome
}

func step(name string, do func(*trace) (reconcile.Result, error)) Step[*trace] {
	return func(_ context.Context, s *trace) (reconcile.Result, error) {
		s.ran = append(s.ran, name)
		return do(s)
	}
}

func TestTheStepsStopAtTheFirstThatErrsRequeuesOrSetsTheOutcome(t *testing.T) {
	ok := func(*trace) (reconcile.Result, error) { return reconcile.Result{}, nil }
	ending := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("namespace is being terminated"))
	ending.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	cases := []struct {
		name     string
		second   func(*trace) (reconcile.Result, error)
		ran      int
		terminal bool
		err      bool
		requeue  bool
		quiet    bool
	}{
		{name: "all pass", second: ok, ran: 3},
		{name: "an error stops", second: func(*trace) (reconcile.Result, error) { return reconcile.Result{}, errors.New("boom") }, ran: 2, err: true},
		{name: "a requeue stops", second: func(*trace) (reconcile.Result, error) { return reconcile.Result{RequeueAfter: time.Second}, nil }, ran: 2, requeue: true},
		{name: "a wait stops without an error", second: func(s *trace) (reconcile.Result, error) {
			s.Waiting = Because("KitBuilding", "building")
			return reconcile.Result{}, nil
		}, ran: 2},
		{name: "bad input is a terminal error", second: func(s *trace) (reconcile.Result, error) {
			s.Failure = Because("InvalidTrait", "not a number")
			return reconcile.Result{}, nil
		}, ran: 2, err: true, terminal: true},
		{name: "bad input that asks for a requeue is retried", second: func(s *trace) (reconcile.Result, error) {
			s.Failure = Because("KitRefused", "refused")
			return reconcile.Result{RequeueAfter: time.Minute}, nil
		}, ran: 2, requeue: true},
		{name: "a step that did it all stops", second: func(s *trace) (reconcile.Result, error) {
			s.Done = true
			return reconcile.Result{}, nil
		}, ran: 2},
		{name: "a namespace that ends stops quietly", second: func(*trace) (reconcile.Result, error) { return reconcile.Result{}, ending }, ran: 2, quiet: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &trace{}
			res, err := RunSteps(context.Background(), s, &s.Outcome, step("a", ok), step("b", tc.second), step("c", ok))
			if len(s.ran) != tc.ran {
				t.Errorf("ran %v, want %d steps", s.ran, tc.ran)
			}
			if (err != nil) != tc.err || errors.Is(err, reconcile.TerminalError(nil)) != tc.terminal {
				t.Errorf("error %v: want an error %v, terminal %v", err, tc.err, tc.terminal)
			}
			if (res.RequeueAfter > 0) != tc.requeue || s.Quiet != tc.quiet {
				t.Errorf("result %+v, quiet %v", res, s.Quiet)
			}
		})
	}
}
