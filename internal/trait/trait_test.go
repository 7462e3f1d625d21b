// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// traits reads a spec.traits tree written as JSON.
func traits(t *testing.T, s string) camelv1.Traits {
	t.Helper()
	var out camelv1.Traits
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad test traits %s: %v", s, err)
	}
	return out
}

func TestParseReadsValidTraits(t *testing.T) {
	cases := []struct {
		name   string
		traits string
		check  func(g Gomega, tr Traits)
	}{
		{name: "no traits read as defaults", traits: `{}`, check: func(g Gomega, tr Traits) {
			g.Expect(tr.Container.Image()).To(BeEmpty())
			g.Expect(tr.Container.Name()).To(Equal("integration"))
			g.Expect(tr.Container.PortName()).To(Equal("http"))
			g.Expect(tr.Container.ServicePort()).To(Equal(int32(80)))
			g.Expect(tr.Container.ServicePortName()).To(Equal("http"))
			g.Expect(tr.Container.Resources()).To(Equal(corev1.ResourceRequirements{
				Requests: DefaultRequests, Limits: DefaultLimits}))
			g.Expect(tr.ContainerPort()).To(BeZero())
			g.Expect(tr.ExposesService()).To(BeFalse())
			g.Expect(tr.Service.Type()).To(Equal(corev1.ServiceTypeClusterIP))
			g.Expect(tr.Deployment.Strategy().RollingUpdate.MaxUnavailable).To(Equal(ptr(intstr.FromInt32(0))))
			g.Expect(tr.Deployment.Strategy().RollingUpdate.MaxSurge).To(Equal(ptr(intstr.FromString("25%"))))
		}},
		{name: "every container field is read", traits: `{"container":{"image":"quay.io/a/b:1","name":"main","port":8081,
			"portName":"web","servicePort":8443,"servicePortName":"https","requestCPU":"250m","requestMemory":"256Mi",
			"limitCPU":"1","limitMemory":"1Gi","imagePullPolicy":"Always"}}`, check: func(g Gomega, tr Traits) {
			c := tr.Container
			g.Expect([]any{c.Image(), c.Name(), c.Port(), c.PortName(), c.ServicePort(), c.ServicePortName(), c.ImagePullPolicy()}).
				To(Equal([]any{"quay.io/a/b:1", "main", int32(8081), "web", int32(8443), "https", corev1.PullAlways}))
			g.Expect(c.Resources().Requests).To(Equal(corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")}))
			g.Expect(c.Resources().Limits).To(Equal(corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}))
			g.Expect(tr.ContainerPort()).To(Equal(int32(8081)))
			g.Expect(tr.ExposesService()).To(BeTrue())
		}},
		{name: "a disabled container trait reads as defaults, without checking its fields",
			traits: `{"container":{"enabled":false,"image":"x","port":"abc"}}`, check: func(g Gomega, tr Traits) {
				g.Expect(tr.Container.Image()).To(BeEmpty())
				g.Expect(tr.Container.Port()).To(BeZero())
			}},
		{name: "unknown keys and unknown traits are ignored", traits: `{"container":{"probesEnabled":true,"auto":"x"},
			"camel":{"foo":[1]},"jvm":{"options":["-Xmx1g"]},"builder":{"tasks":1},"addons":{"custom":{"a":1}},
			"knative":{"enabled":"yes"},"route":7}`, check: func(g Gomega, tr Traits) {
			g.Expect(tr.Container.Name()).To(Equal("integration"))
		}},
		{name: "null fields read as unset", traits: `{"container":{"port":null,"image":null}}`, check: func(g Gomega, tr Traits) {
			g.Expect(tr.Container.Port()).To(BeZero())
		}},
		{name: "camel properties and runtime version are kept in order", traits: `{"camel":{"properties":["b=2","a=1","c="],
			"runtimeVersion":"4.8.0"}}`, check: func(g Gomega, tr Traits) {
			g.Expect(tr.Camel.Properties()).To(Equal([]string{"b=2", "a=1", "c="}))
			g.Expect(tr.Camel.RuntimeVersion()).To(Equal("4.8.0"))
		}},
		{name: "environment vars keep their order and a repeated name keeps its last value",
			traits: `{"environment":{"vars":["B=2","A=x=y","B=3","EMPTY="]}}`, check: func(g Gomega, tr Traits) {
				g.Expect(tr.Environment.Vars()).To(Equal([]corev1.EnvVar{{Name: "B", Value: "3"}, {Name: "A", Value: "x=y"}, {Name: "EMPTY"}}))
			}},
		{name: "an enabled service without a container port exposes port 8080", traits: `{"service":{"enabled":true,"type":"NodePort"}}`,
			check: func(g Gomega, tr Traits) {
				g.Expect(tr.ContainerPort()).To(Equal(DefaultPort))
				g.Expect(tr.ExposesService()).To(BeTrue())
				g.Expect(tr.Service.Type()).To(Equal(corev1.ServiceTypeNodePort))
			}},
		{name: "a disabled service hides a container port", traits: `{"container":{"port":8080},"service":{"enabled":false}}`,
			check: func(g Gomega, tr Traits) {
				g.Expect(tr.ContainerPort()).To(Equal(int32(8080)))
				g.Expect(tr.ExposesService()).To(BeFalse())
			}},
		{name: "the deployment trait sets the rolling update and the progress deadline", traits: `{"deployment":{"enabled":true,
			"progressDeadlineSeconds":120,"rollingUpdateMaxUnavailable":"50%","rollingUpdateMaxSurge":2}}`,
			check: func(g Gomega, tr Traits) {
				s := tr.Deployment.Strategy()
				g.Expect(s.Type).To(Equal(appsv1.RollingUpdateDeploymentStrategyType))
				g.Expect(*s.RollingUpdate.MaxUnavailable).To(Equal(intstr.FromString("50%")))
				g.Expect(*s.RollingUpdate.MaxSurge).To(Equal(intstr.FromInt32(2)))
				g.Expect(tr.Deployment.ProgressDeadlineSeconds()).To(Equal(ptr(int32(120))))
			}},
		{name: "the recreate strategy has no rolling update", traits: `{"deployment":{"strategy":"Recreate"}}`,
			check: func(g Gomega, tr Traits) {
				g.Expect(tr.Deployment.Strategy()).To(Equal(appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}))
			}},
		{name: "mount entries become volumes where Camel K's runtime finds them",
			traits: `{"mount":{"configs":["configmap:a","secret:s/key.properties"],"resources":["secret:b","configmap:c/data.csv@/data/in.csv"],` +
				`"volumes":["pvc:/data/claim"],"emptyDirs":["scratch:/tmp/work"]}}`,
			check: func(g Gomega, tr Traits) {
				mounts := map[string]corev1.VolumeMount{}
				volumes := map[string]corev1.Volume{}
				for _, mv := range tr.Mount.Volumes() {
					g.Expect(mv.Mount.Name).To(Equal(mv.Volume.Name))
					mounts[mv.Mount.MountPath], volumes[mv.Mount.MountPath] = mv.Mount, mv.Volume
				}
				g.Expect(mounts).To(HaveLen(6))
				g.Expect(volumes["/etc/camel/conf.d/_configmaps/a"].ConfigMap.Name).To(Equal("a"))
				g.Expect(mounts["/etc/camel/conf.d/_configmaps/a"].ReadOnly).To(BeTrue())
				s := volumes["/etc/camel/conf.d/_secrets/s/key.properties"].Secret
				g.Expect(s.SecretName).To(Equal("s"))
				g.Expect(s.Items).To(Equal([]corev1.KeyToPath{{Key: "key.properties", Path: "key.properties"}}))
				g.Expect(mounts["/etc/camel/conf.d/_secrets/s/key.properties"].SubPath).To(Equal("key.properties"))
				g.Expect(volumes["/etc/camel/resources.d/_secrets/b"].Secret.SecretName).To(Equal("b"))
				g.Expect(volumes["/data/in.csv"].ConfigMap.Name).To(Equal("c"))
				g.Expect(mounts["/data/in.csv"].SubPath).To(Equal("data.csv"))
				g.Expect(volumes["/data/claim"].PersistentVolumeClaim.ClaimName).To(Equal("pvc"))
				g.Expect(mounts["/data/claim"].ReadOnly).To(BeFalse())
				g.Expect(volumes["/tmp/work"].EmptyDir).NotTo(BeNil())
			}},
		{name: "the runtime reads properties from the directories of the configs, each once, in order",
			traits: `{"mount":{"configs":["secret:s/a.properties","configmap:a","secret:s/b.properties"],"resources":["configmap:r"]}}`,
			check: func(g Gomega, tr Traits) {
				g.Expect(tr.Mount.ConfigDirs()).To(Equal([]string{"/etc/camel/conf.d/_secrets/s", "/etc/camel/conf.d/_configmaps/a"}))
				var dirs []string
				for _, mv := range tr.Mount.Volumes() {
					dirs = append(dirs, mv.Dir())
				}
				g.Expect(dirs).To(Equal([]string{"/etc/camel/conf.d/_secrets/s", "/etc/camel/conf.d/_configmaps/a",
					"/etc/camel/conf.d/_secrets/s", "/etc/camel/resources.d/_configmaps/r"}), "a volume of one key is in its directory")
			}},
		{name: "hot reload watches each mounted ConfigMap and Secret once; claims and empty directories are not stores",
			traits: `{"mount":{"hotReload":true,"configs":["secret:s/a.properties","configmap:a","secret:s/b.properties"],` +
				`"resources":["configmap:a/x@/data/x"],"volumes":["pvc:/data/claim"],"emptyDirs":["scratch:/tmp/work"]}}`,
			check: func(g Gomega, tr Traits) {
				g.Expect(tr.Mount.HotReload()).To(BeTrue())
				g.Expect(tr.Mount.Stores()).To(Equal([]Store{{Kind: "Secret", Name: "s"}, {Kind: "ConfigMap", Name: "a"}}))
			}},
		{name: "the kamelets trait mounts those the routes use and those it lists, or only those it lists, or none",
			traits: `{"kamelets":{"list":"log-sink, set-body-action?kameletNamespace=x"}}`,
			check: func(g Gomega, tr Traits) {
				g.Expect(tr.Kamelets.Mounted([]string{"timer-source", "log-sink"})).To(Equal([]string{"timer-source", "log-sink", "set-body-action"}))
			}},
		{name: "kamelets.auto false mounts only those listed", traits: `{"kamelets":{"auto":false,"list":"log-sink"}}`,
			check: func(g Gomega, tr Traits) {
				g.Expect(tr.Kamelets.Mounted([]string{"timer-source"})).To(Equal([]string{"log-sink"}))
			}},
		{name: "kamelets disabled mounts none: the classpath serves them", traits: `{"kamelets":{"enabled":false,"list":"log-sink"}}`,
			check: func(g Gomega, tr Traits) { g.Expect(tr.Kamelets.Mounted([]string{"timer-source"})).To(BeEmpty()) }},
		{name: "no kamelets trait mounts those the routes use", traits: `{}`,
			check: func(g Gomega, tr Traits) {
				g.Expect(tr.Kamelets.Mounted([]string{"timer-source"})).To(Equal([]string{"timer-source"}))
			}},
		{name: "hot reload is off by default", traits: `{"mount":{"configs":["configmap:a"]}}`,
			check: func(g Gomega, tr Traits) { g.Expect(tr.Mount.HotReload()).To(BeFalse()) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tr, err := Parse(traits(t, tc.traits))
			g.Expect(err).NotTo(HaveOccurred())
			tc.check(g, tr)
		})
	}
}

