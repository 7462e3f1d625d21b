// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// Names of the Camel Quarkus provider: Caravan's, and Camel K's plain-quarkus, which is the same.
const (
	QuarkusProviderName      = "quarkus"
	PlainQuarkusProviderName = "plain-quarkus"
)

// Quarkus is Camel Quarkus in JVM mode, as Camel K's plain-quarkus runs it: a kit is an
// application Quarkus' Maven plugin builds on the Quarkus platform's BOMs, in its fast-jar
// layout, which reads the integration's routes and properties when it starts.
var Quarkus Provider = camelQuarkus{}

// Camel Quarkus' runtime contract, as Camel K's Quarkus runtime has it.
const (
	// DefaultQuarkusVersion is the Quarkus platform version of a Quarkus kit that names none:
	// Camel Quarkus 3.31.0 on Camel 4.17.0, the newest line whose extensions all resolve from
	// the Maven repositories Caravan is tested against.
	DefaultQuarkusVersion = "3.31.2"
	// QuarkusPlatformGroup is the group of the Quarkus platform's BOMs and plugin.
	QuarkusPlatformGroup = "io.quarkus.platform"
	// CamelQuarkusGroup is the group of Camel Quarkus' extensions.
	CamelQuarkusGroup = "org.apache.camel.quarkus"
	// QuarkusEntryPoint is the fast-jar's main class.
	QuarkusEntryPoint = "io.quarkus.bootstrap.runner.QuarkusEntryPoint"
	// EnvQuarkusConfigLocations names the files Quarkus reads its configuration from.
	EnvQuarkusConfigLocations = "QUARKUS_CONFIG_LOCATIONS"
	// quarkusOutput is the fast-jar's directory in the Maven project.
	quarkusOutput = "target/quarkus-app"
)

type camelQuarkus struct{}

func (camelQuarkus) Name() string { return QuarkusProviderName }

func (camelQuarkus) DefaultVersion() string { return DefaultQuarkusVersion }

// CheckVersion takes a Quarkus platform version of 3.0 or later, as Camel K's plain-quarkus does.
// A version of Camel K's own runtime, or of Camel, is refused, naming what to write instead.
func (camelQuarkus) CheckVersion(v string) error {
	parsed, err := utilversion.ParseGeneric(v)
	if err != nil || strings.ContainsAny(v, " /\\") {
		return fmt.Errorf("%q is no Quarkus platform version: name one such as %s, Caravan's", v, DefaultQuarkusVersion)
	}
	if camel, ok := camelKRuntimes[v]; ok {
		return fmt.Errorf("%s names Camel K's runtime %s (camel-k-runtime, Camel %s), which Caravan does not build: "+
			"Quarkus kits are built on the Quarkus platform's BOMs, as Camel K's plain-quarkus builds them: "+
			"name a Quarkus platform version such as %s (Caravan's), or leave it unset", v, v, camel, DefaultQuarkusVersion)
	}
	if parsed.Major() != 3 {
		return fmt.Errorf("%s is no Quarkus platform version: the quarkus provider takes the version of the Quarkus platform "+
			"(io.quarkus.platform:quarkus-camel-bom), 3.x, which sets Camel's: name one such as %s (Caravan's), or leave it unset",
			v, DefaultQuarkusVersion)
	}
	return nil
}

// BOMs are the Quarkus platform's Camel BOM, then its Quarkus BOM, as Camel K imports them.
func (camelQuarkus) BOMs(version string) []Coordinate {
	return []Coordinate{
		{GroupID: QuarkusPlatformGroup, ArtifactID: "quarkus-camel-bom", Version: version, Type: "pom"},
		{GroupID: QuarkusPlatformGroup, ArtifactID: "quarkus-bom", Version: version, Type: "pom"},
	}
}

// Modules are the extensions of camel-main's modules: the YAML and XML DSLs, Kamelets, health
// checks on Quarkus' HTTP server, the timer and the log. The Java DSL is left out: its extension
// is not served for every platform version; an integration of Java routes names camel:java-joor-dsl.
func (p camelQuarkus) Modules() []Coordinate {
	var out []Coordinate
	for _, m := range []string{"core", "yaml-dsl", "xml-io-dsl", "kamelet", "microprofile-health", "timer", "log"} {
		out = append(out, p.Component(m))
	}
	return out
}

// Component is Camel Quarkus' extension of the component.
func (camelQuarkus) Component(name string) Coordinate {
	return Coordinate{GroupID: CamelQuarkusGroup, ArtifactID: "camel-quarkus-" + name}
}

