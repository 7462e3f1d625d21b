package buildcontroller

import "github.com/caravan-dev/caravan/internal/controller"

// The reasons of a Build's conditions, besides the image errors'
// (image.ReasonOf), which name what went wrong with a registry.
const (
	// Waits for configuration the user must fix.
	ReasonPlatformNotReady controller.Reason = "PlatformNotReady"
	// (controller.ReadRegistry's reasons: the platform's registry settings.)
	ReasonInvalidBuildConfiguration controller.Reason = "InvalidBuildConfiguration"
	ReasonMavenSettingsUnavailable  controller.Reason = "MavenSettingsUnavailable"
	ReasonMavenCAUnavailable        controller.Reason = "MavenCAUnavailable"
	// Bad input.
	ReasonInvalidBuild controller.Reason = "InvalidBuild"
	// An attempt's course.
	ReasonQueued      controller.Reason = "Queued"
	ReasonRunning     controller.Reason = "Running"
	ReasonSucceeded   controller.Reason = "Succeeded"
	ReasonBuildFailed controller.Reason = "BuildFailed"
	// A dependency that no repository holds, or that Camel's BOM does not know.
	ReasonDependencyUnresolved controller.Reason = "DependencyUnresolved"
)
