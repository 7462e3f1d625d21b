// Package integration tests the operator's reconcilers in-process against
// a real API server and etcd (no controller-manager: Deployments never
// become ready here, which the end-to-end tests cover). One operator, with
// the id "it-operator", runs for the whole test binary.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caravan-dev/caravan/internal/operator"
	"github.com/caravan-dev/caravan/test/harness"
)

const (
	operatorID        = "it-operator"
	operatorNamespace = "it-operator-system"
)

var env *harness.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	env, err = harness.Start(ctx, harness.Options{PodMonitors: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test control plane:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	if err := env.Client.Create(ctx, ns); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The build backoff (1s, 2s, 4s, 8s between attempts) leaves a test
	// that restarts a stopped registry 15s before the last attempt.
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(0)))
	ctrl.SetLogger(logger)
	done := make(chan error, 1)
	go func() {
		done <- operator.Run(ctrl.LoggerInto(ctx, logger), operator.Options{
			ID: operatorID, Namespace: operatorNamespace, Version: "test", Config: env.Config,
			MetricsAddr: "0", ProbeAddr: "0", LeaderElect: true,
			HeartbeatInterval: time.Second, StaleAfter: 3 * time.Second, BuildBackoff: time.Second,
			// Its catalog would be built in a builder pod, which no node here runs.
			SkipKameletCatalog: true,
		})
	}()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
	}
	return code
}
