// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package pipe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// redeliveryOptions are the parameters that go under redeliveryPolicy in the YAML DSL.
var redeliveryOptions = []string{
	"allowRedeliveryWhileStopping", "asyncDelayedRedelivery", "backOffMultiplier",
	"collisionAvoidanceFactor", "delayPattern", "disableRedelivery", "exchangeFormatterRef",
	"logContinued", "logExhausted", "logExhaustedMessageBody", "logExhaustedMessageHistory",
	"logHandled", "logNewException", "logRetryAttempted", "logRetryStackTrace", "logStackTrace",
	"maximumRedeliveries", "maximumRedeliveryDelay", "redeliveryDelay",
	"retriesExhaustedLogLevel", "retryAttemptedLogInterval", "retryAttemptedLogLevel",
	"useCollisionAvoidance", "useExponentialBackOff",
}

// handlerOptions are the parameters that are options of the error handler itself.
var handlerOptions = []string{
	"executorServiceRef", "level", "logName", "loggerRef", "onExceptionOccurredRef",
	"onPrepareFailureRef", "onRedeliveryRef", "redeliveryPolicyRef", "retryWhileRef",
	"useOriginalBody", "useOriginalMessage",
}

// deadLetterOptions are the options only a dead letter channel has.
var deadLetterOptions = []string{"deadLetterHandleNewException"}

// errorHandlerSpec is Camel K's error handler: one of none, log or sink.
type errorHandlerSpec struct {
	None json.RawMessage `json:"none"`
	Log  *struct {
		Parameters map[string]any `json:"parameters"`
	} `json:"log"`
	Sink *struct {
		Endpoint   *camelv1.Endpoint `json:"endpoint"`
		Parameters map[string]any    `json:"parameters"`
	} `json:"sink"`
}

// errorHandler translates spec.errorHandler into an errorHandler flow, or nil when unset.
func (c *compiler) errorHandler(raw *camelv1.RawObject) (map[string]any, error) {
	if raw == nil || len(bytes.TrimSpace(raw.Raw)) == 0 || string(bytes.TrimSpace(raw.Raw)) == "null" {
		return nil, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw.Raw, &keys); err != nil || len(keys) != 1 {
		return nil, fmt.Errorf("errorHandler: set exactly one of none, log or sink")
	}
	var spec errorHandlerSpec
	d := json.NewDecoder(bytes.NewReader(raw.Raw))
	d.UseNumber()
	d.DisallowUnknownFields()
	if err := d.Decode(&spec); err != nil {
		return nil, fmt.Errorf("errorHandler: %w (Caravan reads none, log.parameters, sink.endpoint and sink.parameters)", err)
	}
	var handler map[string]any
	var err error
	switch {
	case keys["none"] != nil:
		handler = map[string]any{"noErrorHandler": map[string]any{}}
	case keys["log"] != nil:
		opts := map[string]any{}
		if spec.Log != nil {
			opts, err = handlerParameters("errorHandler.log.parameters", spec.Log.Parameters, false)
		}
		handler = map[string]any{"defaultErrorHandler": opts}
	case spec.Sink != nil:
		handler, err = c.deadLetterChannel(spec.Sink.Endpoint, spec.Sink.Parameters)
	default:
		err = fmt.Errorf("errorHandler.sink: set endpoint, the Kamelet or uri failed messages go to")
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"errorHandler": handler}, nil
}

// deadLetterChannel sends failed messages to the sink endpoint.
func (c *compiler) deadLetterChannel(e *camelv1.Endpoint, params map[string]any) (map[string]any, error) {
	if e == nil {
		return nil, fmt.Errorf("errorHandler.sink: set endpoint, the Kamelet or uri failed messages go to")
	}
	uri, err := c.endpoint(roleErrorHandler, "errorHandler.sink.endpoint", *e, 0)
	if err != nil {
		return nil, err
	}
	opts, err := handlerParameters("errorHandler.sink.parameters", params, true)
	if err != nil {
		return nil, err
	}
	opts["deadLetterUri"] = uri
	return map[string]any{"deadLetterChannel": opts}, nil
}

// handlerParameters sorts Camel K's flat parameters into handler options and a
// redeliveryPolicy. An unknown parameter is an error naming it.
func handlerParameters(where string, params map[string]any, deadLetter bool) (map[string]any, error) {
	opts := map[string]any{}
	policy := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		v := params[name]
		switch {
		case v == nil:
		case slices.Contains(redeliveryOptions, name):
			policy[name] = v
		case slices.Contains(handlerOptions, name), deadLetter && slices.Contains(deadLetterOptions, name):
			opts[name] = v
		default:
			known := slices.Concat(redeliveryOptions, handlerOptions)
			if deadLetter {
				known = append(known, deadLetterOptions...)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("%s: unknown parameter %q (known: %s)", where, name, strings.Join(known, ", "))
		}
	}
	if len(policy) > 0 {
		opts["redeliveryPolicy"] = policy
	}
	return opts, nil
}
