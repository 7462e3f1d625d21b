package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/internal/kit"
	camelruntime "github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/test/harness"
)

const baseRepository = "caravan-test/base"

// kstatusOf is obj's status as kstatus computes it (Current, InProgress, Failed), with its
// Ready condition's: "Current, Ready True".
func kstatusOf(obj client.Object, conditions []metav1.Condition) string {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err.Error()
	}
	res, err := status.Compute(&unstructured.Unstructured{Object: u})
	if err != nil {
		return err.Error()
	}
	ready := metav1.ConditionUnknown
	if c := meta.FindStatusCondition(conditions, camelv1.ConditionReady); c != nil {
		ready = c.Status
	}
	return fmt.Sprintf("%s, Ready %s", res.Status, ready)
}

// readyOf is the reason and message of a Ready condition among conditions, "REASON: MESSAGE".
func readyOf(conditions []metav1.Condition) string {
	c := meta.FindStatusCondition(conditions, camelv1.ConditionReady)
	if c == nil {
		return "no Ready condition"
	}
	return c.Reason + ": " + c.Message
}

// kitKstatus polls kstatusOf the kit named like build b.
func kitKstatus(b *camelv1.Build) func() string {
	return func() string {
		k := &camelv1.IntegrationKit{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), k); err != nil {
			return err.Error()
		}
		return kstatusOf(k, k.Status.Conditions)
	}
}

// usePlatformRegistry points the operator's platform at a registry (and
// credentials Secret, if any) with a base image pushed into it.
func usePlatformRegistry(t *testing.T, address, secret string) {
	t.Helper()
	env.UsePlatformRegistry(t, operatorNamespace, operatorID,
		camelv1.RegistrySpec{Address: address, Insecure: true, Secret: secret}, baseRepository+":latest")
}

// startPlatformRegistry starts a registry holding the base image and
// points the operator's platform at it.
func startPlatformRegistry(t *testing.T) *imagetest.Registry {
	t.Helper()
	reg := imagetest.StartRegistry(t)
	imagetest.PushBase(t, reg, baseRepository)
	usePlatformRegistry(t, reg.Address, "")
	return reg
}

// sourceIntegration is a test integration without an image: it needs a
// kit with deps.
func sourceIntegration(ns, name string, deps ...string) *camelv1.Integration {
	it := harness.NewIntegration(ns, name, operatorID, 1)
	delete(it.Spec.Traits, "container")
	it.Spec.Dependencies = deps
	return it
}

func buildOf(t *testing.T, ns string, it *camelv1.Integration) func() (*camelv1.Build, error) {
	return func() (*camelv1.Build, error) {
		cur := &camelv1.Integration{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(it), cur); err != nil {
			return nil, err
		}
		if cur.Status.IntegrationKit == nil {
			return nil, fmt.Errorf("no kit yet (phase %q)", cur.Status.Phase)
		}
		b := &camelv1.Build{}
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: cur.Status.IntegrationKit.Name}, b)
		return b, err
	}
}

