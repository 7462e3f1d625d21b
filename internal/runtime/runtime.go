// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

// Package runtime says what runs in an integration's container: the paths of the runtime
// contract, the dependency grammar, the providers (camel-main and Camel Quarkus) with their
// Maven projects, command lines and properties, and the images kits are layered onto.
//
// It is the one place those facts live: rendering, the Maven project, the builder pod, the
// kit controller, the CLI and the images ask it. It imports no controller and no client.
package runtime

// The container layout of the runtime contract, as in Camel K's images.
const (
	// DeploymentsDir is the runtime's working directory.
	DeploymentsDir = "/deployments"
	// DependenciesDir holds a kit's jars.
	DependenciesDir = DeploymentsDir + "/dependencies"
	// ClasspathJar is a kit's jar whose manifest lists the kit's jars, in the order its
	// class-data-sharing archive, ArchivePath, was made with.
	ClasspathJar = DeploymentsDir + "/kit-classpath.jar"
	// ArchivePath is a kit's class-data-sharing archive of the classes its training start loaded.
	ArchivePath = DeploymentsDir + "/kit.jsa"

	// CamelDir holds what the operator mounts: sources, properties, configurations, resources.
	CamelDir = "/etc/camel"
	// SourcesDir holds the integration's sources and flows, and the Kamelets it uses.
	SourcesDir = CamelDir + "/sources"
	// PropertiesPath is the properties file the runtime loads.
	PropertiesPath = CamelDir + "/application.properties"
	// ConfDDir holds the --config ConfigMaps and Secrets, whose properties the runtime reads.
	ConfDDir = CamelDir + "/conf.d"
	// ConfigConfigMapsDir and ConfigSecretsDir hold --config configmap: and secret: entries.
	ConfigConfigMapsDir = ConfDDir + "/_configmaps"
	ConfigSecretsDir    = ConfDDir + "/_secrets"
	// ResourcesDDir holds the --resource ConfigMaps and Secrets, which are on the classpath.
	ResourcesDDir = CamelDir + "/resources.d"
	// ResourceConfigMapsDir and ResourceSecretsDir hold --resource configmap: and secret: entries.
	ResourceConfigMapsDir = ResourcesDDir + "/_configmaps"
	ResourceSecretsDir    = ResourcesDDir + "/_secrets"
	// KitDir holds the files that describe a kit in its image: its dependencies and settings.
	KitDir = CamelDir + "/kit/"

	// EnvPodIP is the variable holding the pod's address, which the runtime's servers bind to.
	EnvPodIP = "POD_IP"
)

// Defaults of the runtime a platform that names none runs.
const (
	// DefaultCamelVersion is the version of Camel's BOM that kits resolve: an LTS line
	// whose every runtime module Maven serves.
	DefaultCamelVersion = "4.18.0"
	// DefaultProvider names the provider of a platform that names none: camel-main.
	DefaultProvider = MainProviderName
)
