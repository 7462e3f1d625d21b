package installcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/await"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/cli/local"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/version"
)

// UpgradeOptions are the options of `caravan upgrade`.
type UpgradeOptions struct {
	cmdutil.Cluster
	ID      string
	Image   string
	Wait    bool
	Timeout time.Duration

	local *localcluster.Cluster
	genericiooptions.IOStreams
}

// NewCmdUpgrade builds `caravan upgrade`, which rolls one operator to another image.
func NewCmdUpgrade(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &UpgradeOptions{Cluster: cmdutil.Cluster{Kube: kube}, ID: ownership.DefaultID, Wait: true, Timeout: 3 * time.Minute, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Roll an installed operator to another image, keeping its settings",
		Long: `Roll an installed operator to another image. Its settings (default, watched
namespaces, replicas, resources, scheduling, pull secrets, heartbeat, verbosity,
admission and Kamelet catalog) are read back from what is installed and applied
again with the new image and this CLI's manifests; rights the new manifests no
longer hold are pruned, and the IntegrationPlatform is left as it is. Then it
waits until the Deployment has rolled out (kstatus Current) and the operator has
registered from a pod of the new image. Integrations keep running: no pod of
theirs restarts.

On the local cluster, without --image, it pushes the image of this source tree.`,
		Example: `  caravan upgrade -n operators -x tenant-a --image registry.example:5000/caravan/operator@sha256:...`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.ID, "operator-id", "x", o.ID, "the operator id")
	f.StringVar(&o.Image, "image", "", "the operator image to roll to (required outside the local cluster)")
	f.BoolVar(&o.Wait, "wait", o.Wait, "wait until the operator has rolled out and registered")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long --wait waits")
	return cmd
}

// Complete resolves the namespace and whether this is the local cluster.
func (o *UpgradeOptions) Complete() error {
	o.local = local.Running(o.Config.Host)
	return nil
}

// Preamble asks for the namespace and the client configuration, which says whether the cluster is local.
func (o *UpgradeOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedConfig
}

// Validate checks the id and that an image is given where none can be built.
func (o *UpgradeOptions) Validate() error {
	if err := ownership.ValidateID(o.ID); err != nil {
		return err
	}
	if o.Image == "" && o.local == nil {
		return errors.New("--image is required: push the new image first (caravan image push REGISTRY)")
	}
	if o.Image != "" {
		return validateImage(o.Image)
	}
	return nil
}

// validateImage refuses an --image that is not an image reference, before the cluster is asked
// anything.
func validateImage(ref string) error {
	if ref == "" {
		return errors.New("--image must not be empty")
	}
	if err := image.ValidateReference(ref); err != nil {
		return fmt.Errorf("--image: %w: give a reference such as registry.example/caravan/operator:1.0 "+
			"or registry.example/caravan/operator@sha256:...", err)
	}
	return nil
}

// Run applies the installed settings with the new image and waits.
func (o *UpgradeOptions) Run(ctx context.Context) error {
	if err := o.Connect(cmdutil.NeedWatch); err != nil {
		return err
	}
	installer := &install.Installer{Client: o.Watch, Out: o.Out}
	cfg, err := installer.Installed(ctx, o.ID, o.Namespace)
	if err != nil {
		return err
	}
	if o.Image == "" {
		if o.Image, err = pushLocalImage(ctx, o.local, o.ErrOut); err != nil {
			return err
		}
	}
	cfg.Image, cfg.Version = o.Image, version.Get()
	if o.local != nil && o.local.RegistryAddress != "" {
		cfg.Registry, cfg.RegistryInsecure = o.local.RegistryAddress, true
	}
	if err := installer.FitAdmission(&cfg); err != nil {
		return err
	}
	objs, err := install.Manifests(cfg)
	if err != nil {
		return err
	}
	started := time.Now()
	if err := installer.Install(ctx, o.Namespace, objs); err != nil {
		return fmt.Errorf("upgrading operator %s: %w", o.ID, err)
	}
	if !o.Wait {
		return nil
	}
	return o.waitRolledOut(ctx, o.Watch, started)
}