// TestAKitIsBuiltIntoTheRegistryAndRunByDigest: the kit layer lands in a
// real registry, the kit records its image by digest, and the
// integration's Deployment runs it; a second integration with the same
// dependencies reuses the kit.
func TestAKitIsBuiltIntoTheRegistryAndRunByDigest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := startPlatformRegistry(t)
	ns := env.Namespace(t)
	first := sourceIntegration(ns, "first", "camel:log", "camel-timer")
	second := sourceIntegration(ns, "second", "camel:timer", "camel:log")
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())

	var b *camelv1.Build
	g.Eventually(last(buildOf(t, ns, first), &b), timeout, poll).Should(HaveField("Status.Phase", camelv1.BuildPhaseSucceeded))
	k := &camelv1.IntegrationKit{}
	g.Eventually(func() camelv1.IntegrationKitPhase {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(b), k)
		return k.Status.Phase
	}, timeout, poll).Should(Equal(camelv1.IntegrationKitPhaseReady))
	g.Expect(k.Status.Image).To(HavePrefix(reg.Address + "/"))
	g.Expect(k.Status.Image).To(ContainSubstring("@sha256:"))
	g.Expect(kstatusOf(k, k.Status.Conditions)).To(Equal("Current, Ready True"), "the kit is Ready, neither Reconciling nor Stalled")
	g.Expect(kstatusOf(b, b.Status.Conditions)).To(Equal("Current, Ready True"), "the build is Ready, neither Reconciling nor Stalled")
	g.Expect(k.Labels).To(HaveKeyWithValue(camelv1.IntegrationKitTypeLabel, camelv1.IntegrationKitTypePlatform))
	g.Expect(k.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, operatorID))

	img, err := image.Pull(ctx, reg.Config(), k.Status.Image)
	g.Expect(err).NotTo(HaveOccurred())
	files, err := image.ListFiles(img)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(files[kit.DependenciesFile])).To(Equal("camel:log\ncamel:timer\n"))
	g.Eventually(integrationStatus(client.ObjectKeyFromObject(first)), timeout, poll).Should(HaveField("Dependencies", Equal([]string{"camel:log", "camel:timer"})),
		"as on Camel K, the status lists the dependencies of the kit")

	d := &appsv1.Deployment{}
	g.Eventually(func() string {
		if env.Client.Get(ctx, client.ObjectKeyFromObject(first), d) != nil {
			return ""
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}, timeout, poll).Should(Equal(k.Status.Image))
	g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement(ContainSubstring(camelruntime.DependenciesDir+"/*")),
		"the runtime loads the kit's jars")
	g.Eventually(func() string {
		cur := &camelv1.Integration{}
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(second), cur)
		if cur.Status.IntegrationKit == nil {
			return ""
		}
		return cur.Status.IntegrationKit.Name
	}, timeout, poll).Should(Equal(k.Name), "the same dependencies must reuse the kit")
	builds := &camelv1.BuildList{}
	g.Expect(env.Client.List(ctx, builds, client.InNamespace(ns))).To(Succeed())
	g.Expect(builds.Items).To(HaveLen(1))
}

// TestTwentyIntegrationsOverThreeDependencySetsMakeThreeBuilds creates
// twenty integrations over three dependency sets and checks that they get
// three Ready kits from three Builds, none of which needed a retry.
func TestTwentyIntegrationsOverThreeDependencySetsMakeThreeBuilds(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	startPlatformRegistry(t)
	ns := env.Namespace(t)
	sets := [][]string{{"camel:log"}, {"camel:http"}, {"camel:kafka", "camel:log"}}
	for i := range 20 {
		g.Expect(env.Client.Create(ctx, sourceIntegration(ns, fmt.Sprintf("app-%02d", i), sets[i%3]...))).To(Succeed())
	}
	g.Eventually(func() (int, error) {
		kits := &camelv1.IntegrationKitList{}
		if err := env.Client.List(ctx, kits, client.InNamespace(ns)); err != nil {
			return 0, err
		}
		ready := 0
		for _, k := range kits.Items {
			if k.Status.Phase == camelv1.IntegrationKitPhaseReady {
				ready++
			}
		}
		return ready, nil
	}, timeout, poll).Should(Equal(3))
	builds := &camelv1.BuildList{}
	g.Expect(env.Client.List(ctx, builds, client.InNamespace(ns))).To(Succeed())
	g.Expect(builds.Items).To(HaveLen(3))
	for _, b := range builds.Items {
		g.Expect(b.Status.Failure).To(BeNil(), "build %s needed retries", b.Name)
	}
}

// TestABuildRecoversWhenTheRegistryComesBack: the registry is down for
// the first attempt, which fails with a condition naming it; once it is
// back, a retry succeeds.
func TestABuildRecoversWhenTheRegistryComesBack(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := startPlatformRegistry(t)
	reg.Stop()
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "patient", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())

	// The retries go on while the registry is down (Failed, then Running
	// again): the phase and its condition are asserted on one read.
	g.Eventually(buildOf(t, ns, it), timeout, poll).Should(And(
		HaveField("Status.Phase", camelv1.BuildPhaseFailed),
		HaveField("Status.Conditions", ContainElement(And(
			HaveField("Type", camelv1.ConditionReady),
			HaveField("Reason", image.ReasonRegistryUnreachable),
			HaveField("Message", ContainSubstring(reg.Address)))))))
	g.Eventually(func() string {
		cur := &camelv1.Integration{}
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(it), cur)
		if c := cur.Status.GetCondition(camelv1.ConditionReady); c != nil {
			return c.Message
		}
		return ""
	}, timeout, poll).Should(ContainSubstring(reg.Address), "the integration does not say why it waits")

	reg.Start()
	g.Eventually(buildOf(t, ns, it), timeout, poll).Should(And(
		HaveField("Status.Phase", camelv1.BuildPhaseSucceeded),
		HaveField("Status.Failure.Recovery.Attempt", BeNumerically(">=", 1))))
}

