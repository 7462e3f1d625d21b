package operatorcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/fleet"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/version"
)

// FleetOptions are the options of `caravan fleet`.
type FleetOptions struct {
	Kube Kube

	OperatorImage     string
	Registry          string
	RegistryInsecure  bool
	SkipKamelets      bool
	HeartbeatInterval time.Duration
	MetricsAddr       string
	ProbeAddr         string
	LeaderElect       bool
	Verbosity         int
	LogFormat         string

	// Set by Complete.
	namespace string
	config    *rest.Config

	// ErrOut receives the logs.
	ErrOut io.Writer
}

// NewFleetCmd builds `caravan fleet`, finding the cluster through kube and logging to errOut.
func NewFleetCmd(kube Kube, errOut io.Writer) *cobra.Command {
	o := &FleetOptions{Kube: kube, MetricsAddr: ":8080", ProbeAddr: ":8081", LeaderElect: true,
		LogFormat: LogFormatText, ErrOut: errOut}
	cmd := &cobra.Command{
		Use:    "fleet",
		Hidden: true, // the fleet controller's pod runs it; users install it with caravan install --fleet
		Short:  "Run the fleet controller, which runs the operators that IntegrationOperators declare",
		Long: `Run the fleet controller. For each IntegrationOperator whose spec names a
namespace, it creates and keeps what caravan install would: the operator's
identity and rights, its Deployment, its platform and its admission bindings.
Deleting the IntegrationOperator removes them; its integrations stay, as
orphans. caravan install --fleet installs it.`,
		Example: `  # Run the fleet controller against the current kubeconfig
  caravan fleet -n caravan-system --operator-image registry.example/caravan/operator:v1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return command.Run(cmd.Context(), o) },
	}
	cmd.Flags().StringVar(&o.OperatorImage, "operator-image", "", "the operators' image when their IntegrationOperator names none; spec.version replaces its tag")
	cmd.Flags().StringVar(&o.Registry, "registry", "", "the build registry of the operators' platforms")
	cmd.Flags().BoolVar(&o.RegistryInsecure, "registry-insecure", false, "the operators reach the registry over plain HTTP")
	cmd.Flags().BoolVar(&o.SkipKamelets, "skip-kamelets", false, "the operators install no Kamelet catalog (their platforms' spec.kamelet.catalog: false)")
	cmd.Flags().DurationVar(&o.HeartbeatInterval, "heartbeat-interval", 0, "how often the operators renew their registration (default theirs, 10s)")
	cmd.Flags().StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of the metrics endpoint; 0 disables it")
	cmd.Flags().StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "address of /healthz and /readyz; 0 disables them")
	cmd.Flags().BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect a leader among the replicas, on the Lease "+install.FleetName+"-lock")
	cmd.Flags().IntVarP(&o.Verbosity, "verbosity", "v", 0, "log verbosity")
	cmd.Flags().StringVar(&o.LogFormat, "log-format", o.LogFormat, "log format: text, or json for one JSON object a line")
	return cmd
}

// Complete resolves the namespace and the client configuration.
func (o *FleetOptions) Complete() error {
	o.namespace = cmp.Or(o.Kube.NamespaceFlag(), os.Getenv("POD_NAMESPACE"))
	var err error
	if o.namespace == "" {
		if o.namespace, err = o.Kube.Namespace(); err != nil {
			return err
		}
	}
	if o.config, err = o.Kube.RESTConfig(); err != nil {
		return err
	}
	inCluster(o.config)
	return nil
}

// Validate checks the operator image, the heartbeat and the log format.
func (o *FleetOptions) Validate() error {
	if o.OperatorImage == "" {
		return errors.New("--operator-image is required: the operators' image when their IntegrationOperator names none")
	}
	if err := image.ValidateReference(o.OperatorImage); err != nil {
		return fmt.Errorf("--operator-image: %w", err)
	}
	if o.LogFormat != LogFormatText && o.LogFormat != LogFormatJSON {
		return fmt.Errorf("--log-format must be %s or %s, got %q", LogFormatText, LogFormatJSON, o.LogFormat)
	}
	if o.HeartbeatInterval != 0 {
		return ownership.ValidateHeartbeatInterval(o.HeartbeatInterval)
	}
	return nil
}

// Run runs the fleet controller until the command is interrupted.
func (o *FleetOptions) Run(ctx context.Context) error {
	logger := NewLogger(o.LogFormat, o.Verbosity, o.ErrOut)
	ctrl.SetLogger(logger)
	ctx = ctrl.LoggerInto(ctx, logger)
	if err := applyMemoryLimit(logger, os.Getenv); err != nil {
		return err
	}
	err := fleet.Run(ctx, fleet.Options{
		Namespace: o.namespace, Config: o.config, MetricsAddr: o.MetricsAddr, ProbeAddr: o.ProbeAddr, LeaderElect: o.LeaderElect,
		Defaults: install.FleetDefaults{Image: o.OperatorImage, Version: version.Get(), Registry: o.Registry,
			RegistryInsecure: o.RegistryInsecure, HeartbeatInterval: o.HeartbeatInterval, SkipKamelets: o.SkipKamelets},
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
