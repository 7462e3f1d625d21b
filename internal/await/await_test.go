package await

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/caravan-dev/caravan/internal/scheme"
)

// fakeClient is controller-runtime's fake client, which serves no watch-list, with the
// metadata.name index a list by name needs, and watching closed once it watches: its watch
// does not replay what changed since the list, so a test changes the object only then.
type fakeClient struct {
	client.WithWatch
	watching chan struct{}
}

// IsWatchListSemanticsUnSupported tells informers to list, then watch.
func (fakeClient) IsWatchListSemanticsUnSupported() bool { return true }

func newFakeClient(funcs interceptor.Funcs, objs ...client.Object) *fakeClient {
	f := &fakeClient{watching: make(chan struct{})}
	funcs.Watch = func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
		w, err := c.Watch(ctx, list, opts...)
		select {
		case <-f.watching:
		default:
			close(f.watching)
		}
		return w, err
	}
	f.WithWatch = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).
		WithStatusSubresource(&appsv1.Deployment{}).
		WithIndex(&appsv1.Deployment{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).
		WithInterceptorFuncs(funcs).Build()
	return f
}

// readyReplicas is done when the Deployment has one ready replica.
func readyReplicas(d *appsv1.Deployment, err error) (bool, string, error) {
	if err != nil {
		return false, "reading the Deployment: " + err.Error(), nil
	}
	return d.Status.ReadyReplicas == 1, fmt.Sprintf("%d ready", d.Status.ReadyReplicas), nil
}

func deployment(name string, ready int32) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: name}}
	d.Status.ReadyReplicas = ready
	return d
}

type result struct {
	last string
	done bool
	err  error
}

// wait runs Object on the Deployment ops/name in the background.
func wait(ctx context.Context, c client.WithWatch, name string, check Check[*appsv1.Deployment]) chan result {
	out := make(chan result, 1)
	go func() {
		last, done, err := Object(ctx, c, client.ObjectKey{Namespace: "ops", Name: name}, &appsv1.Deployment{}, check)
		out <- result{last, done, err}
	}()
	return out
}

func TestAWaitEndsWhenTheObjectItWatchesReachesTheState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newFakeClient(interceptor.Funcs{}, deployment("orders", 0), deployment("other", 0))
	got := wait(ctx, c, "orders", readyReplicas)
	<-c.watching
	if err := c.Status().Update(ctx, deployment("other", 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		t.Fatalf("another Deployment ended the wait: %+v", r)
	case <-time.After(200 * time.Millisecond):
	}
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: "orders"}, d); err != nil {
		t.Fatal(err)
	}
	d.Status.ReadyReplicas = 1
	if err := c.Status().Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	if r := <-got; !r.done || r.err != nil || r.last != "1 ready" {
		t.Errorf("got %+v, want done with 1 ready", r)
	}
}

func TestAWaitSeesAnObjectThatDoesNotExistYetAsNotFound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newFakeClient(interceptor.Funcs{})
	seen := make(chan string, 10)
	got := wait(ctx, c, "orders", func(d *appsv1.Deployment, err error) (bool, string, error) {
		done, msg, fail := readyReplicas(d, err)
		seen <- msg
		return done, msg, fail
	})
	if msg := <-seen; msg != `reading the Deployment: deployments.apps "orders" not found` {
		t.Errorf("the first check heard %q", msg)
	}
	<-c.watching
	if err := c.Create(ctx, deployment("orders", 1)); err != nil {
		t.Fatal(err)
	}
	if r := <-got; !r.done || r.err != nil {
		t.Errorf("got %+v, want done", r)
	}
}

func TestAWaitThatRunsOutOfTimeReturnsWhatTheCheckSaidLast(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c := newFakeClient(interceptor.Funcs{}, deployment("orders", 0))
	if r := <-wait(ctx, c, "orders", readyReplicas); r.done || r.err != nil || r.last != "0 ready" {
		t.Errorf("got %+v, want not done, no error, 0 ready", r)
	}
}

func TestAWaitThatCannotListSaysWhyWhenItRunsOutOfTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("no rights"))
	c := newFakeClient(interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return forbidden
	}})
	r := <-wait(ctx, c, "orders", readyReplicas)
	if r.done || r.err != nil || !strings.Contains(r.last, "reading the Deployment: ") || !strings.Contains(r.last, "forbidden") {
		t.Errorf("got %+v, want not done, no error, and the list's error", r)
	}
}

func TestACheckThatFailsEndsTheWaitWithItsError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newFakeClient(interceptor.Funcs{}, deployment("orders", 0))
	broken := errors.New("the Deployment failed")
	r := <-wait(ctx, c, "orders", func(*appsv1.Deployment, error) (bool, string, error) { return false, "failed", broken })
	if r.done || !errors.Is(r.err, broken) {
		t.Errorf("got %+v, want the check's error", r)
	}
}
