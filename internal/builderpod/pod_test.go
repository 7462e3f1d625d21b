package builderpod

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/publish"
	"github.com/caravan-dev/caravan/internal/runtime"
)

func TestTheBuilderPodResolvesWithMavenThenPublishesAndRunsAsRestrictedAsks(t *testing.T) {
	pod, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", Labels: map[string]string{"camel.apache.org/operator.id": "a"},
		BuilderImage: "reg/caravan/builder:java17", PublishImage: "reg/caravan/operator@sha256:1",
		Request: publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"},
		Timeout: 5 * time.Minute}.Render()
	if err != nil {
		t.Fatal(err)
	}
	if pod.Labels["app.kubernetes.io/name"] != PodLabel || pod.Labels["camel.apache.org/operator.id"] != "a" {
		t.Errorf("labels %v", pod.Labels)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || *pod.Spec.ActiveDeadlineSeconds != 300 || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("the pod may restart, outlive its timeout or reach the API: %+v", pod.Spec)
	}
	mvn := pod.Spec.InitContainers[0]
	if mvn.Image != "reg/caravan/builder:java17" || !strings.Contains(mvn.Command[2], "\nmvn -B") ||
		!strings.Contains(mvn.Command[2], "-Dmaven.repo.local="+LocalRepository) {
		t.Errorf("the Maven container runs %v in %s", mvn.Command, mvn.Image)
	}
	if !strings.Contains(mvn.Env[0].Value, "<artifactId>camel-bom</artifactId>") {
		t.Errorf("the pom is not given to Maven: %v", mvn.Env)
	}
	pub := pod.Spec.Containers[0]
	if pub.Image != "reg/caravan/operator@sha256:1" || pub.Args[0] != "builder" || pub.Args[1] != "publish" {
		t.Errorf("the publish container runs %v in %s", pub.Args, pub.Image)
	}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		sc := c.SecurityContext
		if *sc.AllowPrivilegeEscalation || sc.Capabilities.Drop[0] != "ALL" || c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
			t.Errorf("container %s is not restricted, or hides its log on failure", c.Name)
		}
	}
	if !*pod.Spec.SecurityContext.RunAsNonRoot || pod.Spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("the pod may run as root, or without seccomp")
	}
}

func TestTheBuilderPodRunsMavenWithThePlatformsSettings(t *testing.T) {
	settings := &corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "maven-settings"},
		Items: []corev1.KeyToPath{{Key: "custom.xml", Path: SettingsFile}}}}
	req := publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"}
	pod, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req, Settings: settings}.Render()
	if err != nil {
		t.Fatal(err)
	}
	mvn := pod.Spec.InitContainers[0]
	if !strings.Contains(mvn.Command[2], "\nmvn -s "+SettingsDir+"/"+SettingsFile+" -B") {
		t.Errorf("Maven runs without the settings: %s", mvn.Command[2])
	}
	mounted := false
	for _, m := range mvn.VolumeMounts {
		mounted = mounted || m.Name == "settings" && m.MountPath == SettingsDir && m.ReadOnly
	}
	var vol *corev1.VolumeSource
	for _, v := range pod.Spec.Volumes {
		if v.Name == "settings" {
			vol = &v.VolumeSource
		}
	}
	if !mounted || vol == nil || vol.ConfigMap.Name != "maven-settings" {
		t.Errorf("the settings are not mounted read-only for Maven: %+v, %+v", mvn.VolumeMounts, pod.Spec.Volumes)
	}
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		if m.Name == "settings" {
			t.Error("the publish container, which needs no settings, mounts them")
		}
	}

	pod, err = Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req}.Render()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(pod.Spec.InitContainers[0].Command[2], " -s ") || len(pod.Spec.Volumes) != 3 {
		t.Errorf("a pod without settings names some: %s", pod.Spec.InitContainers[0].Command[2])
	}
}

