// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// rendered is what a test of the runtime contract looks at: the main container and the properties file.
type rendered struct {
	container  corev1.Container
	properties []string
}

func renderRuntime(t *testing.T, in Input) rendered {
	t.Helper()
	cm, err := ConfigMap(in)
	if err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	var props []string
	if cm != nil {
		props = strings.Split(strings.TrimSuffix(cm.Data[PropertiesKey], "\n"), "\n")
	}
	return rendered{container: mustDeployment(t, in).Spec.Template.Spec.Containers[0], properties: props}
}

// classpathOf is the -cp argument of a java command line.
func classpathOf(args []string) string {
	for i, a := range args {
		if a == "-cp" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func TestTheRuntimeContractFollowsTheTraits(t *testing.T) {
	const kitClasspath = "/etc/camel/resources.d/_configmaps:/etc/camel/resources.d/_secrets:/deployments/dependencies/*"
	cases := []struct {
		name     string
		traits   string
		template string
		check    func(g Gomega, r rendered)
	}{
		{name: "the heap is half the container trait's memory limit", traits: `{"container":{"limitMemory":"2Gi"}}`,
			check: func(g Gomega, r rendered) { g.Expect(r.container.Args[0]).To(Equal("-Xmx1074M")) }},
		{name: "the heap is a quarter of a memory limit under 300M", traits: `{"container":{"limitMemory":"200Mi"}}`,
			check: func(g Gomega, r rendered) { g.Expect(r.container.Args[0]).To(Equal("-Xmx52M")) }},
		{name: "without a memory limit the heap is sized for Camel K's default limit", traits: `{}`,
			check: func(g Gomega, r rendered) { g.Expect(r.container.Args[0]).To(Equal("-Xmx268M")) }},
		{name: "the jvm trait's options come first and an -Xmx among them sizes the heap instead",
			traits: `{"jvm":{"options":["-Xmx1g","-Dfoo=bar"]},"container":{"limitMemory":"2Gi"}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.container.Args).To(Equal([]string{"-Xmx1g", "-Dfoo=bar", "-cp", kitClasspath,
					"org.apache.camel.main.Main", "-propertiesLocation", "file:/etc/camel/application.properties"}))
			}},
		{name: "the debug agent comes before the heap, and the probes are off meanwhile, as in Camel K",
			traits: `{"jvm":{"debug":true},"health":{"enabled":true}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.container.Args[:2]).To(Equal([]string{
					"-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=*:5005", "-Xmx268M"}))
				g.Expect(r.container.ReadinessProbe).To(BeNil())
			}},
		{name: "the environment trait's JAVA_TOOL_OPTIONS reaches the JVM as written",
			traits: `{"jvm":{"options":["-Dfoo=bar"]},"environment":{"vars":["JAVA_TOOL_OPTIONS=-Dx=1"]}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.container.Env).To(ContainElement(corev1.EnvVar{Name: "JAVA_TOOL_OPTIONS", Value: "-Dx=1"}))
			}},
		{name: "resources and configs are on the classpath in their directories, a single key's file too, then the jvm trait's entries, then the kit's jars",
			traits: `{"mount":{"configs":["configmap:app"],"resources":["configmap:files","secret:keys/k.pem@/opt/keys/k.pem"]},` +
				`"jvm":{"classpath":"/opt/lib/a.jar:/etc/camel/resources.d/_configmaps"}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(classpathOf(r.container.Args)).To(Equal("/etc/camel/resources.d/_configmaps:/etc/camel/resources.d/_secrets:" +
					"/etc/camel/conf.d/_configmaps/app:/etc/camel/resources.d/_configmaps/files:/opt/keys:/opt/keys/k.pem:/opt/lib/a.jar:/deployments/dependencies/*"))
			}},
		{name: "the runtime reads the configs' properties files and keys, in order",
			traits: `{"mount":{"configs":["configmap:app","secret:creds/db.properties"]}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.properties).To(ContainElement(
					"camel.main.cloud-properties-location=/etc/camel/conf.d/_configmaps/app,/etc/camel/conf.d/_secrets/creds"))
			}},
		{name: "the HTTP server listens on the container port, on the pod's address",
			traits: `{"container":{"port":8081}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.properties).To(ContainElements("camel.server.enabled=true", "camel.server.port=8081",
					"camel.server.host={{env:POD_IP:0.0.0.0}}", "camel.management.host={{env:POD_IP:0.0.0.0}}"))
			}},
		{name: "the camel trait's properties come after the runtime's, so that they win",
			traits: `{"camel":{"properties":["camel.main.shutdownTimeout=5"]}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.properties[len(r.properties)-1]).To(Equal("camel.main.shutdownTimeout=5"))
				g.Expect(r.properties).To(ContainElement("camel.main.shutdownTimeout=25"))
			}},
		{name: "the shutdown timeout is a bit under the template's grace period", traits: `{}`,
			template: `{"spec":{"terminationGracePeriodSeconds":60}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.properties).To(ContainElement("camel.main.shutdownTimeout=55"))
			}},
		{name: "a template that replaces the arguments keeps them as written", traits: `{}`,
			template: `{"spec":{"containers":[{"name":"integration","args":["-Xmx1g","-jar","app.jar"]}]}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.container.Args).To(Equal([]string{"-Xmx1g", "-jar", "app.jar"}))
			}},
		{name: "sources and flows run on the container trait's image without probes unless the health trait is enabled",
			traits: `{"container":{"image":"example/runtime:1"}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.container.Command).To(Equal([]string{"java"}))
				g.Expect(r.container.ReadinessProbe).To(BeNil())
			}},
		{name: "health.enabled: false turns a kit's probes off", traits: `{"health":{"enabled":false}}`,
			check: func(g Gomega, r rendered) { g.Expect(r.container.ReadinessProbe).To(BeNil()) }},
		{name: "the health trait adds liveness and startup probes on the management port",
			traits: `{"health":{"livenessProbeEnabled":true,"startupProbeEnabled":true}}`,
			check: func(g Gomega, r rendered) {
				g.Expect(r.container.LivenessProbe.HTTPGet.Path).To(Equal("/observe/health/live"))
				g.Expect(r.container.StartupProbe.HTTPGet.Path).To(Equal("/observe/health/live"))
				g.Expect(r.container.StartupProbe.HTTPGet.Port.IntValue()).To(Equal(9876))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(t, tc.traits)
			if tc.template != "" {
				tpl := raw(tc.template)
				in.Integration.Spec.Template = &tpl
			}
			tc.check(NewWithT(t), renderRuntime(t, in))
		})
	}
}

