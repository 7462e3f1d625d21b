package installcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/await"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/cli/local"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/platform"
	"github.com/caravan-dev/caravan/internal/version"
)

// InstallOptions are the options of `caravan install`.
type InstallOptions struct {
	cmdutil.Cluster

	ID              string
	Default         bool
	WatchNamespaces []string
	Global          bool
	Force           bool
	DryRun          cmdutil.DryRun
	CRDs            string
	Output          string
	Image           string
	Registry        string
	Wait            bool
	Timeout         time.Duration
	SkipAdmission   bool
	SkipKamelets    bool
	Replicas        int32
	Requests        map[string]string
	Limits          map[string]string
	NodeSelector    map[string]string
	Tolerations     []string
	PullSecrets     []string
	Heartbeat       time.Duration
	Verbosity       int
	LogFormat       string
	Pprof           bool
	MavenCache      string
	BuildStrategy   string
	// RegistrySecret names the Secret of the kit registry's credentials, in the operator's namespace.
	RegistrySecret string
	// Fleet installs the fleet controller instead of an operator.
	Fleet bool

	// Set by Complete.
	resources   corev1.ResourceRequirements
	tolerations []corev1.Toleration
	defaultSet  bool
	imageSet    bool
	// flags are the command's flags, for Validate to tell which were given.
	flags            *pflag.FlagSet
	registryInsecure bool
	mavenCache       *resource.Quantity
	local            *localcluster.Cluster

	genericiooptions.IOStreams
}