func TestParseRejectsInvalidFields(t *testing.T) {
	cases := []struct {
		name   string
		traits string
		want   []string
	}{
		{name: "a port that is not a number names the trait, the field and what is expected",
			traits: `{"container":{"port":"abc"}}`, want: []string{`trait container.port: must be an integer between 1 and 65535, got "abc"`}},
		{name: "a port out of range is refused", traits: `{"container":{"port":70000}}`,
			want: []string{`trait container.port: must be an integer between 1 and 65535, got 70000`}},
		{name: "a fractional port is refused", traits: `{"container":{"servicePort":80.5}}`,
			want: []string{`trait container.servicePort: must be an integer between 1 and 65535, got 80.5`}},
		{name: "a Camel K runtime version is refused, naming the Camel version it stands for", traits: `{"camel":{"runtimeVersion":"3.15.3"}}`,
			want: []string{`trait camel.runtimeVersion: 3.15.3 names Camel K's runtime 3.15.3, which runs Camel 4.8.5 on Camel Quarkus`}},
		{name: "a trait that is not an object is refused", traits: `{"container":"quay.io/a/b"}`,
			want: []string{`trait container: must be an object, got "quay.io/a/b"`}},
		{name: "an image that is not a string is refused", traits: `{"container":{"image":["a"]}}`,
			want: []string{`trait container.image: must be a string, got ["a"]`}},
		{name: "bad quantities are refused, each one", traits: `{"container":{"requestCPU":"lots","limitMemory":"1GB!"}}`,
			want: []string{`trait container.requestCPU: must be a quantity such as "500m" or "1Gi", got "lots"`,
				`trait container.limitMemory: must be a quantity such as "500m" or "1Gi", got "1GB!"`}},
		{name: "an unknown pull policy is refused", traits: `{"container":{"imagePullPolicy":"Sometimes"}}`,
			want: []string{`trait container.imagePullPolicy: must be one of Always, IfNotPresent, Never, got "Sometimes"`}},
		{name: "a container name that is not a DNS label is refused", traits: `{"container":{"name":"Main_1"}}`,
			want: []string{`trait container.name: must be a DNS-1123 label`}},
		{name: "a port name that is too long is refused", traits: `{"container":{"portName":"a-very-long-port-name"}}`,
			want: []string{`trait container.portName: must be a port name`}},
		{name: "enabled that is not a boolean is refused", traits: `{"service":{"enabled":"yes"}}`,
			want: []string{`trait service.enabled: must be true or false, got "yes"`}},
		{name: "an env entry without = is refused", traits: `{"environment":{"vars":["A=1","FOO"]}}`,
			want: []string{`trait environment.vars[1]: must be NAME=value with a valid variable name, got "FOO"`}},
		{name: "an env entry without a name is refused", traits: `{"environment":{"vars":["=x"]}}`,
			want: []string{`trait environment.vars[0]: must be NAME=value`}},
		{name: "an env entry from a Secret without a key is refused", traits: `{"environment":{"vars":["P=secret:db"]}}`,
			want: []string{`trait environment.vars[0]: must take its value from secret:NAME/KEY, a key of a Secret of the integration's namespace, got "P=secret:db"`}},
		{name: "an env entry that sets an operator variable is refused", traits: `{"environment":{"vars":["CAMEL_K_DIGEST=b"]}}`,
			want: []string{`trait environment.vars[0]: must not set CAMEL_K_DIGEST, which the operator sets, got "CAMEL_K_DIGEST=b"`}},
		{name: "env vars that are not a list of strings are refused", traits: `{"environment":{"vars":"A=1"}}`,
			want: []string{`trait environment.vars: must be a list of strings, got "A=1"`}},
		{name: "a property without = is refused", traits: `{"camel":{"properties":["a=1","b"]}}`,
			want: []string{`trait camel.properties[1]: must be key=value, got "b"`}},
		{name: "an unknown service type is refused", traits: `{"service":{"type":"ExternalName"}}`,
			want: []string{`trait service.type: must be one of ClusterIP, NodePort, LoadBalancer, got "ExternalName"`}},
		{name: "a disabled deployment trait is refused", traits: `{"deployment":{"enabled":false}}`,
			want: []string{"the deployment trait cannot be disabled: Caravan runs integrations as Deployments"}},
		{name: "an unknown strategy is refused", traits: `{"deployment":{"strategy":"BlueGreen"}}`,
			want: []string{`trait deployment.strategy: must be one of RollingUpdate, Recreate, got "BlueGreen"`}},
		{name: "a surge that is neither a number nor a percentage is refused", traits: `{"deployment":{"rollingUpdateMaxSurge":"half"}}`,
			want: []string{`trait deployment.rollingUpdateMaxSurge: must be a non-negative integer or a percentage such as "25%", got "half"`}},
		{name: "a zero surge with the default zero unavailability is refused", traits: `{"deployment":{"rollingUpdateMaxSurge":"0%"}}`,
			want: []string{"trait deployment: rollingUpdateMaxSurge and rollingUpdateMaxUnavailable cannot both be 0"}},
		{name: "more than 100% unavailable is refused", traits: `{"deployment":{"rollingUpdateMaxUnavailable":"150%"}}`,
			want: []string{"trait deployment.rollingUpdateMaxUnavailable: must not be more than 100%"}},
		{name: "a zero progress deadline is refused", traits: `{"deployment":{"progressDeadlineSeconds":0}}`,
			want: []string{"trait deployment.progressDeadlineSeconds: must be an integer between 1 and 2147483647, got 0"}},
		{name: "mount configs that are not a list are refused", traits: `{"mount":{"configs":{"a":1}}}`,
			want: []string{`trait mount.configs: must be a list of strings, got {"a":1}`}},
		{name: "a config that is neither a ConfigMap nor a Secret is refused", traits: `{"mount":{"configs":["file:/a.properties"]}}`,
			want: []string{`trait mount.configs[0]: must be configmap:NAME[/KEY] or secret:NAME[/KEY], got "file:/a.properties"`}},
		{name: "a config with a path is refused", traits: `{"mount":{"configs":["configmap:a@/x"]}}`,
			want: []string{`a configuration is mounted where the runtime reads it, with no @PATH`}},
		{name: "a resource with a relative path is refused", traits: `{"mount":{"resources":["secret:b@data"]}}`,
			want: []string{`trait mount.resources[0]: must be configmap:NAME[/KEY][@PATH] or secret:NAME[/KEY][@PATH]: "data" is not a clean absolute path`}},
		{name: "a volume over the sources is refused", traits: `{"mount":{"volumes":["pvc:/etc/camel/sources"]}}`,
			want: []string{`trait mount.volumes[0]: must be CLAIM:PATH, a PersistentVolumeClaim and an absolute path: "/etc/camel/sources" would hide the sources`}},
		{name: "a claim with an invalid name is refused", traits: `{"mount":{"volumes":["My_Claim:/data"]}}`,
			want: []string{`"My_Claim" is not a valid claim name`}},
		{name: "two entries at one path are refused", traits: `{"mount":{"volumes":["a:/data"],"emptyDirs":["b:/data"]}}`,
			want: []string{`trait mount.emptyDirs[0]: must not mount at /data, where another entry mounts, got "b:/data"`}},
		{name: "errors of several traits are all reported", traits: `{"container":{"port":"abc","limitCPU":"x"},"service":{"type":"X"}}`,
			want: []string{"trait container.port:", "trait container.limitCPU:", "trait service.type:"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tr, err := Parse(traits(t, tc.traits))
			g.Expect(err).To(HaveOccurred())
			for _, want := range tc.want {
				g.Expect(err.Error()).To(ContainSubstring(want))
			}
			g.Expect(tr).To(Equal(Traits{}))
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestUnknownPropertiesAreThoseOfActedTraitsCamelKDoesNotHave(t *testing.T) {
	raw := func(v string) camelv1.RawObject {
		return camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(v)}}
	}
	got := UnknownProperties(camelv1.Traits{
		"container": raw(`{"enabled":true,"port":8080,"prot":1}`),
		"service":   raw(`{"configuration":{},"tpye":"NodePort"}`),
		"route":     raw(`{"anything":1}`), // not acted on: its properties are kept unread
		"jvm":       raw(`[1]`),            // not an object: Parse refuses it
	})
	if want := []string{"container.prot", "service.tpye"}; !slices.Equal(got, want) {
		t.Errorf("UnknownProperties = %v, want %v", got, want)
	}
	for _, name := range Acted {
		if _, ok := Properties(name); !ok {
			t.Errorf("trait %s is acted on, but its Camel K properties are not listed", name)
		}
	}
}

func TestContainerResourcesFillCamelKDefaults(t *testing.T) {
	q := resource.MustParse
	list := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: q(cpu), corev1.ResourceMemory: q(mem)}
	}
	cases := []struct {
		name      string
		container string
		requests  corev1.ResourceList
		limits    corev1.ResourceList
	}{
		{name: "nothing set gives Camel K's defaults", container: `{}`,
			requests: list("125m", "128Mi"), limits: list("500m", "512Mi")},
		{name: "a memory limit alone keeps the other defaults", container: `{"limitMemory":"1Gi"}`,
			requests: list("125m", "128Mi"), limits: list("500m", "1Gi")},
		{name: "a limit under the default request lowers that request to it", container: `{"limitCPU":"100m","limitMemory":"64Mi"}`,
			requests: list("100m", "64Mi"), limits: list("100m", "64Mi")},
		{name: "a request over the default limit raises that limit to it", container: `{"requestCPU":"2","requestMemory":"1Gi"}`,
			requests: list("2", "1Gi"), limits: list("2", "1Gi")},
		{name: "a request and a limit set are kept as written", container: `{"requestCPU":"50m","limitCPU":"4"}`,
			requests: list("50m", "128Mi"), limits: list("4", "512Mi")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tr, err := Parse(traits(t, `{"container":`+tc.container+`}`))
			g.Expect(err).NotTo(HaveOccurred())
			r := tr.Container.Resources()
			g.Expect(r.Requests).To(Equal(tc.requests))
			g.Expect(r.Limits).To(Equal(tc.limits))
		})
	}
}

