// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// provider is the runtime of the integration's kit: Input.Provider, else the default one.
func (in Input) provider() runtime.Provider {
	if in.Provider != nil {
		return in.Provider
	}
	return runtime.Main
}

// managed tells whether the integration runs on a kit, with the runtime contract, rather
// than on an image of the container trait, as Camel K tells a managed build.
func (in Input) managed() bool {
	return !Sourceless(in.Integration) && in.Traits.Container.Image() == ""
}

// command is the provider's command line before the heap is sized: the jvm trait's options
// first, then the classpath with the resource directories, the directory of every volume of
// the mount trait (and the file of one mounting a single key, so that a mounted jar is on it,
// as in Camel K) and the jvm trait's entries. The JVM skips a file on it that is not a jar. With
// the kit's archive, the kit's jars come through its classpath jar and the JVM maps the archive;
// the JVM uses it when the entries before the jars do not exist, and says so in one line when not.
func (in Input) command() (command, args []string) {
	cp := []string{runtime.ResourceConfigMapsDir, runtime.ResourceSecretsDir}
	for _, mv := range in.Traits.Mount.Volumes() {
		cp = append(cp, mv.Dir())
		if mv.Mount.SubPath != "" {
			cp = append(cp, mv.Mount.MountPath)
		}
	}
	cp = append(cp, in.Traits.JVM.Classpath()...)
	l := runtime.Launch{JVMOptions: in.Traits.JVM.Options(), Classpath: cp}
	if in.Archive {
		l.KitClasspathJar, l.Archive = true, runtime.ArchivePath
	}
	return in.provider().Command(l)
}

// Variables Camel K sets on an integration's container besides the operator's own.
const (
	EnvNamespace       = "NAMESPACE"
	EnvPodName         = "POD_NAME"
	EnvMountConfigMaps = "CAMEL_K_MOUNT_PATH_CONFIGMAPS"
	EnvMountSecrets    = "CAMEL_K_MOUNT_PATH_SECRETS"
)

// ProxyEnvVars are the operator's variables the environment trait's httpProxy passes on.
var ProxyEnvVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}

// podEnv are the variables Camel K's environment trait sets: the pod's namespace and name
// (containerMeta), where the configurations are mounted, and the operator's proxies
// (httpProxy). The operator's id and version are left out on purpose: a move to another
// operator, or an upgrade, would restart every pod.
func (in Input) podEnv() []corev1.EnvVar {
	var env []corev1.EnvVar
	if in.Traits.Environment.ContainerMeta() {
		field := func(name, path string) corev1.EnvVar {
			return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
		}
		env = append(env, field(EnvNamespace, "metadata.namespace"), field(EnvPodName, "metadata.name"))
	}
	env = append(env, corev1.EnvVar{Name: EnvMountConfigMaps, Value: runtime.ConfigConfigMapsDir},
		corev1.EnvVar{Name: EnvMountSecrets, Value: runtime.ConfigSecretsDir})
	if in.Traits.Environment.HTTPProxy() {
		for _, v := range in.Proxy {
			if slices.Contains(ProxyEnvVars, v.Name) && v.Value != "" {
				env = append(env, corev1.EnvVar{Name: v.Name, Value: v.Value})
			}
		}
	}
	return env
}

// overrideEnv is base with each of vars replacing the variable of its name, or added after.
func overrideEnv(base, vars []corev1.EnvVar) []corev1.EnvVar {
	out := slices.Clone(base)
	for _, v := range vars {
		if i := slices.IndexFunc(out, func(b corev1.EnvVar) bool { return b.Name == v.Name }); i >= 0 {
			out[i] = v
			continue
		}
		out = append(out, v)
	}
	return out
}

// runtimeEnv are the variables the runtime reads: the pod's address, which its properties
// name, and the provider's own.
func (in Input) runtimeEnv() []corev1.EnvVar {
	env := []corev1.EnvVar{{Name: runtime.EnvPodIP, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}}}
	for _, v := range in.provider().Env(in.settings()) {
		env = append(env, corev1.EnvVar{Name: v.Name, Value: v.Value})
	}
	return env
}

// runtimeProperties are the provider's properties of the runtime contract, written before the
// camel trait's so that those win.
func (in Input) runtimeProperties() []string {
	return in.provider().Properties(in.settings())
}

// settings are what the integration decides of the runtime's properties and variables.
func (in Input) settings() runtime.Settings {
	return runtime.Settings{
		ShutdownTimeout: shutdownTimeout(gracePeriod(in.Integration.Spec.Template)),
		ConfigDirs:      in.Traits.Mount.ConfigDirs(),
		HTTPPort:        in.runtimePort(),
		Metrics:         in.Traits.Prometheus.Enabled(),
		OneShot:         in.runsAsCronJob(),
	}
}

// runsAsCronJob tells whether the integration runs as the cron trait's CronJob.
func (in Input) runsAsCronJob() bool {
	_, _, ok := in.Traits.Cron.CronJob()
	return ok && !Sourceless(in.Integration)
}

// gracePeriod is the pod's termination grace period in seconds: the template's, else Kubernetes' default.
func gracePeriod(tpl *camelv1.RawObject) int64 {
	pod, err := applyTemplate(corev1.PodTemplateSpec{}, tpl)
	if err != nil || pod.Spec.TerminationGracePeriodSeconds == nil {
		// A bad template fails the Deployment, which says why.
		return corev1.DefaultTerminationGracePeriodSeconds
	}
	return *pod.Spec.TerminationGracePeriodSeconds
}

// shutdownTimeout is how long the runtime waits for its routes to stop, in seconds: a bit
// under the grace period, so that it stops before it is killed.
func shutdownTimeout(grace int64) int64 {
	margin := int64(5)
	if grace <= 10 {
		margin = grace / 2
	}
	return max(1, grace-margin)
}

// sizeHeap adds the heap option, sized from the memory limit of the main container as the
// template left it, to the java command line that container runs, unless the template
// replaced that command line.
func (in Input) sizeHeap(pod *corev1.PodTemplateSpec, main corev1.Container) {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if c.Name != main.Name || !slices.Equal(c.Command, main.Command) || !slices.Equal(c.Args, main.Args) {
			continue
		}
		var limit *resource.Quantity
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			limit = &q
		}
		heap := in.Traits.JVM.MaxHeap(limit)
		if heap != "" {
			at := len(in.Traits.JVM.Options())
			c.Args = slices.Insert(slices.Clone(c.Args), at, heap)
		}
	}
}
