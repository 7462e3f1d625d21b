package trait

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// listTraitKeys are the Camel K trait fields that hold lists of strings:
// each -t adds one item, as in kamel.
var listTraitKeys = map[string]bool{
	"camel.properties": true, "environment.vars": true, "jvm.options": true, "jolokia.options": true,
	"mount.configs": true, "mount.resources": true, "mount.volumes": true, "mount.emptyDirs": true,
	"builder.properties": true, "builder.tasks": true, "builder.mavenProfiles": true,
	"affinity.nodeAffinityLabels": true, "affinity.podAffinityLabels": true, "affinity.podAntiAffinityLabels": true,
	"toleration.taints": true, "owner.targetAnnotations": true, "owner.targetLabels": true,
	"knative.channelSources": true, "knative.channelSinks": true, "knative.endpointSources": true,
	"knative.endpointSinks": true, "knative.eventSources": true, "knative.eventSinks": true, "knative.filters": true,
	"service-binding.services": true, "openapi.configmaps": true, "quarkus.buildMode": true,
	"builder.tasksRequestCPU": true, "builder.tasksRequestMemory": true, "builder.tasksLimitCPU": true, "builder.tasksLimitMemory": true,
	"builder.platforms": true, "container.ports": true, "service.ports": true, "ingress.paths": true, "ingress.tlsHosts": true,
	"init-containers.initTasks": true, "init-containers.sideCarTasks": true, "jolokia.clientPrincipal": true, "jvm.agents": true,
	"gateway.listeners": true, "gitops.overlays": true, "prometheus.podMonitorLabels": true,
}

// stringTraitKeys are Camel K trait fields that hold strings which may
// look like numbers.
var stringTraitKeys = map[string]bool{
	"container.requestCPU": true, "container.requestMemory": true, "container.limitCPU": true, "container.limitMemory": true,
	"builder.requestCPU": true, "builder.requestMemory": true, "builder.limitCPU": true, "builder.limitMemory": true,
	"camel.runtimeVersion": true,
}

var traitNamePattern = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Flags are the trait settings of `run`'s flags, as kamel takes them.
type Flags struct {
	// Settings are the -t TRAIT.KEY=VALUE settings.
	Settings []string
	// Properties are the -p KEY=VALUE properties (a file: one read
	// already), into camel.properties.
	Properties []string
	// Image is --image, the container trait's image.
	Image string
	// RuntimeProvider is --runtime-provider, the camel trait's runtimeProvider.
	RuntimeProvider string
	// Configs are the --config configmap:NAME and secret:NAME entries,
	// into mount.configs.
	Configs []string
	// Resources are the --resource entries, into mount.resources.
	Resources []string
	// Volumes are the -v CLAIM:PATH entries, into mount.volumes.
	Volumes []string
	// Env are the -e NAME=VALUE variables, into environment.vars.
	Env []string
	// BuildProperties are the --build-property KEY=VALUE properties (files read already), into
	// builder.properties.
	BuildProperties []string
}

// FromFlags turns the flags of `run` into trait trees, as kamel does, and
// checks the traits Caravan acts on as the operator will.
func FromFlags(f Flags) (camelv1.Traits, error) {
	tree := map[string]any{}
	for _, s := range f.Settings {
		if err := setTrait(tree, s); err != nil {
			return nil, err
		}
	}
	configs := slices.Clone(f.Configs)
	for _, p := range f.Properties {
		if strings.HasPrefix(p, "configmap:") || strings.HasPrefix(p, "secret:") {
			// kamel's -p configmap:NAME: each entry is a property, mounted as --config mounts it;
			// the runtime reads a file of the configuration directories as KEY=its content.
			configs = append(configs, p)
			continue
		}
		key, _, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(key) == "" {
			return nil, fmt.Errorf("-p %s: a property must be KEY=VALUE", p)
		}
		if err := setTraitPath(tree, []string{"camel", "properties"}, p, []any{p}); err != nil {
			return nil, err
		}
	}
	lists := []struct {
		flag    string
		path    []string
		entries []string
	}{
		{"--config", []string{"mount", "configs"}, configs},
		{"--resource", []string{"mount", "resources"}, f.Resources},
		{"-v/--volume", []string{"mount", "volumes"}, f.Volumes},
		{"-e/--env", []string{"environment", "vars"}, f.Env},
		{"--build-property", []string{"builder", "properties"}, f.BuildProperties},
	}
	for _, l := range lists {
		for _, e := range l.entries {
			if err := setTraitPath(tree, l.path, l.flag+" "+e, []any{e}); err != nil {
				return nil, err
			}
		}
	}
	if f.Image != "" {
		if c, ok := tree["container"].(map[string]any); ok && c["image"] != nil {
			return nil, errors.New("--image and -t container.image both set the image: use one")
		}
		if err := setTraitPath(tree, []string{"container", "image"}, "--image "+f.Image, f.Image); err != nil {
			return nil, err
		}
	}
	if f.RuntimeProvider != "" {
		if c, ok := tree["camel"].(map[string]any); ok && c["runtimeProvider"] != nil {
			return nil, errors.New("--runtime-provider and -t camel.runtimeProvider both set the runtime provider: use one")
		}
		if err := setTraitPath(tree, []string{"camel", "runtimeProvider"}, "--runtime-provider "+f.RuntimeProvider, f.RuntimeProvider); err != nil {
			return nil, err
		}
	}
	if len(tree) == 0 {
		return nil, nil
	}
	traits := make(camelv1.Traits, len(tree))
	for name, v := range tree {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encoding trait %s: %w", name, err)
		}
		traits[name] = camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: raw}}
	}
	if _, unknown := Ignored(traits); len(unknown) > 0 {
		return nil, fmt.Errorf("trait %s does not exist in catalog: Camel K has no trait of that name (docs/traits.md lists them)", strings.Join(unknown, ", "))
	}
	var errs []error
	for _, p := range UnknownProperties(traits) {
		name, prop, _ := strings.Cut(p, ".")
		known, _ := Properties(name)
		errs = append(errs, fmt.Errorf("trait %s has no property %s: Camel K's takes %s", name, prop, strings.Join(known, ", ")))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if _, err := Parse(traits); err != nil {
		return nil, fmt.Errorf("invalid traits: %w", err)
	}
	return traits, nil
}

