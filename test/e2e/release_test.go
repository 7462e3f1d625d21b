package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/release"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestAReleaseInstallsWithHelmAndWithItsOwnCLI: a release pushed to the local cluster's
// registry installs one operator from its OCI chart with the helm command, and another with
// the released CLI's caravan install --image; both run the released image by digest and an
// integration.
func TestAReleaseInstallsWithHelmAndWithItsOwnCLI(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const version = "v0.0.0-e2e.1"
	src, err := operatorimage.FindSource(ctx, sourceRoot())
	g.Expect(err).NotTo(HaveOccurred())
	cacheDir, err := localcluster.DefaultCacheDir()
	g.Expect(err).NotTo(HaveOccurred())
	changelog := filepath.Join(t.TempDir(), "CHANGELOG.md")
	g.Expect(os.WriteFile(changelog, []byte("# Changelog\n\n## Unreleased\n\n- A release the e2e tests install.\n"), 0o644)).To(Succeed())
	host := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	out := filepath.Join(t.TempDir(), version)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	g.Expect(err).NotTo(HaveOccurred())
	der, err := x509.MarshalPKCS8PrivateKey(key)
	g.Expect(err).NotTo(HaveOccurred())
	signer, err := release.LoadSigningKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil)
	g.Expect(err).NotTo(HaveOccurred())
	res, err := release.Run(ctx, release.Options{Version: version, SigningKey: signer,
		Registry: image.Registry{Address: env.Cluster.RegistryAddress, Insecure: true}, Prefix: "release-e2e",
		Source: src, AllowDirty: true, OutDir: out, CLIPlatforms: []v1.Platform{host}, ImagePlatforms: []v1.Platform{host},
		KitImages: []string{"base"}, CacheDir: cacheDir, Changelog: changelog, Now: time.Now(), Progress: logWriter{t}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Operator).To(HavePrefix(env.Cluster.RegistryAddress + "/release-e2e/caravan/operator@sha256:"))
	kubeconfig := env.Kubeconfig(t, "release-admin", "system:masters")

	t.Log("helm installs an operator from the release's OCI chart, whose image is the released digest")
	ops, apps := env.Namespace(t), env.Namespace(t)
	chart := "oci://" + env.Cluster.RegistryAddress + "/release-e2e/" + release.ChartRepository + "/caravan"
	helmOut, err := harness.Helm(t, sourceRoot(), kubeconfig, "install", "released", chart, "--version", strings.TrimPrefix(version, "v"),
		"--plain-http", "-n", ops, "--set", "operatorId=released", "--set", "skipAdmission=true", "--set", "skipKamelets=true",
		"--set", "sharedResources=false", "--set", "registry.address="+env.Cluster.RegistryAddress, "--set", "registry.insecure=true")
	g.Expect(err).NotTo(HaveOccurred(), "helm install:\n%s", helmOut)
	t.Cleanup(func() { _, _ = harness.Helm(t, sourceRoot(), kubeconfig, "uninstall", "released", "-n", ops) })
	pod := runningPod(t, ops, "released")
	g.Expect(pod.Spec.Containers[0].Image).To(Equal(res.Operator))
	it := newIntegration(apps, "from-the-chart", "released", 1)
	create(t, it)
	waitRunningUnder(t, client.ObjectKeyFromObject(it), "released")

	t.Log("the released CLI, unpacked from its archive, installs another operator of the released image")
	dir := t.TempDir()
	tarOut, err := exec.Command("tar", "-xzf", filepath.Join(out, release.ArchiveName(version, host)), "-C", dir).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "unpacking the CLI: %s", tarOut)
	caravan := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(dir, "caravan"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
		cmd.Env = append(os.Environ(), "CARAVAN_LOCAL_DIR="+env.Cluster.Dir)
		got, err := cmd.CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), "caravan %s:\n%s", strings.Join(args, " "), got)
		return string(got)
	}
	g.Expect(caravan("version", "--client")).To(ContainSubstring(version))
	cliOps := env.Namespace(t)
	caravan("install", "-n", cliOps, "-x", "released-cli", "--image", res.Operator, "--skip-admission", "--skip-kamelets",
		"--registry", env.Cluster.RegistryAddress, "--wait")
	t.Cleanup(func() { _, _, _ = env.CLI(t, kubeconfig, "uninstall", "-n", cliOps, "-x", "released-cli") })
	pod = runningPod(t, cliOps, "released-cli")
	g.Expect(pod.Spec.Containers[0].Image).To(Equal(res.Operator))
	it = newIntegration(apps, "from-the-cli", "released-cli", 1)
	create(t, it)
	waitRunningUnder(t, client.ObjectKeyFromObject(it), "released-cli")
}

// logWriter writes progress lines to the test's log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