func TestABuilderPodsOutcomeIsItsResultOrWhatFailed(t *testing.T) {
	ended := func(name string, code int32, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg}}}
	}
	for _, c := range []struct {
		name    string
		status  corev1.PodStatus
		done    bool
		failure bool
		want    string
	}{
		{name: "a running pod is not done", status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{name: "a pod that succeeded gives the pushed image", done: true, want: "reg/kit@sha256:2",
			status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{
				ended(PublishContainer, 0, `{"Image":"reg/kit@sha256:2","Digest":"sha256:2","added":3}`)}}},
		{name: "a pod whose Maven could not find a dependency is a failure naming it", done: true, failure: true,
			want: "camel:nope is not a component of Camel 4.18.0",
			status: corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: []corev1.ContainerStatus{
				ended(MavenContainer, 1, "[ERROR] 'dependencies.dependency.version' for org.apache.camel:camel-nope:jar is missing. @ line 9")}}},
		{name: "a pod whose push failed is retried", done: true, want: "publishing the kit image failed (exit 1): error: registry down",
			status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{
				ended(PublishContainer, 1, "error: registry down\n")}}},
		{name: "a pod stopped at its deadline says so", done: true, want: "DeadlineExceeded",
			status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded", Message: "Pod was active too long"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, done, err := Outcome(&corev1.Pod{Status: c.status}, "4.18.0")
			if done != c.done || build.IsFailure(err) != c.failure {
				t.Fatalf("done %t, err %v", done, err)
			}
			got := res.Image
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestTheBuilderPodHasMavenTrustThePlatformsCAs(t *testing.T) {
	ca := &corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: "corp-ca"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca-0.crt"}}}}}}}
	req := publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"}
	pod, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req, CA: ca}.Render()
	if err != nil {
		t.Fatal(err)
	}
	mvn := pod.Spec.InitContainers[0]
	script := mvn.Command[2]
	trust, run, ok := strings.Cut(script, "printf '%s' \"$POM\"")
	if !ok || !strings.Contains(trust, "keytool -importcert") || !strings.Contains(trust, CADir+"/*.crt") ||
		!strings.Contains(trust, "export MAVEN_OPTS=\"$MAVEN_OPTS -Djavax.net.ssl.trustStore=/tmp/truststore") || !strings.Contains(run, "\nmvn -B") {
		t.Errorf("Maven does not trust the CAs before it runs:\n%s", script)
	}
	mounted := slices.ContainsFunc(mvn.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "ca" && m.MountPath == CADir && m.ReadOnly })
	vol := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "ca" && v.Projected == ca.Projected })
	if !mounted || vol < 0 {
		t.Errorf("the CAs are not mounted read-only for Maven: %+v, %+v", mvn.VolumeMounts, pod.Spec.Volumes)
	}
	without, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req}.Render()
	if err != nil || strings.Contains(without.Spec.InitContainers[0].Command[2], "keytool") {
		t.Errorf("without CAs, Maven still makes a trust store (%v)", err)
	}
}

func TestTheBuilderPodPushesWithTheRegistrysSecret(t *testing.T) {
	req := publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"}
	secret := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "push-creds"}, Key: corev1.DockerConfigJsonKey}
	pod, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req, RegistrySecret: secret}.Render()
	if err != nil {
		t.Fatal(err)
	}
	publish, mvn := pod.Spec.Containers[0], pod.Spec.InitContainers[0]
	if !slices.Contains(publish.Args, "--registry-auth="+RegistryAuthFile) {
		t.Errorf("publish runs without the credentials: %v", publish.Args)
	}
	if !slices.ContainsFunc(publish.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "registry" && m.ReadOnly }) ||
		slices.ContainsFunc(mvn.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "registry" }) {
		t.Errorf("the credentials are not mounted for publish alone: publish %+v, maven %+v", publish.VolumeMounts, mvn.VolumeMounts)
	}
	i := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "registry" })
	if i < 0 || pod.Spec.Volumes[i].Secret.SecretName != "push-creds" || pod.Spec.Volumes[i].Secret.Items[0].Key != corev1.DockerConfigJsonKey {
		t.Errorf("volumes %+v", pod.Spec.Volumes)
	}
	if want := []corev1.LocalObjectReference{{Name: "push-creds"}}; !slices.Equal(pod.Spec.ImagePullSecrets, want) {
		t.Errorf("the pod pulls its images with %v, not the registry's Secret", pod.Spec.ImagePullSecrets)
	}
}

