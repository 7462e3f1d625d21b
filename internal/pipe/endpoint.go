// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package pipe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/kamelet"
	"github.com/caravan-dev/caravan/internal/trait"
)

// role is where an endpoint sits in the binding; it names Kamelet instances (Camel K's
// endpoint types).
type role string

const (
	roleSource       role = "source"
	roleSink         role = "sink"
	roleAction       role = "action"
	roleErrorHandler role = "error-handler"
)

const (
	kindKamelet     = "Kamelet"
	kindIntegration = "Integration"
)

// compiler collects what the endpoints need while they are translated.
type compiler struct {
	r Resolver
	// kamelets are the Kamelets used, by name.
	kamelets map[string]*camelv1.Kamelet
	// missing are the Kamelets used that the Resolver did not find, in order.
	missing []string
	// versions are the versions of the Kamelets used, by name ("" for the main one).
	versions map[string]string
	// properties are the runtime properties of the Kamelet instances.
	properties map[string]string
	// instances maps <kamelet>/<id> to the endpoint that uses it.
	instances map[string]string
	// callsIntegration is set when an endpoint calls an Integration over HTTP.
	callsIntegration bool
	// given are the Kamelet properties the integration's traits give the runtime.
	given runtimeGiven
}

func newCompiler(r Resolver) *compiler {
	return &compiler{
		r:          r,
		kamelets:   map[string]*camelv1.Kamelet{},
		versions:   map[string]string{},
		properties: map[string]string{},
		instances:  map[string]string{},
	}
}

// endpoint translates one endpoint into a Camel URI; where names it in errors and pos is
// the index of a step.
func (c *compiler) endpoint(ro role, where string, e camelv1.Endpoint, pos int) (string, error) {
	props, err := decodeProperties(e.Properties)
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	switch {
	case e.Ref != nil && e.URI != nil:
		return "", fmt.Errorf("%s: set either ref or uri, not both", where)
	case e.URI != nil:
		if strings.TrimSpace(*e.URI) == "" {
			return "", fmt.Errorf("%s: uri is empty: set a Camel endpoint URI such as log:info", where)
		}
		uri, err := appendQuery(*e.URI, props)
		if err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		return uri, nil
	case e.Ref == nil:
		return "", fmt.Errorf("%s: set ref (a Kamelet or an Integration) or uri", where)
	}
	gv, err := schema.ParseGroupVersion(e.Ref.APIVersion)
	if err != nil || (e.Ref.APIVersion != "" && gv.Group != camelv1.GroupVersion.Group) {
		return "", fmt.Errorf("%s: ref apiVersion %q is not supported: use %s", where, e.Ref.APIVersion, camelv1.GroupVersion)
	}
	if e.Ref.Name == "" {
		return "", fmt.Errorf("%s: ref has no name", where)
	}
	switch e.Ref.Kind {
	case kindKamelet:
		return c.kameletEndpoint(ro, where, e.Ref.Name, e.Ref.Namespace, props, pos)
	case kindIntegration:
		return c.integrationEndpoint(ro, where, e.Ref, props)
	}
	return "", fmt.Errorf("%s: ref kind %q is not supported: use Kamelet or Integration, or a uri", where, e.Ref.Kind)
}

// kameletEndpoint resolves and checks a Kamelet, records its instance properties and
// returns kamelet:<name>/<id>.
func (c *compiler) kameletEndpoint(ro role, where, name, namespace string, props map[string]any, pos int) (string, error) {
	k, err := c.r.Kamelet(name, namespace)
	if err == nil && k == nil {
		err = NotFound(name)
	}
	if errors.Is(err, ErrKameletNotFound) {
		// As on Camel K, the runtime looks for it on its classpath; its properties go as written.
		missing := name
		if v, ok := props[kamelet.VersionProperty].(string); ok && v != "" {
			// The classpath holds one version: the one named cannot be chosen, which the condition says.
			missing = fmt.Sprintf("%s (whose version %s the classpath cannot choose: it holds one)", name, v)
		}
		if !slices.Contains(c.missing, missing) {
			c.missing = append(c.missing, missing)
		}
		delete(props, kamelet.VersionProperty)
		k, err = &camelv1.Kamelet{}, nil
		k.Name = name
		return c.instance(ro, where, k, props, pos)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	if k, err = c.version(k, props); err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	if problems := kamelet.Validate(k); len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.Message
		}
		return "", fmt.Errorf("%s: kamelet %s is invalid: %s", where, name, strings.Join(msgs, "; "))
	}
	if err := checkRole(ro, k); err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	c.kamelets[name] = k
	return c.instance(ro, where, k, props, pos)
}

