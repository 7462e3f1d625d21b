// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package pipe compiles the spec of a Pipe (or of a KameletBinding, its older name) into
// the spec of the Integration that runs it, the way Camel K does. It is pure: Kamelets are
// looked up through a Resolver, and the same input gives byte-identical output.
//
// The Integration has one route, in the YAML DSL, with the id "binding":
//
//	flows:
//	- route:
//	    id: binding
//	    from:
//	      uri: kamelet:timer-source/source
//	      steps:
//	      - kamelet: {name: insert-header-action/action-0}
//	      - to: kamelet:log-sink/sink
//
// Endpoints translate as follows.
//   - A ref to a Kamelet (kind Kamelet, group camel.apache.org; an empty apiVersion is
//     read as that group) becomes kamelet:<name>/<id>, where the id is "source", "sink",
//     "action-<index>" for steps and "error-handler" for an error handler sink, unless the
//     endpoint sets the property "id". A step calls an action Kamelet with the kamelet EIP.
//     The endpoint's properties, checked against the Kamelet's definition with defaults
//     applied, become the runtime properties camel.kamelet.<name>.<id>.<property>=<value>.
//     The Resolver decides where Kamelets are found, given the ref's namespace. A Kamelet it
//     does not find is called all the same, with its properties as written, for the runtime
//     to find on its classpath, as on Camel K.
//   - A ref to an Integration (kind Integration, group camel.apache.org) is called over
//     HTTP on its Service: http://<name>.<namespace>.svc.cluster.local/ (the namespace is
//     the ref's, else the binding's), with the endpoint's properties as query parameters.
//     It can be a step or a sink, not a source; the target must expose an HTTP endpoint
//     (its service trait). Camel K uses Knative for this; Caravan does not need it.
//   - A uri endpoint is the URI with the endpoint's properties appended as query
//     parameters, sorted by name and URL-encoded.
//
// Endpoint dataTypes are kept in the Pipe as written and not acted on (Compiled names them): the
// data-type-action Kamelet of camel-kamelets 4.18.0, which Camel K calls for them, does not start
// on camel-main 4.18 ("No transformer from: null to:null").
//
// The error handler (Camel K's shapes: none, log with parameters, sink with an endpoint
// and parameters) becomes a flow before the route, as Camel K writes it: noErrorHandler,
// defaultErrorHandler or deadLetterChannel. Parameters that are redelivery options
// (maximumRedeliveries, redeliveryDelay, ...) go under redeliveryPolicy, the others are
// options of the handler; an unknown parameter is an error. Since an Integration made from
// a Pipe runs only the binding's route, this global handler is the route's handler.
//
// The Integration spec is spec.integration (deprecated in Camel K) with, over it: the
// generated flows first and its own flows after them; spec.replicas and
// spec.serviceAccountName when set; spec.traits merged trait by trait (top-level keys of
// the Pipe's trait win); the Kamelet properties, sorted, before the camel trait's own
// properties (so that properties written by the user win, the last entry of a key being
// the one the runtime keeps); the dependencies of the base, of the Pipe and of every
// Kamelet used, plus camel:kamelet when a Kamelet is used and camel:http when an
// Integration is called, sorted and deduplicated; and one source per Kamelet used, named
// <kamelet>.kamelet.yaml, holding the Kamelet resource in YAML (name, type label,
// definition, dependencies, template). The runtime loads *.kamelet.yaml files from
// /etc/camel/sources as route templates, so no Kamelet catalog is needed in the pod.
package pipe

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// RouteID is the id of the route a binding compiles to, as in Camel K.
const RouteID = "binding"

// ErrKameletNotFound is the error a Resolver wraps when it finds no Kamelet by a name.
var ErrKameletNotFound = errors.New("kamelet not found")

// NotFound returns ErrKameletNotFound wrapped with the Kamelet's name and, when given,
// the namespaces that were searched.
func NotFound(name string, namespaces ...string) error {
	if len(namespaces) == 0 {
		return fmt.Errorf("%w: %q", ErrKameletNotFound, name)
	}
	return fmt.Errorf("%w: %q in namespaces %s", ErrKameletNotFound, name, strings.Join(namespaces, ", "))
}

