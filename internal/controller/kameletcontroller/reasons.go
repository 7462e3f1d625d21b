package kameletcontroller

import "github.com/caravan-dev/caravan/internal/controller"

// The reasons of a Kamelet's conditions, besides the problems kamelet.Validate names.
const (
	// ReasonValid is the reason of the Ready condition of a valid Kamelet.
	ReasonValid controller.Reason = "Valid"
)
