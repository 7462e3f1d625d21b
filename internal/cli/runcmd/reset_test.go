package runcmd

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

func TestResetDeletesOneOperatorsShareAndNothingElse(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	c := clitest.Cluster(t).Client
	pipe := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p1",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "op-a"}}}
	pipe.Spec.Source = camelv1.Endpoint{URI: ptr.To("timer:x")}
	pipe.Spec.Sink = camelv1.Endpoint{URI: ptr.To("log:y")}
	kitA := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kit-a",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "op-a"}}}
	kitB := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kit-b",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "op-b"}}}
	clitest.Create(t, clitest.AssignedIntegration(ns, "a1", "op-a"), clitest.AssignedIntegration(ns, "b1", "op-b"), pipe, kitA, kitB,
		clitest.ControlledByPipe(clitest.AssignedIntegration(ns, "from-p1", "op-a"), "p1"))
	reset := func(o ResetOptions) string {
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		o.IOStreams, o.Client, o.Namespace = streams, c, ns
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := o.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	exists := func(obj client.Object) bool {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	out := reset(ResetOptions{OperatorID: "op-a", DryRun: cmdutil.DryRunClient})
	for _, want := range []string{"pipe " + ns + "/p1 would be deleted", "integration " + ns + "/a1 would be deleted",
		"kit " + ns + "/kit-a would be deleted", "would delete 3 resources"} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run lacks %q:\n%s", want, out)
		}
	}
	if !exists(&camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a1"}}) {
		t.Fatal("the dry run deleted a1")
	}

	out = reset(ResetOptions{OperatorID: "op-a"})
	if !strings.Contains(out, "deleted 3 resources; 0 failed") {
		t.Errorf("got:\n%s", out)
	}
	for name, want := range map[client.Object]bool{
		&camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a1"}}:       false,
		&camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p1"}}:              false,
		&camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kit-a"}}: false,
		&camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b1"}}:       true,
		// Made from the Pipe: the garbage collector deletes it with the Pipe, not reset.
		&camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "from-p1"}}:  true,
		&camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kit-b"}}: true,
	} {
		if got := exists(name); got != want {
			t.Errorf("%T %s exists: %v, want %v", name, name.GetName(), got, want)
		}
	}
}