// instance records the instance of Kamelet k an endpoint makes, with its properties checked
// against k's definition, and returns kamelet:<name>/<id>.
func (c *compiler) instance(ro role, where string, k *camelv1.Kamelet, props map[string]any, pos int) (string, error) {
	name := k.Name
	id, err := instanceID(ro, pos, props)
	if err != nil {
		return "", fmt.Errorf("%s: kamelet %s: %w", where, name, err)
	}
	values, missing, err := kamelet.ResolveProperties(k, props)
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	if err := c.checkRequired(k.Name, id, missing); err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	instance := name + "/" + id
	if other, ok := c.instances[instance]; ok {
		return "", fmt.Errorf("%s: kamelet %s with id %q is already used by %s: set a different id property", where, name, id, other)
	}
	c.instances[instance] = where
	for p, v := range values {
		c.properties[fmt.Sprintf("camel.kamelet.%s.%s.%s", name, id, p)] = v
	}
	return "kamelet:" + instance, nil
}

// checkRequired refuses an instance id of Kamelet name that lacks required properties (missing)
// which the integration's traits do not give either.
func (c *compiler) checkRequired(name, id string, missing []string) error {
	var errs []error
	for _, p := range missing {
		if !c.given.gives(name, id, p) {
			errs = append(errs, fmt.Errorf("kamelet %s: missing required property %q: set it in the endpoint's properties, "+
				"or as camel.kamelet.%s.%s in a mounted configuration", name, p, name, p))
		}
	}
	return errors.Join(errs...)
}

// runtimeGiven is what an integration's traits give the runtime of the Kamelet properties: a
// mounted configuration may give any (the operator does not read it), the camel trait's
// properties give camel.kamelet.NAME.PROP and camel.kamelet.NAME.ID.PROP.
type runtimeGiven struct {
	mounted bool
	keys    map[string]bool
}

// readRuntimeGiven reads mount.configs and camel.properties of the traits of spec over those
// of its spec.integration, with the trait package's rules; traits it cannot parse give nothing,
// the integration reporting their errors.
func readRuntimeGiven(spec camelv1.PipeSpec) runtimeGiven {
	var base camelv1.Traits
	if spec.Integration != nil {
		base = spec.Integration.Traits
	}
	traits, err := trait.Parse(trait.Merge(base, spec.Traits))
	if err != nil {
		return runtimeGiven{}
	}
	g := runtimeGiven{mounted: len(traits.Mount.ConfigDirs()) > 0, keys: map[string]bool{}}
	for _, e := range traits.Camel.Properties() {
		g.keys[trait.PropertyKey(e)] = true
	}
	return g
}

// gives tells whether property p of instance id of Kamelet name may be given by the traits.
func (g runtimeGiven) gives(name, id, p string) bool {
	return g.mounted || g.keys["camel.kamelet."+name+"."+p] || g.keys["camel.kamelet."+name+"."+id+"."+p]
}

// version is k in the version the endpoint's kameletVersion property names, removed from props; one
// integration mounts one version of a Kamelet, so another endpoint that names another is refused.
func (c *compiler) version(k *camelv1.Kamelet, props map[string]any) (*camelv1.Kamelet, error) {
	v, _ := props[kamelet.VersionProperty].(string)
	if _, set := props[kamelet.VersionProperty]; set {
		delete(props, kamelet.VersionProperty)
		if v == "" {
			return nil, fmt.Errorf("property %q must name a version of kamelet %s", kamelet.VersionProperty, k.Name)
		}
	}
	if other, ok := c.versions[k.Name]; ok && other != v {
		return nil, fmt.Errorf("kamelet %s is used in two versions, %q and %q: a binding runs one version of a Kamelet", k.Name, other, v)
	}
	c.versions[k.Name] = v
	return kamelet.WithVersion(k, v)
}

