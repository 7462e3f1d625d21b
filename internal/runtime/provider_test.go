// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestAPlatformThatNamesNoProviderRunsCamelMain(t *testing.T) {
	for _, name := range []string{"", " ", "main", " main "} {
		p, err := ProviderNamed(name)
		if err != nil || p != Main {
			t.Errorf("%q: got %v, %v; want camel-main", name, p, err)
		}
	}
}

func TestAProviderThisOperatorLacksIsRefusedNamingThoseItHas(t *testing.T) {
	for _, name := range []string{"jbang", "camel-k"} {
		_, err := ProviderNamed(name)
		if err == nil || !strings.Contains(err.Error(), `"`+name+`"`) || !strings.Contains(err.Error(), "use main or quarkus") {
			t.Errorf("%q: got %v, want a refusal that names it and main", name, err)
		}
	}
}

func TestCamelMainStartsJavaWithTheJVMOptionsFirstAndTheKitsJarsLast(t *testing.T) {
	cmd, args := Main.Command(Launch{JVMOptions: []string{"-Xss1m", "-Dx=y"},
		Classpath: []string{ResourceConfigMapsDir, "/data", ResourceConfigMapsDir, DependenciesDir + "/*"}})
	if !slices.Equal(cmd, []string{"java"}) {
		t.Errorf("command %v", cmd)
	}
	want := []string{"-Xss1m", "-Dx=y", "-cp", ResourceConfigMapsDir + ":/data:" + DependenciesDir + "/*",
		"org.apache.camel.main.Main", "-propertiesLocation", "file:/etc/camel/application.properties"}
	if !slices.Equal(args, want) {
		t.Errorf("args\n got %v\nwant %v", args, want)
	}
}

func TestCamelMainsPropertiesPointAtTheContractsPathsAndPorts(t *testing.T) {
	props := Main.Properties(Settings{ShutdownTimeout: 25, ConfigDirs: []string{"/a", "/b"}, HTTPPort: 8080})
	for _, want := range []string{
		"camel.main.routes-include-pattern=file:/etc/camel/sources/*",
		"camel.main.shutdownTimeout=25",
		"camel.main.cloud-properties-location=/a,/b",
		"camel.management.port=9876",
		"camel.server.port=8080",
		"camel.server.host={{env:POD_IP:0.0.0.0}}",
	} {
		if !slices.Contains(props, want) {
			t.Errorf("the properties lack %q: %v", want, props)
		}
	}
	for _, p := range Main.Properties(Settings{HTTPPort: 8080}) {
		if strings.HasPrefix(p, "camel.main.cloud-properties-location=") {
			t.Errorf("no config directory still gives %q", p)
		}
	}
}

func TestEveryRuntimeImageHasAUniqueNameAndRepository(t *testing.T) {
	names, repos := map[string]bool{}, map[string]bool{}
	for _, img := range Images {
		if names[img.Name] || repos[img.Repository] || len(img.Packages) == 0 {
			t.Errorf("image %+v repeats a name or repository, or has no package", img)
		}
		names[img.Name], repos[img.Repository] = true, true
		if got := ImageNamed(img.Name); got == nil || got.Repository != img.Repository {
			t.Errorf("ImageNamed(%q) = %v", img.Name, got)
		}
	}
	if ImageNamed("operator") != nil {
		t.Error("the operator image is not a runtime image")
	}
}

func TestCamelMainServesMetricsOnItsManagementPortWhenAsked(t *testing.T) {
	without := strings.Join(Main.Properties(Settings{HTTPPort: 8080}), "\n")
	with := strings.Join(Main.Properties(Settings{HTTPPort: 8080, Metrics: true}), "\n")
	if strings.Contains(without, "metrics") {
		t.Errorf("metrics are on without the prometheus trait:\n%s", without)
	}
	for _, want := range []string{"camel.metrics.enabled=true", "camel.management.metricsEnabled=true"} {
		if !strings.Contains(with, want) {
			t.Errorf("the properties lack %s:\n%s", want, with)
		}
	}
	m := Main.Metrics()
	if m.Port != Main.Health(8080).Port || m.Path != "/observe/metrics" || len(m.Dependencies) != 1 || m.Dependencies[0] != "camel:micrometer-prometheus" {
		t.Errorf("metrics %+v, want the management port's /observe/metrics from camel:micrometer-prometheus", m)
	}
}

func TestAKitWithAnArchiveStartsFromItWithItsJarsThroughTheClasspathJar(t *testing.T) {
	_, args := Main.Command(Launch{JVMOptions: []string{"-Xss1m"}, Classpath: []string{ResourceConfigMapsDir},
		KitClasspathJar: true, Archive: ArchivePath})
	want := []string{"-Xss1m", "-XX:SharedArchiveFile=/deployments/kit.jsa", "-cp", ResourceConfigMapsDir + ":/deployments/kit-classpath.jar",
		"org.apache.camel.main.Main", "-propertiesLocation", "file:/etc/camel/application.properties"}
	if !slices.Equal(args, want) {
		t.Errorf("args\n got %v\nwant %v", args, want)
	}
	training := Main.Training()
	if !strings.Contains(string(training[PropertiesPath]), "camel.main.durationMaxMessages=1") {
		t.Errorf("the training start does not stop after its message:\n%s", training[PropertiesPath])
	}
	if len(training) != 3 {
		t.Errorf("the training has %d files, want the properties, a YAML and an XML route", len(training))
	}
}

