package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/test/harness"
)

const (
	timeout = 90 * time.Second
	poll    = 200 * time.Millisecond
)

// newIntegration is harness.NewIntegration.
var newIntegration = harness.NewIntegration

// startRegistry starts a registry of the test's own on the cluster's address, which the
// operators' pods push to and the node pulls from over plain HTTP.
func startRegistry(t *testing.T, opts ...imagetest.Option) *imagetest.Registry {
	t.Helper()
	reg := imagetest.StartRegistry(t, append(opts, imagetest.ListenOn(env.Cluster.HostAddress()))...)
	if err := env.Cluster.PullOverPlainHTTP(reg.Address); err != nil {
		t.Fatal(err)
	}
	return reg
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// reassign changes the operator-id annotation, as `kubectl annotate
// --overwrite` does: a merge patch of the annotation only.
func reassign(t *testing.T, it *camelv1.Integration, operatorID string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, camelv1.OperatorIDAnnotation, operatorID)
	err := env.Client.Patch(context.Background(), it, client.RawPatch(types.MergePatchType, []byte(patch)))
	if err != nil {
		t.Fatalf("reassigning %s to %s: %v", it.Name, operatorID, err)
	}
}

func getIntegration(key client.ObjectKey) (*camelv1.Integration, error) {
	it := &camelv1.Integration{}
	return it, env.Client.Get(context.Background(), key, it)
}

func getDeployment(key client.ObjectKey) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	return d, env.Client.Get(context.Background(), key, d)
}

func waitRunningUnder(t *testing.T, key client.ObjectKey, operatorID string) {
	t.Helper()
	NewWithT(t).Eventually(func() error { return env.RunningUnder(key, operatorID) }, timeout, poll).Should(Succeed())
}

func waitReady(t *testing.T, ops ...*harness.Operator) {
	t.Helper()
	for _, op := range ops {
		NewWithT(t).Eventually(func() bool { ok, _ := op.Ready(); return ok }, timeout, poll).Should(BeTrue(),
			"operator %s in %s never became ready", op.ID, op.Namespace)
	}
}

// readyPodWatch samples, until stopped, the number of ready pods of an
// integration that are not being deleted, and keeps the minimum and the
// pods it saw.
type readyPodWatch struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	min  int
	n    int
	seen map[types.UID]bool
}

func watchReadyPods(ns, integration string) *readyPodWatch {
	w := &readyPodWatch{stop: make(chan struct{}), done: make(chan struct{}), min: 1 << 30, seen: map[types.UID]bool{}}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			pods := &corev1.PodList{}
			err := env.Client.List(context.Background(), pods, client.InNamespace(ns),
				client.MatchingLabels{camelv1.IntegrationLabel: integration})
			if err != nil {
				continue
			}
			ready := 0
			w.mu.Lock()
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil && podReady(&p) {
					ready++
				}
				w.seen[p.UID] = true
			}
			w.min, w.n = min(w.min, ready), w.n+1
			w.mu.Unlock()
		}
	}()
	return w
}

// Samples is the number of samples taken so far.
func (w *readyPodWatch) Samples() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Stop ends the sampling and returns the minimum, the sample count and
// the number of distinct pods seen.
func (w *readyPodWatch) Stop() (minimum, samples, pods int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.min, w.n, len(w.seen)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// metric reads one figure from an operator's metrics, or -1 when absent.
func metric(op *harness.Operator, name string, labels ...string) float64 {
	v, ok := op.Metric(name, labels...)
	if !ok {
		return -1
	}
	return v
}

func crdObject() client.Object { return &apiextensionsv1.CustomResourceDefinition{} }

// statusWatch records every status of one integration that a watch
// delivers, from its start until Stop.
type statusWatch struct {
	w    watch.Interface
	done chan struct{}
	mu   sync.Mutex
	seen []camelv1.IntegrationStatus
}

// watchStatus starts watching the integration key; it fails the test when
// the watch cannot start.
func watchStatus(t *testing.T, key client.ObjectKey) *statusWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(context.Background(), &camelv1.IntegrationList{}, client.InNamespace(key.Namespace),
		client.MatchingFields{"metadata.name": key.Name})
	if err != nil {
		t.Fatal(err)
	}
	sw := &statusWatch{w: w, done: make(chan struct{})}
	go func() {
		defer close(sw.done)
		for ev := range w.ResultChan() {
			if it, ok := ev.Object.(*camelv1.Integration); ok {
				sw.mu.Lock()
				sw.seen = append(sw.seen, it.Status)
				sw.mu.Unlock()
			}
		}
	}()
	return sw
}

// Seen returns the statuses the watch has delivered so far.
func (sw *statusWatch) Seen() []camelv1.IntegrationStatus {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return slices.Clone(sw.seen)
}

// Stop ends the watch and returns the statuses it delivered.
func (sw *statusWatch) Stop() []camelv1.IntegrationStatus {
	sw.w.Stop()
	<-sw.done
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.seen
}

// operatorPods lists the pods of installed operator id in namespace.
func operatorPods(t *testing.T, namespace, id string) []corev1.Pod {
	return env.OperatorPods(t, namespace, id)
}

// eventNotes are the notes of the Events of reason in namespace ns ("" for
// every namespace), about the object named name ("" for any) and of type
// typ ("" for either).
func eventNotes(ns, name, reason, typ string) []string {
	list := &eventsv1.EventList{}
	_ = env.Client.List(context.Background(), list, client.InNamespace(ns))
	var notes []string
	for _, e := range list.Items {
		if e.Reason == reason && (name == "" || e.Regarding.Name == name) && (typ == "" || e.Type == typ) {
			notes = append(notes, e.Note)
		}
	}
	return notes
}
