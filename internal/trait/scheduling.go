// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Affinity is the affinity trait, as in Camel K; it is off unless enabled: true. It sets
// node affinity from label requirements (nodeAffinityLabels), and pod affinity or
// anti-affinity to the integration's own pods (podAffinity, podAntiAffinity) or to pods
// matching label requirements (podAffinityLabels, podAntiAffinityLabels), all required,
// on the node's hostname.
type Affinity struct {
	node, pod, antiPod []metav1.LabelSelectorRequirement
	self, antiSelf     bool
}

func parseAffinity(o *object) Affinity {
	enabled := o.boolean("enabled")
	if enabled == nil || !*enabled {
		return Affinity{}
	}
	isTrue := func(key string) bool { b := o.boolean(key); return b != nil && *b }
	return Affinity{
		node: labelRequirements(o, "nodeAffinityLabels"), pod: labelRequirements(o, "podAffinityLabels"),
		antiPod: labelRequirements(o, "podAntiAffinityLabels"),
		self:    isTrue("podAffinity"), antiSelf: isTrue("podAntiAffinity"),
	}
}

// labelRequirements reads a list of label requirements (disktype=ssd, zone in (a,b)).
func labelRequirements(o *object, key string) []metav1.LabelSelectorRequirement {
	var out []metav1.LabelSelectorRequirement
	for i, s := range o.strs(key) {
		sel, err := labels.Parse(s)
		var reqs labels.Requirements
		if err == nil {
			reqs, _ = sel.Requirements()
		}
		if len(reqs) != 1 {
			o.failItem(key, i, "must be one label requirement, such as disktype=ssd or zone in (a,b)", s)
			continue
		}
		r := reqs[0]
		op, ok := map[selection.Operator]metav1.LabelSelectorOperator{
			selection.Equals: metav1.LabelSelectorOpIn, selection.DoubleEquals: metav1.LabelSelectorOpIn,
			selection.In: metav1.LabelSelectorOpIn, selection.NotEquals: metav1.LabelSelectorOpNotIn,
			selection.NotIn: metav1.LabelSelectorOpNotIn, selection.Exists: metav1.LabelSelectorOpExists,
			selection.DoesNotExist: metav1.LabelSelectorOpDoesNotExist,
		}[r.Operator()]
		if !ok {
			o.failItem(key, i, "must use =, !=, in, notin, or a key alone", s)
			continue
		}
		out = append(out, metav1.LabelSelectorRequirement{Key: r.Key(), Operator: op, Values: r.Values().List()})
	}
	return out
}

// Pod is the affinity of the pods of the integration, whose pods carry the label
// integrationLabel=integration; nil when the trait sets none.
func (a Affinity) Pod(integrationLabel, integration string) *corev1.Affinity {
	out := &corev1.Affinity{}
	if len(a.node) > 0 {
		terms := make([]corev1.NodeSelectorRequirement, len(a.node))
		for i, r := range a.node {
			terms[i] = corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: r.Values}
		}
		out.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: terms}}}}
	}
	term := func(self bool, reqs []metav1.LabelSelectorRequirement) []corev1.PodAffinityTerm {
		reqs = append([]metav1.LabelSelectorRequirement(nil), reqs...)
		if self {
			reqs = append(reqs, metav1.LabelSelectorRequirement{Key: integrationLabel, Operator: metav1.LabelSelectorOpIn,
				Values: []string{integration}})
		}
		if len(reqs) == 0 {
			return nil
		}
		return []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchExpressions: reqs}}}
	}
	if t := term(a.self, a.pod); t != nil {
		out.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: t}
	}
	if t := term(a.antiSelf, a.antiPod); t != nil {
		out.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: t}
	}
	if out.NodeAffinity == nil && out.PodAffinity == nil && out.PodAntiAffinity == nil {
		return nil
	}
	return out
}

// Toleration is the toleration trait: tolerations written as Camel K writes them,
// KEY[=VALUE]:EFFECT[:SECONDS]. Off unless enabled: true.
type Toleration struct {
	tolerations []corev1.Toleration
}

func parseToleration(o *object) Toleration {
	enabled := o.boolean("enabled")
	if enabled == nil || !*enabled {
		return Toleration{}
	}
	var t Toleration
	for i, s := range o.strs("taints") {
		tol, err := parseTaint(s)
		if err != nil {
			o.failItem("taints", i, err.Error(), s)
			continue
		}
		t.tolerations = append(t.tolerations, tol)
	}
	return t
}

// parseTaint reads KEY[=VALUE]:EFFECT[:SECONDS].
func parseTaint(s string) (corev1.Toleration, error) {
	const syntax = "must be KEY[=VALUE]:EFFECT[:SECONDS] with EFFECT NoSchedule, PreferNoSchedule or NoExecute"
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return corev1.Toleration{}, fmt.Errorf("%s", syntax)
	}
	key, value, hasValue := strings.Cut(parts[0], "=")
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return corev1.Toleration{}, fmt.Errorf("%s: %s", syntax, strings.Join(errs, "; "))
	}
	tol := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(parts[1])}
	if hasValue {
		tol.Operator, tol.Value = corev1.TolerationOpEqual, value
	}
	switch tol.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return corev1.Toleration{}, fmt.Errorf("%s", syntax)
	}
	if len(parts) == 3 {
		secs, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil || secs < 0 || secs > math.MaxInt32 || tol.Effect != corev1.TaintEffectNoExecute {
			return corev1.Toleration{}, fmt.Errorf("%s; SECONDS is a non-negative integer, for NoExecute only", syntax)
		}
		tol.TolerationSeconds = &secs
	}
	return tol, nil
}

// Pod are the pod's tolerations.
func (t Toleration) Pod() []corev1.Toleration {
	out := make([]corev1.Toleration, len(t.tolerations))
	for i := range t.tolerations {
		t.tolerations[i].DeepCopyInto(&out[i])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
