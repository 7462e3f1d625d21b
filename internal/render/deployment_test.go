// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/trait"
)

func mustDeployment(t *testing.T, in Input) *appsv1.Deployment {
	t.Helper()
	d, err := Deployment(in)
	if err != nil {
		t.Fatalf("Deployment: %v", err)
	}
	return d
}

func TestDeploymentRunsTheIntegration(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"environment":{"vars":["GREETING=hi"]}}`)
	in.Integration.Spec.ServiceAccountName = "runner"

	d := mustDeployment(t, in)

	g.Expect(d.TypeMeta).To(Equal(metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}))
	g.Expect(d.Name).To(Equal("hello"))
	g.Expect(*d.Spec.Replicas).To(Equal(int32(1)))
	g.Expect(*d.Spec.RevisionHistoryLimit).To(Equal(int32(3)))
	g.Expect(d.Spec.ProgressDeadlineSeconds).To(BeNil())
	g.Expect(d.Spec.Template.Labels).To(Equal(map[string]string{camelv1.IntegrationLabel: "hello"}))
	pod := d.Spec.Template.Spec
	g.Expect(pod.ServiceAccountName).To(Equal("runner"))
	g.Expect(pod.Containers).To(HaveLen(1))
	c := pod.Containers[0]
	g.Expect(c.Name).To(Equal("integration"))
	g.Expect(c.Image).To(Equal("registry.local/kit@sha256:abc"))
	g.Expect(c.Command).To(Equal([]string{"java"}))
	g.Expect(c.Args).To(Equal([]string{"-Xmx268M",
		"-cp", "/etc/camel/resources.d/_configmaps:/etc/camel/resources.d/_secrets:/deployments/dependencies/*",
		"org.apache.camel.main.Main", "-propertiesLocation", "file:/etc/camel/application.properties"}))
	g.Expect(c.WorkingDir).To(Equal("/deployments"))
	g.Expect(c.TerminationMessagePolicy).To(Equal(corev1.TerminationMessageFallbackToLogsOnError),
		"a JVM that fails leaves its last lines as the termination message")
	g.Expect(c.Env).To(Equal([]corev1.EnvVar{
		{Name: "CAMEL_K_INTEGRATION", Value: "hello"},
		{Name: "CAMEL_K_DIGEST", Value: "v1-digest"},
		{Name: "CAMEL_K_CONF", Value: "/etc/camel/application.properties"},
		{Name: "CAMEL_K_CONF_D", Value: "/etc/camel/conf.d"},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
		{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		{Name: "CAMEL_K_MOUNT_PATH_CONFIGMAPS", Value: "/etc/camel/conf.d/_configmaps"},
		{Name: "CAMEL_K_MOUNT_PATH_SECRETS", Value: "/etc/camel/conf.d/_secrets"},
		{Name: "GREETING", Value: "hi"},
	}))
	g.Expect(c.ReadinessProbe).To(Equal(&corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/observe/health/ready", Port: intstr.FromInt32(9876), Scheme: corev1.URISchemeHTTP}}}),
		"a kit's runtime is probed for readiness by default, as Camel K does")
	g.Expect([]*corev1.Probe{c.LivenessProbe, c.StartupProbe}).To(HaveEach(BeNil()))
	g.Expect(c.Ports).To(BeEmpty())
	g.Expect(c.ImagePullPolicy).To(BeEmpty())
	g.Expect(c.Resources).To(Equal(corev1.ResourceRequirements{Requests: trait.DefaultRequests, Limits: trait.DefaultLimits}),
		"Camel K's default requests and limits")
}

func TestDeploymentMountsSourcesAndProperties(t *testing.T) {
	g := NewWithT(t)
	d := mustDeployment(t, input(t, `{}`))
	pod := d.Spec.Template.Spec
	configMap := func(items ...string) corev1.VolumeSource {
		var paths []corev1.KeyToPath
		for _, i := range items {
			paths = append(paths, corev1.KeyToPath{Key: i, Path: i})
		}
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "hello-camel"}, Items: paths}}
	}
	g.Expect(pod.Volumes).To(Equal([]corev1.Volume{
		{Name: "camel-sources", VolumeSource: configMap("Hello.java", "flows.yaml")},
		{Name: "camel-properties", VolumeSource: configMap("application.properties")},
	}))
	g.Expect(pod.Containers[0].VolumeMounts).To(Equal([]corev1.VolumeMount{
		{Name: "camel-sources", MountPath: "/etc/camel/sources", ReadOnly: true},
		{Name: "camel-properties", MountPath: "/etc/camel/application.properties", SubPath: "application.properties", ReadOnly: true},
	}))
}

// sourceless is input without sources and flows: a pre-built image.
func sourceless(t *testing.T, traits string) Input {
	t.Helper()
	in := input(t, traits)
	in.Integration.Spec.Sources, in.Integration.Spec.Flows = nil, nil
	in.Image = "example/camel-app:1.0"
	return in
}

func TestASourcelessIntegrationRunsItsImageAsItIs(t *testing.T) {
	g := NewWithT(t)
	in := sourceless(t, `{}`)

	cm, err := ConfigMap(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm).To(BeNil(), "nothing to hold: no ConfigMap")
	d := mustDeployment(t, in)
	pod := d.Spec.Template.Spec
	g.Expect(pod.Volumes).To(BeEmpty())
	c := pod.Containers[0]
	g.Expect(c.Image).To(Equal("example/camel-app:1.0"))
	g.Expect(c.Command).To(BeNil(), "the image's own entrypoint")
	g.Expect(c.TerminationMessagePolicy).To(BeEmpty(), "the image's own way of failing")
	g.Expect(c.Args).To(BeNil())
	g.Expect(c.ReadinessProbe).To(BeNil(), "a pre-built image is probed only when the health trait is enabled")
	g.Expect(c.VolumeMounts).To(BeEmpty())
	g.Expect(c.Env).To(Equal([]corev1.EnvVar{
		{Name: "CAMEL_K_INTEGRATION", Value: "hello"},
		{Name: "CAMEL_K_DIGEST", Value: "v1-digest"},
		{Name: "CAMEL_K_CONF_D", Value: "/etc/camel/conf.d"},
		{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		{Name: "CAMEL_K_MOUNT_PATH_CONFIGMAPS", Value: "/etc/camel/conf.d/_configmaps"},
		{Name: "CAMEL_K_MOUNT_PATH_SECRETS", Value: "/etc/camel/conf.d/_secrets"},
	}))
}

func TestASourcelessIntegrationWithPropertiesMountsThemAlone(t *testing.T) {
	g := NewWithT(t)
	in := sourceless(t, `{"camel":{"properties":["greeting=hi"]}}`)

	cm, err := ConfigMap(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Data).To(Equal(map[string]string{"application.properties": "greeting=hi\n"}))
	d := mustDeployment(t, in)
	pod := d.Spec.Template.Spec
	g.Expect(pod.Volumes).To(Equal([]corev1.Volume{{Name: "camel-properties", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "hello-camel"},
			Items: []corev1.KeyToPath{{Key: "application.properties", Path: "application.properties"}}}}}}))
	c := pod.Containers[0]
	g.Expect(c.Command).To(BeNil())
	g.Expect(c.VolumeMounts).To(Equal([]corev1.VolumeMount{
		{Name: "camel-properties", MountPath: "/etc/camel/application.properties", SubPath: "application.properties", ReadOnly: true},
	}))
	g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "CAMEL_K_CONF", Value: "/etc/camel/application.properties"}))
}

// TestJVMDisabledRunsTheImagesEntrypoint: as Camel K's jvm trait has it, with jvm.enabled false
// the container runs its image's entrypoint; the sources and properties are mounted as ever.
func TestJVMDisabledRunsTheImagesEntrypoint(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"jvm":{"enabled":false},"container":{"image":"example/echo:1.0","limitMemory":"1Gi"}}`)
	in.Image = "example/echo:1.0"
	c := mustDeployment(t, in).Spec.Template.Spec.Containers[0]
	g.Expect(c.Command).To(BeNil(), "the image's own entrypoint")
	g.Expect(c.Args).To(BeNil(), "no heap option for the image's own command")
	g.Expect(c.VolumeMounts).To(ContainElements(HaveField("MountPath", "/etc/camel/sources"),
		HaveField("MountPath", "/etc/camel/application.properties")))
	on := mustDeployment(t, input(t, `{"jvm":{"enabled":true}}`)).Spec.Template.Spec.Containers[0]
	g.Expect(on.Command).NotTo(BeEmpty())
}

