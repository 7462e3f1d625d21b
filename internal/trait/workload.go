// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Service is the service trait. Unless enabled or auto is set, the integration gets a
// Service when its routes serve HTTP, as in Camel K. ports (name;port;containerPort[;protocol])
// adds ports, and gives a Service; labels and annotations are the Service's.
type Service struct {
	enabled, auto       *bool
	serviceType         corev1.ServiceType
	ports               []corev1.ServicePort
	labels, annotations map[string]string
}

func parseService(o *object) Service {
	s := Service{
		enabled: o.boolean("enabled"),
		auto:    o.boolean("auto"),
		serviceType: corev1.ServiceType(o.oneOf("type",
			string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeNodePort), string(corev1.ServiceTypeLoadBalancer))),
		labels:      o.stringMap("labels"),
		annotations: o.stringMap("annotations"),
	}
	if np := o.boolean("nodePort"); np != nil && *np && s.serviceType == "" {
		// Camel K's older way of asking for a NodePort Service.
		s.serviceType = corev1.ServiceTypeNodePort
	}
	for i, p := range o.strs("ports") {
		port, ok := parsePort(p, 3)
		if !ok {
			o.failItem("ports", i, "must be name;port;containerPort[;protocol]", p)
			continue
		}
		s.ports = append(s.ports, corev1.ServicePort{Name: port.Name, Port: port.ContainerPort,
			TargetPort: intstr.FromInt32(port.HostPort), Protocol: port.Protocol})
	}
	return s
}

// parsePort reads Camel K's name;port[;containerPort][;protocol] with fields numbers (2 or 3)
// before the protocol. The second number, when there is one, is returned as HostPort.
func parsePort(s string, fields int) (corev1.ContainerPort, bool) {
	parts := strings.Split(s, ";")
	if len(parts) != fields && len(parts) != fields+1 {
		return corev1.ContainerPort{}, false
	}
	p := corev1.ContainerPort{Name: parts[0], Protocol: corev1.ProtocolTCP}
	if len(validation.IsValidPortName(p.Name)) > 0 {
		return p, false
	}
	nums := make([]int32, fields-1)
	for i := range nums {
		n, err := strconv.ParseInt(parts[i+1], 10, 32)
		if err != nil || len(validation.IsValidPortNum(int(n))) > 0 {
			return p, false
		}
		nums[i] = int32(n)
	}
	p.ContainerPort = nums[0]
	if len(nums) > 1 {
		p.HostPort = nums[1]
	}
	if len(parts) == fields+1 {
		switch proto := corev1.Protocol(strings.ToUpper(parts[fields])); proto {
		case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
			p.Protocol = proto
		default:
			return p, false
		}
	}
	return p, true
}

// Ports are the service trait's ports, besides the one of the container's port.
func (s Service) Ports() []corev1.ServicePort { return slices.Clone(s.ports) }

// Labels and Annotations are the service trait's, for the Service.
func (s Service) Labels() map[string]string      { return maps.Clone(s.labels) }
func (s Service) Annotations() map[string]string { return maps.Clone(s.annotations) }

// Enabled is service.enabled: nil when unset.
func (s Service) Enabled() *bool {
	if s.enabled == nil {
		return nil
	}
	v := *s.enabled
	return &v
}

// Auto tells whether the Service follows the routes when enabled is unset: auto, true by default.
func (s Service) Auto() bool { return s.auto == nil || *s.auto }

// Type is the Service type, ClusterIP by default.
func (s Service) Type() corev1.ServiceType {
	if s.serviceType == "" {
		return corev1.ServiceTypeClusterIP
	}
	return s.serviceType
}

// Default rolling update of the Deployment: never lower the number of ready pods, so a
// handover to another operator keeps the integration serving.
var (
	DefaultMaxUnavailable = intstr.FromInt32(0)
	DefaultMaxSurge       = intstr.FromString("25%")
)

// Deployment is the deployment trait. It cannot be disabled.
type Deployment struct {
	progressDeadlineSeconds *int32
	strategy                appsv1.DeploymentStrategyType
	maxUnavailable          *intstr.IntOrString
	maxSurge                *intstr.IntOrString
}

func parseDeployment(o *object) Deployment {
	if o.disabled() {
		o.errs = append(o.errs, errors.New("trait deployment.enabled: the deployment trait cannot be disabled: Caravan runs integrations as Deployments"))
	}
	d := Deployment{
		strategy: appsv1.DeploymentStrategyType(o.oneOf("strategy",
			string(appsv1.RollingUpdateDeploymentStrategyType), string(appsv1.RecreateDeploymentStrategyType))),
		maxUnavailable: o.intOrPercent("rollingUpdateMaxUnavailable"),
		maxSurge:       o.intOrPercent("rollingUpdateMaxSurge"),
	}
	if n := o.integer("progressDeadlineSeconds", 1, math.MaxInt32); n != nil {
		v := int32(*n)
		d.progressDeadlineSeconds = &v
	}
	if u := d.maxUnavailable; u != nil && u.Type == intstr.String && percent(*u) > 100 {
		raw, _ := o.value("rollingUpdateMaxUnavailable")
		o.fail("rollingUpdateMaxUnavailable", "must not be more than 100%", raw)
	}
	if s := d.Strategy(); s.RollingUpdate != nil && isZero(*s.RollingUpdate.MaxSurge) && isZero(*s.RollingUpdate.MaxUnavailable) {
		o.errs = append(o.errs, errors.New("trait deployment: rollingUpdateMaxSurge and rollingUpdateMaxUnavailable cannot both be 0"))
	}
	return d
}

// ProgressDeadlineSeconds is deployment.progressDeadlineSeconds, nil when unset.
func (d Deployment) ProgressDeadlineSeconds() *int32 {
	if d.progressDeadlineSeconds == nil {
		return nil
	}
	v := *d.progressDeadlineSeconds
	return &v
}

// Strategy is the Deployment strategy: RollingUpdate with DefaultMaxUnavailable and
// DefaultMaxSurge unless the trait says otherwise.
func (d Deployment) Strategy() appsv1.DeploymentStrategy {
	if d.strategy == appsv1.RecreateDeploymentStrategyType {
		return appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	}
	unavailable, surge := DefaultMaxUnavailable, DefaultMaxSurge
	if d.maxUnavailable != nil {
		unavailable = *d.maxUnavailable
	}
	if d.maxSurge != nil {
		surge = *d.maxSurge
	}
	return appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &unavailable, MaxSurge: &surge},
	}
}

func isZero(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	return percent(v) == 0
}

// percent reads a validated percent string ("25%").
func percent(v intstr.IntOrString) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	return n
}
