package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/test/harness"
)

// timerToLog is a YAML DSL flow file for `caravan run`.
var timerToLog = filepath.Join("testdata", "cli-mutate", "timer-to-log.yaml")

// nowhere makes the CLI talk to a server that does not answer: a command
// that works with it did not need the cluster.
var nowhere = []string{"--server", "https://127.0.0.1:1", "--request-timeout", "2s"}

// adminCLI runs the built binary as a cluster administrator in namespace ns.
func adminCLI(t *testing.T, ns string) func(...string) (string, string, error) {
	admin := env.Kubeconfig(t, "admin", "system:masters")
	return func(args ...string) (string, string, error) {
		return caravan(append([]string{"--kubeconfig", admin, "-n", ns}, args...)...)
	}
}

func integrationNames(t *testing.T, ns string) []string {
	t.Helper()
	list := &camelv1.IntegrationList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, it := range list.Items {
		names = append(names, it.Name)
	}
	return names
}

// waitRegistered waits until each operator's registration is live, which
// the CLI checks before assigning anything to it.
func waitRegistered(t *testing.T, ops ...*harness.Operator) {
	t.Helper()
	for _, op := range ops {
		NewWithT(t).Eventually(func() error {
			iop := &camelv1alpha1.IntegrationOperator{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Name: op.ID}, iop); err != nil {
				return err
			}
			if !ownership.FromOperator(iop).Live(time.Now()) {
				return fmt.Errorf("operator %s: registration not live: %+v", op.ID, iop.Status)
			}
			return nil
		}, timeout, poll).Should(Succeed())
	}
}

// caravanOwnsAnnotations tells whether the field manager caravan owns any
// annotation of obj.
func caravanOwnsAnnotations(obj metav1.Object) bool {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == "caravan" && mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), `"f:annotations"`) {
			return true
		}
	}
	return false
}