// waitDeploymentRolledOut watches the Deployment key until it is Current by kstatus.
func waitDeploymentRolledOut(ctx context.Context, c client.WithWatch, key client.ObjectKey, timeout time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last, done, err := await.Object(ctx, c, key, &appsv1.Deployment{}, deploymentRolledOut)
	switch {
	case err != nil:
		return err
	case !done:
		return fmt.Errorf("Deployment %s did not roll out within %s: %s (kubectl describe deployment -n %s %s)",
			key, timeout, last, key.Namespace, key.Name)
	}
	fmt.Fprintf(out, "Deployment %s rolled out\n", key)
	return nil
}

// waitRolledOut watches the operator's Deployment until it is Current by kstatus, then its
// registration until it is live, renewed since started, and led by a pod of the new image.
func (o *UpgradeOptions) waitRolledOut(ctx context.Context, c client.WithWatch, started time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	last, done, err := await.Object(ctx, c, install.OperatorDeployment(o.ID, o.Namespace), &appsv1.Deployment{}, deploymentRolledOut)
	if done {
		last, done, err = await.Object(ctx, c, client.ObjectKey{Name: o.ID}, &camelv1alpha1.IntegrationOperator{},
			func(iop *camelv1alpha1.IntegrationOperator, err error) (bool, string, error) {
				return o.registeredFromNewPod(ctx, c, iop, err, started)
			})
	}
	switch {
	case err != nil:
		return err
	case !done:
		return fmt.Errorf("operator %s did not roll out within %s: %s (kubectl describe deployment -n %s %s-operator)",
			o.ID, o.Timeout, last, o.Namespace, o.ID)
	}
	fmt.Fprintln(o.Out, last)
	return nil
}

// deploymentRolledOut tells whether the Deployment d is Current by kstatus, and what it waits
// for when it is not; err says why there is no d to look at.
func deploymentRolledOut(d *appsv1.Deployment, err error) (bool, string, error) {
	if err != nil {
		return false, fmt.Sprintf("reading the Deployment: %v", err), nil
	}
	res, err := install.Rollout(d)
	if err != nil {
		return false, "", err
	}
	if res.Status != status.CurrentStatus {
		return false, fmt.Sprintf("the Deployment is %s: %s", res.Status, res.Message), nil
	}
	return true, "the Deployment rolled out", nil
}

// registeredFromNewPod tells whether the registration iop is live, renewed since started, and
// led by a pod of the new image, and what the roll-out waits for when it is not; err says why
// there is no iop to look at.
func (o *UpgradeOptions) registeredFromNewPod(ctx context.Context, c client.Client, iop *camelv1alpha1.IntegrationOperator, err error, started time.Time) (bool, string, error) {
	if err != nil {
		return false, fmt.Sprintf("reading the registration: %v", err), nil
	}
	reg := ownership.FromOperator(iop)
	if !reg.Live(time.Now()) || reg.Heartbeat.Before(started) || iop.Status.Namespace != o.Namespace {
		return false, "the operator has not registered from the new pod yet", nil
	}
	// A new pod is ready as soon as the old one's registration is live:
	// the roll is done once the leader is a pod of the new image.
	leaderPod, _, _ := strings.Cut(iop.Status.Leader, "_")
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: leaderPod}, pod); err != nil ||
		pod.DeletionTimestamp != nil || len(pod.Spec.Containers) == 0 || pod.Spec.Containers[0].Image != o.Image {
		return false, fmt.Sprintf("the leader is still %q, no pod of the new image", iop.Status.Leader), nil
	}
	return true, fmt.Sprintf("operator %s rolled out: image %s, version %s", o.ID, o.Image, iop.Status.Version), nil
}