func TestASourceIsMountedUnderItsLanguagesExtension(t *testing.T) {
	cases := []struct {
		name   string
		source camelv1.SourceSpec
		want   string
	}{
		{name: "a name with its language's extension is kept", source: camelv1.SourceSpec{Name: "Hello.java"}, want: "Hello.java"},
		{name: "a Kamelet keeps its double extension", source: camelv1.SourceSpec{Name: "my-source.kamelet.yaml"}, want: "my-source.kamelet.yaml"},
		{name: "a .yml source gets the .yaml extension the runtime loads",
			source: camelv1.SourceSpec{Name: "routes.yml"}, want: "routes_yml.yaml"},
		{name: "an explicit language adds its extension",
			source: camelv1.SourceSpec{Name: "routes.txt", Language: camelv1.LanguageXML}, want: "routes_txt.xml"},
		{name: "dots before the extension become underscores, since the runtime reads all after the first dot as the extension",
			source: camelv1.SourceSpec{Name: "my.route.yaml"}, want: "my_route.yaml"},
		{name: "dots before a Kamelet's extension become underscores too",
			source: camelv1.SourceSpec{Name: "my.source.kamelet.yaml"}, want: "my_source.kamelet.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := input(t, `{}`)
			in.Integration.Spec.Sources, in.Integration.Spec.Flows = []camelv1.SourceSpec{tc.source}, nil
			pod := mustDeployment(t, in).Spec.Template.Spec
			g.Expect(pod.Volumes[0].ConfigMap.Items).To(Equal([]corev1.KeyToPath{{Key: tc.source.Name, Path: tc.want}}))
		})
	}
}

func TestSourcesTheRuntimeWouldLoadUnderOneNameAreRefused(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{}`)
	in.Integration.Spec.Sources = []camelv1.SourceSpec{{Name: "a.b.yaml"}, {Name: "a_b.yaml"}, {Name: "flows", Language: camelv1.LanguageYAML}}
	_, err := Deployment(in)
	g.Expect(err).To(MatchError(And(ContainSubstring("source a_b.yaml: the runtime would load it as a_b.yaml, like source a.b.yaml: rename one"),
		ContainSubstring("spec.flows: the runtime would load it as flows.yaml, like source flows"))))
}

func TestTheShutdownTimeoutIsABitUnderTheGracePeriod(t *testing.T) {
	for grace, want := range map[int64]int64{30: 25, 60: 55, 11: 6, 10: 5, 4: 2, 1: 1, 0: 1} {
		if got := shutdownTimeout(grace); got != want {
			t.Errorf("a grace period of %d s gives a shutdown timeout of %d s, want %d s", grace, got, want)
		}
	}
}
