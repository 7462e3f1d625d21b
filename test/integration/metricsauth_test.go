package integration

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/caravan-dev/caravan/internal/controller"
)

// TestTheMetricsFilterAsksTheAPIServerWhoCallsAndWhatTheyMay runs the operators' metrics filter
// against the real API server: a ServiceAccount token bound to a role that may get /metrics
// gets it; another token, a forged one and none do not.
func TestTheMetricsFilterAsksTheAPIServerWhoCallsAndWhatTheyMay(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("a reader may get /metrics; a stranger has no role")
	token := func(name string) string {
		_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		return tr.Status.Token
	}
	reader, stranger := token("reader"), token("stranger")
	role := ns + "-metrics"
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{}) })
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns}}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), role, metav1.DeleteOptions{})
	})

	filter, err := controller.MetricsAuth(env.Config, nil)
	g.Expect(err).NotTo(HaveOccurred())
	handler, err := filter(log.FromContext(ctx), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "metrics")
	}))
	g.Expect(err).NotTo(HaveOccurred())
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	get := func(path, token string) int {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		g.Expect(err).NotTo(HaveOccurred())
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := srv.Client().Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		return resp.StatusCode
	}

	t.Log("the reader gets the metrics and nothing else; the others get nothing")
	g.Expect(get("/metrics", reader)).To(Equal(http.StatusOK))
	g.Expect(get("/debug/pprof/", reader)).To(Equal(http.StatusForbidden))
	g.Expect(get("/metrics", stranger)).To(Equal(http.StatusForbidden))
	g.Expect(get("/metrics", "forged")).To(Equal(http.StatusUnauthorized))
	g.Expect(get("/metrics", "")).To(Equal(http.StatusUnauthorized))
}