func TestTheBuilderPodsMavenTakesThePlatformsResources(t *testing.T) {
	q := resource.MustParse
	req := publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"}
	cases := []struct {
		name             string
		set              corev1.ResourceRequirements
		requests, limits corev1.ResourceList
		heap             string
	}{
		{name: "none set keeps the builder's defaults",
			requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")},
			limits:   corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}, heap: "-Xmx384m"},
		{name: "a memory limit set sizes Maven's heap",
			set:      corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("2Gi"), corev1.ResourceCPU: q("2")}},
			requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")},
			limits:   corev1.ResourceList{corev1.ResourceMemory: q("2Gi"), corev1.ResourceCPU: q("2")}, heap: "-Xmx768m"},
		{name: "a request over the default limit raises it",
			set:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("1536Mi")}},
			requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("1536Mi")},
			limits:   corev1.ResourceList{corev1.ResourceMemory: q("1536Mi")}, heap: "-Xmx576m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req,
				MavenResources: tc.set}.Render()
			if err != nil {
				t.Fatal(err)
			}
			mvn := pod.Spec.InitContainers[0]
			if !equality.Semantic.DeepEqual(mvn.Resources.Requests, tc.requests) || !equality.Semantic.DeepEqual(mvn.Resources.Limits, tc.limits) {
				t.Errorf("Maven's resources are %v, want requests %v and limits %v", mvn.Resources, tc.requests, tc.limits)
			}
			opts := mvn.Env[slices.IndexFunc(mvn.Env, func(e corev1.EnvVar) bool { return e.Name == "MAVEN_OPTS" })].Value
			if !strings.HasPrefix(opts, tc.heap+" ") {
				t.Errorf("MAVEN_OPTS %q, want the heap %s", opts, tc.heap)
			}
			if pod.Spec.ImagePullSecrets != nil {
				t.Errorf("a pod without a registry Secret pulls with %v", pod.Spec.ImagePullSecrets)
			}
		})
	}
}

func TestTheBuilderPodTrustsTheRegistrysCAForPublishAlone(t *testing.T) {
	req := publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"}
	ca := &corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "registry-ca"},
		Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca-0.crt"}}}}
	pod, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req, RegistryCA: ca}.Render()
	if err != nil {
		t.Fatal(err)
	}
	publish, mvn := pod.Spec.Containers[0], pod.Spec.InitContainers[0]
	if !slices.Contains(publish.Args, "--registry-ca="+RegistryCADir) {
		t.Errorf("publish runs without the registry's CA: %v", publish.Args)
	}
	if !slices.ContainsFunc(publish.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == "registry-ca" && m.MountPath == RegistryCADir && m.ReadOnly
	}) || slices.ContainsFunc(mvn.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "registry-ca" }) {
		t.Errorf("the registry's CA is not mounted for publish alone: publish %+v, maven %+v", publish.VolumeMounts, mvn.VolumeMounts)
	}
	i := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "registry-ca" })
	if i < 0 || pod.Spec.Volumes[i].ConfigMap == nil || pod.Spec.Volumes[i].ConfigMap.Name != "registry-ca" {
		t.Errorf("no volume of the CA's ConfigMap: %+v", pod.Spec.Volumes)
	}
}

