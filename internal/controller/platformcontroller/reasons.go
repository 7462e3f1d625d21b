package platformcontroller

import "github.com/caravan-dev/caravan/internal/controller"

// The reasons of an IntegrationPlatform's conditions.
const (
	// ReasonResolved is the reason of a platform whose settings are resolved into its status.
	ReasonResolved controller.Reason = "Resolved"
)
