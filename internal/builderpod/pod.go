// Package builderpod renders the pod that builds a kit and reads its outcome: an init
// container resolves the jars with Maven (internal/maven), then the publish container runs
// the operator's own binary to layer and push them (internal/publish).
package builderpod

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/publish"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// Paths in a builder pod.
const (
	// WorkDir holds the pom and Maven's list of the jars.
	WorkDir = "/workspace"
	// LocalRepository is Maven's local repository: the cache volume.
	LocalRepository = "/maven"
	// ListFile is Maven's list of the resolved jars.
	ListFile = WorkDir + "/dependencies.txt"
	// MavenLog is Maven's output.
	MavenLog = WorkDir + "/maven.log"
	// TrainingDir holds the training start's arguments, output and class-data-sharing archive.
	TrainingDir = WorkDir + "/training"
	// SettingsDir holds Maven's settings.xml, SettingsFile, when the platform names one.
	SettingsDir  = "/etc/maven-settings"
	SettingsFile = "settings.xml"
	// RegistryAuthFile is the Docker config the publish container pushes with, when the platform
	// names the registry's Secret.
	RegistryAuthFile = "/etc/caravan/registry/config.json"
	// RegistryCADir holds the registry's CA certificates, as *.crt files, when the platform
	// names them (spec.build.registry.ca).
	RegistryCADir = "/etc/caravan/registry-ca"
	// CADir holds PEM certificates Maven trusts besides the public ones, as *.crt files.
	CADir = "/etc/maven-ca"
	// javaTrustStore is the Java trust store of the builder image, which the CAs are added to.
	javaTrustStore = "/etc/ssl/certs/java/cacerts"
)

// Container names of a builder pod.
const (
	// MavenContainer resolves the jars, in the builder image.
	MavenContainer = "maven"
	// LayoutContainer lays the jars out as the kit image will hold them, in the operator's image.
	LayoutContainer = "layout"
	// TrainingContainer starts the runtime once on them, in the base image, to make the kit's
	// class-data-sharing archive.
	TrainingContainer = "training"
	// PublishContainer layers and pushes them, in the operator's image.
	PublishContainer = "publish"
)

// PodLabel marks builder pods (app.kubernetes.io/name), as the local
// cluster's placement policy expects.
const PodLabel = "caravan-builder"

// Pod says what builder pod to run for a request.
type Pod struct {
	Name, Namespace string
	// Labels are added to the pod's (the operator's id, the build).
	Labels map[string]string
	// BuilderImage runs Maven: Java and Maven, as the platform's builder image.
	BuilderImage string
	// PublishImage runs `caravan-operator builder publish`: the operator's own image.
	PublishImage string
	// BaseImage is the image the kit is layered onto, whose JVM makes the kit's archive; "",
	// the kit gets none.
	BaseImage string
	// Provider names the kit's runtime provider, whose training start makes the archive.
	Provider string
	// Request is what the pod resolves and pushes.
	Request publish.Request
	// Cache is the volume of Maven's local repository; nil gives an empty one.
	Cache *corev1.VolumeSource
	// Settings is a volume holding SettingsFile, Maven's settings; nil, Maven runs with its own.
	Settings *corev1.VolumeSource
	// RegistrySecret is the key of the Secret whose Docker config the kit is pushed with; nil, anonymous.
	RegistrySecret *corev1.SecretKeySelector
	// RegistryCA is a volume of PEM certificates, *.crt files, the publish container trusts for
	// the registry besides the system's; nil, none.
	RegistryCA *corev1.VolumeSource
	// CA is a volume of PEM certificates, *.crt files, Maven trusts besides the public ones; nil, none.
	CA *corev1.VolumeSource
	// MavenArgs are more arguments of Maven, before the goal: the platform's properties and options.
	MavenArgs []string
	// NodeSelector and Annotations are the pod's, from the platform's build configuration.
	NodeSelector, Annotations map[string]string
	// Timeout bounds the pod's life.
	Timeout time.Duration
	// MavenResources are requests and limits of the Maven container, each over its default.
	MavenResources corev1.ResourceRequirements
	// Proxy are the operator's HTTP_PROXY, HTTPS_PROXY and NO_PROXY, which both containers get;
	// Maven gets them as the proxies of its settings, unless the platform gives it settings.
	Proxy []corev1.EnvVar
}