func TestTheBuilderPodGoesThroughTheOperatorsProxy(t *testing.T) {
	req := publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"}
	proxy := []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy.corp:3128"}, {Name: "NO_PROXY", Value: ".svc"}}
	pod, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req, Proxy: proxy}.Render()
	if err != nil {
		t.Fatal(err)
	}
	mvn, pub := pod.Spec.InitContainers[0], pod.Spec.Containers[0]
	env := func(c corev1.Container, name string) string {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
		return ""
	}
	if env(mvn, "HTTPS_PROXY") != "http://proxy.corp:3128" || env(pub, "HTTPS_PROXY") != "http://proxy.corp:3128" || env(pub, "NO_PROXY") != ".svc" {
		t.Errorf("the containers do not get the proxy: maven %v, publish %v", mvn.Env, pub.Env)
	}
	if s := env(mvn, "MAVEN_PROXY_SETTINGS"); !strings.Contains(s, "<host>proxy.corp</host>") || !strings.Contains(mvn.Command[2], "mvn -s "+proxySettingsFile) {
		t.Errorf("Maven does not read the proxy from its settings: %q, %s", s, mvn.Command[2])
	}
	settings := &corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "m2"}}}
	pod, err = Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req, Proxy: proxy, Settings: settings}.Render()
	if err != nil {
		t.Fatal(err)
	}
	if s := env(pod.Spec.InitContainers[0], "MAVEN_PROXY_SETTINGS"); s != "" || strings.Contains(pod.Spec.InitContainers[0].Command[2], "mvn -s "+proxySettingsFile) {
		t.Errorf("the platform's own settings are overridden: %q", s)
	}
	_, err = Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req,
		Proxy: []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "::bad"}}}.Render()
	if err == nil || !strings.Contains(err.Error(), "the operator's proxy: HTTP_PROXY") {
		t.Errorf("a bad proxy gave %v", err)
	}
}

func TestTheBuilderPodsMavenTakesThePlatformsPropertiesAndOptionsEachAsOneWord(t *testing.T) {
	req := publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"}
	args := []string{"-Dgreeting=it's here; rm -rf /", "-Dplain=1", "--no-transfer-progress"}
	pod, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req, MavenArgs: args}.Render()
	if err != nil {
		t.Fatal(err)
	}
	script := pod.Spec.InitContainers[0].Command[2]
	var line string
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(l, "mvn ") {
			line = l
		}
	}
	if !strings.Contains(line, " -B ") {
		t.Fatalf("no Maven line in %s", script)
	}
	words := strings.TrimPrefix(strings.SplitN(line, " -B ", 2)[0], "mvn ")
	out, err := exec.Command("sh", "-c", "printf '%s\\n' "+words).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !slices.Equal(got, args) {
		t.Errorf("the shell reads %q, want %q", got, args)
	}
}

func TestTheBuilderPodTakesThePlatformsNodeSelectorAndAnnotations(t *testing.T) {
	req := publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"}
	pod, err := Pod{Name: "kit-1-builder-1", Namespace: "ops", BuilderImage: "b", PublishImage: "p", Request: req,
		NodeSelector: map[string]string{"pool": "builds"}, Annotations: map[string]string{"cost-center": "ci"}}.Render()
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeSelector["pool"] != "builds" || pod.Annotations["cost-center"] != "ci" {
		t.Errorf("node selector %v, annotations %v", pod.Spec.NodeSelector, pod.Annotations)
	}
}

func TestTheBuilderPodTrainsTheKitOnTheBaseImagesJVMAfterMaven(t *testing.T) {
	req := publish.Request{Project: maven.NewProject(runtime.Main, "4.18.0", nil, nil), Repository: "kit-1"}
	without, err := Pod{Name: "kit-1-builder-1", BuilderImage: "b", PublishImage: "p", Request: req}.Render()
	if err != nil {
		t.Fatal(err)
	}
	if len(without.Spec.InitContainers) != 1 {
		t.Errorf("without a base image, the pod trains anyway: %d init containers", len(without.Spec.InitContainers))
	}
	pod, err := Pod{Name: "kit-1-builder-1", BuilderImage: "b", PublishImage: "p", BaseImage: "reg/caravan/base:java17",
		Provider: "main", Request: req}.Render()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{MavenContainer, LayoutContainer, TrainingContainer}) {
		t.Fatalf("init containers %v", names)
	}
	layout, training := pod.Spec.InitContainers[1], pod.Spec.InitContainers[2]
	if layout.Image != "p" || !slices.Equal(layout.Args, []string{"builder", "layout", "--list=" + ListFile, "--training=" + TrainingDir, "--runtime-provider=main"}) {
		t.Errorf("the layout container runs %v in %s", layout.Args, layout.Image)
	}
	if training.Image != "reg/caravan/base:java17" || !slices.Equal(training.Command, []string{"java", "@" + TrainingDir + "/java.args"}) {
		t.Errorf("the training container runs %v in %s", training.Command, training.Image)
	}
	// The jars are where the kit image holds them, in both containers.
	for _, c := range []corev1.Container{layout, training} {
		if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == runtime.DeploymentsDir }) {
			t.Errorf("container %s does not see %s", c.Name, runtime.DeploymentsDir)
		}
	}
	if training.Env[0].Name != runtime.EnvPodIP || training.Env[0].ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("the training's servers do not bind the pod's address: %v", training.Env)
	}
}