// TestWrongCredentialsEndInAnErrorThatSaysSo at the first attempt: a retry would meet them again.
func TestWrongCredentialsEndInAnErrorThatSaysSo(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := imagetest.StartRegistry(t, imagetest.WithAuth("caravan", "right"))
	imagetest.PushBase(t, reg, baseRepository)
	secret := dockerConfigSecret(reg.Address, "caravan", "wrong")
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, secret) })
	usePlatformRegistry(t, reg.Address, secret.Name)
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "locked-out", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())

	var b *camelv1.Build
	g.Eventually(last(buildOf(t, ns, it), &b), 2*timeout, poll).Should(And(
		HaveField("Status.Phase", camelv1.BuildPhaseError),
		HaveField("Status.Failure.Recovery.Attempt", 1)))
	g.Expect(kstatusOf(b, b.Status.Conditions)).To(Equal("Failed, Ready False"), "a build in Error is Stalled")
	g.Eventually(kitKstatus(b), timeout, poll).Should(Equal("Failed, Ready False"), "the kit of a build in Error is Stalled")
	g.Eventually(func() (string, error) {
		cur := &camelv1.Integration{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(it), cur); err != nil {
			return "", err
		}
		if cur.Status.Phase != camelv1.IntegrationPhaseError {
			return "", fmt.Errorf("phase %q", cur.Status.Phase)
		}
		return cur.Status.GetCondition(camelv1.ConditionReady).Message, nil
	}, timeout, poll).Should(And(ContainSubstring(reg.Address), ContainSubstring("credentials")))
}

// TestABuildTrustsTheRegistryCAThePlatformNames: the platform's registry serves TLS with a
// certificate of a private CA. Builds wait, with RegistryCAUnavailable, while the ConfigMap that
// spec.build.registry.ca names is missing and while it holds no certificate; with the CA in it,
// the kit is pushed there and Ready.
func TestABuildTrustsTheRegistryCAThePlatformNames(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := imagetest.StartRegistry(t, imagetest.WithTLS())
	imagetest.PushBase(t, reg, baseRepository)
	useCA := func(name string) {
		env.UsePlatformRegistry(t, operatorNamespace, operatorID, camelv1.RegistrySpec{Address: reg.Address, CA: name}, baseRepository+":latest")
	}
	useCA("registry-ca")
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "private-ca", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	reason := func(b *camelv1.Build) string {
		if c := b.Status.GetCondition(camelv1.ConditionReady); c != nil {
			return c.Reason + ": " + c.Message
		}
		return ""
	}
	var b *camelv1.Build
	g.Eventually(last(buildOf(t, ns, it), &b), timeout, poll).Should(WithTransform(reason, And(
		HavePrefix("RegistryCAUnavailable: "), ContainSubstring("configmap/registry-ca"), ContainSubstring("spec.build.registry.ca"))))

	for name, data := range map[string]string{"not-a-ca": "not a certificate", "registry-ca": string(reg.CA.PEM)} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: name}, Data: map[string]string{"ca.crt": data}}
		g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(ctx, cm) })
	}
	useCA("not-a-ca")
	g.Eventually(last(buildOf(t, ns, it), &b), 2*timeout, poll).Should(WithTransform(reason, And(
		HavePrefix("RegistryCAUnavailable: "), ContainSubstring("configmap/not-a-ca key ca.crt"), ContainSubstring("other than PEM certificates"))))

	// A waiting build looks again every 30 s (its registry retry).
	useCA("registry-ca")
	g.Eventually(last(buildOf(t, ns, it), &b), 2*timeout, poll).Should(HaveField("Status.Phase", camelv1.BuildPhaseSucceeded))
	g.Expect(b.Status.Image).To(HavePrefix(reg.Address + "/"))
	if _, err := image.Pull(ctx, reg.Config(), b.Status.Image); err != nil {
		t.Fatalf("the kit is not in the registry: %v", err)
	}
}