// checkRole refuses a Kamelet whose type does not fit where it is used: a source must be a
// source Kamelet (or untyped); a step, a sink or an error handler must not be a source.
func checkRole(ro role, k *camelv1.Kamelet) error {
	t := kamelet.Type(k)
	switch {
	case ro == roleSource && t != "" && t != camelv1.KameletTypeSource:
		return fmt.Errorf("kamelet %s is a %s Kamelet and cannot be the source: use a source Kamelet", k.Name, t)
	case ro != roleSource && t == camelv1.KameletTypeSource:
		return fmt.Errorf("kamelet %s is a source Kamelet and can only be the source", k.Name)
	}
	return nil
}

// instanceID is the endpoint's "id" property, removed from props, or the role's id.
func instanceID(ro role, pos int, props map[string]any) (string, error) {
	v, ok := props[kamelet.IDProperty]
	if !ok {
		if ro == roleAction {
			return fmt.Sprintf("%s-%d", ro, pos), nil
		}
		return string(ro), nil
	}
	delete(props, kamelet.IDProperty)
	id, _ := v.(string)
	if errs := validation.IsDNS1123Label(id); len(errs) > 0 {
		return "", fmt.Errorf("property %q must be lowercase letters, digits and '-': %s", kamelet.IDProperty, strings.Join(errs, "; "))
	}
	return id, nil
}

// integrationEndpoint returns the HTTP URL of an Integration's Service.
func (c *compiler) integrationEndpoint(ro role, where string, ref *corev1.ObjectReference, props map[string]any) (string, error) {
	if ro == roleSource {
		return "", fmt.Errorf("%s: an Integration cannot be the source (Caravan calls Integrations over HTTP): use a Kamelet or a uri", where)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = c.r.Namespace()
	}
	if ns == "" {
		return "", fmt.Errorf("%s: integration %s: set ref.namespace", where, ref.Name)
	}
	c.callsIntegration = true
	uri, err := appendQuery(IntegrationURL(ns, ref.Name), props)
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	return uri, nil
}

// IntegrationURL is the URL a binding calls an Integration at: its Service, port 80.
func IntegrationURL(namespace, name string) string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local/", name, namespace)
}

// decodeProperties reads an endpoint's properties, keeping numbers as written.
func decodeProperties(raw *camelv1.RawObject) (map[string]any, error) {
	props := map[string]any{}
	if raw == nil || len(bytes.TrimSpace(raw.Raw)) == 0 || string(bytes.TrimSpace(raw.Raw)) == "null" {
		return props, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw.Raw))
	d.UseNumber()
	if err := d.Decode(&props); err != nil || props == nil {
		return nil, errors.New("properties must be an object of name: value")
	}
	return props, nil
}

// appendQuery appends props to uri as query parameters, sorted by name and URL-encoded.
// Values must be scalars; null values are skipped.
func appendQuery(uri string, props map[string]any) (string, error) {
	var params []string
	for _, name := range slices.Sorted(maps.Keys(props)) {
		var v string
		switch t := props[name].(type) {
		case nil:
			continue
		case string:
			v = t
		case json.Number:
			v = t.String()
		case bool:
			v = fmt.Sprint(t)
		default:
			return "", fmt.Errorf("property %q must be a string, a number or a boolean to go into the URI", name)
		}
		params = append(params, url.QueryEscape(name)+"="+url.QueryEscape(v))
	}
	if len(params) == 0 {
		return uri, nil
	}
	sep := "?"
	switch {
	case strings.HasSuffix(uri, "?") || strings.HasSuffix(uri, "&"):
		sep = ""
	case strings.Contains(uri, "?"):
		sep = "&"
	}
	return uri + sep + strings.Join(params, "&"), nil
}
