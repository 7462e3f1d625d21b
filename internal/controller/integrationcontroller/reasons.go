package integrationcontroller

import "github.com/caravan-dev/caravan/internal/controller"

// The reasons of an Integration's conditions.
const (
	// Waits.
	ReasonPlatformNotReady controller.Reason = "PlatformNotReady"
	ReasonKitBuilding      controller.Reason = "KitBuilding"
	ReasonKitNotReady      controller.Reason = "KitNotReady"
	ReasonKameletNotFound  controller.Reason = "KameletNotFound"
	// ReasonProfileNotFound: the IntegrationProfile the integration names does not exist.
	ReasonProfileNotFound controller.Reason = "ProfileNotFound"
	// Bad input, or a refusal an administrator must resolve.
	ReasonInvalidTrait      controller.Reason = "InvalidTrait"
	ReasonInvalidSpec       controller.Reason = "InvalidSpec"
	ReasonInvalidSource     controller.Reason = "InvalidSource"
	ReasonInvalidImage      controller.Reason = "InvalidImage"
	ReasonInvalidDependency controller.Reason = "InvalidDependency"
	// ReasonInvalidRepository: an entry of spec.repositories is not a repository in Camel K's form.
	ReasonInvalidRepository controller.Reason = "InvalidRepository"
	// ReasonInvalidRuntimeVersion: the platform names a runtime version its provider cannot build
	// with (a Camel K runtime's, say).
	ReasonInvalidRuntimeVersion controller.Reason = "InvalidRuntimeVersion"
	// ReasonInvalidRuntimeProvider: the platform names a runtime provider this operator has not.
	ReasonInvalidRuntimeProvider controller.Reason = "InvalidRuntimeProvider"
	ReasonNoSources              controller.Reason = "NoSources"
	ReasonKitRefused             controller.Reason = "KitRefused"
	ReasonKitNotFound            controller.Reason = "KitNotFound"
	ReasonNameConflict           controller.Reason = "NameConflict"
	ReasonKameletInvalid         controller.Reason = "KameletInvalid"
	// Built, and deployed only on request (dont-run-after-build).
	ReasonBuildComplete controller.Reason = "BuildComplete"
	// Traits kept as written and not acted on (the TraitsIgnored condition).
	ReasonTraitsNotActedOn controller.Reason = "TraitsNotActedOn"
	ReasonUnknownTraits    controller.Reason = "UnknownTraits"
	// A child another operator took, restored (a Warning Event).
	ReasonChildTakenBack = "ChildTakenBack"
	// ReasonRetrying: a step fails (an apply the API server refuses, say) and is retried.
	ReasonRetrying controller.Reason = "Retrying"
	// The Deployment's rollout.
	ReasonDeploying          controller.Reason = "Deploying"
	ReasonDeploymentReady    controller.Reason = "DeploymentReady"
	ReasonDeploymentNotReady controller.Reason = "DeploymentNotReady"
	// A pod's container exits with an error, or the kubelet cannot start it.
	ReasonCrashing       controller.Reason = "Crashing"
	ReasonPodNotStarting controller.Reason = "PodNotStarting"
	// ReasonOutOfMemory: the kernel killed a pod's container for using more than its memory limit.
	ReasonOutOfMemory controller.Reason = "OutOfMemory"
	// ReasonVolumesNotMounted: a pod waits for volumes the kubelet cannot mount, such as a ConfigMap
	// or Secret that does not exist.
	ReasonVolumesNotMounted controller.Reason = "VolumesNotMounted"
	// ReasonRuntimeNotReady: the runtime of a running pod answers that some of its readiness
	// checks fail, as Camel K's reason says.
	ReasonRuntimeNotReady controller.Reason = "RuntimeNotReady"
	// The Ready reasons of an integration that runs as the cron trait's CronJob, as Camel K's.
	ReasonCronJobCreated   controller.Reason = "CronJobCreated"
	ReasonCronJobActive    controller.Reason = "CronJobActive"
	ReasonLastJobSucceeded controller.Reason = "LastJobSucceeded"
	ReasonLastJobFailed    controller.Reason = "LastJobFailed"
	// The CronJobAvailable reasons, Camel K's: the integration runs as a CronJob, or its cron:
	// consumers fall back to a Deployment.
	ReasonCronJobAvailable    controller.Reason = "CronJobAvailableReason"
	ReasonCronJobNotAvailable controller.Reason = "CronJobNotAvailableReason"
	// ReasonSourceNotFound: a contentRef source names a ConfigMap or key that does not exist.
	ReasonSourceNotFound controller.Reason = "SourceNotFound"
)

// awaitsKit are the waits that show as phase Building Kit: the
// integration's kit is awaited.
var awaitsKit = map[controller.Reason]bool{ReasonKitBuilding: true, ReasonKitNotReady: true}
