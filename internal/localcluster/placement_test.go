package localcluster

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/caravan-dev/caravan/internal/procnode"
)

func TestPlacementSendsOperatorsBuildersAndLocalImagesToTheProcessNode(t *testing.T) {
	pod := func(label string, images ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}}}
		if label != "" {
			p.Labels[ProcessPodLabel] = label
		}
		for _, img := range images {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Image: img})
		}
		return p
	}
	withInit := pod("", "reg:5000/kit@sha256:a")
	withInit.Spec.InitContainers = []corev1.Container{{Image: "busybox"}}
	simulated := map[string]string{SimulatedLabel: "true"}
	for name, tc := range map[string]struct {
		pod      *corev1.Pod
		labels   map[string]string
		registry string
		want     string
	}{
		"an operator":                                {pod("caravan-operator", "anywhere/op:1"), nil, "reg:5000", procnode.KindProcess},
		"a builder, in a simulated namespace":        {pod("caravan-builder", "anywhere/b:1"), simulated, "reg:5000", procnode.KindProcess},
		"a kit of the local registry":                {pod("", "reg:5000/kit@sha256:a"), nil, "reg:5000", procnode.KindProcess},
		"a kit in a simulated namespace":             {pod("", "reg:5000/kit@sha256:a"), simulated, "reg:5000", KindKwok},
		"an image elsewhere":                         {pod("", "reg:5000/kit@sha256:a", "elsewhere/sidecar:1"), nil, "reg:5000", KindKwok},
		"an init container elsewhere":                {withInit, nil, "reg:5000", KindKwok},
		"another registry on the cluster's address":  {pod("", "10.88.0.1:41000/kit:1"), nil, "10.88.0.1:5000", procnode.KindProcess},
		"a registry on the loopback":                 {pod("", "127.0.0.1:41000/kit:1"), nil, "10.88.0.1:5000", procnode.KindProcess},
		"a host whose name begins as the registry's": {pod("", "reg2:5000/kit:1"), nil, "reg:5000", KindKwok},
		"no local registry":                          {pod("", "reg:5000/kit:1"), nil, "", KindKwok},
	} {
		if got := PlacementKind(tc.pod, tc.labels, tc.registry); got != tc.want {
			t.Errorf("%s: got %s, want %s", name, got, tc.want)
		}
	}
}

func TestThePlacementWebhookAddsTheNodeSelectorOfTheKind(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = indexer.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sim", Labels: map[string]string{SimulatedLabel: "true"}}})
	hook := &PlacementWebhook{Registry: "reg:5000", namespaces: corelisters.NewNamespaceLister(indexer)}
	review := func(ns string, pod *corev1.Pod) *admissionv1.AdmissionResponse {
		t.Helper()
		raw, _ := json.Marshal(pod)
		body, _ := json.Marshal(&admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: "u1", Namespace: ns, Object: runtime.RawExtension{Raw: raw}}})
		rec := httptest.NewRecorder()
		hook.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, PlacementWebhookPath, bytes.NewReader(body)))
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		out := &admissionv1.AdmissionReview{}
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil || out.Response == nil || out.Response.UID != "u1" || !out.Response.Allowed {
			t.Fatalf("response %s (%v)", rec.Body, err)
		}
		return out.Response
	}
	kit := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "reg:5000/kit:1"}}}}
	if got := string(review("apps", kit).Patch); got != `[{"op":"add","path":"/spec/nodeSelector","value":{"`+procnode.KindLabel+`":"`+procnode.KindProcess+`"}}]` {
		t.Errorf("a kit's pod: patch %s", got)
	}
	kit.Spec.NodeSelector = map[string]string{"zone": "a"}
	want := `[{"op":"add","path":"/spec/nodeSelector/caravan.dev~1node-kind","value":"` + KindKwok + `"}]`
	if got := string(review("sim", kit).Patch); got != want {
		t.Errorf("a kit's pod with a selector, in a simulated namespace: patch %s, want %s", got, want)
	}
	kit.Spec.NodeName = "bound"
	if got := review("apps", kit).Patch; got != nil {
		t.Errorf("a bound pod is patched: %s", got)
	}
}