// NewCmdInstall builds `caravan install`, which installs an operator, or the fleet controller.
func NewCmdInstall(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &InstallOptions{Cluster: cmdutil.Cluster{Kube: kube}, ID: ownership.DefaultID, Global: true, Timeout: 2 * time.Minute, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install an operator, named by its id, into a namespace",
		Long: `Install an operator: the CRDs (server-side apply), its ServiceAccount and roles,
its Deployment, its IntegrationPlatform and its IntegrationOperator registration,
all named from its id so several operators can share a namespace. Also the
ClusterRole <id>-operator-user, which lets who is bound to it assign resources
to this operator.

Unless --skip-kamelets, the operator installs the Kamelet catalog of its Camel
version into the operator namespace, resolved by Maven in a builder pod, as
Camel K does: unassigned, so that Pipes and KameletBindings of any namespace
find them there after their own namespace. --skip-kamelets has the new
platform opt out of it.

An id already registered is refused; --force reinstalls or upgrades it in the
same namespace, and never takes over an id registered in another namespace.
A failed install removes what it created.

On the local cluster (caravan local up), unless --image is given, install
builds the operator image from this source tree and pushes it to the local
registry; the local cluster's process node runs the operator pod from it.`,
		Example: `  # The default operator, camel-k, in namespace camel-k
  caravan install -n camel-k

  # Two tenants' operators side by side in one namespace
  caravan install -n operators -x tenant-a
  caravan install -n operators -x tenant-b --watch-namespaces team-b

  # The manifests, for GitOps
  caravan install -n operators -x tenant-a --dry-run -o yaml

  # The fleet controller, which runs the operators that IntegrationOperators declare
  caravan install -n caravan-system --fleet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.defaultSet = cmd.Flags().Changed("default")
			o.imageSet = cmd.Flags().Changed("image")
			o.flags = cmd.Flags()
			if cmd.Flags().Changed("watch-namespaces") && !cmd.Flags().Changed("global") {
				o.Global = false
			}
			// -o prints and applies nothing, as kamel install -o did: a redirect to a file never
			// changes the cluster.
			if cmd.Flags().Changed("output") && !o.DryRun.Any() {
				o.DryRun = cmdutil.DryRunClient
			}
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.ID, "operator-id", "x", o.ID, "the operator id, a DNS-1123 label")
	f.BoolVar(&o.Default, "default", false, "make it the default operator, which adopts resources that name no operator (default true for camel-k when no other default exists)")
	f.StringSliceVar(&o.WatchNamespaces, "watch-namespaces", nil, "serve only these namespaces")
	f.BoolVar(&o.Global, "global", o.Global, "serve every namespace; --global=false serves only the namespace installed in, as kamel's (the default unless --watch-namespaces is set)")
	f.BoolVar(&o.Force, "force", false, "reinstall or upgrade an operator already installed in this namespace")
	cmdutil.AddDryRunFlag(f, &o.DryRun, "client: print the manifests instead of applying them: the namespace first, then the CRDs, then the operator's objects")
	f.StringVar(&o.CRDs, "crds", "include", "with --dry-run, include the CRDs, skip them, or print only them (include, skip or only): kubectl apply needs the CRDs established before the objects of their kinds")
	f.StringVarP(&o.Output, "output", "o", "yaml", "print the manifests in this format, yaml or json, and apply nothing (as --dry-run)")
	f.StringVar(&o.Image, "image", version.DefaultOperatorImage(), "operator container image")
	f.StringVar(&o.Registry, "registry", "", "address of the registry kits are pushed to (the platform's spec.build.registry.address)")
	f.StringVar(&o.RegistrySecret, "registry-secret", "", "Secret of the registry's credentials in the operator's namespace, of type kubernetes.io/dockerconfigjson (the platform's spec.build.registry.secret)")
	f.BoolVar(&o.SkipAdmission, "skip-admission", false, "do not install the admission policies that enforce who may assign resources to which operator")
	f.BoolVar(&o.Wait, "wait", false, "wait until the operator has registered and is ready")
	f.BoolVar(&o.SkipKamelets, "skip-kamelets", false, "have the operator install no Kamelet catalog into its namespace (the new platform's spec.kamelet.catalog: false)")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long --wait waits")
	f.Int32Var(&o.Replicas, "replicas", 1, "replicas of the operator Deployment (one leads, on the Lease <id>-lock)")
	f.StringToStringVar(&o.Requests, "requests", nil, "resource requests of the operator container, as cpu=100m,memory=64Mi (default cpu=100m,memory=64Mi)")
	f.StringToStringVar(&o.Limits, "limits", nil, "resource limits of the operator container, as cpu=1,memory=512Mi (default cpu=1,memory=512Mi)")
	// The usage says the defaults, which an empty map stands for.
	f.Lookup("requests").DefValue, f.Lookup("limits").DefValue = "", ""
	f.StringToStringVar(&o.NodeSelector, "node-selector", nil, "node labels the operator pod must run on, as key=value")
	f.StringSliceVar(&o.Tolerations, "tolerations", nil, "taints the operator pod tolerates, as key[=value]:Effect[:seconds] or key:Exists:Effect")
	f.StringSliceVar(&o.PullSecrets, "image-pull-secret", nil, "Secrets, in the operator namespace, to pull the operator image with")
	f.DurationVar(&o.Heartbeat, "heartbeat-interval", 0, "how often the operator renews its registration, between 1s and 30s; it counts as gone after three missed renewals (default 10s)")
	f.IntVar(&o.Verbosity, "log-verbosity", 0, "the operator's log verbosity")
	f.StringVar(&o.LogFormat, "log-format", "text", "the operator's log format: text, or json for one JSON object a line")
	f.BoolVar(&o.Fleet, "fleet", false, "install the fleet controller, which runs the operators that IntegrationOperators declare (spec.namespace), instead of an operator; --image is also the operators' default image")
	f.StringVar(&o.BuildStrategy, "build-strategy", "", "where a new platform builds kits: pod (Maven in builder pods, the default) or dependency-list (in the operator, kits of the dependency list and no jars, for clusters whose integration pods are simulated)")
	f.StringVar(&o.MavenCache, "maven-cache", "", "size of a PersistentVolumeClaim, on the default StorageClass, that keeps Maven's downloads across builder pods (the platform's spec.build.maven.cacheVolumeClaim), such as 2Gi")
	f.BoolVar(&o.Pprof, "pprof", false, "serve the Go runtime's /debug/pprof beside the metrics, behind the same authentication, for profiling")
	return cmd
}

// Complete resolves the namespace and, unless dry-running, the cluster.
func (o *InstallOptions) Complete() error {
	if !o.defaultSet {
		o.Default = o.ID == ownership.DefaultID
	}
	if o.DryRun.Client() {
		return nil
	}
	// Building the local image takes minutes; the client's logs go to klog.
	cmdutil.LogClientsToKlog()
	o.local = local.Running(o.Config.Host)
	if o.local != nil && o.Registry == "" && o.local.RegistryAddress != "" {
		// The local cluster's own registry, over plain HTTP on loopback.
		o.Registry, o.registryInsecure = o.local.RegistryAddress, true
	}
	return nil
}

// Preamble asks for the namespace and, unless the dry run is the client's, the client
// configuration, which says whether the cluster is local.
func (o *InstallOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	if o.DryRun.Client() {
		return &o.Cluster, cmdutil.NeedNamespace
	}
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedConfig
}

// operatorOnlyFlags are the flags of one operator, which --fleet refuses.
var operatorOnlyFlags = []string{"operator-id", "default", "watch-namespaces", "global", "skip-admission",
	"replicas", "requests", "limits", "node-selector", "tolerations", "log-verbosity", "log-format", "pprof", "registry-secret"}

// Validate checks the flags before anything is written.
func (o *InstallOptions) Validate() error {
	if o.Fleet && o.flags != nil {
		for _, only := range operatorOnlyFlags {
			if o.flags.Changed(only) {
				return fmt.Errorf("--%s is a setting of one operator, not of the fleet controller: set it in the operator's IntegrationOperator (spec) instead", only)
			}
		}
	}
	if err := ownership.ValidateID(o.ID); err != nil {
		return err
	}
	if o.Global && len(o.WatchNamespaces) > 0 {
		return errors.New("--global and --watch-namespaces conflict: --global serves every namespace, " +
			"--watch-namespaces only those it lists; give one of them")
	}
	if err := install.ValidateWatchNamespaces(o.WatchNamespaces); err != nil {
		return fmt.Errorf("--watch-namespaces: %w", err)
	}
	if o.DryRun.Server() {
		return errors.New("--dry-run=server is not supported by install, whose objects need the CRDs it installs: use --dry-run=client to print them")
	}
	if o.BuildStrategy != "" {
		if err := platform.CheckStrategy(o.BuildStrategy); err != nil {
			return fmt.Errorf("--build-strategy %w", err)
		}
	}
	if o.MavenCache != "" {
		q, err := resource.ParseQuantity(o.MavenCache)
		if err != nil || q.Sign() <= 0 {
			return fmt.Errorf("--maven-cache %q: want a size, such as 2Gi", o.MavenCache)
		}
		o.mavenCache = &q
	}
	if o.CRDs != "include" && o.CRDs != "skip" && o.CRDs != "only" {
		return fmt.Errorf("--crds must be include, skip or only, got %q", o.CRDs)
	}
	if o.CRDs != "include" && !o.DryRun.Client() {
		return errors.New("--crds is for --dry-run: an install applies the CRDs first and waits until they are established")
	}
	if o.DryRun.Client() && o.Output != "yaml" && o.Output != "json" {
		return fmt.Errorf("--output must be yaml or json, got %q", o.Output)
	}
	if err := validateImage(o.Image); err != nil {
		return err
	}
	if !o.imageSet && o.local == nil && !o.DryRun.Client() && version.Get() == version.Development {
		return fmt.Errorf("--image is required: this caravan is a development build, whose default image %s exists only on the local cluster "+
			"(caravan local up); push this tree's operator image (caravan image push REGISTRY) and give it to --image", o.Image)
	}
	if o.Replicas < 0 {
		return fmt.Errorf("--replicas must not be negative, got %d", o.Replicas)
	}
	if o.Heartbeat != 0 {
		if err := ownership.ValidateHeartbeatInterval(o.Heartbeat); err != nil {
			return err
		}
	}
	if o.LogFormat != "text" && o.LogFormat != "json" {
		return fmt.Errorf("--log-format must be text or json, got %q", o.LogFormat)
	}
	if o.Verbosity < 0 {
		return fmt.Errorf("--log-verbosity must not be negative, got %d", o.Verbosity)
	}
	var err error
	if o.resources, err = install.ParseResources(o.Requests, o.Limits); err != nil {
		return err
	}
	if o.tolerations, err = install.ParseTolerations(o.Tolerations); err != nil {
		return err
	}
	for _, s := range o.PullSecrets {
		if msgs := validation.IsDNS1123Subdomain(s); len(msgs) > 0 {
			return fmt.Errorf("--image-pull-secret %q: %s", s, strings.Join(msgs, "; "))
		}
	}
	if o.RegistrySecret != "" {
		if msgs := validation.IsDNS1123Subdomain(o.RegistrySecret); len(msgs) > 0 {
			return fmt.Errorf("--registry-secret %q: %s", o.RegistrySecret, strings.Join(msgs, "; "))
		}
	}
	return nil
}

func (o *InstallOptions) installConfig() install.Config {
	watch := o.WatchNamespaces
	if !o.Global && len(watch) == 0 {
		// kamel's --global=false: the operator serves the namespace it is installed in.
		watch = []string{o.Namespace}
	}
	return install.Config{
		ID: o.ID, Namespace: o.Namespace, Default: o.Default, WatchNamespaces: watch,
		Image: o.Image, Registry: o.Registry, RegistrySecret: o.RegistrySecret, Version: version.Get(),
		SkipAdmission: o.SkipAdmission, RegistryInsecure: o.registryInsecure,
		SkipKamelets: o.SkipKamelets, MavenCache: o.mavenCache, BuildStrategy: o.BuildStrategy,
		Replicas: ptr.To(o.Replicas), Resources: o.resources, NodeSelector: o.NodeSelector,
		Tolerations: o.tolerations, ImagePullSecrets: o.PullSecrets,
		HeartbeatInterval: o.Heartbeat, Verbosity: o.Verbosity, LogJSON: o.LogFormat == "json", Pprof: o.Pprof,
	}
}

// Run installs, or prints the manifests.
func (o *InstallOptions) Run(ctx context.Context) error {
	if o.local != nil && !o.imageSet {
		if err := o.pushLocalImage(ctx); err != nil {
			return err
		}
	}
	objs, err := o.manifests()
	if err != nil {
		return err
	}
	if o.DryRun.Client() {
		if o.CRDs != "only" {
			fmt.Fprintln(o.ErrOut, dryRunNamespaceNote(o.Namespace))
		}
		return printManifests(o.dryRunObjects(objs), o.Output, o.IOStreams)
	}
	if err := o.Connect(cmdutil.NeedWatch); err != nil {
		return err
	}
	installer := &install.Installer{Client: o.Watch, Out: o.Out}
	if o.Fleet {
		return o.installFleet(ctx, installer, objs)
	}
	if o.Default && !o.defaultSet {
		// camel-k is the default unless another operator already is.
		other, err := installer.OtherDefault(ctx, o.ID)
		if err != nil {
			return err
		}
		if other != "" {
			o.Default = false
			fmt.Fprintf(o.ErrOut, "operator %s is the default operator; %s is installed as a non-default one\n", other, o.ID)
			if objs, err = install.Manifests(o.installConfig()); err != nil {
				return err
			}
		}
	}
	if err := o.checkServerVersion(); err != nil {
		return err
	}
	cfg := o.installConfig()
	if err := installer.FitAdmission(&cfg); err != nil {
		return err
	}
	if cfg.ValidatingOnly {
		fmt.Fprintln(o.ErrOut, "admission policies installed without their mutating part: "+install.ValidatingOnlyGuarantees)
		if objs, err = install.Manifests(cfg); err != nil {
			return err
		}
	}
	if err := installer.Check(ctx, cfg, o.Force); err != nil {
		return err
	}
	if err := installer.Install(ctx, o.Namespace, objs); err != nil {
		return fmt.Errorf("installing operator %s: %w", o.ID, err)
	}
	if o.Wait {
		return o.waitReady(ctx, o.Watch)
	}
	return nil
}

// manifests are the objects of the operator, or of the fleet controller
// with --fleet.
func (o *InstallOptions) manifests() ([]client.Object, error) {
	if o.Fleet {
		return install.FleetManifests(install.FleetConfig{Namespace: o.Namespace, Image: o.Image, Registry: o.Registry,
			RegistryInsecure: o.registryInsecure, HeartbeatInterval: o.Heartbeat, SkipKamelets: o.SkipKamelets})
	}
	return install.Manifests(o.installConfig())
}

// installFleet installs the fleet controller's objects, unless one is
// installed already.
func (o *InstallOptions) installFleet(ctx context.Context, installer *install.Installer, objs []client.Object) error {
	if !o.Force {
		if err := installer.CheckFleet(ctx, o.Namespace); err != nil {
			return err
		}
	}
	if err := installer.Install(ctx, o.Namespace, objs); err != nil {
		return fmt.Errorf("installing the fleet controller: %w", err)
	}
	if !o.Wait {
		return nil
	}
	return waitDeploymentRolledOut(ctx, installer.Client, client.ObjectKey{Namespace: o.Namespace, Name: install.FleetName}, o.Timeout, o.Out)
}

// checkServerVersion refuses, before anything is written, to install the
// admission policies on a cluster that cannot serve them.
func (o *InstallOptions) checkServerVersion() error {
	if o.SkipAdmission {
		return nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(o.Config)
	if err != nil {
		return err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the cluster's Kubernetes version: %w", err)
	}
	validating := false
	if list, err := dc.ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1"); err == nil {
		for _, r := range list.APIResources {
			validating = validating || r.Name == "validatingadmissionpolicies"
		}
	}
	return install.CheckAdmissionServed(info.GitVersion, validating)
}

// pushLocalImage builds the operator image of this source tree for this
// machine, pushes it to the local cluster's registry, for its process node
// to pull, and makes it the image to install.
func (o *InstallOptions) pushLocalImage(ctx context.Context) error {
	ref, err := pushLocalImage(ctx, o.local, o.ErrOut)
	if err != nil {
		return err
	}
	o.Image = ref
	return nil
}

// pushLocalImage builds the operator image of this source tree, of this
// CLI's version, for this machine and pushes it to the registry of the
// local cluster; it returns the image by digest.
func pushLocalImage(ctx context.Context, cluster *localcluster.Cluster, progress io.Writer) (string, error) {
	if cluster.RegistryAddress == "" {
		return "", errors.New("the local cluster runs no registry to push the operator image to (it was started with --registry=false: start it again without), or pass --image")
	}
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		return "", err
	}
	ref, err := operatorimage.PushLocal(ctx, ".", version.Get(), cluster.RegistryAddress, cacheDir, progress)
	if err != nil {
		return "", fmt.Errorf("the local cluster runs the operator image built from Caravan's source tree: %w", err)
	}
	return ref, nil
}

// waitReady watches the operator's registration until it names this namespace, is live and
// Ready.
func (o *InstallOptions) waitReady(ctx context.Context, c client.WithWatch) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	msg, ready, err := await.Object(ctx, c, client.ObjectKey{Name: o.ID}, &camelv1alpha1.IntegrationOperator{}, o.registeredReady)
	switch {
	case err != nil:
		return fmt.Errorf("waiting for operator %s to become ready: %w", o.ID, err)
	case !ready:
		return command.WithExitCode(command.ExitTimeout, fmt.Errorf("operator %s did not become ready within %s: see its pod (kubectl describe pods -n %s -l app.kubernetes.io/instance=%s) and its log (kubectl logs -n %s deployment/%s-operator)",
			o.ID, o.Timeout, o.Namespace, o.ID, o.Namespace, o.ID))
	}
	fmt.Fprintln(o.Out, msg)
	return nil
}

// registeredReady tells whether the registration iop names this namespace, is live and Ready,
// and then says so; err says why there is no iop to look at.
func (o *InstallOptions) registeredReady(iop *camelv1alpha1.IntegrationOperator, err error) (bool, string, error) {
	if err != nil {
		return false, "", nil
	}
	ready := meta.IsStatusConditionTrue(iop.Status.Conditions, camelv1.ConditionReady)
	if !ready || iop.Status.Namespace != o.Namespace || !ownership.FromOperator(iop).Live(time.Now()) {
		return false, "", nil
	}
	return true, fmt.Sprintf("operator %s is ready (version %s)", o.ID, iop.Status.Version), nil
}

// dryRunNamespace is the namespace as --dry-run prints it: without the labels install sets only
// on a namespace it creates, so that applying it leaves an existing namespace as install does.
func dryRunNamespace(name string) *corev1.Namespace {
	ns := install.Namespace(name)
	ns.Labels = nil
	return ns
}

// dryRunNamespaceNote says how the printed namespace differs from the one install creates.
func dryRunNamespaceNote(name string) string {
	labels := install.Namespace(name).Labels
	var set []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		set = append(set, k+"="+labels[k])
	}
	return fmt.Sprintf("namespace %s is printed without labels, so that applying it changes no existing namespace, "+
		"as install changes none; install labels a namespace it creates %s: when %s is new, do the same with "+
		"kubectl label namespace %s %s", name, strings.Join(set, ","), name, name, strings.Join(set, " "))
}

// dryRunObjects are what --dry-run prints: the namespace and the
// operator's objects, with the CRDs as --crds says.
func (o *InstallOptions) dryRunObjects(objs []client.Object) []client.Object {
	var crds, rest []client.Object
	for _, obj := range objs {
		if _, isCRD := obj.(*apiextensionsv1.CustomResourceDefinition); isCRD {
			crds = append(crds, obj)
		} else {
			rest = append(rest, obj)
		}
	}
	switch o.CRDs {
	case "only":
		return crds
	case "skip":
		crds = nil
	}
	return append(append([]client.Object{dryRunNamespace(o.Namespace)}, crds...), rest...)
}

func printManifests(objs []client.Object, format string, streams genericiooptions.IOStreams) error {
	var p printers.ResourcePrinter = &printers.YAMLPrinter{}
	if format == "json" {
		p = &printers.JSONPrinter{}
	}
	for _, obj := range objs {
		if err := p.PrintObj(obj, streams.Out); err != nil {
			return err
		}
	}
	return nil
}