func TestCamelKsQuarkusProvidersAreCamelQuarkus(t *testing.T) {
	for _, name := range []string{"quarkus", "plain-quarkus", " plain-quarkus "} {
		p, err := ProviderNamed(name)
		if err != nil || p != Quarkus || p.Name() != "quarkus" {
			t.Errorf("%q: got %v, %v; want Camel Quarkus", name, p, err)
		}
	}
}

func TestCamelQuarkusStartsTheFastJarsEntryPointWithTheKitsDirectoriesLast(t *testing.T) {
	cmd, args := Quarkus.Command(Launch{JVMOptions: []string{"-Xss1m"}, Classpath: []string{ResourceConfigMapsDir, "/data"}})
	want := []string{"-Xss1m", "-cp", ResourceConfigMapsDir + ":/data:" + DependenciesDir + "/*:" + DependenciesDir + "/app/*:" +
		DependenciesDir + "/lib/boot/*:" + DependenciesDir + "/lib/main/*", "io.quarkus.bootstrap.runner.QuarkusEntryPoint"}
	if !slices.Equal(cmd, []string{"java"}) || !slices.Equal(args, want) {
		t.Errorf("got %v %v\nwant java %v", cmd, args, want)
	}
	_, args = Quarkus.Command(Launch{JVMOptions: []string{"-Xss1m"}, Classpath: []string{ResourceConfigMapsDir}, KitClasspathJar: true, Archive: ArchivePath})
	want = []string{"-Xss1m", "-XX:SharedArchiveFile=/deployments/kit.jsa", "-cp", ResourceConfigMapsDir + ":/deployments/kit-classpath.jar",
		"io.quarkus.bootstrap.runner.QuarkusEntryPoint"}
	if !slices.Equal(args, want) {
		t.Errorf("with the kit's archive, args\n got %v\nwant %v", args, want)
	}
	jars := Quarkus.ClasspathJars([]string{DependenciesDir + "/quarkus-run.jar", DependenciesDir + "/app/a.jar", DependenciesDir + "/lib/boot/b.jar",
		DependenciesDir + "/lib/main/c.jar", DependenciesDir + "/quarkus/generated-bytecode.jar", DependenciesDir + "/quarkus/quarkus-application.dat",
		DependenciesDir + "/lib/main/notes.txt"})
	if want := []string{DependenciesDir + "/quarkus-run.jar", DependenciesDir + "/app/a.jar", DependenciesDir + "/lib/boot/b.jar",
		DependenciesDir + "/lib/main/c.jar"}; !slices.Equal(jars, want) {
		t.Errorf("the classpath jar lists %v, want the jars the directories of the command line hold: %v", jars, want)
	}
	if env := Quarkus.Env(Settings{}); len(env) != 1 || env[0] != (EnvVar{"QUARKUS_CONFIG_LOCATIONS", PropertiesPath}) {
		t.Errorf("env %v: Quarkus must read the contract's properties file", env)
	}
	env := Quarkus.Env(Settings{ConfigDirs: []string{ConfigSecretsDir + "/db", ConfigConfigMapsDir + "/app"}})
	if want := PropertiesPath + "," + ConfigSecretsDir + "/db," + ConfigConfigMapsDir + "/app"; env[0].Value != want {
		t.Errorf("QUARKUS_CONFIG_LOCATIONS=%s, want the --config directories after the properties file: %s", env[0].Value, want)
	}
}

func TestCamelQuarkusReadsTheRoutesAtStartAndServesOnQuarkusHTTPServer(t *testing.T) {
	props := Quarkus.Properties(Settings{ShutdownTimeout: 25, HTTPPort: 8081, OneShot: true, ConfigDirs: []string{"/a"}})
	for _, want := range []string{
		"camel.main.routes-include-pattern=file:/etc/camel/sources/*",
		"camel.main.shutdownTimeout=25",
		"camel.main.durationMaxMessages=1",
		"camel.main.cloud-properties-location=/a",
		"quarkus.http.port=8081",
		"quarkus.http.host=${POD_IP:0.0.0.0}",
	} {
		if !slices.Contains(props, want) {
			t.Errorf("the properties lack %q: %v", want, props)
		}
	}
	if h := Quarkus.Health(8081); h.Port != 8081 || h.Readiness != "/q/health/ready" || h.Liveness != "/q/health/live" {
		t.Errorf("health %+v, want Camel K's Quarkus paths", h)
	}
	training := Quarkus.Training()
	if !strings.Contains(string(training[PropertiesPath]), "camel.main.durationMaxMessages=1") ||
		!strings.Contains(string(training[PropertiesPath]), "quarkus.http.port=8080") || len(training) != 3 {
		t.Errorf("the training start's files: %v; its properties:\n%s", slices.Collect(maps.Keys(training)), training[PropertiesPath])
	}
}

func TestTheQuarkusProviderTakesAQuarkusPlatformVersion(t *testing.T) {
	if err := Quarkus.CheckVersion(Quarkus.DefaultVersion()); err != nil {
		t.Errorf("its default: %v", err)
	}
	for v, want := range map[string]string{
		"3.15.3":    "Camel K's runtime 3.15.3",
		"4.18.0":    "no Quarkus platform version",
		"not a ver": "no Quarkus platform version",
	} {
		if err := Quarkus.CheckVersion(v); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), DefaultQuarkusVersion) {
			t.Errorf("%s: got %v, want a refusal saying %q and naming %s", v, err, want, DefaultQuarkusVersion)
		}
	}
}