func TestAMoveChangesTheDeploymentButNotItsPods(t *testing.T) {
	g := NewWithT(t)
	a := mustDeployment(t, input(t, `{}`))
	in := input(t, `{}`)
	in.OperatorID = "tenant-b"
	b := mustDeployment(t, in)

	g.Expect(a.Spec.Selector).To(Equal(&metav1.LabelSelector{MatchLabels: map[string]string{camelv1.IntegrationLabel: "hello"}}))
	g.Expect(b.Spec.Selector).To(Equal(a.Spec.Selector), "a move to another operator must not change the immutable selector")
	g.Expect(b.Spec.Template).To(Equal(a.Spec.Template), "a move to another operator must not restart the pods")
	g.Expect(b.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "tenant-b"))
	g.Expect(b.Labels[AppliedHashLabel]).NotTo(Equal(a.Labels[AppliedHashLabel]), "the new owner applies it")
	g.Expect(b.Annotations).To(Equal(a.Annotations), "new annotations would be a new generation to roll out")
}

func TestDeploymentFollowsTraitsAndSpec(t *testing.T) {
	cases := []struct {
		name   string
		traits string
		change func(in *Input)
		check  func(g Gomega, d *appsv1.Deployment)
	}{
		{name: "replicas come from the spec", traits: `{}`, change: func(in *Input) { in.Integration.Spec.Replicas = ptr(int32(4)) },
			check: func(g Gomega, d *appsv1.Deployment) { g.Expect(*d.Spec.Replicas).To(Equal(int32(4))) }},
		{name: "zero replicas are kept", traits: `{}`, change: func(in *Input) { in.Integration.Spec.Replicas = ptr(int32(0)) },
			check: func(g Gomega, d *appsv1.Deployment) { g.Expect(*d.Spec.Replicas).To(BeZero()) }},
		{name: "the default rolling update never lowers ready pods", traits: `{}`,
			check: func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Strategy).To(Equal(appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr(intstr.FromInt32(0)), MaxSurge: ptr(intstr.FromString("25%"))}}))
			}},
		{name: "the deployment trait sets the strategy and the progress deadline",
			traits: `{"deployment":{"strategy":"Recreate","progressDeadlineSeconds":60}}`,
			check: func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Strategy).To(Equal(appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}))
				g.Expect(*d.Spec.ProgressDeadlineSeconds).To(Equal(int32(60)))
			}},
		{name: "the container trait names the container and sets resources and pull policy",
			traits: `{"container":{"name":"main","requestCPU":"100m","limitMemory":"1Gi","imagePullPolicy":"IfNotPresent"}}`,
			check: func(g Gomega, d *appsv1.Deployment) {
				c := d.Spec.Template.Spec.Containers[0]
				g.Expect(c.Name).To(Equal("main"))
				g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
				g.Expect(c.Resources).To(Equal(corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}))
			}},
		{name: "a container port is declared when container.port is set", traits: `{"container":{"port":8081,"portName":"web"}}`,
			check: func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Spec.Containers[0].Ports).To(Equal([]corev1.ContainerPort{
					{Name: "web", ContainerPort: 8081, Protocol: corev1.ProtocolTCP}}))
			}},
		{name: "an enabled service declares the default port", traits: `{"service":{"enabled":true}}`,
			check: func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Spec.Containers[0].Ports).To(Equal([]corev1.ContainerPort{
					{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}))
			}},
		{name: "the mount trait's volumes are in the pod and mounted in the main container",
			traits: `{"mount":{"configs":["configmap:app-config"],"volumes":["data:/var/data"]}}`,
			check: func(g Gomega, d *appsv1.Deployment) {
				pod := d.Spec.Template.Spec
				var names []string
				for _, v := range pod.Volumes {
					if v.ConfigMap != nil && v.ConfigMap.Name == "app-config" || v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "data" {
						names = append(names, v.Name)
					}
				}
				g.Expect(names).To(HaveLen(2))
				g.Expect(pod.Containers[0].VolumeMounts).To(ContainElements(
					corev1.VolumeMount{Name: names[0], MountPath: "/etc/camel/conf.d/_configmaps/app-config", ReadOnly: true},
					corev1.VolumeMount{Name: names[1], MountPath: "/var/data"}))
			}},
		{name: "health, affinity, toleration and owner shape the pod and the Deployment's metadata",
			traits: `{"health":{"enabled":true},"container":{"port":8081},"affinity":{"enabled":true,"podAntiAffinity":true},` +
				`"toleration":{"enabled":true,"taints":["dedicated:NoSchedule"]},"owner":{"targetLabels":["team"],"targetAnnotations":["example.com/cost"]}}`,
			change: func(in *Input) {
				in.Integration.Labels = map[string]string{"team": "orders", "other": "x"}
				in.Integration.Annotations = map[string]string{"example.com/cost": "42"}
			},
			check: func(g Gomega, d *appsv1.Deployment) {
				c := d.Spec.Template.Spec.Containers[0]
				g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/observe/health/ready"))
				g.Expect(c.ReadinessProbe.HTTPGet.Port.IntValue()).To(Equal(9876), "on the management port, not the container's")
				g.Expect(c.LivenessProbe).To(BeNil())
				g.Expect(d.Spec.Template.Spec.Affinity.PodAntiAffinity).NotTo(BeNil())
				g.Expect(d.Spec.Template.Spec.Tolerations).To(HaveLen(1))
				g.Expect(d.Labels).To(HaveKeyWithValue("team", "orders"))
				g.Expect(d.Labels).NotTo(HaveKey("other"))
				g.Expect(d.Annotations).To(HaveKeyWithValue("example.com/cost", "42"))
				g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "orders"))
				g.Expect(d.Spec.Selector.MatchLabels).To(Equal(Selector(d.Name)), "the selector stays the integration's alone")
			}},
		{name: "the prometheus trait has the runtime serve metrics on its management port, where the pods are scraped",
			traits: `{"prometheus":{"enabled":true,"podMonitor":false}}`,
			check: func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Annotations).To(Equal(map[string]string{
					"prometheus.io/scrape": "true", "prometheus.io/port": "9876", "prometheus.io/path": "/observe/metrics"}))
				g.Expect(d.Spec.Template.Spec.Containers[0].Ports).To(Equal([]corev1.ContainerPort{
					{Name: "prometheus", ContainerPort: 9876, Protocol: corev1.ProtocolTCP}}))
			}},
		{name: "the jvm trait's options of a sourceless integration come first in JAVA_TOOL_OPTIONS",
			traits: `{"jvm":{"options":["-Xmx512m"]},"environment":{"vars":["JAVA_TOOL_OPTIONS=-Dx=1","TZ=UTC"]}}`,
			change: func(in *Input) { in.Integration.Spec.Sources, in.Integration.Spec.Flows = nil, nil },
			check: func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(ContainElements(
					corev1.EnvVar{Name: "JAVA_TOOL_OPTIONS", Value: "-Xmx512m -Dx=1"}, corev1.EnvVar{Name: "TZ", Value: "UTC"}))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(t, tc.traits)
			if tc.change != nil {
				tc.change(&in)
			}
			tc.check(NewWithT(t), mustDeployment(t, in))
		})
	}
}

