package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/operatorpod"
)

// hostAddress is the loopback address of the i-th operator run as a host process. Each has its
// own, so that all serve on the ports of the operator pods; the process node's pods use others.
func hostAddress(i int) string { return fmt.Sprintf("127.253.%d.%d", i/250, i%250+1) }

// startHostOperator installs operator id with no pod and runs it as a process of this machine.
// The process has the identity of the operator's ServiceAccount, the arguments of its pod,
// and neither its limits nor its user namespace: the operator as it ran before it became a pod.
func (e *env) startHostOperator(ctx context.Context, id string, configure func(*install.Config)) (*Operator, error) {
	op, err := e.startOperator(ctx, id, func(c *install.Config) {
		if configure != nil {
			configure(c)
		}
		c.Replicas = ptr.To[int32](0)
	})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		return nil, err
	}
	sa := strings.TrimPrefix(op.User, operatorUserPrefix)
	token, err := cs.CoreV1().ServiceAccounts(operatorNamespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token for operator %s: %w", id, err)
	}
	dir := filepath.Join(e.dir, "host-operators", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: e.config.Host, CertificateAuthorityData: e.config.CAData,
		CertificateAuthority: e.config.CAFile}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: sa}
	cfg.CurrentContext = "bench"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		return nil, err
	}
	address := hostAddress(e.hostOperators)
	e.hostOperators++
	logFile, err := os.Create(filepath.Join(dir, "operator.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(e.binary, "operator", "--kubeconfig", kubeconfig,
		fmt.Sprintf("--metrics-bind-address=%s:%d", address, install.MetricsPort),
		fmt.Sprintf("--health-probe-bind-address=%s:%d", address, install.ProbesPort),
		"--leader-elect=true", "--pprof")
	cmd.Env = append(os.Environ(), "OPERATOR_ID="+id, "POD_NAMESPACE="+operatorNamespace, "POD_NAME="+id+"-host", "POD_IP="+address)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	localcluster.DieWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting operator %s as a process: %w", id, err)
	}
	done := make(chan struct{})
	op.mu.Lock()
	op.process, op.processLog, op.processDone = cmd, logFile.Name(), done
	op.MetricsURL = operatorpod.MetricsURL(address)
	op.ReadyzURL = operatorpod.ProbeURL(address, "/readyz")
	op.PprofURL = operatorpod.PprofURL(address)
	op.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(done)
	}()
	return op, nil
}

// stopProcess ends the operator's process, and waits for it, a grace period at most.
func (o *Operator) stopProcess() {
	_ = o.process.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.processDone:
	case <-time.After(10 * time.Second):
		_ = o.process.Process.Kill()
		<-o.processDone
	}
}

// processLogTail is the end of the log of the operator's process: its last n lines.
func (o *Operator) processLogTail(n int) string {
	data, err := os.ReadFile(o.processLog)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// waitHostReady waits until the operator's process answers 200 on /readyz.
func (o *Operator) waitHostReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for !httpOK(ctx, o.ReadyzURL) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("operator %s, a process, not ready after %s:\n%s", o.ID, timeout, o.processLogTail(20))
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}
