package operatorpod

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/caravan-dev/caravan/internal/install"
)

// ScraperName names the ServiceAccount, and its ClusterRoleBinding to
// install.MetricsReaderRole, that the tests and the bench read the
// operators' metrics as.
const ScraperName = "caravan-scraper"

// Scraper reads the operators' metrics and profiles as Prometheus does:
// over HTTPS, whose self-signed certificate it does not check, with a
// bearer token that the operator has the API server review.
type Scraper struct {
	token  string
	client *http.Client
}

// NewScraper returns a Scraper that sends token.
func NewScraper(token string) *Scraper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// The operators' certificate is their own, self-signed; the token is
	// what is checked, by the operator.
	t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec
	// Uncompressed: compressing every scrape would be CPU the operators
	// spend for the scraper.
	t.DisableCompression = true
	return &Scraper{token: token, client: &http.Client{Transport: t}}
}

// Get returns the body of a GET of url, which must answer 200.
func (s *Scraper) Get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return body, err
}

// ScraperToken makes the ServiceAccount ScraperName in namespace, binds it
// to install.MetricsReaderRole (made when missing), and returns a token of
// it valid for validity.
func ScraperToken(ctx context.Context, cs kubernetes.Interface, namespace string, validity time.Duration) (string, error) {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: install.MetricsReaderRole}, Rules: install.MetricsReaderRules()}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating the role %s: %w", role.Name, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ScraperName, Namespace: namespace}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating the scraper's ServiceAccount: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ScraperName + ":" + namespace},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: install.MetricsReaderRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ScraperName, Namespace: namespace}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("binding the scraper to %s: %w", install.MetricsReaderRole, err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, ScraperName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(validity.Seconds()))}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("minting the scraper's token: %w", err)
	}
	return tr.Status.Token, nil
}