func TestDeploymentRefusesToRunWithoutAnImage(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{}`)
	in.Image = ""
	_, err := Deployment(in)
	g.Expect(err).To(MatchError(ContainSubstring("integration hello: no image to run")))
}

func TestDeploymentAppliesThePodTemplate(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"container":{"requestCPU":"100m"}}`)
	tpl := raw(`{"spec":{
		"containers":[{"name":"integration","env":[{"name":"EXTRA","value":"1"}],
			"resources":{"limits":{"memory":"1Gi"}}}],
		"initContainers":[{"name":"wait","image":"busybox","command":["sleep","1"]}],
		"nodeSelector":{"disk":"ssd"}}}`)
	in.Integration.Spec.Template = &tpl

	pod := mustDeployment(t, in).Spec.Template.Spec

	g.Expect(pod.Containers).To(HaveLen(1))
	main := pod.Containers[0]
	g.Expect(main.Image).To(Equal("registry.local/kit@sha256:abc"), "the patch keeps what it does not set")
	g.Expect(main.Env).To(ContainElements(
		corev1.EnvVar{Name: "EXTRA", Value: "1"}, corev1.EnvVar{Name: "CAMEL_K_INTEGRATION", Value: "hello"}))
	g.Expect(main.Resources).To(Equal(corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}),
		"the template's requests and limits are merged over the defaults")
	g.Expect(main.VolumeMounts).To(HaveLen(2))
	g.Expect(main.Args[0]).To(Equal("-Xmx537M"), "the heap is half the memory limit the template sets")
	g.Expect(pod.InitContainers).To(Equal([]corev1.Container{{Name: "wait", Image: "busybox", Command: []string{"sleep", "1"}}}))
	g.Expect(pod.NodeSelector).To(Equal(map[string]string{"disk": "ssd"}))
}

