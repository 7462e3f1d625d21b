// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The runtime's health endpoints, where Camel K's runtimes serve them.
const (
	DefaultLivenessPath  = "/q/health/live"
	DefaultReadinessPath = "/q/health/ready"
	DefaultStartupPath   = "/q/health/started"
)

// Health is the health trait: HTTP probes of the main container on the runtime's health
// endpoints. Off unless enabled: true; then the readiness probe is on unless
// readinessProbeEnabled is false, and the liveness and startup probes only when their
// livenessProbeEnabled or startupProbeEnabled is true, as in Camel K.
type Health struct {
	liveness, readiness, startup *probe
}

// probe is one probe as the trait sets it; the port is the container's.
type probe struct {
	path             string
	scheme           corev1.URIScheme
	initialDelay     int32
	timeout          int32
	period           int32
	successThreshold int32
	failureThreshold int32
}

func parseHealth(o *object) Health {
	enabled := o.boolean("enabled")
	if enabled == nil || !*enabled {
		return Health{}
	}
	read := func(name, defaultPath string, on bool) *probe {
		if e := o.boolean(name + "ProbeEnabled"); e != nil {
			on = *e
		}
		p := &probe{
			path:   o.str(name + "Probe"),
			scheme: corev1.URIScheme(o.oneOf(name+"Scheme", string(corev1.URISchemeHTTP), string(corev1.URISchemeHTTPS))),
		}
		seconds := func(key string, lo int64) int32 {
			if n := o.integer(name+key, lo, math.MaxInt32); n != nil {
				return int32(*n)
			}
			return 0
		}
		p.initialDelay = seconds("InitialDelay", 0)
		p.timeout = seconds("Timeout", 1)
		p.period = seconds("Period", 1)
		p.successThreshold = seconds("SuccessThreshold", 1)
		p.failureThreshold = seconds("FailureThreshold", 1)
		if p.path == "" {
			p.path = defaultPath
		} else if !strings.HasPrefix(p.path, "/") {
			raw, _ := o.value(name + "Probe")
			o.fail(name+"Probe", "must be a path starting with /", raw)
		}
		if !on {
			return nil
		}
		return p
	}
	return Health{
		liveness:  read("liveness", DefaultLivenessPath, false),
		readiness: read("readiness", DefaultReadinessPath, true),
		startup:   read("startup", DefaultStartupPath, false),
	}
}

// Probes are the liveness, readiness and startup probes on port; nil for a probe that is
// off.
func (h Health) Probes(port int32) (liveness, readiness, startup *corev1.Probe) {
	return h.liveness.on(port), h.readiness.on(port), h.startup.on(port)
}

// Enabled tells whether any probe is on.
func (h Health) Enabled() bool { return h.liveness != nil || h.readiness != nil || h.startup != nil }

func (p *probe) on(port int32) *corev1.Probe {
	if p == nil {
		return nil
	}
	scheme := p.scheme
	if scheme == "" {
		scheme = corev1.URISchemeHTTP
	}
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: p.path, Port: intstr.FromInt32(port), Scheme: scheme}},
		InitialDelaySeconds: p.initialDelay, TimeoutSeconds: p.timeout, PeriodSeconds: p.period,
		SuccessThreshold: p.successThreshold, FailureThreshold: p.failureThreshold,
	}
}
