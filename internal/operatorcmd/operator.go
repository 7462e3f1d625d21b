// Package operatorcmd holds the commands that the operator image runs:
// `caravan operator`, `caravan fleet` and `caravan builder`. It finds the
// cluster with client-go alone and imports no CLI package, so that the
// image's binary (cmd/caravan-operator) links neither kubectl nor
// kustomize; the caravan CLI registers the same commands.
package operatorcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/operator"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/version"
)

// Options are the options of `caravan operator`.
type Options struct {
	Kube Kube

	IDFlag            string
	Default           bool
	MetricsAddr       string
	ProbeAddr         string
	Pprof             bool
	LeaderElect       bool
	HeartbeatInterval time.Duration
	BuildBackoff      time.Duration
	WatchNamespaces   []string
	Verbosity         int
	// LogFormat is text (klog's) or json (one object a line).
	LogFormat string

	// Set by Complete.
	id         string
	idSource   string
	namespace  string
	config     *rest.Config
	defaultSet bool

	// ErrOut receives the logs.
	ErrOut io.Writer
}

// NewCmd builds `caravan operator`, finding the cluster through kube and logging to errOut.
func NewCmd(kube Kube, errOut io.Writer) *cobra.Command {
	o := &Options{
		Kube:        kube,
		MetricsAddr: ":8080", ProbeAddr: ":8081", LeaderElect: true,
		HeartbeatInterval: 10 * time.Second, BuildBackoff: 5 * time.Second, ErrOut: errOut,
	}
	cmd := &cobra.Command{
		Use:    "operator",
		Hidden: true, // operator pods run it; users install operators with caravan install
		Short:  "Run a Caravan operator",
		Long: `Run a Caravan operator. It reconciles only the resources whose
camel.apache.org/operator.id annotation names its id; the default operator
also adopts resources that name none.

The id comes from --operator-id, else OPERATOR_ID, else KAMEL_OPERATOR_ID,
else camel-k. It must be a DNS-1123 label. The operator's namespace comes
from --namespace, else NAMESPACE or POD_NAMESPACE, else the kubeconfig
context.`,
		Example: `  # Run the default operator against the current kubeconfig
  caravan operator -n camel-k

  # Run a tenant's operator with its own id, next to others
  caravan operator -n tenants --operator-id tenant-a --metrics-bind-address :9090 --health-probe-bind-address :9091`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.defaultSet = cmd.Flags().Changed("default")
			return command.Run(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.IDFlag, "operator-id", "x", "", "the operator id (default $OPERATOR_ID, $KAMEL_OPERATOR_ID or camel-k)")
	cmd.Flags().BoolVar(&o.Default, "default", false, "register as the default operator, which adopts resources that name no operator, when the registration does not exist yet (default true for camel-k)")
	cmd.Flags().StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of the metrics endpoint; 0 disables it")
	cmd.Flags().StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "address of /healthz and /readyz; 0 disables them")
	cmd.Flags().BoolVar(&o.Pprof, "pprof", false, "serve the Go runtime's /debug/pprof on the metrics endpoint, behind the same authentication")
	cmd.Flags().BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect a leader among the replicas of this id, on the Lease <id>-lock")
	cmd.Flags().DurationVar(&o.HeartbeatInterval, "heartbeat-interval", o.HeartbeatInterval, "how often the registration is renewed; it counts as gone after three missed renewals")
	cmd.Flags().DurationVar(&o.BuildBackoff, "build-backoff", o.BuildBackoff, "wait before retrying a failed build; it doubles at each further retry, up to 5 attempts")
	cmd.Flags().StringSliceVar(&o.WatchNamespaces, "watch-namespaces", nil, "serve only these namespaces (default: all)")
	cmd.Flags().IntVarP(&o.Verbosity, "verbosity", "v", 0, "log verbosity")
	cmd.Flags().StringVar(&o.LogFormat, "log-format", LogFormatText, "log format: text, or json for one JSON object a line (time, level, msg, and the values)")
	return cmd
}

// Complete resolves the id, the namespace and the client configuration.
func (o *Options) Complete() error {
	id, source, err := ownership.ResolveID(o.IDFlag, os.Getenv)
	if err != nil {
		return err
	}
	o.id, o.idSource = id, source
	if !o.defaultSet {
		o.Default = id == ownership.DefaultID
	}
	o.namespace = cmp.Or(o.Kube.NamespaceFlag(), os.Getenv("NAMESPACE"), os.Getenv("POD_NAMESPACE"))
	if o.namespace == "" {
		if o.namespace, err = o.Kube.Namespace(); err != nil {
			return err
		}
	}
	if o.config, err = o.Kube.RESTConfig(); err != nil {
		return err
	}
	o.config.QPS, o.config.Burst = 300, 600
	inCluster(o.config)
	return nil
}

// inCluster tunes the client of a process that runs next to its API
// server: it asks for uncompressed responses, as kube-controller-manager
// and kube-scheduler do. On a cluster's network, compressing every watch
// stream costs the API server, and decompressing it the operator, more CPU
// than the bytes it saves are worth.
func inCluster(cfg *rest.Config) {
	cfg.DisableCompression = true
}

// Validate checks the heartbeat interval and the log format (the id is
// checked as it is resolved).
func (o *Options) Validate() error {
	if o.LogFormat != LogFormatText && o.LogFormat != LogFormatJSON {
		return fmt.Errorf("--log-format must be %s or %s, got %q", LogFormatText, LogFormatJSON, o.LogFormat)
	}
	return ownership.ValidateHeartbeatInterval(o.HeartbeatInterval)
}

// The log formats of the operator.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// NewLogger is the operator's logger: klog's text lines, or one JSON
// object a line (log/slog's), logging what is at most verbosity verbose.
func NewLogger(format string, verbosity int, w io.Writer) logr.Logger {
	if format == LogFormatJSON {
		// logr's V(n) is slog's level -n.
		return logr.FromSlogHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.Level(-verbosity)}))
	}
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(verbosity), textlogger.Output(w)))
}

// Run runs the operator until the command is interrupted.
func (o *Options) Run(ctx context.Context) error {
	logger := NewLogger(o.LogFormat, o.Verbosity, o.ErrOut)
	ctrl.SetLogger(logger)
	ctx = ctrl.LoggerInto(ctx, logger)
	logger.Info("Operator id resolved", "operatorID", o.id, "from", o.idSource, "version", version.Get(),
		"processors", runtime.GOMAXPROCS(0))
	if err := applyMemoryLimit(logger, os.Getenv); err != nil {
		return err
	}
	err := operator.Run(ctx, operator.Options{
		ID: o.id, Namespace: o.namespace, Version: version.Get(), Default: o.Default, Config: o.config,
		MetricsAddr: o.MetricsAddr, ProbeAddr: o.ProbeAddr, Pprof: o.Pprof, LeaderElect: o.LeaderElect,
		HeartbeatInterval: o.HeartbeatInterval, StaleAfter: operator.DefaultStaleAfter(o.HeartbeatInterval),
		WatchNamespaces: o.WatchNamespaces, BuildBackoff: o.BuildBackoff,
		OperatorCondition:  os.Getenv(operator.OperatorConditionEnv),
		SkipKameletCatalog: strings.EqualFold(os.Getenv(operator.KameletCatalogEnv), "false"),
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
