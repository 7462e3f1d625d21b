package pipecontroller

import "github.com/caravan-dev/caravan/internal/controller"

// The reasons of a binding's conditions; once its Integration is current, the binding carries
// the Integration's Ready reason.
const (
	// Waits, and bad input.
	ReasonKameletNotFound controller.Reason = "KameletNotFound"
	ReasonInvalidBinding  controller.Reason = "InvalidBinding"
	ReasonNameConflict    controller.Reason = "NameConflict"
	ReasonPreviousDeleted controller.Reason = "PreviousIntegrationDeleting"
	// Waits for the generated Integration.
	ReasonIntegrationApplied     controller.Reason = "IntegrationApplied"
	ReasonIntegrationReconciling controller.Reason = "IntegrationReconciling"
	ReasonIntegrationNotReady    controller.Reason = "IntegrationNotReady"
	// ReasonDataTypesNotApplied: the endpoints name data types, which take no effect (DataTypesIgnored).
	ReasonDataTypesNotApplied controller.Reason = "DataTypesNotApplied"
)
