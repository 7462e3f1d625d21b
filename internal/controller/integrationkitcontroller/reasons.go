package integrationkitcontroller

import "github.com/caravan-dev/caravan/internal/controller"

// The reasons of an IntegrationKit's conditions; while its Build runs,
// the kit carries the Build's reason.
const (
	ReasonExternalImage  controller.Reason = "ExternalImage"
	ReasonInvalidKit     controller.Reason = "InvalidKit"
	ReasonBuildSubmitted controller.Reason = "BuildSubmitted"
	ReasonBuilt          controller.Reason = "Built"
)