// proxySettingsFile is where the Maven container writes the settings of Pod.Proxy.
const proxySettingsFile = "/tmp/proxy-settings.xml"

// Render returns the builder pod: an init container resolves the jars with
// Maven, then the publish container layers and pushes them and writes the
// result as its termination message. PodSecurity "restricted" admits it.
func (p Pod) Render() (*corev1.Pod, error) {
	pom, err := p.Request.Project.POM()
	if err != nil {
		return nil, err
	}
	request, err := json.Marshal(p.Request)
	if err != nil {
		return nil, err
	}
	cache := p.Cache
	if cache == nil {
		cache = &corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
	labels := map[string]string{"app.kubernetes.io/name": PodLabel}
	for k, v := range p.Labels {
		labels[k] = v
	}
	mounts := []corev1.VolumeMount{{Name: "workspace", MountPath: WorkDir}, {Name: "maven", MountPath: LocalRepository}}
	tmp := corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"}
	args := p.mavenArgs()
	mavenMounts := append(mounts, tmp)
	volumes := []corev1.Volume{
		{Name: "workspace", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "maven", VolumeSource: *cache},
	}
	proxySettings, err := p.proxySettings()
	if err != nil {
		return nil, err
	}
	if p.Settings == nil && proxySettings != "" {
		args = append([]string{"-s", proxySettingsFile}, args...)
	}
	if p.Settings != nil {
		args = append([]string{"-s", SettingsDir + "/" + SettingsFile}, args...)
		volumes = append(volumes, corev1.Volume{Name: "settings", VolumeSource: *p.Settings})
		mavenMounts = append(mavenMounts, corev1.VolumeMount{Name: "settings", MountPath: SettingsDir, ReadOnly: true})
	}
	if p.CA != nil {
		volumes = append(volumes, corev1.Volume{Name: "ca", VolumeSource: *p.CA})
		mavenMounts = append(mavenMounts, corev1.VolumeMount{Name: "ca", MountPath: CADir, ReadOnly: true})
	}
	mvn := "mvn " + strings.Join(args, " ")
	publishArgs, publishMounts, publishVolumes := p.publish(string(request), append(mounts, tmp))
	volumes = append(volumes, publishVolumes...)
	var pullSecrets []corev1.LocalObjectReference
	if p.RegistrySecret != nil {
		// The builder image may come from the platform's registry, as the kits do.
		pullSecrets = []corev1.LocalObjectReference{{Name: p.RegistrySecret.Name}}
	}
	mavenResources := p.mavenResources()
	trainers, trainVolumes := p.training(mounts, tmp)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels, Annotations: maps.Clone(p.Annotations)},
		Spec: corev1.PodSpec{
			NodeSelector:                  maps.Clone(p.NodeSelector),
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr.To(false),
			ActiveDeadlineSeconds:         ptr.To(int64(max(p.Timeout, time.Minute).Seconds())),
			TerminationGracePeriodSeconds: ptr.To(int64(5)),
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(1000)),
				RunAsGroup: ptr.To(int64(1000)), FSGroup: ptr.To(int64(1000)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Volumes:          append(volumes, trainVolumes...),
			ImagePullSecrets: pullSecrets,
			InitContainers: append([]corev1.Container{{
				Name: MavenContainer, Image: p.BuilderImage, WorkingDir: WorkDir,
				// The pom comes in an environment variable: no ConfigMap to create and remove.
				Command: []string{"sh", "-c", mavenScript(mvn, p.CA != nil)},
				Env: slices.Concat([]corev1.EnvVar{{Name: "POM", Value: string(pom)}, {Name: "APPLICATION", Value: string(p.Request.Project.Application())},
					{Name: "HOME", Value: WorkDir},
					{Name: "MAVEN_OPTS", Value: mavenOptions(mavenResources)}}, proxyEnv(proxySettings), p.Proxy),
				VolumeMounts:             mavenMounts,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext:          install.Restricted(),
				Resources:                mavenResources,
			}}, trainers...),
			Containers: []corev1.Container{{
				Name: PublishContainer, Image: p.PublishImage,
				Args:                     publishArgs,
				Env:                      slices.Clone(p.Proxy),
				VolumeMounts:             publishMounts,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext:          install.Restricted(),
				Resources:                resources("256Mi"),
			}},
		},
	}
	return pod, nil
}