func dockerConfigSecret(registry, user, password string) *corev1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	data, _ := json.Marshal(map[string]any{"auths": map[string]any{registry: map[string]string{"auth": auth}}})
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "registry-" + strings.ReplaceAll(password, ":", "")},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: data},
	}
}

// TestDeletingAKitCancelsItsBuild: against a registry that accepts
// connections and never answers, the build hangs; deleting the kit closes
// its connections.
func TestDeletingAKitCancelsItsBuild(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	hang, open := silentServer(t)
	usePlatformRegistry(t, hang, "")
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "stuck", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	var b *camelv1.Build
	g.Eventually(last(buildOf(t, ns, it), &b), timeout, poll).Should(HaveField("Status.Phase", camelv1.BuildPhaseRunning))
	g.Eventually(open.Load, timeout, poll).Should(BeNumerically(">", 0))
	g.Expect(kstatusOf(b, b.Status.Conditions)).To(Equal("InProgress, Ready False"), "a running build is Reconciling")
	g.Eventually(kitKstatus(b), timeout, poll).Should(Equal("InProgress, Ready False"), "the kit of a running build is Reconciling")

	g.Expect(env.Client.Delete(ctx, &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: b.Name}})).To(Succeed())
	g.Eventually(open.Load, timeout, poll).Should(BeZero(), "the build kept its connections after its kit was deleted")
}

// silentServer accepts connections and never answers; it counts the
// connections the client has not closed.
func silentServer(t *testing.T) (string, *atomic.Int32) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var open atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			open.Add(1)
			go func() {
				defer open.Add(-1)
				buf := make([]byte, 4096)
				for {
					if _, err := conn.Read(buf); err != nil {
						_ = conn.Close()
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String(), &open
}

// TestAPlatformWithoutRegistrySaysWhatToConfigure: with no registry, the
// kit cannot be built; the integration says which field to set.
func TestAPlatformWithoutRegistrySaysWhatToConfigure(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	usePlatformRegistry(t, "", "")
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "nowhere", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	g.Eventually(func() string {
		cur := &camelv1.Integration{}
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(it), cur)
		c := cur.Status.GetCondition(camelv1.ConditionReady)
		if cur.Status.Phase != camelv1.IntegrationPhaseBuildingKit || c == nil {
			return ""
		}
		return c.Message
	}, timeout, poll).Should(ContainSubstring("spec.build.registry.address"))
}

// TestCamelKsRoutineStrategyIsRefusedNamingPod: a platform with Camel K's routine strategy, which
// runs Maven inside the operator, is Error naming pod, its builds wait saying the same, and the
// build runs once the strategy is one Caravan runs.
func TestCamelKsRoutineStrategyIsRefusedNamingPod(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	startPlatformRegistry(t)
	itp := &camelv1.IntegrationPlatform{}
	key := client.ObjectKey{Namespace: operatorNamespace, Name: operatorID}
	g.Expect(env.Client.Get(ctx, key, itp)).To(Succeed())
	before := itp.DeepCopy()
	itp.Spec.Build.BuildConfiguration = &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(`{"strategy":"routine"}`)}}
	g.Expect(env.Client.Patch(ctx, itp, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func() string {
		cur := &camelv1.IntegrationPlatform{}
		_ = env.Client.Get(ctx, key, cur)
		return string(cur.Status.Phase) + ", " + kstatusOf(cur, cur.Status.Conditions) + ", " + readyOf(cur.Status.Conditions)
	}, timeout, poll).Should(And(HavePrefix("Error, Failed, Ready False, InvalidBuildConfiguration: "), ContainSubstring("use pod")))

	ns := env.Namespace(t)
	it := sourceIntegration(ns, "routine", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	var b *camelv1.Build
	g.Eventually(last(buildOf(t, ns, it), &b), timeout, poll).Should(WithTransform(func(b *camelv1.Build) string {
		return readyOf(b.Status.Conditions)
	}, And(HavePrefix("InvalidBuildConfiguration: "), ContainSubstring(`"routine" is Camel K's build inside its operator`))))
	g.Expect(b.Status.Phase).NotTo(Equal(camelv1.BuildPhaseRunning), "no attempt runs")

	startPlatformRegistry(t) // the dependency-list strategy again
	g.Eventually(last(buildOf(t, ns, it), &b), timeout, poll).Should(HaveField("Status.Phase", camelv1.BuildPhaseSucceeded))
}

// TestANewKitRollsTheDeployment: new dependencies mean a new kit; once it
// is Ready the Deployment switches to its image in place (same object, a
// rolling update of its pods).
func TestANewKitRollsTheDeployment(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	startPlatformRegistry(t)
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "switcher", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	image := func() string {
		d := &appsv1.Deployment{}
		if env.Client.Get(ctx, key, d) != nil {
			return ""
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}
	g.Eventually(image, timeout, poll).ShouldNot(BeEmpty())
	first := image()
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, key, d)).To(Succeed())

	// The operator writes the integration's metadata too: read it again on a conflict.
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &camelv1.Integration{}
		if err := env.Client.Get(ctx, key, cur); err != nil {
			return err
		}
		cur.Spec.Dependencies = append(cur.Spec.Dependencies, "camel:http")
		return env.Client.Update(ctx, cur)
	})).To(Succeed())
	g.Eventually(image, timeout, poll).ShouldNot(Equal(first))
	after := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, key, after)).To(Succeed())
	g.Expect(after.UID).To(Equal(d.UID), "the Deployment was recreated")
	g.Expect(after.Spec.Strategy.Type).To(Equal(appsv1.RollingUpdateDeploymentStrategyType))
	kits := &camelv1.IntegrationKitList{}
	g.Expect(env.Client.List(ctx, kits, client.InNamespace(ns))).To(Succeed())
	g.Expect(kits.Items).To(HaveLen(2), "the old kit outlives the switch")
}

