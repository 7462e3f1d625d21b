package integrationcontroller

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/caravan-dev/caravan/internal/controller"
)

// healthTimeout bounds one read of a pod's readiness endpoint.
const healthTimeout = 3 * time.Second

// HealthReader reads a pod's readiness endpoint, url, returning its HTTP status and body.
type HealthReader func(ctx context.Context, url string) (status int, body []byte, err error)

// readHealth is the default HealthReader: a GET from the operator to the pod, as a kubelet probes it.
func readHealth(ctx context.Context, url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, body, err
}

// runtimeHealth is Camel's health report: the overall status and every check's.
type runtimeHealth struct {
	Status string `json:"status"`
	Checks []struct {
		Name    string         `json:"name"`
		Status  string         `json:"status"`
		Message string         `json:"message,omitempty"`
		Data    map[string]any `json:"data,omitempty"`
	} `json:"checks"`
}

// down names the checks that are not UP, each with what it says (Camel's "Route x has status
// Stopped"), else its route's id and state when the check has them.
func (h runtimeHealth) down() []string {
	var out []string
	for _, c := range h.Checks {
		if strings.EqualFold(c.Status, "UP") {
			continue
		}
		what := c.Name
		if id, ok := c.Data["route.id"]; ok && c.Message == "" {
			what += fmt.Sprintf(" (route %v: %v)", id, c.Data["route.status"])
		} else if c.Message != "" {
			what += " (" + c.Message + ")"
		}
		out = append(out, what+" "+c.Status)
	}
	slices.Sort(out)
	return out
}

// runtimeNotReady reads the readiness endpoint of every running, unready pod of the main
// container, as Camel K's operator does, and tells which of the runtime's checks fail: nil when
// no pod's runtime answers that it is not ready (no answer, or one that is not Camel's report,
// tells nothing: the probe itself reports that).
func runtimeNotReady(ctx context.Context, read HealthReader, pods []corev1.Pod, main string) *controller.Condition {
	var unready []string
	running := 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		running++
		url, ok := readinessURL(p, main)
		if !ok || podReady(p) {
			continue
		}
		status, body, err := read(ctx, url)
		if err != nil || status != http.StatusServiceUnavailable {
			continue
		}
		var h runtimeHealth
		if json.Unmarshal(body, &h) != nil {
			continue
		}
		if down := h.down(); len(down) > 0 {
			unready = append(unready, fmt.Sprintf("pod %s: %s", p.Name, strings.Join(down, ", ")))
		}
	}
	if len(unready) == 0 {
		return nil
	}
	return controller.Because(ReasonRuntimeNotReady, fmt.Sprintf("%d/%d pods are not ready: the runtime's readiness checks fail: %s",
		len(unready), running, strings.Join(unready, "; ")))
}

// readinessURL is the URL of the main container's HTTP readiness probe on pod p.
func readinessURL(p corev1.Pod, main string) (string, bool) {
	if p.Status.PodIP == "" {
		return "", false
	}
	for _, c := range p.Spec.Containers {
		if c.Name != main || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil {
			continue
		}
		get := c.ReadinessProbe.HTTPGet
		port := get.Port.IntValue()
		if get.Port.StrVal != "" {
			port = namedPort(c, get.Port.StrVal)
		}
		if port == 0 {
			return "", false
		}
		scheme := strings.ToLower(string(get.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		return scheme + "://" + net.JoinHostPort(p.Status.PodIP, strconv.Itoa(port)) + get.Path, true
	}
	return "", false
}

func namedPort(c corev1.Container, name string) int {
	for _, p := range c.Ports {
		if p.Name == name {
			return int(p.ContainerPort)
		}
	}
	return 0
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
