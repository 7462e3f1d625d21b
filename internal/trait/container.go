// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults of the container trait, as in Camel K.
const (
	DefaultContainerName   = "integration"
	DefaultPortName        = "http"
	DefaultServicePort     = int32(80)
	DefaultServicePortName = "http"
)

// Container is the container trait: the integration's main container.
// With enabled: false it reads as defaults.
type Container struct {
	image           string
	name            string
	port            int32
	portName        string
	servicePort     int32
	servicePortName string
	requests        corev1.ResourceList
	limits          corev1.ResourceList
	pullPolicy      corev1.PullPolicy
	ports           []corev1.ContainerPort
}

func parseContainer(o *object) Container {
	if o.disabled() {
		return Container{}
	}
	var ports []corev1.ContainerPort
	for i, p := range o.strs("ports") {
		port, ok := parsePort(p, 2)
		if !ok {
			o.failItem("ports", i, "must be name;port[;protocol]", p)
			continue
		}
		ports = append(ports, port)
	}
	return Container{
		ports:           ports,
		image:           o.str("image"),
		name:            o.checked("name", validation.IsDNS1123Label, "must be a DNS-1123 label (lowercase letters, digits and '-')"),
		port:            o.port("port"),
		portName:        o.checked("portName", validation.IsValidPortName, "must be a port name (at most 15 lowercase letters, digits and '-')"),
		servicePort:     o.port("servicePort"),
		servicePortName: o.checked("servicePortName", validation.IsValidPortName, "must be a port name (at most 15 lowercase letters, digits and '-')"),
		requests:        o.resources("requestCPU", "requestMemory"),
		limits:          o.resources("limitCPU", "limitMemory"),
		pullPolicy: corev1.PullPolicy(o.oneOf("imagePullPolicy",
			string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever))),
	}
}

// checked reads a string that must pass check (a k8s.io/apimachinery validation function).
func (o *object) checked(key string, check func(string) []string, expected string) string {
	raw, _ := o.value(key)
	s := o.str(key)
	if s != "" && len(check(s)) > 0 {
		o.fail(key, expected, raw)
		return ""
	}
	return s
}

// resources reads a CPU and a memory quantity into a resource list, nil when both are unset.
func (o *object) resources(cpuKey, memoryKey string) corev1.ResourceList {
	var list corev1.ResourceList
	add := func(name corev1.ResourceName, key string) {
		if q := o.quantity(key); q != nil {
			if list == nil {
				list = corev1.ResourceList{}
			}
			list[name] = *q
		}
	}
	add(corev1.ResourceCPU, cpuKey)
	add(corev1.ResourceMemory, memoryKey)
	return list
}

// Image is container.image: a pre-built image to run without a kit build, or "".
func (c Container) Image() string { return c.image }

// Name is the name of the main container, "integration" by default.
func (c Container) Name() string { return or(c.name, DefaultContainerName) }

// Port is container.port, or 0 when unset. See Traits.ContainerPort for the effective port.
func (c Container) Port() int32 { return c.port }

// PortName is the name of the container port, "http" by default.
func (c Container) PortName() string { return or(c.portName, DefaultPortName) }

// ServicePort is the port the Service exposes, 80 by default.
func (c Container) ServicePort() int32 {
	if c.servicePort == 0 {
		return DefaultServicePort
	}
	return c.servicePort
}

// ServicePortName is the name of the Service port, "http" by default.
func (c Container) ServicePortName() string { return or(c.servicePortName, DefaultServicePortName) }

// Camel K's default requests and limits of the main container.
var (
	DefaultRequests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("125m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	DefaultLimits   = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}
)

// Resources are the requests and limits of the main container: those set, and Camel K's
// defaults for the others. A default never contradicts what is set: a default request is
// lowered to a limit set under it, a default limit raised to a request set over it.
func (c Container) Resources() corev1.ResourceRequirements {
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		r, setR := c.requests[name]
		l, setL := c.limits[name]
		switch {
		case !setR && !setL:
			r, l = DefaultRequests[name], DefaultLimits[name]
		case !setR:
			r = minQuantity(DefaultRequests[name], l)
		case !setL:
			l = maxQuantity(DefaultLimits[name], r)
		}
		req[name], lim[name] = r.DeepCopy(), l.DeepCopy()
	}
	return corev1.ResourceRequirements{Requests: req, Limits: lim}
}

func minQuantity(a, b resource.Quantity) resource.Quantity {
	if a.Cmp(b) > 0 {
		return b
	}
	return a
}

func maxQuantity(a, b resource.Quantity) resource.Quantity {
	if a.Cmp(b) < 0 {
		return b
	}
	return a
}

// ImagePullPolicy is container.imagePullPolicy, or "" to leave it to Kubernetes.
func (c Container) ImagePullPolicy() corev1.PullPolicy { return c.pullPolicy }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Ports are container.ports, the container's ports besides the one of container.port.
func (c Container) Ports() []corev1.ContainerPort { return slices.Clone(c.ports) }