// publish are the publish container's arguments and mounts, from mounts on, and the volumes of
// the registry's credentials and CA certificates it mounts besides them.
func (p Pod) publish(request string, mounts []corev1.VolumeMount) ([]string, []corev1.VolumeMount, []corev1.Volume) {
	args := []string{"builder", "publish", "--list=" + ListFile, "--task=" + request}
	if dir := p.appDir(); dir != "" {
		args = append(args, "--app="+dir)
	}
	var volumes []corev1.Volume
	if s := p.RegistrySecret; s != nil {
		volumes = append(volumes, corev1.Volume{Name: "registry", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: s.Name, Items: []corev1.KeyToPath{{Key: s.Key, Path: path.Base(RegistryAuthFile)}}}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "registry", MountPath: path.Dir(RegistryAuthFile), ReadOnly: true})
		args = append(args, "--registry-auth="+RegistryAuthFile)
	}
	if p.RegistryCA != nil {
		volumes = append(volumes, corev1.Volume{Name: "registry-ca", VolumeSource: *p.RegistryCA})
		mounts = append(mounts, corev1.VolumeMount{Name: "registry-ca", MountPath: RegistryCADir, ReadOnly: true})
		args = append(args, "--registry-ca="+RegistryCADir)
	}
	return args, mounts, volumes
}