// TestAKitTheAPIServerRefusesIsAnErrorThatSaysSo: when an admission policy
// (or RBAC) refuses the operator's kit, the integration is in phase Error
// with Stalled=True quoting the refusal, and recovers by itself once the
// refusal is lifted.
func TestAKitTheAPIServerRefusesIsAnErrorThatSaysSo(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	name := "deny-kits-" + ns
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule: admissionv1.Rule{APIGroups: []string{"camel.apache.org"}, APIVersions: []string{"*"}, Resources: []string{"integrationkits"}}},
			}}},
			Validations: []admissionv1.Validation{{
				Expression: fmt.Sprintf("object.metadata.namespace != %q", ns),
				Message:    "kits are not allowed in this namespace",
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	for _, obj := range []client.Object{policy, binding} {
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}
	g.Eventually(func() error {
		probe := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}
		return env.Client.Create(ctx, probe, client.DryRunAll)
	}, timeout, poll).Should(MatchError(ContainSubstring("kits are not allowed")), "the policy never took effect")

	it := sourceIntegration(ns, "refused", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)
	g.Eventually(integrationStatus(key), timeout, poll).Should(And(
		HaveField("Phase", camelv1.IntegrationPhaseError),
		HaveField("Conditions", ContainElement(And(
			HaveField("Type", camelv1.ConditionStalled), HaveField("Reason", "KitRefused"),
			HaveField("Message", ContainSubstring("kits are not allowed in this namespace")))))))

	t.Log("once the policy is gone, the kit is made without any change to the integration")
	g.Expect(env.Client.Delete(ctx, binding)).To(Succeed())
	g.Eventually(func() error {
		cur, err := integrationStatus(key)()
		if err != nil {
			return err
		}
		if cur.Phase == camelv1.IntegrationPhaseError || cur.IntegrationKit == nil {
			return fmt.Errorf("phase %q, kit %v", cur.Phase, cur.IntegrationKit)
		}
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cur.IntegrationKit.Name}, &camelv1.IntegrationKit{})
	}, 3*timeout, poll).Should(Succeed())
}

