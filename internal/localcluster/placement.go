package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/ptr"

	"github.com/caravan-dev/caravan/internal/procnode"
)

// PlacementKind is the kind of node the local cluster sends pod to, as PlacementPolicy and the
// placement webhook decide alike. It is procnode.KindProcess for the pods ProcessPodValues
// name, and for those whose every image is on this machine (the local registry, "" for none, or
// another on its address or loopback: localImagePrefixes) unless
// their namespace is labelled SimulatedLabel=true; KindKwok for every other pod.
func PlacementKind(pod *corev1.Pod, namespaceLabels map[string]string, registry string) string {
	if slices.Contains(ProcessPodValues, pod.Labels[ProcessPodLabel]) {
		return procnode.KindProcess
	}
	if registry == "" || namespaceLabels[SimulatedLabel] == "true" {
		return KindKwok
	}
	prefixes := localImagePrefixes(registry)
	local := func(c corev1.Container) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(c.Image, p) })
	}
	if !slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return !local(c) }) &&
		!slices.ContainsFunc(pod.Spec.InitContainers, func(c corev1.Container) bool { return !local(c) }) {
		return procnode.KindProcess
	}
	return KindKwok
}

// localImagePrefixes begin the references of images on this machine: those of the local
// registry, and of any other registry on the cluster's address (the registry's host) or loopback.
func localImagePrefixes(registry string) []string {
	prefixes := []string{registry + "/", "127.0.0.1:", "localhost:"}
	if host, _, err := net.SplitHostPort(registry); err == nil && host != "127.0.0.1" && host != "localhost" {
		prefixes = append(prefixes, host+":")
	}
	return prefixes
}

// PlacementWebhookPath is where the process node serves the placement webhook.
const PlacementWebhookPath = "/place"

// PlacementWebhook is a mutating admission webhook, served by the process node, that
// places pods as PlacementPolicy does. It is for an API server that serves no
// MutatingAdmissionPolicy (Kubernetes before 1.36, or one with that API switched off).
type PlacementWebhook struct {
	// Registry is the local registry's address, "" for none.
	Registry   string
	namespaces corelisters.NamespaceLister
}

// NewPlacementWebhook starts watching namespaces, whose labels the placement reads, and
// returns once their list is in.
func NewPlacementWebhook(ctx context.Context, cs kubernetes.Interface, registry string) (*PlacementWebhook, error) {
	factory := informers.NewSharedInformerFactory(cs, 0)
	lister := factory.Core().V1().Namespaces().Lister()
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("the placement webhook's watch of %v never synced", typ)
		}
	}
	return &PlacementWebhook{Registry: registry, namespaces: lister}, nil
}

// ServeHTTP answers an AdmissionReview of a pod's creation with the patch that adds the node
// selector of its kind.
func (w *PlacementWebhook) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(body, review); err != nil || review.Request == nil {
		http.Error(rw, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	if patch, err := w.patch(review.Request); err != nil {
		resp.Allowed, resp.Result = false, &metav1.Status{Message: "placing the pod: " + err.Error(), Code: http.StatusInternalServerError}
	} else if patch != nil {
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	}
	out, err := json.Marshal(&admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	_, _ = rw.Write(out)
}

// patch is the JSON patch that places the pod of req, nil for a pod already bound to a node.
func (w *PlacementWebhook) patch(req *admissionv1.AdmissionRequest) ([]byte, error) {
	pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		return nil, err
	}
	if pod.Spec.NodeName != "" {
		return nil, nil
	}
	var labels map[string]string
	ns, err := w.namespaces.Get(req.Namespace)
	switch {
	case err == nil:
		labels = ns.Labels
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	kind := PlacementKind(pod, labels, w.Registry)
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if pod.Spec.NodeSelector != nil {
		return json.Marshal([]op{{"add", "/spec/nodeSelector/" + jsonPointerKey(procnode.KindLabel), kind}})
	}
	return json.Marshal([]op{{"add", "/spec/nodeSelector", map[string]string{procnode.KindLabel: kind}}})
}

// jsonPointerKey escapes a map key for a JSON pointer: "~" as "~0", "/" as "~1".
func jsonPointerKey(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// applyPlacementWebhook registers the process node's placement webhook at url, whose
// certificate caBundle signed.
func applyPlacementWebhook(ctx context.Context, cs kubernetes.Interface, url string, caBundle []byte) error {
	config := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: PlacementPolicy},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "placement.local.caravan.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			TimeoutSeconds:          ptr.To(int32(10)),
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{"pods"}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-bound",
				Expression: `!has(object.spec.nodeName) || object.spec.nodeName == ""`}},
		}},
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, config, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating the pod placement webhook: %w", err)
	}
	return nil
}
