package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/local"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/version"
)

// InstallOptions are the options of `caravan install`.
type InstallOptions struct {
	Kube *KubeFlags

	ID              string
	Default         bool
	WatchNamespaces []string
	Global          bool
	Force           bool
	DryRun          bool
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

	// Set by Complete.
	resources        corev1.ResourceRequirements
	tolerations      []corev1.Toleration
	defaultSet       bool
	registryInsecure bool
	namespace        string
	config           *rest.Config
	local            *localcluster.Cluster

	genericiooptions.IOStreams
}

func newCmdInstall(kube *KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &InstallOptions{Kube: kube, ID: ownership.DefaultID, Global: true, Timeout: 2 * time.Minute, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install an operator, named by its id, into a namespace",
		Long: `Install an operator: the CRDs (server-side apply), its ServiceAccount and roles,
its Deployment, its IntegrationPlatform and its IntegrationOperator registration,
all named from its id so several operators can share a namespace. Also the
ClusterRole <id>-operator-user, which lets who is bound to it assign resources
to this operator.

Unless --skip-kamelets, it installs the Kamelet catalog (timer-source, log-sink,
http-sink, insert-header-action) into the operator namespace, unassigned: Pipes
and KameletBindings of any namespace find them there after their own namespace.

An id already registered is refused; --force reinstalls or upgrades it in the
same namespace, and never takes over an id registered in another namespace.
A failed install removes what it created.

On the local cluster (caravan local up), the operator runs as a local process
with its ServiceAccount's identity, since simulated nodes run no containers.`,
		Example: `  # The default operator, camel-k, in namespace camel-k
  caravan install -n camel-k

  # Two tenants' operators side by side in one namespace
  caravan install -n operators -x tenant-a
  caravan install -n operators -x tenant-b --watch-namespaces team-b

  # The manifests, for GitOps
  caravan install -n operators -x tenant-a --dry-run -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.defaultSet = cmd.Flags().Changed("default")
			if cmd.Flags().Changed("watch-namespaces") {
				o.Global = false
			}
			return completeValidateRun(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.ID, "operator-id", "x", o.ID, "the operator id, a DNS-1123 label")
	f.BoolVar(&o.Default, "default", false, "make it the default operator, which adopts resources that name no operator (default true for camel-k when no other default exists)")
	f.StringSliceVar(&o.WatchNamespaces, "watch-namespaces", nil, "serve only these namespaces")
	f.BoolVar(&o.Global, "global", o.Global, "serve every namespace (the default unless --watch-namespaces is set)")
	f.BoolVar(&o.Force, "force", false, "reinstall or upgrade an operator already installed in this namespace")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the manifests instead of applying them")
	f.StringVarP(&o.Output, "output", "o", "yaml", "format of --dry-run: yaml or json")
	f.StringVar(&o.Image, "image", "caravan/operator:"+version.Get(), "operator container image")
	f.StringVar(&o.Registry, "registry", "", "address of the registry kits are pushed to (the platform's spec.build.registry.address)")
	f.BoolVar(&o.SkipAdmission, "skip-admission", false, "do not install the admission policies that enforce who may assign resources to which operator")
	f.BoolVar(&o.Wait, "wait", false, "wait until the operator has registered and is ready")
	f.BoolVar(&o.SkipKamelets, "skip-kamelets", false, "do not install the Kamelet catalog (timer-source, log-sink, ...) into the operator namespace")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long --wait waits")
	f.Int32Var(&o.Replicas, "replicas", 1, "replicas of the operator Deployment (one leads, on the Lease <id>-lock)")
	f.StringToStringVar(&o.Requests, "requests", nil, "resource requests of the operator container, as cpu=100m,memory=64Mi (default cpu=100m,memory=64Mi)")
	f.StringToStringVar(&o.Limits, "limits", nil, "resource limits of the operator container, as cpu=1,memory=512Mi (default cpu=1,memory=512Mi)")
	f.StringToStringVar(&o.NodeSelector, "node-selector", nil, "node labels the operator pod must run on, as key=value")
	f.StringSliceVar(&o.Tolerations, "tolerations", nil, "taints the operator pod tolerates, as key[=value]:Effect[:seconds] or key:Exists:Effect")
	f.StringSliceVar(&o.PullSecrets, "image-pull-secret", nil, "Secrets, in the operator namespace, to pull the operator image with")
	return cmd
}

// Complete resolves the namespace and, unless dry-running, the cluster.
func (o *InstallOptions) Complete() error {
	ns, err := o.Kube.Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	if !o.defaultSet {
		o.Default = o.ID == ownership.DefaultID
	}
	if o.DryRun {
		return nil
	}
	if o.config, err = o.Kube.RESTConfig(); err != nil {
		return err
	}
	o.local = local.Running(o.config.Host)
	if o.local != nil && o.Registry == "" && o.local.RegistryAddress != "" {
		// The local cluster's own registry, over plain HTTP on loopback.
		o.Registry, o.registryInsecure = o.local.RegistryAddress, true
	}
	return nil
}

// Validate checks the flags before anything is written.
func (o *InstallOptions) Validate() error {
	if err := ownership.ValidateID(o.ID); err != nil {
		return err
	}
	if o.Global && len(o.WatchNamespaces) > 0 {
		return errors.New("--global and --watch-namespaces exclude each other")
	}
	if o.DryRun && o.Output != "yaml" && o.Output != "json" {
		return fmt.Errorf("--output must be yaml or json, got %q", o.Output)
	}
	if o.Image == "" {
		return errors.New("--image must not be empty")
	}
	if o.Replicas < 0 {
		return fmt.Errorf("--replicas must not be negative, got %d", o.Replicas)
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
	return nil
}

func (o *InstallOptions) installConfig() install.Config {
	return install.Config{
		ID: o.ID, Namespace: o.namespace, Default: o.Default, WatchNamespaces: o.WatchNamespaces,
		Image: o.Image, Registry: o.Registry, Version: version.Get(), Local: o.local != nil,
		SkipAdmission: o.SkipAdmission, RegistryInsecure: o.registryInsecure,
		SkipKamelets: o.SkipKamelets,
		Replicas:     ptr.To(o.Replicas), Resources: o.resources, NodeSelector: o.NodeSelector,
		Tolerations: o.tolerations, ImagePullSecrets: o.PullSecrets,
	}
}

// Run installs, or prints the manifests.
func (o *InstallOptions) Run(ctx context.Context) error {
	objs, err := install.Manifests(o.installConfig())
	if err != nil {
		return err
	}
	if o.DryRun {
		return printManifests(objs, o.Output, o.IOStreams)
	}
	c, err := o.Kube.Client()
	if err != nil {
		return err
	}
	installer := &install.Installer{Client: c, Out: o.Out}
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
	if err := installer.Check(ctx, o.installConfig(), o.Force); err != nil {
		return err
	}
	if err := installer.Install(ctx, o.namespace, objs); err != nil {
		return fmt.Errorf("installing operator %s: %w", o.ID, err)
	}
	if o.local != nil {
		if err := o.startLocal(ctx); err != nil {
			return errors.Join(fmt.Errorf("starting operator %s on the local cluster: %w", o.ID, err),
				installer.Uninstall(ctx, o.ID, o.namespace, false))
		}
	}
	if o.Wait {
		return o.waitReady(ctx, c)
	}
	return nil
}

// checkServerVersion refuses, before anything is written, to install the
// admission policies on a cluster that cannot serve them.
func (o *InstallOptions) checkServerVersion() error {
	if o.SkipAdmission {
		return nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(o.config)
	if err != nil {
		return err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the cluster's Kubernetes version: %w", err)
	}
	return install.CheckServerVersion(info.GitVersion)
}

// startLocal runs the operator as a process of the local cluster, with a
// token of its ServiceAccount, so it acts with exactly the operator's rights.
func (o *InstallOptions) startLocal(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(o.config)
	if err != nil {
		return err
	}
	tr, err := cs.CoreV1().ServiceAccounts(o.namespace).CreateToken(ctx, o.ID+"-operator",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](365 * 24 * 3600)}},
		metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting a token for the operator's ServiceAccount: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var args []string
	if len(o.WatchNamespaces) > 0 {
		args = append(args, "--watch-namespaces", strings.Join(o.WatchNamespaces, ","))
	}
	p, err := o.local.StartOperator(self, o.ID, o.namespace, tr.Status.Token, args...)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "operator %s runs as a local process (pid %d), log %s\n", o.ID, p.PID, p.Log)
	return nil
}

// waitReady waits until the registration names this namespace, is live
// and Ready.
func (o *InstallOptions) waitReady(ctx context.Context, c client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for {
		iop := &camelv1alpha1.IntegrationOperator{}
		if err := c.Get(ctx, client.ObjectKey{Name: o.ID}, iop); err == nil {
			ready := meta.IsStatusConditionTrue(iop.Status.Conditions, camelv1.ConditionReady)
			if ready && iop.Status.Namespace == o.namespace && ownership.FromOperator(iop).Live(time.Now()) {
				fmt.Fprintf(o.Out, "operator %s is ready (version %s)\n", o.ID, iop.Status.Version)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("operator %s did not become ready within %s", o.ID, o.Timeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
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