// Resolver looks up what a binding refers to. The caller implements it over the API:
// Kamelets in the binding's namespace first, then in the operator's namespace.
type Resolver interface {
	// Namespace is the binding's namespace, where Integration refs without a namespace are.
	Namespace() string
	// Kamelet returns the Kamelet named name, or an error wrapping ErrKameletNotFound (see
	// NotFound) when there is none. namespace is the ref's, "" when it names none.
	Kamelet(name, namespace string) (*camelv1.Kamelet, error)
}

// Compiled is a compiled binding.
type Compiled struct {
	// Spec is the spec of the Integration that runs the binding.
	Spec camelv1.IntegrationSpec
	// MissingKamelets are the Kamelets the Resolver did not find, in order, each with the version
	// an endpoint names when it names one, which is dropped. As on Camel K, they
	// are called all the same, with their properties as written, for the runtime to find them
	// on its classpath.
	MissingKamelets []string
	// IgnoredDataTypes are the endpoints' data type slots, which are not acted on (see the
	// package's doc), each as endpoint.dataTypes.slot, in the binding's order.
	IgnoredDataTypes []string
}

// Compile compiles the binding spec. On error it returns nothing and an error naming every
// endpoint at fault (source, sink, steps[i], errorHandler), the Kamelet and the property.
func Compile(spec camelv1.PipeSpec, r Resolver) (Compiled, error) {
	c := newCompiler(r)
	out, err := c.compile(spec)
	if err != nil {
		return Compiled{}, err
	}
	return Compiled{Spec: out, MissingKamelets: c.missing, IgnoredDataTypes: ignoredDataTypes(spec)}, nil
}

// ignoredDataTypes are the data type slots the endpoints of spec name, as endpoint.dataTypes.slot.
func ignoredDataTypes(spec camelv1.PipeSpec) []string {
	var out []string
	add := func(where string, e camelv1.Endpoint) {
		for _, slot := range slices.Sorted(maps.Keys(e.DataTypes)) {
			out = append(out, where+".dataTypes."+slot)
		}
	}
	add("source", spec.Source)
	for i, e := range spec.Steps {
		add(fmt.Sprintf("steps[%d]", i), e)
	}
	add("sink", spec.Sink)
	return out
}

// compile returns the spec of the Integration that runs the binding spec.
func (c *compiler) compile(spec camelv1.PipeSpec) (camelv1.IntegrationSpec, error) {
	c.given = readRuntimeGiven(spec)
	var errs []error
	from, err := c.endpoint(roleSource, "source", spec.Source, 0)
	errs = append(errs, err)
	var steps []any
	for i, s := range spec.Steps {
		step, err := c.stepEndpoint(i, s)
		errs = append(errs, err)
		steps = append(steps, step)
	}
	to, err := c.endpoint(roleSink, "sink", spec.Sink, 0)
	errs = append(errs, err)
	steps = append(steps, map[string]any{"to": to})
	handler, err := c.errorHandler(spec.ErrorHandler)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return camelv1.IntegrationSpec{}, err
	}
	route := map[string]any{"route": map[string]any{
		"id":   RouteID,
		"from": map[string]any{"uri": from, "steps": steps},
	}}
	var flows []camelv1.RawObject
	for _, f := range []map[string]any{handler, route} {
		if f == nil {
			continue
		}
		raw, err := json.Marshal(f)
		if err != nil {
			return camelv1.IntegrationSpec{}, fmt.Errorf("cannot encode the route: %w", err)
		}
		flows = append(flows, rawObject(raw))
	}
	return c.integration(spec, flows)
}

// stepEndpoint translates steps[i] into a step of the route.
func (c *compiler) stepEndpoint(i int, e camelv1.Endpoint) (any, error) {
	uri, err := c.endpoint(roleAction, fmt.Sprintf("steps[%d]", i), e, i)
	if err != nil {
		return nil, err
	}
	if name, ok := strings.CutPrefix(uri, "kamelet:"); ok && e.Ref != nil && e.Ref.Kind == kindKamelet {
		return map[string]any{"kamelet": map[string]any{"name": name}}, nil
	}
	return map[string]any{"to": uri}, nil
}

func rawObject(raw []byte) camelv1.RawObject {
	var r camelv1.RawObject
	r.Raw = raw
	return r
}
