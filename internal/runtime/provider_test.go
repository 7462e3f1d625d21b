// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

import (
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
	for _, name := range []string{"quarkus", "plain-quarkus", "jbang"} {
		_, err := ProviderNamed(name)
		if err == nil || !strings.Contains(err.Error(), `"`+name+`"`) || !strings.Contains(err.Error(), "use main") {
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
	if m.Port != Main.Health().Port || m.Path != "/observe/metrics" || len(m.Dependencies) != 1 || m.Dependencies[0] != "camel:micrometer-prometheus" {
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
