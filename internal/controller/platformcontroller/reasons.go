package platformcontroller

import "github.com/caravan-dev/caravan/internal/controller"

// The reasons of an IntegrationPlatform's conditions.
const (
	// ReasonResolved is the reason of a platform whose settings are resolved into its status.
	ReasonResolved controller.Reason = "Resolved"
	// ReasonInvalidBuildConfiguration is the reason of a platform whose build settings no build can
	// run with (a strategy Caravan does not run, a quantity that is none, Maven fields it refuses).
	ReasonInvalidBuildConfiguration controller.Reason = "InvalidBuildConfiguration"
	// The Kamelet catalog (KameletCatalogAvailable).
	ReasonCatalogBuilding       controller.Reason = "CatalogBuilding"
	ReasonCatalogNeedsPodBuilds controller.Reason = "CatalogNeedsPodBuilds"
	ReasonCatalogKitFailed      controller.Reason = "CatalogKitFailed"
	ReasonCatalogUnreadable     controller.Reason = "CatalogUnreadable"
	ReasonCatalogIncomplete     controller.Reason = "CatalogIncomplete"
	ReasonCatalogInstalled      controller.Reason = "CatalogInstalled"
	// ReasonKameletRepositoriesNotRead: spec.kamelet.repositories names Kamelet repositories, which
	// Caravan does not read (KameletsCatalogRepositoryDeprecated).
	ReasonKameletRepositoriesNotRead controller.Reason = "KameletRepositoriesNotRead"
)
