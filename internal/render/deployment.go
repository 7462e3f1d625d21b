// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/trait"
)

// Names of the volumes that mount the integration's ConfigMap.
const (
	SourcesVolume    = "camel-sources"
	PropertiesVolume = "camel-properties"
	// TruststoreVolume holds the truststore of the jvm trait's CA certificates, Camel K's name.
	TruststoreVolume = "jvm-truststore"
)

// MetricsPortName names the container port of the runtime's metrics.
const MetricsPortName = "prometheus"

// RevisionHistoryLimit is the number of old ReplicaSets a Deployment keeps.
const RevisionHistoryLimit = int32(3)

// Deployment renders the Deployment <integration>, with one container running Input.Image
// with its provider's command. The container gets the identity and runtime env and the ConfigMap
// mounted at runtime.SourcesDir and runtime.PropertiesPath, then the user's spec.template is applied as a
// strategic merge patch; the heap is sized from the memory limit the template leaves. A
// sourceless integration runs the image's own entrypoint, with the properties mounted
// when it has some. It fails on the same source errors as ConfigMap, on a missing image
// and on a malformed template.
func Deployment(in Input) (*appsv1.Deployment, error) {
	pod, err := in.pod()
	if err != nil {
		return nil, err
	}
	it := in.Integration
	replicas := int32(1)
	if it.Spec.Replicas != nil {
		replicas = *it.Spec.Replicas
	}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: in.objectMeta(it.Name),
		Spec: appsv1.DeploymentSpec{
			Replicas:                &replicas,
			Selector:                &metav1.LabelSelector{MatchLabels: Selector(it.Name)},
			Template:                pod,
			Strategy:                in.Traits.Deployment.Strategy(),
			RevisionHistoryLimit:    ptr(RevisionHistoryLimit),
			ProgressDeadlineSeconds: in.Traits.Deployment.ProgressDeadlineSeconds(),
		},
	}
	stampHash(d)
	return d, nil
}

// pod is the pod template of the integration's Deployment or CronJob: the main container and
// the volumes, then the user's template, the heap sized from the limit it leaves.
func (in Input) pod() (corev1.PodTemplateSpec, error) {
	if err := in.check(); err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	it := in.Integration
	if in.Image == "" {
		return corev1.PodTemplateSpec{}, fmt.Errorf("render: integration %s: no image to run", it.Name)
	}
	files, err := integrationFiles(it)
	if err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	main := in.container()
	pod, err := applyTemplate(in.podTemplate(main, files), it.Spec.Template)
	if err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	if !in.ownEntrypoint() {
		in.sizeHeap(&pod, main)
	}
	return pod, checkIdentity(pod, main.Name, in.identityEnv())
}

// podTemplate is the pod before the user's template: labels, the main container, the
// ConfigMap volumes, the mount trait's volumes and the service account.
func (in Input) podTemplate(main corev1.Container, files []file) corev1.PodTemplateSpec {
	cm := ConfigMapName(in.Integration.Name)
	configMap := func(items []corev1.KeyToPath) corev1.VolumeSource {
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Items: items}}
	}
	var volumes []corev1.Volume
	if !Sourceless(in.Integration) {
		volumes = append(volumes, corev1.Volume{Name: SourcesVolume, VolumeSource: sourcesVolume(cm, files)})
	}
	if in.hasConfigMap() {
		volumes = append(volumes, corev1.Volume{Name: PropertiesVolume,
			VolumeSource: configMap([]corev1.KeyToPath{{Key: PropertiesKey, Path: PropertiesKey}})})
	}
	for _, mv := range in.Traits.Mount.Volumes() {
		volumes = append(volumes, mv.Volume)
	}
	it := in.Integration
	podLabels := in.Traits.Owner.Labels(it.Labels)
	if podLabels == nil {
		podLabels = map[string]string{}
	}
	maps.Copy(podLabels, Selector(it.Name))
	podAnnotations := in.Traits.Owner.Annotations(it.Annotations)
	if in.Traits.Prometheus.Enabled() {
		if podAnnotations == nil {
			podAnnotations = map[string]string{}
		}
		metrics := in.provider().Metrics()
		podAnnotations["prometheus.io/scrape"] = "true"
		podAnnotations["prometheus.io/port"] = strconv.Itoa(int(in.metricsPort()))
		podAnnotations["prometheus.io/path"] = metrics.Path
	}
	if in.Traits.Mount.HotReload() && len(in.MountedVersions) > 0 {
		if podAnnotations == nil {
			podAnnotations = map[string]string{}
		}
		podAnnotations[MountedVersionsAnnotation] = strings.Join(in.MountedVersions, ",")
	}
	var pullSecrets []corev1.LocalObjectReference
	if s := in.Traits.PullSecret.Secret(in.RegistrySecret); s != "" {
		pullSecrets = []corev1.LocalObjectReference{{Name: s}}
	}
	var inits []corev1.Container
	if ts := in.Traits.JVM.Truststore(); ts != nil {
		volumes = append(volumes, corev1.Volume{Name: TruststoreVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		inits = in.truststoreContainers(*ts, main)
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: podAnnotations},
		Spec: corev1.PodSpec{
			ServiceAccountName: it.Spec.ServiceAccountName,
			ImagePullSecrets:   pullSecrets,
			InitContainers:     inits,
			Containers:         []corev1.Container{main},
			Volumes:            volumes,
			Affinity:           in.Traits.Affinity.Pod(camelv1.IntegrationLabel, it.Name),
			Tolerations:        in.Traits.Toleration.Pod(),
		},
	}
}

