package installcmd

import (
	"bytes"
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/install"
)

// These tests run against the test control plane, which runs no controllers: each test
// writes the statuses the Deployment controller and the operator would.

// readyRegistration is operator id's registration in namespace ns, Ready, renewed now.
func readyRegistration(id, ns string) *camelv1alpha1.IntegrationOperator {
	iop := clitest.RegisteredOperator(id, time.Now())
	iop.Status.Namespace, iop.Status.Version = ns, "v1.2.3"
	iop.Status.Leader = id + "-operator-7d9c_1a2b"
	iop.Status.Conditions = []metav1.Condition{{Type: camelv1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: "Registered", Message: "registered", LastTransitionTime: metav1.Now()}}
	return iop
}

// operatorDeployment is the Deployment key with one replica of image, as created: not rolled out.
func operatorDeployment(key client.ObjectKey, image string) *appsv1.Deployment {
	labels := map[string]string{"app": key.Name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: image}}}}}}
}

// rollOut writes the status of a Deployment whose one replica is updated and available.
func rollOut(t *testing.T, key client.ObjectKey) {
	t.Helper()
	c := clitest.Cluster(t).Client
	d := &appsv1.Deployment{}
	if err := c.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		}}
	if err := c.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// inBackground runs wait and returns what it returns.
func inBackground(wait func() error) chan error {
	done := make(chan error, 1)
	go func() { done <- wait() }()
	return done
}

func TestInstallWaitEndsOnceTheOperatorRegistersReadyInItsNamespace(t *testing.T) {
	g := NewWithT(t)
	ns := clitest.Cluster(t).Namespace(t)
	var out bytes.Buffer
	o := &InstallOptions{ID: "wait-ready-a", Timeout: time.Minute, Cluster: cmdutil.Cluster{Namespace: ns},
		IOStreams: genericiooptions.IOStreams{Out: &out}}
	done := inBackground(func() error { return o.waitReady(context.Background(), clitest.WatchClient(t)) })
	elsewhere := readyRegistration(o.ID, "elsewhere")
	clitest.Create(t, elsewhere)
	g.Consistently(done, 500*time.Millisecond).ShouldNot(Receive(), "registered from another namespace")
	elsewhere.Status.Namespace, elsewhere.Status.HeartbeatTime = ns, &metav1.Time{Time: time.Now()}
	g.Expect(clitest.Cluster(t).Client.Status().Update(context.Background(), elsewhere)).To(Succeed())
	g.Eventually(done, 10*time.Second).Should(Receive(BeNil()))
	g.Expect(out.String()).To(Equal("operator wait-ready-a is ready (version v1.2.3)\n"))
}

func TestInstallWaitTimesOutWithTheHintsWhenTheOperatorNeverRegisters(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	o := &InstallOptions{ID: "wait-ready-never", Timeout: time.Second, Cluster: cmdutil.Cluster{Namespace: ns},
		IOStreams: genericiooptions.NewTestIOStreamsDiscard()}
	err := o.waitReady(context.Background(), clitest.WatchClient(t))
	want := "operator wait-ready-never did not become ready within 1s: see its pod (kubectl describe pods -n " + ns +
		" -l app.kubernetes.io/instance=wait-ready-never) and its log (kubectl logs -n " + ns + " deployment/wait-ready-never-operator)"
	if err == nil || err.Error() != want || command.ExitCode(err) != command.ExitTimeout {
		t.Errorf("got %v, want %q with the timeout's exit code", err, want)
	}
}

func TestTheFleetWaitEndsWhenItsDeploymentRollsOut(t *testing.T) {
	g := NewWithT(t)
	key := client.ObjectKey{Namespace: clitest.Cluster(t).Namespace(t), Name: install.FleetName}
	clitest.Create(t, operatorDeployment(key, "registry.example/caravan/operator:1"))
	var out bytes.Buffer
	done := inBackground(func() error {
		return waitDeploymentRolledOut(context.Background(), clitest.WatchClient(t), key, time.Minute, &out)
	})
	g.Consistently(done, 500*time.Millisecond).ShouldNot(Receive(), "not rolled out yet")
	rollOut(t, key)
	g.Eventually(done, 10*time.Second).Should(Receive(BeNil()))
	g.Expect(out.String()).To(Equal("Deployment " + key.String() + " rolled out\n"))
}

