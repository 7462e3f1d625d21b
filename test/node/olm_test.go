package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/gobuild"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/packaging"
	"github.com/caravan-dev/caravan/internal/release"
	caravanscheme "github.com/caravan-dev/caravan/internal/scheme"
)

// The OLM the release's bundle is installed with: operator-lifecycle-manager's operators, the
// opm that serves catalogs, and the probe OLM's catalog pods run.
const (
	olmModule          = "github.com/operator-framework/operator-lifecycle-manager"
	olmVersion         = "v0.42.0"
	opmModule          = "github.com/operator-framework/operator-registry"
	opmVersion         = "v1.65.0"
	healthProbeModule  = "github.com/grpc-ecosystem/grpc-health-probe"
	healthProbeVersion = "v0.4.63"
	// olmNamespace holds OLM and the catalog; operators the operators it installs, for every namespace.
	olmNamespace, operatorsNamespace = "olm", "operators"
)

// TestOLMInstallsTheReleasedBundleFromItsCatalog: a release published to the local registry,
// its catalog image built on opm, is installed by OLM as docs/install.md says (a CatalogSource
// of the catalog image, a Subscription to its channel): OLM serves the catalog from a pod of its
// image, unpacks the bundle image, and runs the released operator image, whose
// ClusterServiceVersion succeeds.
func TestOLMInstallsTheReleasedBundleFromItsCatalog(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("OLM's catalog pods are probed by commands, which only the kubelet node runs: it needs root (CI runs as root)")
	}
	if testing.Short() {
		t.Skip("builds OLM and opm once into the cache, and makes a release")
	}
	ctx := context.Background()
	olmBin, opmBin, probeBin := buildOLM(t)
	c := startCluster(t)
	opmImage := c.RegistryAddress + "/olm-test/opm:" + opmVersion
	olmImage := c.RegistryAddress + "/olm-test/olm:" + olmVersion
	pushOLMImages(t, c, olmBin, opmBin, probeBin, opmImage, olmImage)
	res := releaseWithCatalogOn(t, c, opmImage)
	cl := olmClient(t, c)
	installOLM(t, cl, olmImage, opmImage)

	t.Log("a CatalogSource of the release's catalog image and a Subscription to its channel, as docs/install.md says")
	create(t, cl, &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: olmNamespace, Name: "caravan"},
		Spec: operatorsv1alpha1.CatalogSourceSpec{SourceType: operatorsv1alpha1.SourceTypeGrpc, Image: res.Catalog, DisplayName: "Caravan"}})
	create(t, cl, &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: operatorsNamespace, Name: "caravan"},
		Spec: &operatorsv1alpha1.SubscriptionSpec{Package: packaging.OLMPackage, Channel: packaging.OLMChannel,
			CatalogSource: "caravan", CatalogSourceNamespace: olmNamespace}})
	csv := waitSucceeded(t, cl)

	t.Run("OLM served the catalog from a pod of its image, and unpacked the bundle with a Job", func(t *testing.T) {
		if n := readyPodsOf(t, cl, olmNamespace, res.Catalog); n != 1 {
			t.Errorf("%d ready pods of the kubelet node run the catalog image %s, want 1", n, res.Catalog)
		}
		jobs := &batchv1.JobList{}
		if err := cl.List(ctx, jobs, client.InNamespace(olmNamespace)); err != nil {
			t.Fatal(err)
		}
		if len(jobs.Items) != 1 || jobs.Items[0].Status.Succeeded != 1 {
			t.Errorf("OLM's bundle unpacking: %d Jobs in %s, want one that succeeded: %+v", len(jobs.Items), olmNamespace, jobs.Items)
		}
	})
	t.Run("the ClusterServiceVersion is the release's, and its operator runs the released image by digest, registered and live", func(t *testing.T) {
		if csv.Spec.Version.String() != strings.TrimPrefix(olmReleaseVersion, "v") || csv.Spec.Replaces != "" {
			t.Errorf("OLM installed version %s replacing %q, want %s replacing none", csv.Spec.Version.String(), csv.Spec.Replaces, olmReleaseVersion)
		}
		if n := readyPodsOf(t, cl, operatorsNamespace, res.Operator); n != 1 {
			t.Errorf("%d ready pods of the kubelet node run the released operator image %s, want 1", n, res.Operator)
		}
		waitFor(t, "the operator's live registration", 2*time.Minute, func() (bool, error) {
			iop := &camelv1alpha1.IntegrationOperator{}
			if err := cl.Get(ctx, client.ObjectKey{Name: "camel-k"}, iop); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return ownership.FromOperator(iop).Live(time.Now()) && iop.Status.Namespace == operatorsNamespace, nil
		})
	})
}

