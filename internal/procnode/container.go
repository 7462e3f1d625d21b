package procnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Restart back-off, as a kubelet's: it doubles from backoffStart up to
// backoffMax, and starts again once a container ran for backoffReset.
const (
	backoffStart = 10 * time.Second
	backoffMax   = 5 * time.Minute
	backoffReset = 10 * time.Minute
)

// container is one running container of a pod.
type container struct {
	pod  *podRun
	spec corev1.Container
	// dir holds the container's root filesystem, spec file and logs.
	dir string
	// policy is when the container restarts: the pod's policy, or, for an
	// init container, OnFailure unless the pod's is Never.
	policy corev1.RestartPolicy
	// Set by start: what the container runs.
	image pulledImage
	cs    containerSpec

	// Guarded by pod.mu.
	status  corev1.ContainerStatus
	process *os.Process
	live    bool // the liveness probe passes (or there is none)
}

// logPath is the log of the given restart of the container.
func (c *container) logPath(restart int32) string {
	return filepath.Join(c.dir, "logs", strconv.Itoa(int(restart))+".log")
}

// prepare pulls the image and builds the container's root filesystem and
// spec. Failures are recorded as the container's waiting reason.
func (c *container) prepare(ctx context.Context, n *Node, volumes map[string]string) error {
	img, err := n.images.pull(ctx, c.spec.Image, pullAuth(ctx, n.client, c.pod.pod, c.spec.Image))
	if err != nil {
		reason := "ErrImagePull"
		if errors.Is(err, errInvalidImageName) {
			reason = "InvalidImageName"
		}
		c.pod.setWaiting(c, reason, err.Error())
		return err
	}
	c.image = img
	pod := c.pod.pod
	uid, gid, err := containerUser(pod, &c.spec, img.Config.User, img.Rootfs)
	if err != nil {
		c.pod.setWaiting(c, "CreateContainerConfigError", err.Error())
		return err
	}
	env, err := n.env.resolve(ctx, c.pod.withIPs(), &c.spec, img.Config.Env)
	if err != nil {
		c.pod.setWaiting(c, "CreateContainerConfigError", err.Error())
		return err
	}
	root := filepath.Join(c.dir, "rootfs")
	readOnly := c.spec.SecurityContext != nil && c.spec.SecurityContext.ReadOnlyRootFilesystem != nil && *c.spec.SecurityContext.ReadOnlyRootFilesystem
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	if err := copyTree(img.Rootfs, root, readOnly); err != nil {
		return fmt.Errorf("preparing the root filesystem: %w", err)
	}
	if err := writeNetworkFiles(root, pod.Name, c.pod.ip); err != nil {
		return err
	}
	// The termination log exists before its mount point is made.
	if err := c.resetTerminationLog(); err != nil {
		return err
	}
	base, err := runtimeMounts(c.dir, c.spec.TerminationMessagePath, readOnly)
	if err != nil {
		c.pod.setWaiting(c, "CreateContainerConfigError", err.Error())
		return err
	}
	mounts := append([]mount{{Source: "/proc", Target: "/proc", ReadOnly: true}}, base...)
	for _, vm := range c.spec.VolumeMounts {
		src, ok := volumes[vm.Name]
		if !ok {
			err := fmt.Errorf("volume mount %s names no volume of the pod", vm.Name)
			c.pod.setWaiting(c, "CreateContainerConfigError", err.Error())
			return err
		}
		mounts = append(mounts, mount{Source: filepath.Join(src, vm.SubPath), Target: vm.MountPath, ReadOnly: vm.ReadOnly})
	}
	if err := makeMountPoints(root, mounts); err != nil {
		return err
	}
	args := commandLine(&c.spec, img.Config.Entrypoint, img.Config.Cmd, env)
	if len(args) == 0 {
		err := errors.New("neither the container nor its image gives a command")
		c.pod.setWaiting(c, "CreateContainerConfigError", err.Error())
		return err
	}
	dir := c.spec.WorkingDir
	if dir == "" {
		dir = img.Config.WorkingDir
	}
	c.cs = containerSpec{Root: root, ReadOnlyRoot: readOnly, Mounts: mounts, UID: uid, GID: gid, Dir: dir, Args: args, Env: env,
		Hostname: pod.Name, UserNamespace: os.Getuid() != 0}
	return nil
}

