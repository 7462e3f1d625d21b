package install

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// ParseResources turns name=quantity requests and limits into the
// container's resources: DefaultResources where both are empty, else the
// defaults with the given names replaced. A limit below its request is
// refused.
func ParseResources(requests, limits map[string]string) (corev1.ResourceRequirements, error) {
	res := DefaultResources()
	var errs []error
	for _, part := range []struct {
		flag  string
		given map[string]string
		into  corev1.ResourceList
	}{{"--requests", requests, res.Requests}, {"--limits", limits, res.Limits}} {
		for _, name := range sortedKeys(part.given) {
			q, err := resource.ParseQuantity(part.given[name])
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %s=%q: %w", part.flag, name, part.given[name], err))
				continue
			}
			if name != string(corev1.ResourceCPU) && name != string(corev1.ResourceMemory) && name != string(corev1.ResourceEphemeralStorage) {
				errs = append(errs, fmt.Errorf("%s: unknown resource %q (cpu, memory or ephemeral-storage)", part.flag, name))
				continue
			}
			part.into[corev1.ResourceName(name)] = q
		}
	}
	for name, req := range res.Requests {
		if lim, ok := res.Limits[name]; ok && lim.Cmp(req) < 0 {
			errs = append(errs, fmt.Errorf("the %s limit %s is below its request %s: raise --limits or lower --requests", name, lim.String(), req.String()))
		}
	}
	return res, errors.Join(errs...)
}

// ParseTolerations parses key[=value]:Effect[:seconds], or key:Exists[:Effect],
// into tolerations of the operator pod.
func ParseTolerations(specs []string) ([]corev1.Toleration, error) {
	var out []corev1.Toleration
	var errs []error
	for _, spec := range specs {
		t, err := parseToleration(spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("--tolerations %q: %w", spec, err))
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

func parseToleration(spec string) (corev1.Toleration, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
		return corev1.Toleration{}, errors.New("want key[=value]:Effect[:seconds] or key:Exists[:Effect]")
	}
	t := corev1.Toleration{Operator: corev1.TolerationOpEqual}
	t.Key, t.Value, _ = strings.Cut(parts[0], "=")
	rest := parts[1:]
	if rest[0] == string(corev1.TolerationOpExists) {
		if t.Value != "" {
			return corev1.Toleration{}, errors.New("an Exists toleration takes no value")
		}
		t.Operator, rest = corev1.TolerationOpExists, rest[1:]
		if len(rest) == 0 {
			return t, nil
		}
	}
	switch e := corev1.TaintEffect(rest[0]); e {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		t.Effect = e
	default:
		return corev1.Toleration{}, fmt.Errorf("effect %q is not NoSchedule, PreferNoSchedule or NoExecute", rest[0])
	}
	if len(rest) == 2 {
		secs, err := strconv.ParseInt(rest[1], 10, 64)
		if err != nil || secs < 0 || t.Effect != corev1.TaintEffectNoExecute {
			return corev1.Toleration{}, errors.New("seconds must be a non-negative integer, and only with NoExecute")
		}
		t.TolerationSeconds = ptr.To(secs)
	}
	return t, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
