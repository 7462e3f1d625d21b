package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/testca"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestAKitResolvesThroughTheRepositoryOfThePlatformsMavenSettings: the platform names a
// settings.xml in a Secret that adds a private repository and its credentials; the repository,
// served by the test from a directory over HTTPS with a certificate of the test's own CA, which
// the platform's caSecrets name, answers only to that user and password. Until the Secret and
// the CA's Secret exist the Build waits, saying so. While the repository answers 503 the attempt
// fails naming it; once it is up, the Build's retry resolves the private artifact through it,
// and the kit holds the jar. Maven runs with the platform's properties and options and the
// integration's build property, as Camel K gives them.
func TestAKitResolvesThroughTheRepositoryOfThePlatformsMavenSettings(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ops, apps := env.Namespace(t), env.Namespace(t)
	repo := serveRepository(t, true, nil)
	op := env.InstallOperator(t, "maven-settings", ops, harness.OperatorOptions{BuildStrategy: build.StrategyPod,
		MavenCache: ptr.To(resource.MustParse("1Gi"))})
	waitReady(t, op)

	t.Log("the platform takes Maven's settings from a Secret that does not exist yet: the Build waits, naming it")
	patch := `{"spec":{"build":{"buildConfiguration":{"strategy":"pod","toolImage":"` + missingBuilder + `"},` +
		`"maven":{"settings":{"secretKeyRef":{"name":"maven-settings","key":"settings.xml"}},` +
		`"caSecrets":[{"name":"corp-ca","key":"ca.crt"}],"properties":{"e2e.marker":"it's here"},"cliOptions":["--no-transfer-progress"]}}}}`
	g.Expect(env.Client.Patch(ctx, &camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: "maven-settings"}},
		client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	it := newIntegration(apps, "greeting", "maven-settings", 1)
	delete(it.Spec.Traits, "container")
	it.Spec.Dependencies = []string{"mvn:dev.caravan.e2e:greeting:1.0"}
	it.Spec.Traits["builder"] = harness.Raw(map[string]any{"properties": []any{"e2e.build=a property; of the kit"}})
	create(t, it)
	kit := waitKit(t, client.ObjectKeyFromObject(it), timeout, func(k *camelv1.IntegrationKit) error { return nil })
	g.Eventually(buildReady(kit), timeout, poll).Should(And(HavePrefix("MavenSettingsUnavailable "), ContainSubstring("secret/maven-settings key settings.xml")))

	t.Log("with the settings there, the Build waits for the CA's Secret, naming it")
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: "maven-settings"},
		StringData: map[string]string{"settings.xml": settingsWithRepository("private", repo.url, repo.user, repo.password)}})
	g.Eventually(buildReady(kit), timeout, poll).Should(And(HavePrefix("MavenCAUnavailable "), ContainSubstring("secret/corp-ca key ca.crt")))

	t.Log("with the CA there, the builder pod cannot pull the builder image, which the registry lacks: the Build says so, and since when")
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: "corp-ca"}, Data: map[string][]byte{"ca.crt": repo.ca}})
	g.Eventually(buildReady(kit), mavenTimeout, poll).Should(MatchRegexp(
		`^Running attempt 1 is running: container maven of the builder pod \S+ is waiting: ErrImagePull: .*` + missingBuilder + `.* \(since \d{4}-`))

	t.Log("once the registry holds the image, the pod pulls it by itself; with the repository down, the attempt fails naming the repository")
	copyImage(t, runtime.BuilderImage.Repository, missingBuilder)
	g.Eventually(func() (string, error) {
		b := &camelv1.Build{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(kit), b); err != nil {
			return "", err
		}
		if b.Status.Failure == nil {
			return "", nil
		}
		return b.Status.Failure.Reason, nil
	}, mavenTimeout, poll).Should(And(ContainSubstring("the Maven repository private ("+repo.url), ContainSubstring("503")))

	t.Log("once the repository is up, the Build's retry resolves the private jar through it")
	repo.up.Store(true)
	kit = builtKit(t, client.ObjectKeyFromObject(it), camelv1.IntegrationKitPhaseReady)
	g.Expect(kit.Status.Artifacts).To(ContainElement(HaveField("ID", "dev.caravan.e2e:greeting:jar:1.0")))
	g.Expect(repo.served()).To(ContainElement("/dev/caravan/e2e/greeting/1.0/greeting-1.0.jar"))
	// The repository serves a file only to its user: Maven sent the settings' credentials.
}

// missingBuilder is a builder image the local registry lacks until the test copies it there.
const missingBuilder = "caravan/builder:e2e-missing"

