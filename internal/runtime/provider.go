// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Provider is one runtime a kit can hold: the Maven project that resolves its jars, the
// command line that starts it and the properties that wire it to the runtime contract.
// A platform picks it by name (spec.build.runtimeProvider).
type Provider interface {
	// Name is the value of spec.build.runtimeProvider that picks this provider.
	Name() string
	// DefaultVersion is the runtime version of a kit whose platform and traits name none.
	DefaultVersion() string
	// CheckVersion refuses a runtime version this provider cannot build with, saying what to name.
	CheckVersion(v string) error
	// BOMs are the Maven BOMs a kit's project imports for a runtime version, in order.
	BOMs(version string) []Coordinate
	// Modules are the jars every kit of this provider holds, besides the integration's.
	Modules() []Coordinate
	// Component is the artifact of the Camel component a dependency camel:NAME names.
	Component(name string) Coordinate
	// Build is the Maven plugin that builds a kit's application, nil when a kit is its jars alone.
	Build(version string) *Build
	// Env are variables of the main container the runtime reads its configuration through.
	Env(s Settings) []EnvVar
	// PortProperty is the property whose value, set by the user, moves the HTTP server, which
	// serves the health endpoints too; "" when the health endpoints do not move with it.
	PortProperty() string
	// Command is the main container's command and arguments. The arguments start with
	// l.JVMOptions, so that an option inserted after them (the heap) is still the JVM's.
	Command(l Launch) (command, args []string)
	// Properties are the runtime contract's properties, key=value, in the order written:
	// where the routes, Kamelets and configurations are, and where the servers listen.
	Properties(s Settings) []string
	// Health says where the runtime answers the health probes, given the port of its HTTP server.
	Health(httpPort int32) Health
	// Metrics says where the runtime serves Prometheus metrics, and what that takes.
	Metrics() Metrics
	// Training are the files of a kit's training start, by absolute path: routes that load
	// what every integration loads, with properties that stop the runtime after one message.
	Training() map[string][]byte
	// ClasspathJars are the kit's files, by location, that its classpath jar lists: the jars the
	// command line puts on the classpath when the kit has no archive.
	ClasspathJars(locations []string) []string
}

// Build is how Maven builds a kit's application from its project: a plugin's goal, with
// properties of the pom and of the application, into a directory the kit image holds.
type Build struct {
	// Plugin runs Goal in the package phase.
	Plugin Coordinate
	Goal   string
	// Properties are the pom's, key=value, in order.
	Properties []string
	// Application are build-time properties, key=value, written to the project's
	// src/main/resources/application.properties; the builder trait's come after them.
	Application []string
	// Output is the directory, relative to the project, whose files the kit image holds
	// under DependenciesDir.
	Output string
}

// EnvVar is a variable of the main container.
type EnvVar struct{ Name, Value string }

// Metrics is where a runtime serves its Prometheus metrics, and what it needs to.
type Metrics struct {
	// Port and Path are where a scraper reads them; Port 0 is the HTTP server's port.
	Port int32
	Path string
	// Dependencies are the modules that serve them, written as a dependency.
	Dependencies []string
}

// Launch is what an integration adds to its runtime's command line.
type Launch struct {
	// JVMOptions are the JVM's options (the jvm trait's), before anything else.
	JVMOptions []string
	// Classpath are entries put before the kit's jars (resources, mounted volumes, the jvm trait's).
	Classpath []string
	// KitClasspathJar puts the kit's jars on the classpath through ClasspathJar, in the order
	// its archive was made with, rather than as DependenciesDir/*, whose order the JVM does not fix.
	KitClasspathJar bool
	// Archive is the class-data-sharing archive the JVM maps, "" for none; it needs KitClasspathJar.
	Archive string
}

// Settings are what an integration decides of the runtime's properties.
type Settings struct {
	// ShutdownTimeout is how long the runtime waits for its routes to stop, in seconds.
	ShutdownTimeout int64
	// ConfigDirs are the directories of --config entries whose properties the runtime reads.
	ConfigDirs []string
	// HTTPPort is the port of the server that serves HTTP routes.
	HTTPPort int32
	// Metrics turns on the Prometheus metrics (the prometheus trait).
	Metrics bool
	// OneShot stops the runtime after one exchange: a CronJob's run (the cron trait).
	OneShot bool
}