// TestABaseImageInARegistryThatIsDownNamesThatRegistry: the platform's
// registry runs, but its base image names another registry, which does
// not answer; the build says that registry is unreachable and which
// setting names it, not the registry it pushes to.
func TestABaseImageInARegistryThatIsDownNamesThatRegistry(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := imagetest.StartRegistry(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	down := l.Addr().String()
	g.Expect(l.Close()).To(Succeed())
	env.UsePlatformRegistry(t, operatorNamespace, operatorID,
		camelv1.RegistrySpec{Address: reg.Address, Insecure: true}, down+"/"+baseRepository+":latest")
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "base-down", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())

	g.Eventually(func() (string, error) {
		b, err := buildOf(t, ns, it)()
		if err != nil || b == nil {
			return "", err
		}
		if c := b.Status.GetCondition(camelv1.ConditionReady); c != nil {
			return c.Message, nil
		}
		return "", nil
	}, timeout, poll).Should(And(ContainSubstring("registry "+down+" is unreachable"),
		ContainSubstring("spec.build.baseImage"), Not(ContainSubstring("registry "+reg.Address))))
}

// TestAPinnedKitThatDoesNotExistIsBadInput: an integration pinned to a kit
// that does not exist is in Error, Stalled, with what to do, and nothing
// is built; once the kit is made, the integration runs its image.
func TestAPinnedKitThatDoesNotExistIsBadInput(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	it := sourceIntegration(ns, "pinned")
	it.Spec.IntegrationKit = &corev1.ObjectReference{Name: "made-later"}
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)

	g.Eventually(integrationStatus(key), timeout, poll).Should(And(
		HaveField("Phase", camelv1.IntegrationPhaseError),
		HaveField("Conditions", ContainElement(And(HaveField("Type", camelv1.ConditionStalled),
			HaveField("Reason", "KitNotFound"), HaveField("Message", ContainSubstring("remove spec.integrationKit")))))))
	builds := &camelv1.BuildList{}
	g.Expect(env.Client.List(ctx, builds, client.InNamespace(ns))).To(Succeed())
	g.Expect(builds.Items).To(BeEmpty(), "a build was started for a pinned kit")

	t.Log("the kit is made: the integration runs its image")
	k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "made-later",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: operatorID},
		Labels:      map[string]string{camelv1.OperatorIDLabel: operatorID}},
		Spec: camelv1.IntegrationKitSpec{Image: harness.TestImage, Dependencies: []string{"camel:http", "mvn:org.example:lib:1.0"}}}
	g.Expect(env.Client.Create(ctx, k)).To(Succeed())
	g.Eventually(integrationStatus(key), timeout, poll).Should(And(
		HaveField("Phase", Or(Equal(camelv1.IntegrationPhaseDeploying), Equal(camelv1.IntegrationPhaseRunning))),
		HaveField("Image", harness.TestImage)))
	d := get(t, key, &appsv1.Deployment{})
	g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement(ContainSubstring(camelruntime.DependenciesDir+"/*")),
		"the runtime loads the jars the pinned kit's image holds, with nothing downloaded")
}