func TestDeploymentTemplateErrors(t *testing.T) {
	cases := []struct {
		name     string
		traits   string
		template string
		want     string
	}{
		{name: "a template that is not an object is refused", template: `["spec"]`,
			want: `spec.template: must be an object with a spec, got ["spec"]`},
		{name: "a template spec that is not an object is refused", template: `{"spec":"x"}`,
			want: `spec.template.spec: must be an object (a pod spec), got "x"`},
		{name: "containers that are not a list are refused, naming the field", template: `{"spec":{"containers":"abc"}}`,
			want: "spec.template.spec.containers: must be a list, got string"},
		{name: "a container image that is not a string is refused, naming the field",
			template: `{"spec":{"containers":[{"name":"integration","image":5}]}}`,
			want:     "spec.template.spec.containers.image: must be a string, got number"},
		{name: "a template that sets the integration name of the main container is refused",
			template: `{"spec":{"containers":[{"name":"integration","env":[{"name":"CAMEL_K_INTEGRATION","value":"other"}]}]}}`,
			want:     "spec.template: must not set CAMEL_K_INTEGRATION on container integration"},
		{name: "a template that deletes the renamed main container is refused", traits: `{"container":{"name":"main"}}`,
			template: `{"spec":{"containers":[{"name":"main","$patch":"delete"}]}}`,
			want:     "spec.template: must not remove container main"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			traits := tc.traits
			if traits == "" {
				traits = `{}`
			}
			in := input(t, traits)
			tpl := raw(tc.template)
			in.Integration.Spec.Template = &tpl
			_, err := Deployment(in)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestDeploymentTemplateWithoutSpecChangesNothing(t *testing.T) {
	g := NewWithT(t)
	plain := mustDeployment(t, input(t, `{}`))
	for _, tpl := range []string{`{}`, `null`, `{"metadata":{"labels":{"x":"y"}}}`, `{"spec":null}`} {
		in := input(t, `{}`)
		r := raw(tpl)
		in.Integration.Spec.Template = &r
		g.Expect(mustDeployment(t, in)).To(Equal(plain), "template %s", tpl)
	}
}

func TestTheIngressRoutesToTheServiceAndNeedsOne(t *testing.T) {
	g := NewWithT(t)
	ing, err := Ingress(input(t, `{"ingress":{"enabled":true,"host":"a.example.com","path":"/api"},"container":{"port":8080}}`))
	g.Expect(err).NotTo(HaveOccurred())
	rule := ing.Spec.Rules[0]
	g.Expect(rule.Host).To(Equal("a.example.com"))
	g.Expect(rule.HTTP.Paths[0].Path).To(Equal("/api"))
	g.Expect(rule.HTTP.Paths[0].Backend.Service.Name).To(Equal(ing.Name))
	g.Expect(rule.HTTP.Paths[0].Backend.Service.Port.Name).To(Equal("http"))
	_, err = Ingress(input(t, `{"ingress":{"enabled":true}}`))
	g.Expect(err).To(MatchError(ErrIngressWithoutService))
	ing, err = Ingress(input(t, `{"container":{"port":8080},"ingress":{"auto":false}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ing).To(BeNil())
	ing, err = Ingress(input(t, `{"container":{"port":8080},"ingress":{"paths":["/a","/b"]}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ing.Spec.Rules[0].HTTP.Paths).To(HaveLen(2), "an Ingress by default for a Service, with every path")
	g.Expect(ing.Spec.Rules[0].Host).To(BeEmpty())
}

func TestThePodsPullWithThePlatformsRegistrySecretAsThePullSecretTraitSays(t *testing.T) {
	cases := []struct {
		name, traits, platformSecret string
		want                         []corev1.LocalObjectReference
	}{
		{name: "the platform's registry Secret by default", traits: `{}`, platformSecret: "push-creds",
			want: []corev1.LocalObjectReference{{Name: "push-creds"}}},
		{name: "none without a registry Secret", traits: `{}`},
		{name: "secretName over the platform's", traits: `{"pull-secret":{"secretName":"pull-only"}}`, platformSecret: "push-creds",
			want: []corev1.LocalObjectReference{{Name: "pull-only"}}},
		{name: "none when auto is off", traits: `{"pull-secret":{"auto":false}}`, platformSecret: "push-creds"},
		{name: "none when the trait is disabled", traits: `{"pull-secret":{"enabled":false,"secretName":"pull-only"}}`, platformSecret: "push-creds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := input(t, tc.traits)
			in.RegistrySecret = tc.platformSecret
			g.Expect(mustDeployment(t, in).Spec.Template.Spec.ImagePullSecrets).To(Equal(tc.want))
		})
	}
}

func TestTheEnvironmentTraitSetsCamelKsVariablesAndTakesValuesFromKeys(t *testing.T) {
	proxy := []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy:3128"}, {Name: "NO_PROXY", Value: ".svc"}, {Name: "PATH", Value: "/bin"}}
	find := func(env []corev1.EnvVar, name string) *corev1.EnvVar {
		for i := range env {
			if env[i].Name == name {
				return &env[i]
			}
		}
		return nil
	}
	cases := []struct {
		name, traits string
		check        func(g Gomega, env []corev1.EnvVar)
	}{
		{name: "secret: and configmap: values are read from the keys they name",
			traits: `{"environment":{"vars":["PASSWORD=secret:db/password","LEVEL=configmap:settings/level","PLAIN=secret"]}}`,
			check: func(g Gomega, env []corev1.EnvVar) {
				g.Expect(*find(env, "PASSWORD")).To(Equal(corev1.EnvVar{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{
					SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}}))
				g.Expect(*find(env, "LEVEL")).To(Equal(corev1.EnvVar{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{
					ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "level"}}}))
				g.Expect(*find(env, "PLAIN")).To(Equal(corev1.EnvVar{Name: "PLAIN", Value: "secret"}))
			}},
		{name: "the operator's proxies are passed on, and nothing else of its environment",
			traits: `{}`, check: func(g Gomega, env []corev1.EnvVar) {
				g.Expect(find(env, "HTTP_PROXY").Value).To(Equal("http://proxy:3128"))
				g.Expect(find(env, "NO_PROXY").Value).To(Equal(".svc"))
				g.Expect(find(env, "PATH")).To(BeNil())
			}},
		{name: "httpProxy false keeps the proxies out, containerMeta false the pod's name and namespace",
			traits: `{"environment":{"httpProxy":false,"containerMeta":false}}`, check: func(g Gomega, env []corev1.EnvVar) {
				g.Expect([]*corev1.EnvVar{find(env, "HTTP_PROXY"), find(env, "NAMESPACE"), find(env, "POD_NAME")}).To(HaveEach(BeNil()))
			}},
		{name: "a variable of the trait replaces Camel K's of that name, in its place",
			traits: `{"environment":{"vars":["NAMESPACE=elsewhere","HTTP_PROXY=http://other:8080"]}}`, check: func(g Gomega, env []corev1.EnvVar) {
				g.Expect(*find(env, "NAMESPACE")).To(Equal(corev1.EnvVar{Name: "NAMESPACE", Value: "elsewhere"}))
				g.Expect(find(env, "HTTP_PROXY").Value).To(Equal("http://other:8080"))
				names := map[string]int{}
				for _, v := range env {
					names[v.Name]++
				}
				g.Expect(names).To(HaveEach(1), "no variable is set twice")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := input(t, tc.traits)
			in.Proxy = proxy
			tc.check(g, mustDeployment(t, in).Spec.Template.Spec.Containers[0].Env)
		})
	}
}

func TestHotReloadPutsTheMountedVersionsInThePodTemplateSoAChangeRollsThePods(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"mount":{"hotReload":true,"configs":["configmap:app"]}}`)
	in.MountedVersions = []string{"ConfigMap/app=41"}
	before := mustDeployment(t, in)
	g.Expect(before.Spec.Template.Annotations).To(HaveKeyWithValue(MountedVersionsAnnotation, "ConfigMap/app=41"))
	in.MountedVersions = []string{"ConfigMap/app=42"}
	after := mustDeployment(t, in)
	g.Expect(after.Spec.Template).NotTo(Equal(before.Spec.Template), "a new version of the ConfigMap does not change the pods")

	off := input(t, `{"mount":{"configs":["configmap:app"]}}`)
	off.MountedVersions = []string{"ConfigMap/app=41"}
	g.Expect(mustDeployment(t, off).Spec.Template.Annotations).NotTo(HaveKey(MountedVersionsAnnotation), "without hotReload the pods follow no version")
}

func TestCACertificatesAreImportedIntoATruststoreByInitContainersThatTheJVMTrusts(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"mount":{"configs":["secret:my-ca","secret:pw"]},"jvm":{"caCertificates":[{"certPath":"/etc/camel/conf.d/_secrets/my-ca/ca.crt"}],`+
		`"truststorePasswordPath":"/etc/camel/conf.d/_secrets/pw/password"}}`)
	pod := mustDeployment(t, in).Spec.Template.Spec
	main := pod.Containers[0]
	g.Expect(main.Args).To(ContainElements("-Djavax.net.ssl.trustStore=/etc/camel/conf.d/_truststore/truststore.jks", "-Djavax.net.ssl.trustStoreType=JKS"))
	g.Expect(main.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: TruststoreVolume, MountPath: trait.DefaultTruststoreDir, ReadOnly: true}))
	g.Expect(pod.Volumes).To(ContainElement(corev1.Volume{Name: TruststoreVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}))
	g.Expect(pod.InitContainers).To(HaveLen(1))
	init := pod.InitContainers[0]
	g.Expect(init.Image).To(Equal(main.Image), "keytool is the kit's, from the base image")
	g.Expect(init.Command).To(Equal([]string{"keytool", "-importcert", "-noprompt", "-alias", "custom-ca-0", "-storetype", "JKS",
		"-keystore", "/etc/camel/conf.d/_truststore/truststore.jks", "-storepass:file", "/etc/camel/conf.d/_secrets/pw/password",
		"-file", "/etc/camel/conf.d/_secrets/my-ca/ca.crt"}))
	g.Expect(init.Resources).To(Equal(main.Resources), "a quota that demands limits refuses a container without them")
	g.Expect(init.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: TruststoreVolume, MountPath: trait.DefaultTruststoreDir}))
	g.Expect(init.VolumeMounts).To(ContainElement(HaveField("MountPath", "/etc/camel/conf.d/_secrets/my-ca")), "keytool cannot read the certificate")

	base := input(t, `{"jvm":{"caCertificates":[{"certPath":"/ca/a.crt"},{"certPath":"/ca/b.crt"}],"caCertMountPath":"/trust",`+
		`"baseTruststore":{"truststorePath":"/usr/lib/jvm/cacerts","passwordPath":"/pw/base"}}}`)
	inits := mustDeployment(t, base).Spec.Template.Spec.InitContainers
	g.Expect(inits).To(HaveLen(3))
	g.Expect(inits[0].Command).To(Equal([]string{"keytool", "-importkeystore", "-noprompt", "-srckeystore", "/usr/lib/jvm/cacerts",
		"-srcstorepass:file", "/pw/base", "-destkeystore", "/trust/truststore.jks", "-deststoretype", "JKS", "-deststorepass:file", "/pw/base"}),
		"the base's certificates come first, under its password")
	g.Expect(inits[2].Command).To(ContainElements("custom-ca-1", "/ca/b.crt", "/trust/truststore.jks"))
	g.Expect(mustDeployment(t, input(t, `{}`)).Spec.Template.Spec.InitContainers).To(BeEmpty())
}