// Health is where a runtime serves its health endpoints.
type Health struct {
	// Port is the port of the server that answers them.
	Port int32
	// Liveness, Readiness and Startup are the endpoints' paths.
	Liveness, Readiness, Startup string
}

// Providers are the providers Caravan runs, by name.
var providers = []Provider{Main, Quarkus}

// aliases are other names of a provider: Camel K's plain-quarkus is Caravan's quarkus.
var aliases = map[string]string{PlainQuarkusProviderName: QuarkusProviderName}

// ProviderNamed returns the provider called name; "" names DefaultProvider. A name Caravan
// has no provider for is an error that lists those it has.
func ProviderNamed(name string) (Provider, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = DefaultProvider
	}
	if alias, ok := aliases[name]; ok {
		name = alias
	}
	for _, p := range providers {
		if p.Name() == name {
			return p, nil
		}
	}
	names := make([]string, 0, len(providers))
	for _, p := range providers {
		names = append(names, p.Name())
	}
	return nil, fmt.Errorf("runtime provider %q is not one this operator runs: use %s", name, strings.Join(names, " or "))
}

// CheckVersionOfAny refuses a runtime version that no provider takes, for the default one's reason.
func CheckVersionOfAny(v string) error {
	var first error
	for _, p := range providers {
		err := p.CheckVersion(v)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// MainProviderName names camel-main, the provider of Camel's own main class.
const MainProviderName = "main"

// Main is camel-main: Camel's own main class on plain java, with the kit's jars on the
// classpath; no build step per kit and no downloads at run time.
var Main Provider = camelMain{}

// camelMain's contract, as Camel K's plain camel-main runtime has it.
const (
	// MainClass is camel-main's entry point.
	MainClass = "org.apache.camel.main.Main"
	// propertiesOption is camel-main's option that names the properties file to load.
	propertiesOption = "-propertiesLocation"
	// managementPort is the port of camel-main's management server, which serves the health endpoints.
	managementPort int32 = 9876
	// slf4jVersion is the logging binding's version; Camel's BOM does not pin one.
	slf4jVersion = "2.0.20"
	// listenHost is where the servers listen: the pod's address, else every address.
	listenHost = "{{env:" + EnvPodIP + ":0.0.0.0}}"
)

// ArchiveOption is the JVM's option that maps a class-data-sharing archive.
const ArchiveOption = "-XX:SharedArchiveFile="

// JavaCommand is the command of an integration that runs on a camel-main kit.
var JavaCommand = []string{"java"}

type camelMain struct{}

func (camelMain) Name() string { return MainProviderName }

func (camelMain) DefaultVersion() string { return DefaultCamelVersion }

func (camelMain) CheckVersion(v string) error { return CheckCamelVersion(v) }

func (camelMain) BOMs(camelVersion string) []Coordinate {
	return []Coordinate{{GroupID: CamelGroup, ArtifactID: "camel-bom", Version: camelVersion, Type: "pom"}}
}

func (camelMain) Component(name string) Coordinate {
	return Coordinate{GroupID: CamelGroup, ArtifactID: "camel-" + name}
}

// Build is nil: a camel-main kit is its jars, started by Camel's own main class.
func (camelMain) Build(string) *Build { return nil }

// Env is empty: camel-main reads its properties file from its command line.
func (camelMain) Env(Settings) []EnvVar { return nil }

// PortProperty is none: camel-main's health endpoints are on its management port, and a user
// who moves camel.server.port sets container.port too, as on Camel K.
func (camelMain) PortProperty() string { return "" }

// Modules are camel-main, the YAML, XML and Java DSLs, Kamelets, the HTTP and management
// server, health checks and the logging binding, without which log: prints nothing.
func (camelMain) Modules() []Coordinate {
	var out []Coordinate
	for _, m := range []string{"camel-main", "camel-yaml-dsl", "camel-xml-io-dsl", "camel-java-joor-dsl",
		"camel-kamelet", "camel-platform-http-main", "camel-health", "camel-timer", "camel-log"} {
		out = append(out, Coordinate{GroupID: CamelGroup, ArtifactID: m})
	}
	return append(out, Coordinate{GroupID: "org.slf4j", ArtifactID: "slf4j-simple", Version: slf4jVersion})
}

// Command is java with the JVM options (the archive's last), the classpath (the entries, then
// the kit's jars, without duplicates), camel-main's class and the properties file.
func (camelMain) Command(l Launch) (command, args []string) {
	jars := DependenciesDir + "/*"
	if l.KitClasspathJar {
		jars = ClasspathJar
	}
	var cp []string
	for _, e := range append(slices.Clone(l.Classpath), jars) {
		if !slices.Contains(cp, e) {
			cp = append(cp, e)
		}
	}
	args = slices.Clone(l.JVMOptions)
	if l.Archive != "" {
		args = append(args, ArchiveOption+l.Archive)
	}
	args = append(args, "-cp", strings.Join(cp, ":"), MainClass, propertiesOption, "file:"+PropertiesPath)
	return slices.Clone(JavaCommand), args
}

// Training is a YAML and an XML route, each a timer's one message to the log, so that both
// DSLs' loaders, the HTTP and management servers, and the first exchange are archived.
func (p camelMain) Training() map[string][]byte { return training(p) }

// ClasspathJars are every location: a camel-main kit is its jars alone.
func (camelMain) ClasspathJars(locations []string) []string { return locations }

// training are the training routes, with p's properties that stop it after one message.
func training(p Provider) map[string][]byte {
	props := p.Properties(Settings{ShutdownTimeout: 5, HTTPPort: 8080, OneShot: true})
	return map[string][]byte{
		PropertiesPath: []byte(strings.Join(props, "\n") + "\n"),
		SourcesDir + "/training.yaml": []byte(`- from:
    uri: timer:caravan-training-yaml?repeatCount=1&delay=0
    steps:
      - log: "class-data-sharing training: yaml"
`),
		SourcesDir + "/training.xml": []byte(`<routes xmlns="http://camel.apache.org/schema/xml-io">
  <route>
    <from uri="timer:caravan-training-xml?repeatCount=1&amp;delay=0"/>
    <log message="class-data-sharing training: xml"/>
  </route>
</routes>
`),
	}
}

func (camelMain) Properties(s Settings) []string {
	props := []string{
		"camel.main.routes-include-pattern=file:" + SourcesDir + "/*",
		"camel.main.shutdownTimeout=" + strconv.FormatInt(s.ShutdownTimeout, 10),
		"camel.component.kamelet.location=file:" + SourcesDir + ",classpath:kamelets",
		// As on Camel K, a Pipe's error handler reaches the steps inside its Kamelets.
		"camel.component.kamelet.noErrorHandler=false",
	}
	if len(s.ConfigDirs) > 0 {
		props = append(props, "camel.main.cloud-properties-location="+strings.Join(s.ConfigDirs, ","))
	}
	props = append(props,
		"camel.management.enabled=true",
		"camel.management.port="+strconv.Itoa(int(managementPort)),
		"camel.management.host="+listenHost,
		"camel.management.healthCheckEnabled=true",
		// Every check in the readiness report, which the operator names when one fails.
		"camel.health.exposureLevel=full",
	)
	if s.OneShot {
		props = append(props, "camel.main.durationMaxMessages=1")
	}
	if s.Metrics {
		props = append(props, "camel.metrics.enabled=true", "camel.management.metricsEnabled=true")
	}
	return append(props,
		"camel.server.enabled=true",
		"camel.server.port="+strconv.Itoa(int(s.HTTPPort)),
		"camel.server.host="+listenHost,
	)
}

// Metrics are Micrometer's Prometheus registry, served on the management port, where Camel K
// serves them.
func (camelMain) Metrics() Metrics {
	return Metrics{Port: managementPort, Path: "/observe/metrics", Dependencies: []string{"camel:micrometer-prometheus"}}
}

// Health is camel-main's management server, where Camel K probes a camel-main runtime.
func (camelMain) Health(int32) Health {
	return Health{Port: managementPort, Liveness: "/observe/health/live",
		Readiness: "/observe/health/ready", Startup: "/observe/health/live"}
}