func TestTheFleetWaitSaysWhereTheRollOutStoodWhenItTimesOut(t *testing.T) {
	key := client.ObjectKey{Namespace: clitest.Cluster(t).Namespace(t), Name: install.FleetName}
	clitest.Create(t, operatorDeployment(key, "registry.example/caravan/operator:1"))
	err := waitDeploymentRolledOut(context.Background(), clitest.WatchClient(t), key, time.Second, &bytes.Buffer{})
	want := "Deployment " + key.String() + " did not roll out within 1s: the Deployment is InProgress: Replicas: 0/1 (kubectl describe deployment -n " +
		key.Namespace + " " + key.Name + ")"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	missing := client.ObjectKey{Namespace: key.Namespace, Name: "no-such-deployment"}
	err = waitDeploymentRolledOut(context.Background(), clitest.WatchClient(t), missing, time.Second, &bytes.Buffer{})
	want = "Deployment " + missing.String() + ` did not roll out within 1s: reading the Deployment: deployments.apps "no-such-deployment" not found` +
		" (kubectl describe deployment -n " + key.Namespace + " no-such-deployment)"
	if err == nil || err.Error() != want {
		t.Errorf("a missing Deployment: got %v, want %q", err, want)
	}
}

func TestUpgradeWaitEndsOnceAPodOfTheNewImageLeadsTheRegistration(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := clitest.Cluster(t).Client
	ns := clitest.Cluster(t).Namespace(t)
	const id, image = "wait-upgrade-a", "registry.example/caravan/operator:2"
	key := install.OperatorDeployment(id, ns)
	clitest.Create(t, operatorDeployment(key, image))
	// The control plane runs no controller to make the namespace's default ServiceAccount.
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	oldPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id + "-operator-old"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: "registry.example/caravan/operator:1"}}}}
	newPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id + "-operator-new"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: image}}}}
	clitest.Create(t, oldPod, newPod)
	iop := readyRegistration(id, ns)
	iop.Status.Leader = oldPod.Name + "_1a2b"
	clitest.Create(t, iop)

	var out bytes.Buffer
	o := &UpgradeOptions{ID: id, Image: image, Timeout: time.Minute, Cluster: cmdutil.Cluster{Namespace: ns},
		IOStreams: genericiooptions.IOStreams{Out: &out}}
	done := inBackground(func() error { return o.waitRolledOut(ctx, clitest.WatchClient(t), time.Now()) })
	g.Consistently(done, 500*time.Millisecond).ShouldNot(Receive(), "the Deployment has not rolled out")
	rollOut(t, key)
	g.Consistently(done, 500*time.Millisecond).ShouldNot(Receive(), "the old pod leads")
	iop.Status.Leader, iop.Status.HeartbeatTime = newPod.Name+"_3c4d", &metav1.Time{Time: time.Now()}
	g.Expect(c.Status().Update(ctx, iop)).To(Succeed())
	g.Eventually(done, 10*time.Second).Should(Receive(BeNil()))
	g.Expect(out.String()).To(Equal("operator " + id + " rolled out: image " + image + ", version v1.2.3\n"))
}

func TestUpgradeWaitSaysWhatItStillWaitsForWhenItTimesOut(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	const id = "wait-upgrade-late"
	key := install.OperatorDeployment(id, ns)
	clitest.Create(t, operatorDeployment(key, "registry.example/caravan/operator:2"))
	rollOut(t, key)
	o := &UpgradeOptions{ID: id, Image: "registry.example/caravan/operator:2", Timeout: time.Second, Cluster: cmdutil.Cluster{Namespace: ns},
		IOStreams: genericiooptions.NewTestIOStreamsDiscard()}
	err := o.waitRolledOut(context.Background(), clitest.WatchClient(t), time.Now())
	want := "operator " + id + " did not roll out within 1s: reading the registration: " +
		`integrationoperators.camel.apache.org "` + id + `" not found (kubectl describe deployment -n ` + ns + " " + id + "-operator)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}
