// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/trait"
)

// The runtime a kit holds: camel-main on a Java image, with the kit's jars under DependenciesDir.
const (
	// DeploymentsDir is the working directory of the runtime, as in Camel K's images.
	DeploymentsDir = "/deployments"
	// DependenciesDir holds the kit's jars.
	DependenciesDir = DeploymentsDir + "/dependencies"
	// MainClass is camel-main's entry point.
	MainClass = "org.apache.camel.main.Main"
	// PropertiesOption is camel-main's option that names the properties file to load.
	PropertiesOption = "-propertiesLocation"
	// EnvPodIP is the variable holding the pod's address, which the runtime's servers bind to.
	EnvPodIP = "POD_IP"
)

// JavaCommand is the command of an integration that runs on a kit; its arguments are the
// JVM options, the classpath, MainClass and the properties file.
var JavaCommand = []string{"java"}

// Where the runtime's servers listen: the pod's own address, or every address when the
// pod has none in its environment.
const listenHost = "{{env:" + EnvPodIP + ":0.0.0.0}}"

// managed tells whether the integration runs on a kit, with the runtime contract, rather
// than on an image of the container trait, as Camel K tells a managed build.
func (in Input) managed() bool {
	return !Sourceless(in.Integration) && in.Traits.Container.Image() == ""
}

// javaArgs are the arguments of JavaCommand before the heap is sized: the jvm trait's
// options, the classpath, MainClass and the properties file.
func (in Input) javaArgs() []string {
	args := in.Traits.JVM.Options()
	return append(args, "-cp", strings.Join(in.classpath(), ":"), MainClass, PropertiesOption, "file:"+PropertiesPath)
}

// classpath is Camel K's: the resource directories, the directory of every volume of the
// mount trait, the jvm trait's entries, then the kit's jars; without duplicates.
func (in Input) classpath() []string {
	cp := []string{trait.ResourceConfigMapsDir, trait.ResourceSecretsDir}
	add := func(entry string) {
		if !slices.Contains(cp, entry) {
			cp = append(cp, entry)
		}
	}
	for _, mv := range in.Traits.Mount.Volumes() {
		add(mv.Dir())
	}
	for _, entry := range in.Traits.JVM.Classpath() {
		add(entry)
	}
	add(DependenciesDir + "/*")
	return cp
}

// runtimeEnv are the variables the runtime's properties read: the pod's address.
func runtimeEnv() []corev1.EnvVar {
	return []corev1.EnvVar{{Name: EnvPodIP, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}}}
}

// runtimeProperties are the properties of the runtime contract, key=value, written before the
// camel trait's so that those win. They say where the routes, Kamelets and configurations are
// and how long a stop may take, and put the management and HTTP servers on the pod's address.
func (in Input) runtimeProperties() []string {
	props := []string{
		"camel.main.routes-include-pattern=file:" + SourcesDir + "/*",
		"camel.main.shutdownTimeout=" + strconv.FormatInt(shutdownTimeout(gracePeriod(in.Integration.Spec.Template)), 10),
		"camel.component.kamelet.location=file:" + SourcesDir + ",classpath:kamelets",
	}
	if dirs := in.Traits.Mount.ConfigDirs(); len(dirs) > 0 {
		props = append(props, "camel.main.cloud-properties-location="+strings.Join(dirs, ","))
	}
	return append(props,
		"camel.management.enabled=true",
		"camel.management.port="+strconv.Itoa(int(trait.ManagementPort)),
		"camel.management.host="+listenHost,
		"camel.management.healthCheckEnabled=true",
		"camel.server.enabled=true",
		"camel.server.port="+strconv.Itoa(int(in.runtimePort())),
		"camel.server.host="+listenHost,
	)
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