// TestAKitWithAnImageNoRegistryCanServeIsBadInput: a kit of a pre-built
// image whose reference is invalid is in Error, Stalled, naming the
// field, and so is the integration pinned to it; nothing is deployed.
func TestAKitWithAnImageNoRegistryCanServeIsBadInput(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-image",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: operatorID},
		Labels:      map[string]string{camelv1.OperatorIDLabel: operatorID}},
		Spec: camelv1.IntegrationKitSpec{Image: "UPPER CASE/with spaces:"}}
	g.Expect(env.Client.Create(ctx, k)).To(Succeed())
	it := sourceIntegration(ns, "pinned-bad")
	it.Spec.IntegrationKit = &corev1.ObjectReference{Name: k.Name}
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())

	stalled := func(reason, message string) gomegatypes.GomegaMatcher {
		return ContainElement(And(HaveField("Type", camelv1.ConditionStalled), HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", reason), HaveField("Message", ContainSubstring(message))))
	}
	g.Eventually(func() (camelv1.IntegrationKitStatus, error) {
		got := &camelv1.IntegrationKit{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), got)
		return got.Status, err
	}, timeout, poll).Should(And(HaveField("Phase", camelv1.IntegrationKitPhaseError),
		HaveField("Conditions", stalled("InvalidKit", `spec.image: invalid image reference "UPPER CASE/with spaces:"`))))
	key := client.ObjectKeyFromObject(it)
	g.Eventually(integrationStatus(key), timeout, poll).Should(And(HaveField("Phase", camelv1.IntegrationPhaseError),
		HaveField("Conditions", stalled("InvalidKit", "spec.image"))))
	err := env.Client.Get(ctx, key, &appsv1.Deployment{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Deployment for a kit whose image is invalid: %v", err)
}

// TestTheCamelTraitsRuntimeVersionPicksTheKitsCamel: an integration whose camel trait sets
// runtimeVersion gets a kit of that Camel version, apart from the kit of the platform's version
// for the same dependencies.
func TestTheCamelTraitsRuntimeVersionPicksTheKitsCamel(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	kitOf := func(it *camelv1.Integration) *camelv1.IntegrationKit {
		t.Helper()
		g.Expect(env.Client.Create(ctx, it)).To(Succeed())
		cur := &camelv1.Integration{}
		g.Eventually(func() bool {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(it), cur)).To(Succeed())
			return cur.Status.IntegrationKit != nil
		}, timeout, poll).Should(BeTrue(), "no kit named")
		k := &camelv1.IntegrationKit{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cur.Status.IntegrationKit.Name}, k)).To(Succeed())
		return k
	}
	plain := kitOf(sourceIntegration(ns, "platform-camel", "camel:log"))
	pinned := sourceIntegration(ns, "pinned-camel", "camel:log")
	pinned.Spec.Traits["camel"] = harness.Raw(map[string]any{"runtimeVersion": "4.14.0"})
	other := kitOf(pinned)
	g.Expect(other.Name).NotTo(Equal(plain.Name), "both integrations share the kit of the platform's Camel")
	g.Expect(string(other.Spec.Traits["camel"].Raw)).To(ContainSubstring(`"runtimeVersion":"4.14.0"`))
	g.Expect(string(plain.Spec.Traits["camel"].Raw)).NotTo(ContainSubstring("4.14.0"))
}

// TestAKitPushedWithCredentialsIsPulledWithThePodsPullSecret: with a registry that requires
// credentials for every push and pull, the kit is pushed with the platform's registry Secret, and
// the integration's pods name that Secret as their pull secret, whose credentials pull the kit, as
// a node does; without them the registry refuses the pull.
func TestAKitPushedWithCredentialsIsPulledWithThePodsPullSecret(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := imagetest.StartRegistry(t, imagetest.WithAuth("caravan", "pull-and-push"))
	imagetest.PushBase(t, reg, baseRepository)
	secret := dockerConfigSecret(reg.Address, "caravan", "pull-and-push")
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, secret) })
	usePlatformRegistry(t, reg.Address, secret.Name)
	ns := env.Namespace(t)
	copyInNamespace := secret.DeepCopy()
	copyInNamespace.Namespace, copyInNamespace.ResourceVersion = ns, ""
	g.Expect(env.Client.Create(ctx, copyInNamespace)).To(Succeed(), "the pods' namespace holds a Secret of that name, as docs/traits.md asks")
	it := sourceIntegration(ns, "private", "camel:log")
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())

	d := &appsv1.Deployment{}
	g.Eventually(func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(it), d) }, 2*timeout, poll).Should(Succeed())
	g.Expect(d.Spec.Template.Spec.ImagePullSecrets).To(Equal([]corev1.LocalObjectReference{{Name: secret.Name}}))
	ref, err := name.ParseReference(d.Spec.Template.Spec.Containers[0].Image, name.Insecure)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = remote.Image(ref, remote.WithAuth(authn.Anonymous))
	g.Expect(err).To(MatchError(ContainSubstring("UNAUTHORIZED")), "the registry serves the kit without credentials")
	pullSecret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: d.Spec.Template.Spec.ImagePullSecrets[0].Name}, pullSecret)).To(Succeed())
	auth, err := image.AuthFromDockerConfig(pullSecret.Data[corev1.DockerConfigJsonKey], reg.Address)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = remote.Image(ref, remote.WithAuth(auth))
	g.Expect(err).NotTo(HaveOccurred(), "the pull secret's credentials do not pull the kit")
}
