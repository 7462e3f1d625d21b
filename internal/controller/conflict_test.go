package controller

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNamespaceEndingIsTheRefusalOfATerminatingNamespace(t *testing.T) {
	terminating := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}},
	}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "deployments"}, "it", errors.New("no"))
	cases := map[string]struct {
		err  error
		want bool
	}{
		"a terminating namespace":         {terminating, true},
		"a wrapped one":                   {errors.Join(errors.New("applying"), terminating), true},
		"another refusal":                 {forbidden, false},
		"a namespace that does not exist": {apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ns"), false},
		"no error":                        {nil, false},
	}
	for name, tc := range cases {
		if got := NamespaceEnding(tc.err); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}