// training are the containers that make the kit's class-data-sharing archive: the operator's
// binary lays the jars out as the image will hold them, then the base image's JVM starts the
// runtime once on them and writes the archive at exit. A training that fails fails the pod (see
// Untrainable), and the next attempt builds the kit without one. It returns them and the
// volumes they lay the kit out in.
func (p Pod) training(mounts []corev1.VolumeMount, tmp corev1.VolumeMount) ([]corev1.Container, []corev1.Volume) {
	if p.BaseImage == "" {
		return nil, nil
	}
	volumes := []corev1.Volume{
		{Name: "deployments", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "camel", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	laidOut := []corev1.VolumeMount{{Name: "deployments", MountPath: runtime.DeploymentsDir}, {Name: "camel", MountPath: runtime.CamelDir}}
	layout := []string{"builder", "layout", "--list=" + ListFile, "--training=" + TrainingDir, "--runtime-provider=" + p.Provider}
	if dir := p.appDir(); dir != "" {
		layout = append(layout, "--app="+dir)
	}
	// The runtime reads its configuration as an integration's does (Quarkus through a variable).
	env := []corev1.EnvVar{{Name: runtime.EnvPodIP, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}}, {Name: "HOME", Value: "/tmp"}}
	if provider, err := runtime.ProviderNamed(p.Provider); err == nil {
		for _, v := range provider.Env(runtime.Settings{}) {
			env = append(env, corev1.EnvVar{Name: v.Name, Value: v.Value})
		}
	}
	return []corev1.Container{{
		Name: LayoutContainer, Image: p.PublishImage,
		Args:                     layout,
		Env:                      slices.Clone(p.Proxy),
		VolumeMounts:             slices.Concat(mounts, []corev1.VolumeMount{tmp}, laidOut),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          install.Restricted(),
		Resources:                resources("128Mi"),
	}, {
		Name: TrainingContainer, Image: p.BaseImage, WorkingDir: runtime.DeploymentsDir,
		// java alone, which base images without a shell have too.
		Command: []string{"java", "@" + path.Join(TrainingDir, publish.ArgsFile)},
		// The runtime's servers bind the pod's address, as an integration's do.
		Env:                      env,
		VolumeMounts:             slices.Concat([]corev1.VolumeMount{{Name: "workspace", MountPath: WorkDir}, tmp}, laidOut),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          install.Restricted(),
		Resources:                resources("512Mi"),
	}}, volumes
}

// mavenScript writes the pom and runs mvn; on failure Maven's [ERROR] lines,
// first ones first (the cause comes before its consequences), become the
// container's termination message. With ca, each certificate of CADir's files
// is first added to a copy of the Java trust store that Maven then uses.
// mavenArgs are Maven's arguments before the settings: the platform's, each quoted as one word
// of the shell, then those that list the project's dependencies.
func (p Pod) mavenArgs() []string {
	var args []string
	for _, a := range p.MavenArgs {
		args = append(args, shellQuote(a))
	}
	if p.Request.Project.Build != nil {
		return append(args, maven.PackageArgs(LocalRepository)...)
	}
	return append(args, maven.ListArgs(ListFile, LocalRepository)...)
}

// AppDir is where Maven builds the application of a provider that builds one.
func (p Pod) appDir() string {
	if b := p.Request.Project.Build; b != nil {
		return path.Join(WorkDir, b.Output)
	}
	return ""
}

// shellQuote quotes s as one word of the POSIX shell that runs Maven.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func mavenScript(mvn string, ca bool) string {
	trust := ""
	if ca {
		trust = `cp ` + javaTrustStore + ` /tmp/truststore || exit 1
n=0
for f in ` + CADir + `/*.crt; do
  cert=
  while IFS= read -r line; do
    cert="$cert$line
"
    case "$line" in *'-----END CERTIFICATE-----'*)
      n=$((n+1))
      printf '%s' "$cert" > /tmp/ca.pem
      if ! keytool -importcert -noprompt -alias "caravan-ca-$n" -file /tmp/ca.pem -keystore /tmp/truststore -storepass changeit > /tmp/keytool.log 2>&1; then
        cat /tmp/keytool.log
        echo "[ERROR] keytool refused certificate $n of $f" | tee /dev/termination-log
        exit 1
      fi
      cert= ;;
    esac
  done < "$f"
done
echo "Maven trusts $n more certificates"
export MAVEN_OPTS="$MAVEN_OPTS -Djavax.net.ssl.trustStore=/tmp/truststore -Djavax.net.ssl.trustStorePassword=changeit"
`
	}
	return trust + `if [ -n "$MAVEN_PROXY_SETTINGS" ]; then printf '%s' "$MAVEN_PROXY_SETTINGS" > ` + proxySettingsFile + ` || exit 1; fi
printf '%s' "$POM" > pom.xml || exit 1
if [ -n "$APPLICATION" ]; then
  mkdir -p src/main/resources && printf '%s' "$APPLICATION" > src/main/resources/application.properties || exit 1
fi
` + mvn + ` > ` + MavenLog + ` 2>&1
rc=$?
cat ` + MavenLog + `
if [ $rc -ne 0 ]; then
  while IFS= read -r line; do case "$line" in '[ERROR]'*) printf '%s\n' "$line" ;; esac; done < ` + MavenLog + ` | head -c 4000 > /dev/termination-log
fi
exit $rc`
}

// mavenOptions are Maven's JVM options: a heap of three eighths of the container's memory
// limit (384m of the default 1Gi), the rest left to the JVM's own memory and to git, curl
// and the like.
func mavenOptions(r corev1.ResourceRequirements) string {
	heap := int64(384)
	if q, ok := r.Limits[corev1.ResourceMemory]; ok {
		heap = max(64, q.Value()*3/8>>20)
	}
	return fmt.Sprintf("-Xmx%dm -XX:+UseSerialGC -XX:TieredStopAtLevel=1", heap)
}

func resources(memory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)},
	}
}

// Untrainable is the outcome of a builder pod whose training of the kit's archive could not run
// (a base image without java, say): a pod without the training builds the kit.
type Untrainable struct {
	// Why says what the training's container reported.
	Why string
	// Image tells that the base image cannot run java at all, rather than this kit's training failing.
	Image bool
}