// setTrait adds one TRAIT.KEY[.KEY...]=VALUE setting to tree.
func setTrait(tree map[string]any, setting string) error {
	path, value, ok := strings.Cut(setting, "=")
	keys := strings.Split(path, ".")
	if !ok || len(keys) < 2 || slices.Contains(keys, "") {
		return fmt.Errorf("-t %s: a trait setting must be TRAIT.KEY=VALUE, such as container.port=8080", setting)
	}
	if !traitNamePattern.MatchString(keys[0]) {
		return fmt.Errorf("-t %s: %q is not a trait name: use lowercase letters, digits and '-'", setting, keys[0])
	}
	for i := 1; i < len(keys); i++ {
		keys[i] = camelCase(keys[i])
	}
	path = strings.Join(keys, ".")
	return setTraitPath(tree, keys, "-t "+setting, traitValue(path, value))
}

// camelCase spells a trait property as the Integration stores it: kamel takes
// health.liveness-probe-enabled and container.request-cpu, the spec holds
// livenessProbeEnabled and requestCPU.
func camelCase(key string) string {
	parts := strings.Split(key, "-")
	for i := 1; i < len(parts); i++ {
		switch p := parts[i]; {
		case acronyms[p]:
			parts[i] = strings.ToUpper(p)
		case p != "":
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// acronyms are the words Camel K's trait fields write in capitals (requestCPU, tlsCACertificate).
var acronyms = map[string]bool{"cpu": true, "ca": true, "ssl": true}

// traitValue types a value: [a,b] is a list; in a list field every item
// is a string; otherwise true and false are booleans, integers are numbers
// and anything else a string.
func traitValue(path, value string) any {
	asString := listTraitKeys[path] || stringTraitKeys[path]
	typed := func(v string) any {
		if asString {
			return v
		}
		if v == "true" || v == "false" {
			return v == "true"
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
			return n
		}
		return v
	}
	if len(value) >= 2 && value[0] == '[' && value[len(value)-1] == ']' {
		items := []any{}
		if inner := strings.TrimSpace(value[1 : len(value)-1]); inner != "" {
			for _, item := range strings.Split(inner, ",") {
				items = append(items, typed(strings.TrimSpace(item)))
			}
		}
		return items
	}
	if listTraitKeys[path] {
		return []any{value}
	}
	return typed(value)
}

// setTraitPath sets the value at keys in tree. Setting a key twice makes
// a list of the values, as kamel does for list fields.
func setTraitPath(tree map[string]any, keys []string, flag string, value any) error {
	node := tree
	for i, k := range keys[:len(keys)-1] {
		if name, index, ok := listIndex(k); ok {
			list, isList := node[name].([]any)
			if _, set := node[name]; set && !isList {
				return fmt.Errorf("%s: %s is already set to a value, it cannot also hold items", flag, strings.Join(append(keys[:i:i], name), "."))
			}
			if index > len(list) {
				return fmt.Errorf("%s: %s[%d] comes before %s[%d]: set the items in order from [0]", flag, name, index, name, len(list))
			}
			if index == len(list) {
				list = append(list, map[string]any{})
				node[name] = list
			}
			m, isMap := list[index].(map[string]any)
			if !isMap {
				return fmt.Errorf("%s: %s is already set to a value, it cannot also hold keys", flag, k)
			}
			node = m
			continue
		}
		child, ok := node[k]
		if !ok {
			m := map[string]any{}
			node[k], node = m, m
			continue
		}
		m, isMap := child.(map[string]any)
		if !isMap {
			return fmt.Errorf("%s: %s is already set to a value, it cannot also hold keys", flag, strings.Join(keys[:i+1], "."))
		}
		node = m
	}
	last := keys[len(keys)-1]
	old, exists := node[last]
	switch {
	case !exists:
		node[last] = value
	case isTraitObject(old):
		return fmt.Errorf("%s: %s already holds keys, it cannot also be set to a value", flag, strings.Join(keys, "."))
	default:
		node[last] = append(asList(old), asList(value)...)
	}
	return nil
}

// listIndex reads NAME[INDEX], an item of a list of objects, as kamel's -t takes it.
func listIndex(key string) (name string, index int, ok bool) {
	open := strings.IndexByte(key, '[')
	if open <= 0 || !strings.HasSuffix(key, "]") {
		return "", 0, false
	}
	n, err := strconv.Atoi(key[open+1 : len(key)-1])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return key[:open], n, true
}

func isTraitObject(v any) bool { _, ok := v.(map[string]any); return ok }

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}
