package fleet

import "github.com/caravan-dev/caravan/internal/controller"

// The reasons of the Deployed condition, and of the Removed Event.
const (
	ReasonRolledOut            controller.Reason = "RolledOut"
	ReasonRollingOut           controller.Reason = "RollingOut"
	ReasonAwaitingRegistration controller.Reason = "AwaitingRegistration"
	ReasonInvalidSpec          controller.Reason = "InvalidSpec"
	ReasonApplyFailed          controller.Reason = "ApplyFailed"
	ReasonRolloutFailed        controller.Reason = "RolloutFailed"
	ReasonRegisteredElsewhere  controller.Reason = "RegisteredElsewhere"
	ReasonRemoved              controller.Reason = "Removed"
)

// The reasons of the Canary condition.
const (
	ReasonCanaryWaiting     controller.Reason = "AwaitingRollout"
	ReasonCanaryMoving      controller.Reason = "Moving"
	ReasonCanaryPaused      controller.Reason = "Paused"
	ReasonCanaryRollingBack controller.Reason = "RollingBack"
	ReasonCanarySucceeded   controller.Reason = "Succeeded"
	ReasonCanaryFailed      controller.Reason = "WaveFailed"
	ReasonCanaryRolledBack  controller.Reason = "RolledBack"
	ReasonCanaryInvalid     controller.Reason = "InvalidCanary"
)