func (u *Untrainable) Error() string {
	return "the training start of the kit's archive could not run: " + u.Why
}

// Outcome reads a finished builder pod: its result, a build.Failure when the
// request's dependencies cannot exist, another error when a retry may succeed,
// and done false while it runs.
func Outcome(pod *corev1.Pod, camelVersion string) (res publish.Result, done bool, err error) {
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		msg := terminated(pod.Status.ContainerStatuses, PublishContainer)
		if msg == nil {
			return publish.Result{}, true, fmt.Errorf("the builder pod %s succeeded without a result", pod.Name)
		}
		if err := json.Unmarshal([]byte(msg.Message), &res); err != nil {
			return publish.Result{}, true, fmt.Errorf("reading the result of builder pod %s: %w", pod.Name, err)
		}
		return res, true, nil
	case corev1.PodFailed:
		if m := terminated(pod.Status.InitContainerStatuses, MavenContainer); m != nil && m.ExitCode != 0 {
			return publish.Result{}, true, maven.Explain([]byte(m.Message), camelVersion, fmt.Errorf("maven exited with %d", m.ExitCode))
		}
		for _, name := range []string{LayoutContainer, TrainingContainer} {
			if m := terminated(pod.Status.InitContainerStatuses, name); m != nil && m.ExitCode != 0 {
				return publish.Result{}, true, &Untrainable{Why: fmt.Sprintf("its %s container exited with %d: %s", name, m.ExitCode, strings.TrimSpace(m.Message)),
					Image: name == TrainingContainer && (m.ExitCode >= 126 && m.ExitCode <= 128 || strings.Contains(m.Message, "not found"))}
			}
		}
		if m := terminated(pod.Status.ContainerStatuses, PublishContainer); m != nil && m.ExitCode != 0 {
			return publish.Result{}, true, fmt.Errorf("publishing the kit image failed (exit %d): %s", m.ExitCode, strings.TrimSpace(m.Message))
		}
		return publish.Result{}, true, fmt.Errorf("the builder pod %s failed: %s %s", pod.Name, pod.Status.Reason, pod.Status.Message)
	}
	return publish.Result{}, false, nil
}

// Took is how long the init container name of pod ran, 0 when it did not end.
func Took(pod *corev1.Pod, name string) time.Duration {
	t := terminated(pod.Status.InitContainerStatuses, name)
	if t == nil {
		return 0
	}
	return t.FinishedAt.Sub(t.StartedAt.Time)
}

func terminated(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStateTerminated {
	for _, s := range statuses {
		if s.Name == name && s.State.Terminated != nil {
			return s.State.Terminated
		}
	}
	return nil
}

// proxySettings are the Maven settings of p.Proxy, "" without a proxy or with the platform's
// own settings, which say the proxies themselves.
func (p Pod) proxySettings() (string, error) {
	if p.Settings != nil {
		return "", nil
	}
	get := func(name string) string {
		for _, v := range p.Proxy {
			if v.Name == name {
				return v.Value
			}
		}
		return ""
	}
	settings, err := maven.ProxySettings(get("HTTP_PROXY"), get("HTTPS_PROXY"), get("NO_PROXY"))
	if err != nil {
		return "", &build.Failure{Message: "the operator's proxy: " + err.Error()}
	}
	return settings, nil
}

// proxyEnv is the variable that gives the Maven container its proxy settings, none without them.
func proxyEnv(settings string) []corev1.EnvVar {
	if settings == "" {
		return nil
	}
	return []corev1.EnvVar{{Name: "MAVEN_PROXY_SETTINGS", Value: settings}}
}

// mavenResources are the Maven container's requests and limits: the builder's defaults, each
// replaced by MavenResources' own; a default limit under a request set is raised to it.
func (p Pod) mavenResources() corev1.ResourceRequirements {
	r := resources("1Gi")
	maps.Copy(r.Requests, p.MavenResources.Requests)
	maps.Copy(r.Limits, p.MavenResources.Limits)
	for name, req := range r.Requests {
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			r.Limits[name] = req
		}
	}
	return r
}
