package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/caravan-dev/caravan/internal/procnode"
)

// ProcessNodeName is the node that runs the local cluster's operator pods
// as processes of the machine.
const ProcessNodeName = "caravan-process-node"

// KindKwok is procnode.KindLabel's value on the simulated nodes.
const KindKwok = "kwok"

// PlacementPolicy is the local cluster's admission policy that picks each
// pod's node kind, as PlacementKind says. The process node takes the pods
// named by ProcessPodValues (operators, the fleet controller, builders)
// and those whose every image is in the local registry (kits, and images a
// user pushes there), unless their namespace is labelled
// SimulatedLabel=true; every other pod goes to the simulated nodes.
const PlacementPolicy = "caravan-local-pod-placement"

// SimulatedLabel, set to "true" on a namespace, keeps its pods of local
// images on the simulated nodes: many integrations without as many JVMs.
const SimulatedLabel = "caravan.dev/simulated"

// ProcessPodLabel is the label whose value, one of ProcessPodValues, marks
// the pods that run on the process node.
const ProcessPodLabel = "app.kubernetes.io/name"

// ProcessPodValues are the values of ProcessPodLabel on the pods that run
// as processes. They are operators and the fleet controller, of Caravan's
// image, and builder pods, of the builder image, which run Maven in a JVM.
var ProcessPodValues = []string{"caravan-operator", "caravan-fleet", "caravan-builder"}

// startProcessNode starts `caravan local node` and the placement policy,
// and waits until the node is Ready and schedulable.
func (c *Cluster) startProcessNode(ctx context.Context, opts Options) error {
	cs, err := c.adminClientset()
	if err != nil {
		return err
	}
	if !opts.WithoutMutatingAdmissionPolicies {
		if err := applyPlacementPolicy(ctx, cs, c.RegistryAddress); err != nil {
			return err
		}
		if err := waitPlacementActs(ctx, cs); err != nil {
			return err
		}
	}
	if err := applyStorageClass(ctx, cs); err != nil {
		return err
	}
	args := []string{"local", "node",
		"--name", ProcessNodeName, "--dir", filepath.Join(c.Dir, "process-node"), "--kubeconfig", c.Kubeconfig,
		"--tls-cert-file", c.pki("apiserver.crt"), "--tls-private-key-file", c.pki("apiserver.key")}
	if opts.KeptVolumes != "" {
		args = append(args, "--kept-volumes", opts.KeptVolumes)
	}
	var placement string
	if opts.WithoutMutatingAdmissionPolicies {
		port, err := FreePort()
		if err != nil {
			return err
		}
		placement = "127.0.0.1:" + strconv.Itoa(port)
		args = append(args, "--placement-webhook-address", placement, "--registry", c.RegistryAddress)
	}
	p, err := c.launch(opts, "process-node", opts.NodeBinary, args)
	if err != nil {
		return err
	}
	if placement != "" {
		ca, err := os.ReadFile(c.pki("ca.crt"))
		if err != nil {
			return err
		}
		if err := applyPlacementWebhook(ctx, cs, "https://"+placement+PlacementWebhookPath, ca); err != nil {
			return err
		}
		if err := waitPlacementActs(ctx, cs); err != nil {
			return err
		}
	}
	return waitSchedulable(ctx, cs, p, ProcessNodeName, 60*time.Second)
}

// waitSchedulable waits until the node called name, which process p runs, is Ready and
// schedulable.
func waitSchedulable(ctx context.Context, cs kubernetes.Interface, p *Process, name string, timeout time.Duration) error {
	return waitFor(ctx, p, timeout, func(ctx context.Context) (bool, error) {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !nodeSchedulable(node) {
			return false, fmt.Errorf("node %s is not schedulable yet", name)
		}
		return true, nil
	})
}

