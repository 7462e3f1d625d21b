// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
)

// forwardProxy is an HTTP proxy at the cluster's address on the host, which its pods reach: it
// tunnels CONNECT requests, forwards the others, and remembers the hosts it reached.
type forwardProxy struct {
	url   string
	mu    sync.Mutex
	hosts []string
}

// reached are the host:port targets of the CONNECT requests it tunnelled, and the hosts of the
// requests it forwarded, each once.
func (p *forwardProxy) reached() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.hosts)
}

func (p *forwardProxy) record(host string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.hosts, host) {
		p.hosts = append(p.hosts, host)
	}
}

// serveForwardProxy starts a forwardProxy that stops when the test ends.
func serveForwardProxy(t *testing.T) *forwardProxy {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(env.Cluster.HostAddress(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	p := &forwardProxy{url: "http://" + l.Addr().String()}
	direct := &http.Transport{Proxy: nil}
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.record(r.Host)
		if r.Method == http.MethodConnect {
			p.tunnel(w, r)
			return
		}
		r.RequestURI = ""
		resp, err := direct.RoundTrip(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		maps.Copy(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// tunnel connects a CONNECT request's client to its target and copies both ways until either ends.
func (p *forwardProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	upstream, err := net.DialTimeout("tcp", r.Host, 30*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = conn.Close()
		_ = upstream.Close()
		return
	}
	go func(in *bufio.Reader) {
		_, _ = io.Copy(upstream, in)
		_ = upstream.Close()
	}(buf.Reader)
	go func() {
		_, _ = io.Copy(conn, upstream)
		_ = conn.Close()
	}()
}

// proxyEnv are an operator's HTTP_PROXY, HTTPS_PROXY and NO_PROXY for proxy, NO_PROXY as Camel K's
// case writes it: the cluster's names and the kubernetes Service's addresses.
func proxyEnv(t *testing.T, proxy *forwardProxy) map[string]string {
	t.Helper()
	svc := &corev1.Service{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "kubernetes"}, svc); err != nil {
		t.Fatal(err)
	}
	noProxy := append([]string{".cluster.local", ".svc", "localhost"}, svc.Spec.ClusterIPs...)
	return map[string]string{"HTTP_PROXY": proxy.url, "HTTPS_PROXY": proxy.url, "NO_PROXY": strings.Join(noProxy, ",")}
}

// checkProxiesAndPullSecrets replays Camel K's environment and pull-secret cases on operator id,
// whose container has the variables proxy: an integration gets them, with NAMESPACE and POD_NAME,
// and pulls its image from a registry that asks for credentials with the pull secret it names;
// one replaces HTTP_PROXY with environment.vars; one has environment.http-proxy and pull-secret
// off. Each runs kitImage's JVM and logs.
func checkProxiesAndPullSecrets(t *testing.T, cli func(...string) (string, string, error), ns, id, kitImage string, proxy map[string]string) {
	t.Helper()
	g := NewWithT(t)
	private := privateImage(t, ns, kitImage)
	timer := filepath.Join("testdata", "camel", "timer.yaml")
	for _, args := range [][]string{
		{"--name", "proxied", "--image", private, "-t", "pull-secret.secret-name=private-registry", "-p", "greeting=proxied"},
		{"--name", "custom-proxy", "--image", kitImage, "-t", "environment.vars=HTTP_PROXY=http://custom.proxy", "-p", "greeting=custom",
			"-t", "service.enabled=true", "-t", "service.type=ClusterIP"},
		{"--name", "no-proxy", "--image", kitImage, "-t", "environment.http-proxy=false", "-t", "pull-secret.enabled=false", "-p", "greeting=none"},
	} {
		out, errOut, err := cli(append([]string{"run", timer, "-x", id}, args...)...)
		g.Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
	}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
	}
	downward := []any{fieldEnv("NAMESPACE", "metadata.namespace"), fieldEnv("POD_NAME", "metadata.name")}
	for name, want := range map[string]struct {
		greeting string
		env      []any
		without  []string
		secrets  []corev1.LocalObjectReference
	}{
		"proxied": {greeting: "proxied", env: append(slices.Clone(downward), corev1.EnvVar{Name: "HTTP_PROXY", Value: proxy["HTTP_PROXY"]},
			corev1.EnvVar{Name: "NO_PROXY", Value: proxy["NO_PROXY"]}), secrets: []corev1.LocalObjectReference{{Name: "private-registry"}}},
		"custom-proxy": {greeting: "custom", env: append(slices.Clone(downward), corev1.EnvVar{Name: "HTTP_PROXY", Value: "http://custom.proxy"},
			corev1.EnvVar{Name: "NO_PROXY", Value: proxy["NO_PROXY"]})},
		"no-proxy": {greeting: "none", env: downward, without: []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}},
	} {
		pod := jvmPod(t, client.ObjectKey{Namespace: ns, Name: name})
		g.Eventually(integrationLog(cli, name), timeout, poll).Should(ContainSubstring(want.greeting+" #2"), "integration %s does not log", name)
		main := pod.Spec.Containers[0]
		g.Expect(main.Env).To(ContainElements(want.env...), "integration %s", name)
		for _, v := range want.without {
			g.Expect(main.Env).NotTo(ContainElement(HaveField("Name", v)), "integration %s", name)
		}
		g.Expect(pod.Spec.ImagePullSecrets).To(Equal(want.secrets), "integration %s", name)
		if name == "custom-proxy" {
			g.Expect(serviceType(client.ObjectKey{Namespace: ns, Name: name})()).To(Equal(corev1.ServiceTypeClusterIP), "as on Camel K, service.type=ClusterIP")
		}
		g.Expect(env.Client.Delete(context.Background(), &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	}
}

// privateImage copies ref to a registry that answers only to its user and password, and puts them
// in the Secret private-registry of ns. It returns the copy's reference.
func privateImage(t *testing.T, ns, ref string) string {
	t.Helper()
	reg := startRegistry(t, imagetest.WithAuth("puller", "pull-s3cret"))
	img, err := image.Pull(context.Background(), image.Registry{Address: env.Cluster.RegistryAddress, Insecure: true}, ref)
	if err != nil {
		t.Fatal(err)
	}
	private := reg.Address + "/caravan/private:e2e"
	if err := image.Push(context.Background(), reg.Config(), private, img); err != nil {
		t.Fatal(err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(reg.Username + ":" + reg.Password))
	config, err := json.Marshal(map[string]any{"auths": map[string]any{reg.Address: map[string]string{"auth": auth}}})
	if err != nil {
		t.Fatal(err)
	}
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "private-registry"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: config}})
	return private
}