// TestCLIRun: run refuses an unregistered operator id and a bad trait
// without creating anything, prints a dry run without a cluster, runs a
// flow file on a registered operator and waits until it runs, updates it
// keeping what others set, leaves the assignment alone without -x, and
// rebuild re-initialises it.
func TestCLIRun(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	opNS, apps := env.Namespace(t), env.Namespace(t)
	op := env.InstallOperator(t, "cli-run", opNS, harness.OperatorOptions{})
	waitReady(t, op)
	waitRegistered(t, op)
	run := adminCLI(t, apps)

	t.Log("an unregistered operator id is refused, naming the registered ones; nothing is created")
	_, errOut, err := run("run", timerToLog, "--image", harness.TestImage, "-x", "cli-unknown")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(MatchRegexp(`error: operator id "cli-unknown" is not registered; registered: .*\bcli-run\b.* \(use --force to assign it anyway\)`))
	g.Expect(integrationNames(t, apps)).To(BeEmpty())

	t.Log("a bad trait is refused before anything is created")
	_, errOut, err = run("run", timerToLog, "-x", "cli-run", "-t", "container.port=http")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring("trait container.port: must be an integer"))
	_, errOut, err = run("run", timerToLog, "-t", "container.port")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring("a trait setting must be TRAIT.KEY=VALUE"))
	g.Expect(integrationNames(t, apps)).To(BeEmpty())

	t.Log("a dry run prints the integration without contacting the cluster")
	out, errOut, err := caravan(append([]string{"run", timerToLog, "-n", apps, "-x", "cli-run", "--image", harness.TestImage,
		"--dry-run", "-o", "yaml"}, nowhere...)...)
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	printed := &camelv1.Integration{}
	g.Expect(yaml.UnmarshalStrict([]byte(out), printed)).To(Succeed(), out)
	g.Expect(printed.Name).To(Equal("timer-to-log"))
	g.Expect(printed.Namespace).To(Equal(apps))
	g.Expect(printed.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "cli-run"))
	g.Expect(printed.Spec.Flows).To(HaveLen(1))
	g.Expect(string(printed.Spec.Traits["container"].Raw)).To(Equal(`{"image":"` + harness.TestImage + `"}`))
	g.Expect(integrationNames(t, apps)).To(BeEmpty())

	t.Log("run -x --wait applies the flow file and waits until the integration runs on that operator")
	out, errOut, err = run("run", timerToLog, "--image", harness.TestImage, "-x", "cli-run", "--replicas", "1", "--wait", "--timeout", "2m")
	g.Expect(err).NotTo(HaveOccurred(), "stdout:\n%s\nstderr:\n%s", out, errOut)
	g.Expect(out).To(HavePrefix("integration \"timer-to-log\" created\n"))
	g.Expect(out).To(HaveSuffix("integration timer-to-log: Running\n"))
	key := client.ObjectKey{Namespace: apps, Name: "timer-to-log"}
	waitRunningUnder(t, key, "cli-run")
	it, err := getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(it.Spec.Flows).To(HaveLen(1))
	g.Expect(it.Spec.Sources).To(BeEmpty())

	t.Log("run again without -x updates the spec and keeps the assignment and what others set")
	patch := `{"metadata":{"annotations":{"team":"integrations"}},"spec":{"replicas":2}}`
	g.Expect(env.Client.Patch(ctx, it, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	out, errOut, err = run("run", timerToLog, "--image", harness.TestImage, "-p", "greeting=hello")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("integration \"timer-to-log\" updated\n"))
	it, err = getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(it.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "cli-run"))
	g.Expect(it.Annotations).To(HaveKeyWithValue("team", "integrations"))
	g.Expect(it.Spec.Replicas).To(Equal(ptr.To[int32](2)))
	g.Expect(string(it.Spec.Traits["camel"].Raw)).To(Equal(`{"properties":["greeting=hello"]}`))
	waitRunningUnder(t, key, "cli-run")

	t.Log("rebuild clears the digest; the operator re-initialises the integration, which stays ready")
	it, err = getIntegration(key)
	g.Expect(err).NotTo(HaveOccurred())
	initialized := it.Status.InitializationTimestamp.Time
	// The timestamp has a precision of a second: a re-initialisation is
	// told by the statuses a watch delivers, the digest cleared and then
	// written again, rather than by a later timestamp after a sleep.
	statuses := watchStatus(t, key)
	defer statuses.Stop()
	out, errOut, err = run("rebuild", "timer-to-log")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("integration \"timer-to-log\": digest cleared; operator \"cli-run\" re-initialises it\n"))
	g.Eventually(func() error {
		seen := statuses.Seen()
		cleared := slices.IndexFunc(seen, func(st camelv1.IntegrationStatus) bool { return st.Digest == "" })
		if cleared < 0 {
			return fmt.Errorf("the watch saw no status with the digest cleared (%d statuses)", len(seen))
		}
		st := seen[len(seen)-1]
		if len(seen)-1 == cleared || st.Digest == "" || st.InitializationTimestamp == nil || st.InitializationTimestamp.Before(&metav1.Time{Time: initialized}) {
			return fmt.Errorf("not re-initialised: digest %q, initialised %v", st.Digest, st.InitializationTimestamp)
		}
		if st.Ownership.Owner != "cli-run" || !meta.IsStatusConditionTrue(st.Conditions, camelv1.ConditionReady) {
			return fmt.Errorf("owner %q, conditions %v", st.Ownership.Owner, st.Conditions)
		}
		return nil
	}, timeout, poll).Should(Succeed())

	t.Log("run --image without files runs the pre-built image as it is: named after it, no ConfigMap")
	out, errOut, err = run("run", "--image", "example/orders:2.3", "-x", "cli-run", "-t", "prometheus.enabled=true", "--wait", "--timeout", "2m")
	g.Expect(err).NotTo(HaveOccurred(), "stdout:\n%s\nstderr:\n%s", out, errOut)
	g.Expect(out).To(HavePrefix("integration \"orders\" created\n"))
	g.Expect(out).To(HaveSuffix("integration orders: Running\n"))
	orders := client.ObjectKey{Namespace: apps, Name: "orders"}
	waitRunningUnder(t, orders, "cli-run")
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, orders, d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("example/orders:2.3"))
	g.Expect(d.Spec.Template.Spec.Containers[0].Command).To(BeNil())
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: apps, Name: "orders-camel"}, &corev1.ConfigMap{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a ConfigMap for a sourceless integration: %v", err)
	t.Log("the prometheus trait's PodMonitor, on a cluster that serves no such kind, is a warning that says what to do")
	g.Eventually(func() []string { return eventNotes(apps, "orders", "PodMonitorNotServed", corev1.EventTypeWarning) }, timeout, poll).Should(ConsistOf(And(ContainSubstring("podmonitors.monitoring.coreos.com"),
		ContainSubstring("set prometheus.podMonitor: false"))))
	g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/scrape", "true"), "the pods are still annotated for scraping")
	_, errOut, err = run("run", "-x", "cli-run")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring("give the files of the routes to run, or --image"))

	t.Log("logs prints what the integration's pods log; kwok serves one line for each container")
	out, errOut, err = run("logs", "orders")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal(localcluster.KwokPodLog + "\n"))
	g.Eventually(func() []string {
		out, _, _ := run("logs", "timer-to-log", "--tail", "1")
		return strings.Split(strings.TrimSpace(out), "\n")
	}, timeout, poll).Should(And(HaveLen(2), HaveEach(MatchRegexp(`^\[timer-to-log-[a-z0-9-]+\] `+regexp.QuoteMeta(localcluster.KwokPodLog)+`$`))),
		"two pods, each line prefixed with its pod")
	follow := exec.Command(env.Caravan, "--kubeconfig", env.Kubeconfig(t, "admin", "system:masters"), "-n", apps, "logs", "orders", "-f")
	stdout, err := follow.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(follow.Start()).To(Succeed())
	first, err := bufio.NewReader(stdout).ReadString('\n')
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(first).To(Equal(localcluster.KwokPodLog + "\n"))
	exited := make(chan error, 1)
	go func() { exited <- follow.Wait() }()
	g.Consistently(exited, time.Second, poll).ShouldNot(Receive(), "logs -f returned instead of following")
	g.Expect(follow.Process.Kill()).To(Succeed())
	<-exited
	_, errOut, err = run("logs", "nothing-here")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`integration "nothing-here" has no started pods`))

	t.Log("promote copies the running integration to another namespace, where it runs on the same image")
	prod := env.Namespace(t)
	out, errOut, err = run("promote", "orders", "--to", prod)
	g.Expect(err).NotTo(HaveOccurred(), "stdout:\n%s\nstderr:\n%s", out, errOut)
	g.Expect(out).To(Equal(fmt.Sprintf("integration \"orders\" created in namespace %s\n", prod)))
	promoted := client.ObjectKey{Namespace: prod, Name: "orders"}
	waitRunningUnder(t, promoted, "cli-run")
	pd := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, promoted, pd)).To(Succeed())
	g.Expect(pd.Spec.Template.Spec.Containers[0].Image).To(Equal("example/orders:2.3"))
	_, errOut, err = run("promote", "timer-to-log", "--to", prod, "-x", "cli-unknown")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`operator id "cli-unknown" is not registered`))
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: prod, Name: "timer-to-log"}, &camelv1.Integration{}))).
		To(BeTrue(), "a refused promotion made the integration")

	t.Log("run --dont-run-after-build stops at Build Complete; deploy runs it, undeploy takes it back, refusals change nothing")
	out, errOut, err = run("run", timerToLog, "--name", "held", "--image", harness.TestImage, "-x", "cli-run",
		"--dont-run-after-build", "--wait", "--timeout", "2m")
	g.Expect(err).NotTo(HaveOccurred(), "stdout:\n%s\nstderr:\n%s", out, errOut)
	g.Expect(out).To(HaveSuffix("integration held: Build Complete\n"))
	held := client.ObjectKey{Namespace: apps, Name: "held"}
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, held, &appsv1.Deployment{}))).To(BeTrue(), "a Deployment before the deploy")
	_, errOut, err = run("undeploy", "held")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`integration "held": it is in phase "Build Complete", and only an integration in phase "Running" or "Deploying" can be undeployed`))
	_, errOut, err = run("deploy", "timer-to-log")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`integration "timer-to-log": it is not annotated with camel.apache.org/dont-run-after-build=true`))
	waitRunningUnder(t, key, "cli-run")
	out, errOut, err = run("deploy", "held")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("integration \"held\": deploy requested; operator \"cli-run\" acts on it\n"))
	waitRunningUnder(t, held, "cli-run")
	out, errOut, err = run("undeploy", "held")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("integration \"held\": undeploy requested; operator \"cli-run\" acts on it\n"))
	g.Eventually(func() (camelv1.IntegrationPhase, error) {
		it, err := getIntegration(held)
		return it.Status.Phase, err
	}, timeout, poll).Should(Equal(camelv1.IntegrationPhaseBuildComplete))
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, held, &appsv1.Deployment{})) }, timeout, poll).
		Should(BeTrue(), "the Deployment stays after the undeploy")

	t.Log("run without -x writes no operator-id annotation")
	out, errOut, err = run("run", timerToLog, "--name", "unassigned", "--image", harness.TestImage)
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("integration \"unassigned\" created\n"))
	unassigned, err := getIntegration(client.ObjectKey{Namespace: apps, Name: "unassigned"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(unassigned.Annotations).NotTo(HaveKey(camelv1.OperatorIDAnnotation))
	g.Expect(caravanOwnsAnnotations(unassigned)).To(BeFalse(), "caravan manages annotations: %v", unassigned.ManagedFields)
}

// TestCLIReassign: reassign --from A --to B moves every Integration and
// Pipe of A, and the integrations then run under B; B's own and a third
// operator's integrations are not touched. A dry run and a refused,
// unregistered target change nothing.
func TestCLIReassign(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	opNS, apps := env.Namespace(t), env.Namespace(t)
	a := env.InstallOperator(t, "cli-a", opNS, harness.OperatorOptions{})
	b := env.InstallOperator(t, "cli-b", opNS, harness.OperatorOptions{})
	c := env.InstallOperator(t, "cli-c", opNS, harness.OperatorOptions{})
	waitReady(t, a, b, c)
	waitRegistered(t, a, b, c)
	cli := adminCLI(t, apps)

	movers := []string{"a-1", "a-2", "a-3"}
	for _, name := range movers {
		create(t, newIntegration(apps, name, "cli-a", 1))
	}
	create(t, newIntegration(apps, "b-own", "cli-b", 1))
	create(t, newIntegration(apps, "c-own", "cli-c", 1))
	pipe := &camelv1.Pipe{
		ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "a-pipe", Annotations: map[string]string{camelv1.OperatorIDAnnotation: "cli-a"}},
		Spec: camelv1.PipeSpec{
			Source: camelv1.Endpoint{URI: ptr.To("timer:tick")},
			Sink:   camelv1.Endpoint{URI: ptr.To("log:info")},
		},
	}
	create(t, pipe)
	for _, name := range movers {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, "cli-a")
	}
	untouched := map[string]string{"b-own": "cli-b", "c-own": "cli-c"}
	for name, id := range untouched {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, id)
	}
	g.Eventually(func() string {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(pipe), pipe)
		return pipe.Labels[camelv1.OperatorIDLabel]
	}, timeout, poll).Should(Equal("cli-a"), "the Pipe's label is not mirrored")

	// What a reassign writes: the annotations (the operator id) and, through
	// the admission policy, the labels. Not the resourceVersion: the
	// operators keep writing the status of the Pipe's integration, whose
	// kit cannot be built here (no registry).
	versions := func() map[string]string {
		v := map[string]string{}
		list := &camelv1.IntegrationList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(apps))).To(Succeed())
		for _, it := range list.Items {
			v[it.Name] = fmt.Sprintf("%s %v %v", it.OperatorID(), it.Annotations, it.Labels)
		}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pipe), pipe)).To(Succeed())
		v["pipe/"+pipe.Name] = fmt.Sprintf("%s %v %v", pipe.OperatorID(), pipe.Annotations, pipe.Labels)
		return v
	}
	before := versions()

	t.Log("a dry run prints what would move and changes nothing")
	out, errOut, err := cli("reassign", "--from", "cli-a", "--to", "cli-b", "--dry-run")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	for _, name := range movers {
		g.Expect(out).To(ContainSubstring(fmt.Sprintf("integration %s/%s: cli-a -> cli-b (dry run)\n", apps, name)))
	}
	g.Expect(out).To(ContainSubstring(fmt.Sprintf("pipe %s/a-pipe: cli-a -> cli-b (dry run)\n", apps)))
	g.Expect(out).To(HaveSuffix("would move 3 integrations, 1 pipe (dry run)\n"))
	g.Expect(out).NotTo(ContainSubstring("-own"))

	t.Log("an unregistered target is refused")
	_, errOut, err = cli("reassign", "--from", "cli-a", "--to", "cli-nobody")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`operator id "cli-nobody" is not registered; registered: `))
	g.Expect(versions()).To(Equal(before), "a dry run or a refused reassign changed something")

	t.Log("reassign --from cli-a --to cli-b -A --wait moves everything of cli-a and waits until it runs under cli-b")
	out, errOut, err = cli("reassign", "--from", "cli-a", "--to", "cli-b", "-A", "--wait", "--timeout", "3m")
	g.Expect(err).NotTo(HaveOccurred(), "stdout:\n%s\nstderr:\n%s", out, errOut)
	for _, name := range movers {
		g.Expect(out).To(ContainSubstring(fmt.Sprintf("integration %s/%s: cli-a -> cli-b\n", apps, name)))
	}
	g.Expect(out).To(ContainSubstring(fmt.Sprintf("pipe %s/a-pipe: cli-a -> cli-b\n", apps)))
	g.Expect(out).To(ContainSubstring("moved 3 integrations, 1 pipe; 0 failed\n"))
	g.Expect(out).To(HaveSuffix("3/3 running under cli-b\n"))
	for _, name := range movers {
		g.Expect(env.RunningUnder(client.ObjectKey{Namespace: apps, Name: name}, "cli-b")).To(Succeed())
	}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pipe), pipe)).To(Succeed())
	g.Expect(pipe.OperatorID()).To(Equal("cli-b"))
	after := versions()
	for name := range untouched {
		g.Expect(after[name]).To(Equal(before[name]), "integration %s was touched", name)
	}
	for _, name := range movers {
		g.Expect(after[name]).To(HavePrefix("cli-b "))
	}
}