// TestTheBuilderTraitSizesTheBuildsMavenContainer: as on Camel K, the builder task's resources
// come from tasks*CPU/Memory (builder:QUANTITY) and the older single values; another task, a bad
// quantity and Maven profiles, which Caravan takes from the platform's settings, are refused.
func TestTheBuilderTraitSizesTheBuildsMavenContainer(t *testing.T) {
	tr, err := Parse(traits(t, `{"builder":{"tasksRequestCPU":["builder:500m"],"tasksLimitMemory":["builder:2Gi"],"requestMemory":"1Gi"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"requestCPU": "500m", "limitMemory": "2Gi", "requestMemory": "1Gi"}
	if got := tr.Builder.Resources(); !maps.Equal(got, want) {
		t.Errorf("Resources() = %v, want %v", got, want)
	}
	_, err = Parse(traits(t, `{"builder":{"tasksLimitCPU":["package:1"],"limitCPU":"lots","mavenProfiles":["configmap:p/profile.xml"]}}`))
	for _, msg := range []string{"trait builder.tasksLimitCPU[0]: must be builder:QUANTITY", "trait builder.limitCPU: must be a quantity",
		"trait builder.mavenProfiles: must be empty: Caravan's builds take Maven profiles from the platform's Maven settings"} {
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("error %v does not say %q", err, msg)
		}
	}
}