// applyPlacementPolicy creates the placement policy and its binding;
// registry is the local registry's address, "" for none.
func applyPlacementPolicy(ctx context.Context, cs kubernetes.Interface, registry string) error {
	values := make([]string, len(ProcessPodValues))
	for i, v := range ProcessPodValues {
		values[i] = strconv.Quote(v)
	}
	isProcess := fmt.Sprintf(`object.metadata.?labels[?%q].orValue("") in [%s]`, ProcessPodLabel, strings.Join(values, ", "))
	if registry != "" {
		// An image of the local registry, or of another registry on this machine.
		var starts []string
		for _, p := range localImagePrefixes(registry) {
			starts = append(starts, fmt.Sprintf("c.image.startsWith(%q)", p))
		}
		local := "(" + strings.Join(starts, " || ") + ")"
		isProcess = fmt.Sprintf(`(%s) || (object.spec.containers.all(c, %s) && object.spec.?initContainers.orValue([]).all(c, %s) && `+
			`namespaceObject.metadata.?labels[?%q].orValue("") != "true")`, isProcess, local, local, SimulatedLabel)
	}
	policy := &admissionv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: PlacementPolicy},
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}}},
			MatchConditions:    []admissionv1.MatchCondition{{Name: "not-bound", Expression: `!has(object.spec.nodeName) || object.spec.nodeName == ""`}},
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
			Variables: []admissionv1.Variable{{Name: "kind",
				Expression: fmt.Sprintf(`(%s) ? %q : %q`, isProcess, procnode.KindProcess, KindKwok)}},
			// nodeSelector is an atomic map: a JSON patch adds the key to it.
			Mutations: []admissionv1.Mutation{{PatchType: admissionv1.PatchTypeJSONPatch,
				JSONPatch: &admissionv1.JSONPatch{Expression: fmt.Sprintf(`has(object.spec.nodeSelector) ? `+
					`[JSONPatch{op: "add", path: "/spec/nodeSelector/" + jsonpatch.escapeKey(%q), value: variables.kind}] : `+
					`[JSONPatch{op: "add", path: "/spec/nodeSelector", value: {%q: variables.kind}}]`,
					procnode.KindLabel, procnode.KindLabel)}}},
		},
	}
	binding := &admissionv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: PlacementPolicy},
		Spec:       admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: PlacementPolicy},
	}
	policies := cs.AdmissionregistrationV1().MutatingAdmissionPolicies()
	_, err := policies.Create(ctx, policy, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// A cluster started by an earlier version: bring its policy up to date.
		existing, getErr := policies.Get(ctx, PlacementPolicy, metav1.GetOptions{})
		if getErr != nil {
			return fmt.Errorf("reading the pod placement policy: %w", getErr)
		}
		existing.Spec = policy.Spec
		_, err = policies.Update(ctx, existing, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("creating the pod placement policy: %w", err)
	}
	if _, err := cs.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the pod placement policy binding: %w", err)
	}
	return nil
}

// applyStorageClass creates the cluster's default StorageClass, whose
// claims the process node provisions as directories of its own.
func applyStorageClass(ctx context.Context, cs kubernetes.Interface) error {
	class := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: procnode.StorageClass,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       procnode.Provisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	_, err := cs.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the StorageClass %s: %w", class.Name, err)
	}
	return nil
}

// placementWait is how long waitPlacementActs waits for the placement
// policy to act.
const placementWait = time.Minute

// waitPlacementActs waits until the placement policy acts on the pods the
// API server admits: a server-side dry run of a pod comes back sent to the
// simulated nodes. An admission policy takes effect a moment after it is
// created, and a pod admitted before would be scheduled to any node, the
// process node included, where its image cannot run.
func waitPlacementActs(ctx context.Context, cs kubernetes.Interface) error {
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "caravan-placement-probe", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, placementWait, true, func(ctx context.Context) (bool, error) {
		admitted, err := cs.CoreV1().Pods(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			last = err
			return false, nil
		}
		last = fmt.Errorf("a pod is admitted with the node selector %v", admitted.Spec.NodeSelector)
		return admitted.Spec.NodeSelector[procnode.KindLabel] == KindKwok, nil
	})
	if err != nil {
		return fmt.Errorf("the pod placement policy does not act after %s: %w", placementWait, last)
	}
	return nil
}

// kwokKindLabel marks a simulated node, which every pod but the process node's goes to.
func kwokKindLabel(n *corev1.Node) {
	n.Labels[procnode.KindLabel] = KindKwok
}
