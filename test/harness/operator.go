package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/internal/localcluster"
)

// OperatorRole is the ClusterRole, generated from the controllers' RBAC
// markers, that operators started by the harness are bound to.
const OperatorRole = "caravan-operator"

// Operator is a `caravan operator` process started by a test, running as
// its own user (caravan:operator:<id>) with only the operator's
// ClusterRole.
type Operator struct {
	ID        string
	Namespace string
	User      string
	// MetricsURL and ReadyzURL are the operator's endpoints.
	MetricsURL string
	ReadyzURL  string
	Log        string

	cmd    *exec.Cmd
	exited chan struct{}
}

// StartOperator starts an operator process with the given id in
// namespace (which must exist) and stops it when the test ends. Extra
// arguments go to `caravan operator`.
func (e *Env) StartOperator(t testing.TB, caravan, id, namespace string, args ...string) *Operator {
	t.Helper()
	e.bindOperatorRole(t)
	user := "caravan:operator:" + id
	cfgPath := filepath.Join(t.TempDir(), id+".kubeconfig")
	if err := e.Cluster.WriteKubeconfig(cfgPath, user, "caravan:operators"); err != nil {
		t.Fatal(err)
	}
	metricsPort, probePort := freePort(t), freePort(t)
	op := &Operator{
		ID: id, Namespace: namespace, User: user,
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		ReadyzURL:  fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort),
		Log:        filepath.Join(t.TempDir(), id+"-"+namespace+".log"),
		exited:     make(chan struct{}),
	}
	all := append([]string{"operator", "--kubeconfig", cfgPath, "-n", namespace, "--operator-id", id,
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(metricsPort),
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(probePort),
		"--heartbeat-interval", "2s"}, args...)
	logFile, err := os.Create(op.Log)
	if err != nil {
		t.Fatal(err)
	}
	op.cmd = exec.Command(caravan, all...)
	op.cmd.Stdout, op.cmd.Stderr = logFile, logFile
	op.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := op.cmd.Start(); err != nil {
		t.Fatalf("starting operator %s: %v", id, err)
	}
	go func() { _ = op.cmd.Wait(); _ = logFile.Close(); close(op.exited) }()
	t.Cleanup(func() {
		op.Stop(t)
		if t.Failed() {
			t.Logf("log of operator %s in %s:\n%s", id, namespace, tail(op.Log, 40))
		}
	})
	return op
}

// Stop sends SIGTERM and waits for the process to exit.
func (o *Operator) Stop(t testing.TB) {
	t.Helper()
	o.signal(syscall.SIGTERM)
	select {
	case <-o.exited:
	case <-time.After(30 * time.Second):
		o.signal(syscall.SIGKILL)
		<-o.exited
	}
}

// Kill stops the process with SIGKILL: no graceful release of anything.
func (o *Operator) Kill() {
	o.signal(syscall.SIGKILL)
	<-o.exited
}

func (o *Operator) signal(sig syscall.Signal) {
	select {
	case <-o.exited:
	default:
		_ = o.cmd.Process.Signal(sig)
	}
}

// Running reports whether the process is still running.
func (o *Operator) Running() bool {
	select {
	case <-o.exited:
		return false
	default:
		return true
	}
}

// Healthy reports whether the operator's /healthz answers 200.
func (o *Operator) Healthy() bool {
	resp, err := http.Get(strings.TrimSuffix(o.ReadyzURL, "/readyz") + "/healthz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Ready reports whether the operator's /readyz answers 200, and its body.
func (o *Operator) Ready() (bool, string) {
	resp, err := http.Get(o.ReadyzURL + "?verbose")
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK, string(body)
}

// Metric returns the sum of the samples of a metric whose label set
// contains every given name="value" pair, and whether any was found.
func (o *Operator) Metric(name string, labels ...string) (float64, bool) {
	return Metric(o.MetricsURL, name, labels...)
}

// Metric returns the sum of the samples of a metric served at url whose
// label set contains every given name="value" pair, and whether any was
// found.
func Metric(url, name string, labels ...string) (float64, bool) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		if !containsAll(line, labels) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err == nil {
			sum += v
			found = true
		}
	}
	return sum, found
}

// LogContains reports whether the operator's log contains s.
func (o *Operator) LogContains(s string) bool {
	data, _ := os.ReadFile(o.Log)
	return strings.Contains(string(data), s)
}

// LogLines returns the lines of the operator's log that contain s.
func (o *Operator) LogLines(s string) string {
	data, _ := os.ReadFile(o.Log)
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, s) {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func containsAll(line string, labels []string) bool {
	for _, l := range labels {
		if !strings.Contains(line, l) {
			return false
		}
	}
	return true
}

// bindOperatorRole installs the operator ClusterRole (generated under
// config/rbac) and binds it to the group of the harness's operators.
func (e *Env) bindOperatorRole(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(sourceRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatalf("reading the operator role: %v", err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(data, role); err != nil {
		t.Fatalf("decoding the operator role: %v", err)
	}
	// As installed, each operator may assign resources to itself; the
	// harness's operators share one role, so they may use any id.
	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"camel.apache.org"},
		Resources: []string{"integrationoperators"}, Verbs: []string{"use"}})
	if err := e.Client.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "caravan-operators"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "caravan:operators"}},
	}
	if err := e.Client.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