// truststoreContainers are the init containers that build the jvm trait's truststore with the
// image's keytool, one command each, in order. They mount what the main container mounts from
// the mount trait, where the certificates are, and write the truststore's empty volume. They
// take the main container's resources, which a quota may demand of every container.
func (in Input) truststoreContainers(ts trait.Truststore, main corev1.Container) []corev1.Container {
	mounts := []corev1.VolumeMount{{Name: TruststoreVolume, MountPath: ts.Dir}}
	for _, mv := range in.Traits.Mount.Volumes() {
		mounts = append(mounts, mv.Mount)
	}
	var inits []corev1.Container
	for i, cmd := range ts.Commands() {
		inits = append(inits, corev1.Container{
			Name: fmt.Sprintf("truststore-%d", i), Image: main.Image, ImagePullPolicy: main.ImagePullPolicy,
			Command: cmd, Resources: main.Resources, VolumeMounts: mounts,
		})
	}
	return inits
}

// sourcesVolume mounts the files of the integration's ConfigMap cm; with contentRef sources, a
// projected volume adds each from its own ConfigMap. Without them the volume stays a plain
// ConfigMap volume, so that the pods of integrations without them do not roll.
func sourcesVolume(cm string, files []file) corev1.VolumeSource {
	own := map[string][]corev1.KeyToPath{}
	var refs []string
	for _, f := range files {
		if f.ref != "" && !slices.Contains(refs, f.ref) {
			refs = append(refs, f.ref)
		}
		name := cmp.Or(f.ref, cm)
		own[name] = append(own[name], corev1.KeyToPath{Key: f.key, Path: f.path})
	}
	if len(refs) == 0 {
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Items: own[cm]}}
	}
	var sources []corev1.VolumeProjection
	for _, name := range append([]string{cm}, refs...) {
		if len(own[name]) == 0 {
			continue
		}
		sources = append(sources, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: own[name]}})
	}
	return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}
}

// container is the main container.
func (in Input) container() corev1.Container {
	t := in.Traits
	c := corev1.Container{
		Name:            t.Container.Name(),
		Image:           in.Image,
		Resources:       t.Container.Resources(),
		ImagePullPolicy: t.Container.ImagePullPolicy(),
	}
	if in.ownEntrypoint() {
		c.Env = overrideEnv(slices.Concat(in.identityEnv(), in.podEnv()), jvmEnv(t))
		if !Sourceless(in.Integration) {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: SourcesVolume, MountPath: runtime.SourcesDir, ReadOnly: true})
		}
	} else {
		c.Command, c.Args = in.command()
		c.WorkingDir = runtime.DeploymentsDir
		// A JVM that exits in error leaves its last log lines (Camel's exception) as the
		// container's termination message.
		c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		c.Env = overrideEnv(overrideEnv(slices.Concat(in.identityEnv(), in.runtimeEnv(), in.podEnv()), configurationEnv(in.Integration)),
			t.Environment.Vars())
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: SourcesVolume, MountPath: runtime.SourcesDir, ReadOnly: true})
	}
	if in.hasConfigMap() {
		c.VolumeMounts = append(c.VolumeMounts,
			corev1.VolumeMount{Name: PropertiesVolume, MountPath: runtime.PropertiesPath, SubPath: PropertiesKey, ReadOnly: true})
	}
	for _, mv := range t.Mount.Volumes() {
		c.VolumeMounts = append(c.VolumeMounts, mv.Mount)
	}
	if ts := t.JVM.Truststore(); ts != nil {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: TruststoreVolume, MountPath: ts.Dir, ReadOnly: true})
	}
	if in.healthProbes() {
		c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = t.Health.Probes(in.provider().Health(in.runtimePort()))
	}
	if t.ContainerPort() != 0 {
		c.Ports = []corev1.ContainerPort{{Name: t.Container.PortName(), ContainerPort: in.runtimePort(), Protocol: corev1.ProtocolTCP}}
	}
	c.Ports = append(c.Ports, t.Container.Ports()...)
	if t.Prometheus.Enabled() && in.metricsPortName() == MetricsPortName {
		// The metrics port, which no Service exposes, as Camel K names it.
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: MetricsPortName, ContainerPort: in.metricsPort(), Protocol: corev1.ProtocolTCP})
	}
	return c
}