func TestAKitsArchiveIsMappedAndItsJarsComeThroughItsClasspathJar(t *testing.T) {
	g := NewWithT(t)
	without := mustDeployment(t, input(t, `{}`)).Spec.Template.Spec.Containers[0]
	g.Expect(without.Args).NotTo(ContainElement(HavePrefix("-XX:SharedArchiveFile")), "a kit without an archive starts as it always has")
	g.Expect(strings.Join(without.Args, " ")).To(ContainSubstring("/deployments/dependencies/*"))
	in := input(t, `{}`)
	in.Archive = true
	c := mustDeployment(t, in).Spec.Template.Spec.Containers[0]
	g.Expect(c.Args).To(ContainElement("-XX:SharedArchiveFile=/deployments/kit.jsa"))
	g.Expect(c.Args).To(ContainElement(HaveSuffix(":/deployments/kit-classpath.jar")))
	g.Expect(strings.Join(c.Args, " ")).NotTo(ContainSubstring("/deployments/dependencies/*"))
}

func TestAQuarkusKitRunsItsEntryPointReadsTheContractsPropertiesAndIsProbedOnItsHTTPPort(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"camel":{"properties":["quarkus.http.port = 8081"]},"service":{"enabled":true},"health":{"livenessProbeEnabled":true}}`)
	in.Provider, in.Archive = runtime.Quarkus, true
	d := mustDeployment(t, in)
	c := d.Spec.Template.Spec.Containers[0]
	g.Expect(c.Args).To(ContainElement("io.quarkus.bootstrap.runner.QuarkusEntryPoint"))
	g.Expect(c.Args).To(ContainElements("-XX:SharedArchiveFile=/deployments/kit.jsa", HaveSuffix(":/deployments/kit-classpath.jar")),
		"a Quarkus kit's archive is mapped, its jars listed by its classpath jar")
	g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "QUARKUS_CONFIG_LOCATIONS", Value: runtime.PropertiesPath}))
	t.Log("quarkus.http.port moves the HTTP server, and its health endpoints: the container's port and the probes follow it")
	g.Expect(c.Ports).To(ContainElement(HaveField("ContainerPort", int32(8081))))
	g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/q/health/ready"))
	g.Expect(c.ReadinessProbe.HTTPGet.Port.IntValue()).To(Equal(8081))
	g.Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/q/health/live"))

	t.Log("with the prometheus trait, the metrics are Quarkus' HTTP server's: no second port of the same number")
	in = input(t, `{"camel":{"properties":["quarkus.http.port=8081"]},"service":{"enabled":true},"prometheus":{"enabled":true}}`)
	in.Provider = runtime.Quarkus
	d = mustDeployment(t, in)
	c = d.Spec.Template.Spec.Containers[0]
	g.Expect(c.Ports).To(HaveLen(1))
	g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/port", "8081"))
	g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/path", "/q/metrics"))
	pm, err := PodMonitor(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pm.Object["spec"]).To(HaveKeyWithValue("podMetricsEndpoints", ContainElement(HaveKeyWithValue("port", c.Ports[0].Name))))

	onMain := input(t, `{"camel":{"properties":["quarkus.http.port=8081"]},"service":{"enabled":true}}`)
	main := mustDeployment(t, onMain).Spec.Template.Spec.Containers[0]
	g.Expect(main.Ports).To(ContainElement(HaveField("ContainerPort", int32(8080))), "camel-main does not read quarkus.http.port")
	g.Expect(main.Env).NotTo(ContainElement(HaveField("Name", "QUARKUS_CONFIG_LOCATIONS")))
}