// copyImage copies the image from to the tag to in the local cluster's registry.
func copyImage(t *testing.T, from, to string) {
	t.Helper()
	reg := image.Registry{Address: env.Cluster.RegistryAddress, Insecure: true}
	img, err := image.Pull(context.Background(), reg, from)
	if err == nil {
		err = image.Push(context.Background(), reg, to, img)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// buildReady reads the reason and message of the Ready condition of a kit's Build, "" without one.
func buildReady(kit *camelv1.IntegrationKit) func() (string, error) {
	return func() (string, error) {
		b := &camelv1.Build{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(kit), b); err != nil {
			return "", err
		}
		ready := b.Status.GetCondition(camelv1.ConditionReady)
		if ready == nil {
			return "", nil
		}
		return ready.Reason + " " + ready.Message, nil
	}
}

// privateRepository is a Maven repository the test serves from a directory.
type privateRepository struct {
	url string
	// ca is the PEM certificate of the CA that signed the repository's.
	ca []byte
	// up is false while it answers every request with 503.
	up atomic.Bool
	// user and password are the only credentials it answers; without them it asks for them (401).
	user, password string
	mu             sync.Mutex
	ok             []string
}

// served are the paths it answered with a file.
func (r *privateRepository) served() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ok)
}

// serveRepository serves a repository that holds dev.caravan.e2e:greeting:1.0, a jar of one text
// file, at the cluster's address on the host, which its pods reach. A private one answers to its
// user only, and starts down; another answers anyone. Either answers over HTTPS with a
// certificate of ca, or of a CA of its own for a private one; a public one without ca answers over
// plain HTTP, which Maven allows on the loopback only (the process node's, not the kubelet node's).
func serveRepository(t *testing.T, private bool, ca *testca.CA) *privateRepository {
	t.Helper()
	dir := t.TempDir()
	var jar bytes.Buffer
	zw := zip.NewWriter(&jar)
	w, err := zw.Create("greeting.txt")
	if err == nil {
		_, err = w.Write([]byte("hello from a private repository\n"))
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	pom := `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>` +
		`<groupId>dev.caravan.e2e</groupId><artifactId>greeting</artifactId><version>1.0</version></project>`
	base := filepath.Join(dir, "dev", "caravan", "e2e", "greeting", "1.0")
	for name, data := range map[string][]byte{"greeting-1.0.jar": jar.Bytes(), "greeting-1.0.pom": []byte(pom)} {
		sum := sha1.Sum(data)
		if err := os.MkdirAll(base, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, name+".sha1"), []byte(hex.EncodeToString(sum[:])), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(env.Cluster.HostAddress(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	r := &privateRepository{url: fmt.Sprintf("http://%s/", l.Addr())}
	r.up.Store(!private)
	files := http.FileServer(http.Dir(dir))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !r.up.Load() {
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		}
		if user, password, ok := req.BasicAuth(); private && (!ok || user != r.user || password != r.password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="private"`)
			http.Error(w, "credentials needed", http.StatusUnauthorized)
			return
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(req.URL.Path))); err == nil {
			r.mu.Lock()
			r.ok = append(r.ok, req.URL.Path)
			r.mu.Unlock()
		}
		files.ServeHTTP(w, req)
	})}
	t.Cleanup(func() { _ = srv.Close() })
	if !private && ca == nil {
		go func() { _ = srv.Serve(l) }()
		return r
	}
	if ca == nil {
		ca = testca.New(t, env.Cluster.HostAddress())
	}
	r.url, r.ca = fmt.Sprintf("https://%s/", l.Addr()), ca.PEM
	if private {
		r.user, r.password = "reader", "s3cret-<&>"
	}
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{ca.Server}}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	return r
}

// settingsWithRepository is a Maven settings.xml whose active profile adds repository id at url,
// with the credentials of server id, when given.
func settingsWithRepository(id, url string, credentials ...string) string {
	servers := ""
	if len(credentials) == 2 {
		servers = `
  <servers>
    <server><id>` + id + `</id><username>` + html.EscapeString(credentials[0]) + `</username><password>` +
			html.EscapeString(credentials[1]) + `</password></server>
  </servers>`
	}
	return `<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">` + servers + `
  <profiles>
    <profile>
      <id>` + id + `</id>
      <repositories>
        <repository><id>` + id + `</id><url>` + url + `</url></repository>
      </repositories>
    </profile>
  </profiles>
  <activeProfiles><activeProfile>` + id + `</activeProfile></activeProfiles>
</settings>
`
}