// readyPodsOf counts the ready pods of namespace, on the kubelet node, whose first container runs ref.
func readyPodsOf(t *testing.T, cl client.Client, namespace, ref string) int {
	pods := &corev1.PodList{}
	if err := cl.List(context.Background(), pods, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.Spec.NodeName != localcluster.KubeletNodeName || p.Spec.Containers[0].Image != ref {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// olmReleaseVersion is the version the test releases.
const olmReleaseVersion = "v0.1.0"

// buildOLM builds OLM's binaries (olm, catalog, cpb), opm and grpc_health_probe once into the
// cache, and returns their directories.
func buildOLM(t *testing.T) (olm, opm, probe string) {
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	build := func(module, version string, pkgs, tags []string) string {
		dir, err := gobuild.BuildModule(cacheDir, module, version, pkgs, tags, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return build(olmModule, olmVersion, []string{"./cmd/olm", "./cmd/catalog", "./util/cpb"}, nil),
		build(opmModule, opmVersion, []string{"./cmd/opm"}, []string{"json1", "containers_image_openpgp"}),
		build(healthProbeModule, healthProbeVersion, []string{"."}, nil)
}

// pushOLMImages pushes the image of OLM's operators and of its bundle unpacking (olm, catalog,
// cpb, and Debian's static busybox as cp) and the image of opm with the probe of catalog pods.
func pushOLMImages(t *testing.T, c *localcluster.Cluster, olmBin, opmBin, probeBin, opmImage, olmImage string) {
	ctx := context.Background()
	busybox := extractBusybox(t)
	if err := c.PushFiles(ctx, olmImage, []localcluster.ImageFile{
		{Path: "bin/olm", From: filepath.Join(olmBin, "olm")}, {Path: "bin/catalog", From: filepath.Join(olmBin, "catalog")},
		{Path: "bin/cpb", From: filepath.Join(olmBin, "cpb")}, {Path: "bin/cp", From: busybox}, {Path: "tmp"},
	}, "/bin/olm"); err != nil {
		t.Fatal(err)
	}
	if err := c.PushFiles(ctx, opmImage, []localcluster.ImageFile{
		{Path: "bin/opm", From: filepath.Join(opmBin, "opm")},
		{Path: "bin/grpc_health_probe", From: filepath.Join(probeBin, "grpc-health-probe")}, {Path: "tmp"},
	}, "/bin/opm"); err != nil {
		t.Fatal(err)
	}
}

// extractBusybox unpacks Debian's static busybox and returns the program: the cp the bundle
// unpacking runs (busybox acts as the program its name says).
func extractBusybox(t *testing.T) string {
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	opts := debimage.Options{CacheDir: debimage.CacheDir(cacheDir), Progress: os.Stderr}
	if _, err := opts.Extract(context.Background(), []string{"busybox-static"}, root); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "bin", "busybox")
}

// releaseWithCatalogOn makes an unsigned release of the working tree into the cluster's
// registry, for this machine's platform, its OLM catalog image built on opmImage.
func releaseWithCatalogOn(t *testing.T, c *localcluster.Cluster, opmImage string) release.Result {
	ctx := context.Background()
	src, err := operatorimage.FindSource(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	changelog := filepath.Join(t.TempDir(), "CHANGELOG.md")
	if err := os.WriteFile(changelog, []byte("# Changelog\n\n## Unreleased\n\n- Installed by OLM.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host := v1.Platform{OS: "linux", Architecture: goruntime.GOARCH}
	res, err := release.Run(ctx, release.Options{Version: olmReleaseVersion, Unsigned: true,
		Registry: image.Registry{Address: c.RegistryAddress, Insecure: true}, Prefix: "olm-test",
		Source: src, AllowDirty: true, OutDir: filepath.Join(t.TempDir(), "release"), CLIPlatforms: []v1.Platform{host},
		ImagePlatforms: []v1.Platform{host}, CatalogBase: opmImage, CacheDir: cacheDir, Changelog: changelog,
		Now: time.Now(), Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// olmClient is a client of c that knows OLM's kinds and CRDs.
func olmClient(t *testing.T, c *localcluster.Cluster) client.Client {
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	scheme := caravanscheme.New()
	for _, add := range []func(*runtime.Scheme) error{operatorsv1.AddToScheme, operatorsv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// installOLM installs OLM as its chart lays it out: its CRDs, the namespaces of OLM and of
// operators for every namespace, and its two operators as pods of olmImage that may do anything.
// The catalog operator reaches the catalog pods' Services by name, through the cluster DNS.
func installOLM(t *testing.T, cl client.Client, olmImage, opmImage string) {
	ctx := context.Background()
	dir, err := gobuild.ModuleDir(olmModule, olmVersion)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := filepath.Glob(filepath.Join(dir, "deploy", "chart", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("OLM's CRDs in %s: %v", dir, err)
	}
	for _, f := range crds {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		create(t, cl, crd)
		waitFor(t, "CRD "+crd.Name+" established", time.Minute, func() (bool, error) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
				return false, err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
	}
	for _, ns := range []string{olmNamespace, operatorsNamespace} {
		create(t, cl, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	create(t, cl, &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: operatorsNamespace, Name: "global-operators"}})
	create(t, cl, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: olmNamespace, Name: "olm-operator"}})
	create(t, cl, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "olm-operator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: olmNamespace, Name: "olm-operator"}}})
	operator := func(name string, args []string) *appsv1.Deployment {
		labels := map[string]string{"app": name}
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: olmNamespace, Name: name},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					ServiceAccountName: "olm-operator",
					Containers: []corev1.Container{{Name: name, Image: olmImage, Command: []string{"/bin/" + strings.TrimSuffix(name, "-operator")},
						Args: args, Env: []corev1.EnvVar{{Name: "OPERATOR_NAMESPACE", Value: olmNamespace},
							{Name: "OPERATOR_NAME", Value: name}}}},
				}}}}
	}
	create(t, cl, operator("olm-operator", []string{"--namespace", olmNamespace, "--writeStatusName", ""}))
	create(t, cl, operator("catalog-operator", []string{"--namespace", olmNamespace, "--opmImage", opmImage,
		"--util-image", olmImage, "--set-workload-user-id=false"}))
}

// waitSucceeded waits until the ClusterServiceVersion of the Subscription succeeds, and returns it;
// on a timeout it reports what OLM's objects and pods say.
func waitSucceeded(t *testing.T, cl client.Client) *operatorsv1alpha1.ClusterServiceVersion {
	ctx := context.Background()
	var csv *operatorsv1alpha1.ClusterServiceVersion
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 8*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &operatorsv1alpha1.ClusterServiceVersionList{}
		if err := cl.List(ctx, list, client.InNamespace(operatorsNamespace)); err != nil {
			return false, err
		}
		for i := range list.Items {
			if strings.HasPrefix(list.Items[i].Name, packaging.OLMPackage+".") {
				csv = &list.Items[i]
				return csv.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no ClusterServiceVersion succeeded: %v\n%s", err, olmReport(t, cl, csv))
	}
	return csv
}

// olmReport says what the CSV, the Subscription, the CatalogSource and the pods of OLM's
// namespaces say.
func olmReport(t *testing.T, cl client.Client, csv *operatorsv1alpha1.ClusterServiceVersion) string {
	ctx := context.Background()
	var b strings.Builder
	if csv != nil {
		fmt.Fprintf(&b, "CSV %s: %s %s: %s\n", csv.Name, csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
	}
	sub := &operatorsv1alpha1.Subscription{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: operatorsNamespace, Name: "caravan"}, sub); err == nil {
		data, _ := json.Marshal(sub.Status)
		fmt.Fprintf(&b, "Subscription: %s\n", data)
	}
	cat := &operatorsv1alpha1.CatalogSource{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: olmNamespace, Name: "caravan"}, cat); err == nil {
		data, _ := json.Marshal(cat.Status)
		fmt.Fprintf(&b, "CatalogSource: %s\n", data)
	}
	for _, ns := range []string{olmNamespace, operatorsNamespace} {
		pods := &corev1.PodList{}
		if err := cl.List(ctx, pods, client.InNamespace(ns)); err != nil {
			continue
		}
		for _, p := range pods.Items {
			data, _ := json.Marshal(p.Status.ContainerStatuses)
			fmt.Fprintf(&b, "pod %s/%s on %s: %s %s\n", ns, p.Name, p.Spec.NodeName, p.Status.Phase, data)
		}
	}
	return b.String()
}

// create creates obj, failing the test on an error.
func create(t *testing.T, cl client.Client, obj client.Object) {
	t.Helper()
	if err := cl.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// waitFor polls done every half second until it holds, for at most timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, done func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true,
		func(context.Context) (bool, error) { return done() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