// ownEntrypoint tells whether the container runs its image's entrypoint rather than the runtime's
// command: for a sourceless integration, and with jvm.enabled false, as Camel K's jvm trait has it.
func (in Input) ownEntrypoint() bool {
	return Sourceless(in.Integration) || !in.Traits.JVM.Enabled()
}

// healthProbes tells whether the health trait probes the container: by default when it runs
// on a kit, as Camel K does for a managed build, and never while jvm.debug is on.
func (in Input) healthProbes() bool {
	return !in.Traits.JVM.Debug() && in.Traits.Health.Enabled(in.managed())
}

// jvmEnv are the environment trait's variables, with the jvm trait's options first in
// JAVA_TOOL_OPTIONS. The options go before what the environment trait sets there, if
// anything. They are the options of a sourceless integration, whose image launches
// its JVM its own way.
func jvmEnv(t trait.Traits) []corev1.EnvVar {
	vars := t.Environment.Vars()
	opts := t.JVM.ToolOptions()
	if opts == "" {
		return vars
	}
	for i, v := range vars {
		if v.Name == trait.EnvJavaToolOptions {
			vars[i].Value = strings.TrimSpace(opts + " " + v.Value)
			return vars
		}
	}
	return append(vars, corev1.EnvVar{Name: trait.EnvJavaToolOptions, Value: opts})
}

// metricsPort is where the runtime serves its metrics: the provider's port, else its HTTP server's.
func (in Input) metricsPort() int32 {
	if port := in.provider().Metrics().Port; port != 0 {
		return port
	}
	return in.runtimePort()
}

// metricsPortName names the container port a scraper reads the metrics from: MetricsPortName,
// or the HTTP server's port when it serves them and the container exposes it already.
func (in Input) metricsPortName() string {
	if in.provider().Metrics().Port == 0 && in.Traits.ContainerPort() != 0 {
		return in.Traits.Container.PortName()
	}
	return MetricsPortName
}

// runtimePort is the port of the runtime's HTTP server, which serves platform-http routes
// and is scraped for metrics: the container trait's port, else the provider's port property
// as camel.properties sets it, else DefaultPort.
func (in Input) runtimePort() int32 {
	if port := in.Traits.Container.Port(); port != 0 {
		return port
	}
	if key := in.provider().PortProperty(); key != "" {
		// The last entry of the key wins, as in the properties file the runtime reads.
		for _, entry := range slices.Backward(in.Traits.Camel.Properties()) {
			props, err := trait.ParseProperties(entry)
			if err != nil || len(props) == 0 || props[0].Key != key {
				continue
			}
			if port, err := strconv.ParseInt(strings.TrimSpace(props[0].Value), 10, 32); err == nil && port > 0 && port < 65536 {
				return int32(port)
			}
			break
		}
	}
	if port := in.Traits.ContainerPort(); port != 0 {
		return port
	}
	return trait.DefaultPort
}

// identityEnv are the variables the operator sets, in trait.ReservedEnvVars order;
// the properties file's only when it is mounted.
func (in Input) identityEnv() []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: trait.EnvIntegration, Value: in.Integration.Name},
		{Name: trait.EnvDigest, Value: in.Digest},
	}
	if in.hasConfigMap() {
		env = append(env, corev1.EnvVar{Name: trait.EnvConf, Value: runtime.PropertiesPath})
	}
	return append(env, corev1.EnvVar{Name: trait.EnvConfD, Value: runtime.ConfDDir})
}

// checkIdentity refuses a template that removed the main container or changed the
// variables the operator sets on it.
func checkIdentity(pod corev1.PodTemplateSpec, main string, identity []corev1.EnvVar) error {
	for _, c := range pod.Spec.Containers {
		if c.Name != main {
			continue
		}
		for _, want := range identity {
			for _, got := range c.Env {
				if got.Name == want.Name && (got.Value != want.Value || got.ValueFrom != nil) {
					return fmt.Errorf("spec.template: must not set %s on container %s, which the operator sets", want.Name, main)
				}
			}
		}
		return nil
	}
	return fmt.Errorf("spec.template: must not remove container %s", main)
}