// run starts the container and restarts it as the pod's restart policy
// says, until ctx ends; then it stops the process within grace.
func (c *container) run(ctx context.Context, n *Node, grace func() time.Duration) {
	failures := 0
	for {
		started := time.Now()
		exited, err := c.start(n)
		if err != nil {
			c.pod.setWaiting(c, "RunContainerError", err.Error())
		} else {
			go c.probe(ctx, n)
			select {
			case <-ctx.Done():
				c.stop(exited, grace())
				return
			case <-exited:
			}
		}
		code := c.pod.exitCode(c)
		if ctx.Err() != nil || !restarts(c.policy, code, err) {
			return
		}
		if time.Since(started) > backoffReset {
			failures = 0
		}
		wait := min(backoffStart<<failures, backoffMax)
		failures++
		c.pod.setWaiting(c, "CrashLoopBackOff", fmt.Sprintf("back-off %s restarting failed container %s", wait, c.spec.Name))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		c.pod.restarted(c)
	}
}

func restarts(policy corev1.RestartPolicy, code int32, startErr error) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return code != 0 || startErr != nil
	}
	return true
}

// start launches the container's process through the init, and returns a
// channel closed when it has exited (its status recorded).
func (c *container) start(n *Node) (<-chan struct{}, error) {
	specPath := filepath.Join(c.dir, "spec.json")
	data, err := json.Marshal(c.cs)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(specPath, data, 0o600); err != nil {
		return nil, err
	}
	restart := c.pod.restartCount(c)
	if err := os.MkdirAll(filepath.Dir(c.logPath(restart)), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(c.logPath(restart), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if err := c.resetTerminationLog(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	// The container writes into a pipe; each line goes into the log after the time it was read.
	pr, pw, err := os.Pipe()
	if err != nil {
		_ = logFile.Close()
		return nil, err
	}
	cmd := exec.Command(n.initBinary, append(append([]string(nil), n.initArgs...), specPath)...)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = confinement()
	if err := cmd.Start(); err != nil {
		_ = errors.Join(pw.Close(), pr.Close(), logFile.Close())
		return nil, fmt.Errorf("starting container %s: %w", c.spec.Name, err)
	}
	_ = pw.Close() // the container holds the pipe's other end now
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_ = copyTimed(logFile, pr, time.Now)
		_ = errors.Join(pr.Close(), logFile.Close())
	}()
	c.pod.setRunning(c, cmd.Process)
	exited := make(chan struct{})
	go func() {
		state, _ := cmd.Process.Wait()
		code := exitCode(state)
		// The log is whole once every process of the container closed the pipe; one left in the
		// background may hold it open, so the wait is bounded.
		select {
		case <-copied:
		case <-time.After(logDrainTimeout):
		}
		c.pod.setTerminated(c, code, c.readTerminationMessage(code, c.logPath(restart)))
		close(exited)
	}()
	return exited, nil
}

// logDrainTimeout bounds the wait for a container's last log lines after its process ended.
const logDrainTimeout = 2 * time.Second

// stop sends SIGTERM to the container's process group, and SIGKILL after grace.
func (c *container) stop(exited <-chan struct{}, grace time.Duration) {
	c.signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		c.signal(syscall.SIGKILL)
		<-exited
	}
}

// probeFailed records the events a kubelet records when a container's startup or liveness probe
// fails: Unhealthy, then Killing.
func (c *container) probeFailed(n *Node, kind string) {
	n.event(c.pod.pod, corev1.EventTypeWarning, "Unhealthy", kind+" probe failed")
	n.event(c.pod.pod, corev1.EventTypeNormal, "Killing", "Container "+c.spec.Name+" failed "+strings.ToLower(kind)+" probe, will be restarted")
}

// terminate ends process pid after its probe p failed, as a kubelet does: SIGTERM, then SIGKILL
// once the probe's grace period (or else the pod's) has passed with pid still running.
func (c *container) terminate(pid int, p *corev1.Probe) {
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if g := c.pod.pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	if p.TerminationGracePeriodSeconds != nil {
		grace = *p.TerminationGracePeriodSeconds
	}
	c.signal(syscall.SIGTERM)
	time.AfterFunc(time.Duration(grace)*time.Second, func() {
		if c.pod.pid(c) == pid {
			c.signal(syscall.SIGKILL)
		}
	})
}

func (c *container) signal(sig syscall.Signal) {
	c.pod.mu.Lock()
	p := c.process
	c.pod.mu.Unlock()
	if p != nil {
		_ = killGroup(p.Pid, sig)
	}
}

// probe runs the container's probes while its current process runs. A startup probe comes first:
// until it succeeds the container is not started and no other probe runs, and when it fails the
// process is killed. Then a failed liveness probe kills the process, which run then restarts.
func (c *container) probe(ctx context.Context, n *Node) {
	pid := c.pod.pid(c)
	if sp := c.spec.StartupProbe; sp != nil {
		c.pod.setStarted(c, false)
		// Until the first verdict, the process's end, or the node's.
		started := false
		c.loop(ctx, pid, sp, c.check, func(ok bool) bool {
			started = ok
			if !ok {
				c.probeFailed(n, "Startup")
				c.terminate(pid, sp)
			}
			return false // a startup probe ends with its first verdict
		})
		if !started {
			return
		}
		c.pod.setStarted(c, true)
	}
	type prober struct {
		p       *corev1.Probe
		onState func(ok bool) bool
	}
	var probers []prober
	if c.spec.ReadinessProbe != nil {
		probers = append(probers, prober{c.spec.ReadinessProbe, func(ok bool) bool { c.pod.setReady(c, ok); return true }})
	} else {
		c.pod.setReady(c, true)
	}
	if c.spec.LivenessProbe != nil {
		probers = append(probers, prober{c.spec.LivenessProbe, func(ok bool) bool {
			if !ok {
				c.probeFailed(n, "Liveness")
				c.terminate(pid, c.spec.LivenessProbe)
			}
			return true
		}})
	}
	for _, pr := range probers {
		go c.loop(ctx, pid, pr.p, c.check, pr.onState)
	}
}

// loop runs probe p with check every period while the process pid lives, calling onState when
// its verdict (after the thresholds) changes, until onState says to stop.
func (c *container) loop(ctx context.Context, pid int, p *corev1.Probe, check func(context.Context, *corev1.Probe) error, onState func(bool) bool) {
	period := time.Duration(max(p.PeriodSeconds, 1)) * time.Second
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Duration(p.InitialDelaySeconds) * time.Second):
	}
	verdict, successes, failures := false, 0, 0
	for c.pod.pid(c) == pid {
		if err := check(ctx, p); err == nil {
			successes, failures = successes+1, 0
			if !verdict && successes >= int(max(p.SuccessThreshold, 1)) {
				verdict = true
				if !onState(true) {
					return
				}
			}
		} else {
			successes, failures = 0, failures+1
			if failures >= int(max(p.FailureThreshold, 1)) && (verdict || failures == int(max(p.FailureThreshold, 1))) {
				verdict = false
				if !onState(false) {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

// check runs a probe once against the pod's address.
func (c *container) check(ctx context.Context, p *corev1.Probe) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(max(p.TimeoutSeconds, 1))*time.Second)
	defer cancel()
	switch {
	case p.HTTPGet != nil:
		port, err := c.port(p.HTTPGet.Port)
		if err != nil {
			return err
		}
		host := p.HTTPGet.Host
		if host == "" {
			host = c.pod.ip
		}
		scheme := "http"
		if p.HTTPGet.Scheme == corev1.URISchemeHTTPS {
			scheme = "https"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host, strconv.Itoa(port))+p.HTTPGet.Path, nil)
		if err != nil {
			return err
		}
		resp, err := probeClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
		}
		return nil
	case p.TCPSocket != nil:
		port, err := c.port(p.TCPSocket.Port)
		if err != nil {
			return err
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(c.pod.ip, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return errors.New("this node runs httpGet and tcpSocket probes only")
}

var probeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// port resolves a probe's port, by number or by the container port's name.
func (c *container) port(p intstr.IntOrString) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range c.spec.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("the container has no port named %s", p.StrVal)
}

// now is the time in API form.
func now() metav1.Time { return metav1.NewTime(time.Now()) }
