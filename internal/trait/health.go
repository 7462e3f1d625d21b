// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// DefaultStartupFailureThreshold gives a starting JVM time: Camel K's startup probe default.
const DefaultStartupFailureThreshold int32 = 10

// Health is the health trait: HTTP probes of the main container on the runtime's health
// endpoints, on the port the runtime serves them on. When on, the readiness probe is on unless
// readinessProbeEnabled is false, and the liveness and startup probes only when their
// livenessProbeEnabled or startupProbeEnabled is true, as in Camel K. Whether it is on
// without enabled set is the caller's to say (Enabled).
type Health struct {
	enabled                      *bool
	liveness, readiness, startup *probe
}

// probe is one probe as the trait sets it.
type probe struct {
	path             string
	port             int32
	scheme           corev1.URIScheme
	initialDelay     int32
	timeout          int32
	period           int32
	successThreshold int32
	failureThreshold int32
}

func parseHealth(o *object) Health {
	h := Health{enabled: o.boolean("enabled")}
	if h.enabled != nil && !*h.enabled {
		return h
	}
	read := func(name string, on bool) *probe {
		if e := o.boolean(name + "ProbeEnabled"); e != nil {
			on = *e
		}
		p := &probe{
			path:   o.str(name + "Probe"),
			port:   o.port(name + "Port"),
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
		if p.path != "" && !strings.HasPrefix(p.path, "/") {
			raw, _ := o.value(name + "Probe")
			o.fail(name+"Probe", "must be a path starting with /", raw)
		}
		if !on {
			return nil
		}
		return p
	}
	h.liveness = read("liveness", false)
	h.readiness = read("readiness", true)
	h.startup = read("startup", false)
	if h.startup != nil && h.startup.failureThreshold == 0 {
		h.startup.failureThreshold = DefaultStartupFailureThreshold
	}
	return h
}

// Enabled tells whether the probes are on: health.enabled when set, else byDefault.
func (h Health) Enabled(byDefault bool) bool {
	if h.enabled != nil {
		return *h.enabled
	}
	return byDefault
}

// Probes are the liveness, readiness and startup probes, each on the path and port the trait
// sets, else on those where the runtime serves its health; nil for a probe that is off.
func (h Health) Probes(rt runtime.Health) (liveness, readiness, startup *corev1.Probe) {
	return h.liveness.probe(rt.Liveness, rt.Port), h.readiness.probe(rt.Readiness, rt.Port), h.startup.probe(rt.Startup, rt.Port)
}

func (p *probe) probe(defaultPath string, defaultPort int32) *corev1.Probe {
	if p == nil {
		return nil
	}
	path := p.path
	if path == "" {
		path = defaultPath
	}
	scheme := p.scheme
	if scheme == "" {
		scheme = corev1.URISchemeHTTP
	}
	port := p.port
	if port == 0 {
		port = defaultPort
	}
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromInt32(port), Scheme: scheme}},
		InitialDelaySeconds: p.initialDelay, TimeoutSeconds: p.timeout, PeriodSeconds: p.period,
		SuccessThreshold: p.successThreshold, FailureThreshold: p.failureThreshold,
	}
}