func TestAFailedTrainingIsUntrainableAndABaseImageWithoutJavaIsToo(t *testing.T) {
	failed := func(code int32, message string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: []corev1.ContainerStatus{
			{Name: MavenContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
			{Name: LayoutContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
			{Name: TrainingContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: message}}}}}}
	}
	_, done, err := Outcome(failed(1, "Error: Could not find or load main class"), "4.18.0")
	u, ok := errors.AsType[*Untrainable](err)
	if !done || !ok || u.Image {
		t.Errorf("a training that failed on the kit's jars: %v", err)
	}
	_, _, err = Outcome(failed(127, `exec: "java": executable file not found in $PATH`), "4.18.0")
	if u, ok := errors.AsType[*Untrainable](err); !ok || !u.Image {
		t.Errorf("a base image without java: %v", err)
	}
}

func TestAQuarkusKitsBuilderPodPackagesTheApplicationAndPublishesItsDirectory(t *testing.T) {
	pod, err := Pod{Name: "kit-q-builder-1", Namespace: "ops", BuilderImage: "reg/caravan/builder:java17", PublishImage: "reg/caravan/operator@sha256:1",
		Provider: runtime.Quarkus.Name(), BaseImage: "reg/caravan/java:17",
		Request: publish.Request{Project: maven.NewProject(runtime.Quarkus, "3.31.2", nil, nil), Repository: "kit-q"}}.Render()
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.InitContainers) != 3 {
		t.Fatalf("a Quarkus kit's pod runs %d init containers, want Maven, the layout and the training start", len(pod.Spec.InitContainers))
	}
	if layout := pod.Spec.InitContainers[1]; !slices.Contains(layout.Args, "--app="+WorkDir+"/target/quarkus-app") {
		t.Errorf("the layout does not lay out the application Maven built: %v", layout.Args)
	}
	if train := pod.Spec.InitContainers[2]; !slices.Contains(train.Env, corev1.EnvVar{Name: "QUARKUS_CONFIG_LOCATIONS", Value: runtime.PropertiesPath}) {
		t.Errorf("the training start's Quarkus does not read the contract's properties: %v", train.Env)
	}
	mvn := pod.Spec.InitContainers[0]
	script := mvn.Command[2]
	if !strings.Contains(script, " package -Dmaven.test.skip=true") || strings.Contains(script, "dependency-plugin") {
		t.Errorf("Maven does not package the application: %s", script)
	}
	if !strings.Contains(script, "> src/main/resources/application.properties") {
		t.Errorf("the build's application.properties is not written: %s", script)
	}
	env := map[string]string{}
	for _, e := range mvn.Env {
		env[e.Name] = e.Value
	}
	if !strings.Contains(env["POM"], "<artifactId>quarkus-maven-plugin</artifactId>") || !strings.Contains(env["APPLICATION"], "quarkus.banner.enabled=false") {
		t.Errorf("the Maven container's pom or application: %v", env)
	}
	if pub := pod.Spec.Containers[0]; !slices.Contains(pub.Args, "--app="+WorkDir+"/target/quarkus-app") {
		t.Errorf("the publish container does not take the application's directory: %v", pub.Args)
	}
}