// TestCLIBind: bind prints a Pipe with the assignment without a cluster,
// refuses an unregistered operator without creating anything, with
// --force creates the Pipe assigned to it, and takes a Kamelet's
// properties inline as kamel does.
func TestCLIBind(t *testing.T) {
	g := NewWithT(t)
	apps := env.Namespace(t)
	cli := adminCLI(t, apps)

	out, errOut, err := caravan(append([]string{"bind", "timer-source", "log:info", "-n", apps, "-x", "cli-bind",
		"--dry-run", "-o", "yaml"}, nowhere...)...)
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	printed := &camelv1.Pipe{}
	g.Expect(yaml.UnmarshalStrict([]byte(out), printed)).To(Succeed(), out)
	g.Expect(printed.Kind).To(Equal("Pipe"))
	g.Expect(printed.Name).To(Equal("timer-source-to-log"))
	g.Expect(printed.Annotations).To(HaveKeyWithValue(camelv1.OperatorIDAnnotation, "cli-bind"))
	g.Expect(printed.Spec.Source.Ref).NotTo(BeNil())
	g.Expect(printed.Spec.Source.Ref.Kind).To(Equal("Kamelet"))
	g.Expect(printed.Spec.Source.Ref.Name).To(Equal("timer-source"))
	g.Expect(printed.Spec.Sink.URI).To(Equal(ptr.To("log:info")))

	_, errOut, err = cli("bind", "timer-source", "log:info", "-x", "cli-bind")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`operator id "cli-bind" is not registered`))
	pipes := &camelv1.PipeList{}
	g.Expect(env.Client.List(context.Background(), pipes, client.InNamespace(apps))).To(Succeed())
	g.Expect(pipes.Items).To(BeEmpty())

	out, errOut, err = cli("bind", "timer-source", "log:info", "-x", "cli-bind", "--force", "-p", "source.message=hi")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("pipe \"timer-source-to-log\" created\n"))
	created := &camelv1.Pipe{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: apps, Name: "timer-source-to-log"}, created)).To(Succeed())
	g.Expect(created.OperatorID()).To(Equal("cli-bind"))
	g.Expect(string(created.Spec.Source.Properties.Raw)).To(Equal(`{"message":"hi"}`))

	t.Log("kamel's endpoint syntax: a Kamelet with its properties inline")
	out, errOut, err = cli("bind", "timer-source?message=Hello&period=1000", "log-sink", "-x", "cli-bind", "--force")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("pipe \"timer-source-to-log-sink\" created\n"))
	inline := &camelv1.Pipe{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: apps, Name: "timer-source-to-log-sink"}, inline)).To(Succeed())
	g.Expect(inline.Spec.Source.Ref.Name).To(Equal("timer-source"))
	g.Expect(string(inline.Spec.Source.Properties.Raw)).To(Equal(`{"message":"Hello","period":"1000"}`))
	g.Expect(inline.Spec.Sink.Ref.Name).To(Equal("log-sink"))
}

// TestCLIDelete: delete --all -x A deletes only A's integrations; a named
// delete deletes what exists and names what does not.
func TestCLIDelete(t *testing.T) {
	g := NewWithT(t)
	apps := env.Namespace(t)
	cli := adminCLI(t, apps)
	create(t, newIntegration(apps, "del-a-1", "cli-del-a", 1))
	create(t, newIntegration(apps, "del-a-2", "cli-del-a", 1))
	create(t, newIntegration(apps, "del-b", "cli-del-b", 1))
	create(t, newIntegration(apps, "del-none", "", 1))

	out, errOut, err := cli("delete", "--all", "-x", "cli-del-a")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("integration \"del-a-1\" deleted\nintegration \"del-a-2\" deleted\n"))
	g.Eventually(func() []string { return integrationNames(t, apps) }, timeout, poll).Should(ConsistOf("del-b", "del-none"))

	out, errOut, err = cli("delete", "del-b", "del-missing")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`integrations not found in namespace %s: "del-missing"`, apps))
	g.Expect(out).To(Equal("integration \"del-b\" deleted\n"))
	g.Eventually(func() []string { return integrationNames(t, apps) }, timeout, poll).Should(ConsistOf("del-none"))
}
