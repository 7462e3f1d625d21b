// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package v1

// Well-known annotation and label keys, shared with Camel K.
const (
	// OperatorIDAnnotation names the operator a resource is assigned to. The same key is
	// used as a label, mirrored from the annotation, so operators can watch by selector.
	OperatorIDAnnotation = "camel.apache.org/operator.id"
	// OperatorIDLabel is the label mirror of OperatorIDAnnotation (same key).
	OperatorIDLabel = OperatorIDAnnotation
	// IntegrationProfileAnnotation names the IntegrationProfile whose defaults Camel K applies to
	// an integration, between its platform's and its own, as Caravan does too.
	IntegrationProfileAnnotation = "camel.apache.org/integration-profile.id"
	// IntegrationProfileNamespaceAnnotation names the namespace of that IntegrationProfile; the
	// integration's own when unset.
	IntegrationProfileNamespaceAnnotation = "camel.apache.org/integration-profile.namespace"

	// DontRunAfterBuildAnnotation, "true" on an Integration or a Pipe, stops it built, undeployed.
	// It stays at phase Build Complete until a client asks for a deploy by writing the phase
	// Deploying, as `kamel deploy` and `caravan deploy` do.
	DontRunAfterBuildAnnotation = "camel.apache.org/dont-run-after-build"

	// IntegrationLabel names the Integration a child resource belongs to.
	IntegrationLabel = "camel.apache.org/integration"

	// IntegrationKitTypeLabel tells how a kit came to be (see the IntegrationKitType values).
	IntegrationKitTypeLabel = "camel.apache.org/kit.type"
	// IntegrationKitTypePlatform marks a kit built by the operator.
	IntegrationKitTypePlatform = "platform"
	// IntegrationKitTypeExternal marks a kit that wraps an image built elsewhere.
	IntegrationKitTypeExternal = "external"

	// KameletTypeLabel tells whether a Kamelet is a source, a sink or an action.
	KameletTypeLabel = "camel.apache.org/kamelet.type"
	// KameletTypeSource marks a Kamelet that produces messages.
	KameletTypeSource = "source"
	// KameletTypeSink marks a Kamelet that consumes messages.
	KameletTypeSink = "sink"
	// KameletTypeAction marks a Kamelet used as an intermediate step.
	KameletTypeAction = "action"

	// CreatedByKindLabel records the kind of the resource that created this one.
	CreatedByKindLabel = "camel.apache.org/created.by.kind"
	// CreatedByNameLabel records the name of the resource that created this one.
	CreatedByNameLabel = "camel.apache.org/created.by.name"
)

// Condition types shared by all kinds, compatible with kstatus.
const (
	// ConditionReady is True when the resource has reached its desired state.
	ConditionReady = "Ready"
	// ConditionReconciling is set, True, only while the controller is making progress.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is set, True, only when progress needs a user's action.
	ConditionStalled = "Stalled"
	// ConditionOperatorAvailable is set, False, on a resource whose
	// operator is not registered, not live, or does not serve its
	// namespace (an orphan); it goes when the owner reconciles it again.
	ConditionOperatorAvailable = "OperatorAvailable"
	// ConditionTraitsIgnored is set, True, on an Integration that sets traits
	// Caravan keeps as written and does not act on, or that no Camel K trait has;
	// its message names them.
	ConditionTraitsIgnored = "TraitsIgnored"
	// ConditionCronJobAvailable is set on an Integration with scheduled consumers, as Camel K
	// sets it: True when it runs as the cron trait's CronJob, False when its cron: consumers
	// fall back to a Deployment.
	ConditionCronJobAvailable = "CronJobAvailable"
)