// Build is Quarkus' Maven plugin of the platform's version, into the fast-jar layout.
func (camelQuarkus) Build(version string) *Build {
	return &Build{
		Plugin:     Coordinate{GroupID: QuarkusPlatformGroup, ArtifactID: "quarkus-maven-plugin", Version: version},
		Goal:       "build",
		Properties: []string{"quarkus.package.jar.type=fast-jar"},
		Application: []string{
			"quarkus.banner.enabled=false",
			// The routes are the integration's, read at start from SourcesDir.
			"quarkus.camel.routes-discovery.enabled=false",
		},
		Output: quarkusOutput,
	}
}

// Env points Quarkus at the properties file of the runtime contract, then at the --config
// directories, whose *.properties files Quarkus reads as its own configuration too.
func (camelQuarkus) Env(s Settings) []EnvVar {
	return []EnvVar{{Name: EnvQuarkusConfigLocations, Value: strings.Join(append([]string{PropertiesPath}, s.ConfigDirs...), ",")}}
}

// PortProperty is Quarkus' HTTP port: the container's port and the probes follow it.
func (camelQuarkus) PortProperty() string { return "quarkus.http.port" }

// Command is java with the JVM options (the archive's last), the classpath (the entries, then
// the fast-jar's directories as Camel K lists them, or the kit's classpath jar that lists their
// jars) and the fast-jar's main class.
func (camelQuarkus) Command(l Launch) (command, args []string) {
	kit := []string{DependenciesDir + "/*", DependenciesDir + "/app/*", DependenciesDir + "/lib/boot/*", DependenciesDir + "/lib/main/*"}
	if l.KitClasspathJar {
		kit = []string{ClasspathJar}
	}
	var cp []string
	for _, e := range append(slices.Clone(l.Classpath), kit...) {
		if !slices.Contains(cp, e) {
			cp = append(cp, e)
		}
	}
	args = slices.Clone(l.JVMOptions)
	if l.Archive != "" {
		args = append(args, ArchiveOption+l.Archive)
	}
	args = append(args, "-cp", strings.Join(cp, ":"), QuarkusEntryPoint)
	return slices.Clone(JavaCommand), args
}

// ClasspathJars are the jars of the fast-jar's directories that Command's classpath names: its
// top directory, app, lib/boot and lib/main; the others are the entry point's to load.
func (camelQuarkus) ClasspathJars(locations []string) []string {
	var jars []string
	for _, l := range locations {
		dir := strings.TrimPrefix(path.Dir(l), DependenciesDir)
		if strings.HasSuffix(l, ".jar") && slices.Contains([]string{"", "/app", "/lib/boot", "/lib/main"}, dir) {
			jars = append(jars, l)
		}
	}
	return jars
}

// Properties are camel-main's, which Camel Quarkus reads too, with Quarkus' HTTP server in
// place of camel-main's servers: it serves HTTP routes, health and metrics on one port.
func (camelQuarkus) Properties(s Settings) []string {
	props := []string{
		"camel.main.routes-include-pattern=file:" + SourcesDir + "/*",
		"camel.main.source-location-enabled=true",
		"camel.main.shutdownTimeout=" + strconv.FormatInt(s.ShutdownTimeout, 10),
		"camel.component.kamelet.location=file:" + SourcesDir + ",classpath:kamelets",
		"camel.component.kamelet.noErrorHandler=false",
	}
	if len(s.ConfigDirs) > 0 {
		props = append(props, "camel.main.cloud-properties-location="+strings.Join(s.ConfigDirs, ","))
	}
	if s.OneShot {
		props = append(props, "camel.main.durationMaxMessages=1")
	}
	return append(props,
		"quarkus.http.port="+strconv.Itoa(int(s.HTTPPort)),
		// Quarkus' own expansion: the pod's address, else every address.
		"quarkus.http.host=${"+EnvPodIP+":0.0.0.0}",
	)
}

// Health is SmallRye Health on Quarkus' HTTP server, where Camel K probes a Quarkus runtime.
func (camelQuarkus) Health(httpPort int32) Health {
	return Health{Port: httpPort, Liveness: "/q/health/live", Readiness: "/q/health/ready", Startup: "/q/health/started"}
}

// Metrics are Micrometer's Prometheus registry on Quarkus' HTTP server (Port 0), with Camel's meters.
func (camelQuarkus) Metrics() Metrics {
	return Metrics{Path: "/q/metrics",
		Dependencies: []string{"camel:micrometer", "mvn:io.quarkus:quarkus-micrometer-registry-prometheus"}}
}

// Training is camel-main's routes with Camel Quarkus' properties: Camel Quarkus stops Quarkus
// after the one message too, so that the archive holds Quarkus' start and the first exchange.
func (p camelQuarkus) Training() map[string][]byte { return training(p) }
