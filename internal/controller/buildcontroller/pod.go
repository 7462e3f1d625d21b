package buildcontroller

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/builder"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/maven"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;create;delete

// BuildLabel names, on a builder pod, the Build it runs an attempt of.
const BuildLabel = "camel.apache.org/build"

// PodBuilder runs a build's attempt in a builder pod of the operator's namespace.
type PodBuilder struct {
	// Client creates and deletes pods; Reader reads them, uncached.
	Client     client.Client
	Reader     client.Reader
	OperatorID string
	Namespace  string
	// PublishImage is the operator's own image, whose binary layers and
	// pushes the jars; empty when the operator runs outside a pod.
	PublishImage string
	// Poll is how often a running pod is read.
	Poll time.Duration
}

// Build is the build.Func of the pod strategy: it starts the attempt's pod
// (or finds it, after a restart), waits for it to end, and removes it.
func (p *PodBuilder) Build(ctx context.Context, j build.Job) (image.Result, error) {
	if p.PublishImage == "" {
		return image.Result{}, &builder.Failure{Message: "the operator runs outside a pod, so it knows no image to run builder pods with: " +
			"set the platform's spec.build.buildConfiguration.strategy to routine"}
	}
	pod, err := p.pod(j)
	if err != nil {
		return image.Result{}, err
	}
	if err := p.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return image.Result{}, fmt.Errorf("creating the builder pod %s: %w", pod.Name, err)
	}
	defer p.remove(pod)
	for {
		current := &corev1.Pod{}
		if err := p.Reader.Get(ctx, client.ObjectKeyFromObject(pod), current); err != nil {
			if ctx.Err() != nil {
				return image.Result{}, ctx.Err()
			}
			return image.Result{}, fmt.Errorf("reading the builder pod %s: %w", pod.Name, err)
		}
		res, done, err := builder.Outcome(current, j.Spec.RuntimeVersion)
		if done {
			return res.Result, err
		}
		select {
		case <-ctx.Done():
			return image.Result{}, ctx.Err()
		case <-time.After(p.Poll):
		}
	}
}

// pod renders the builder pod of a job.
func (p *PodBuilder) pod(j build.Job) (*corev1.Pod, error) {
	project := maven.Project{CamelVersion: j.Spec.RuntimeVersion, Repositories: j.Spec.Repositories,
		Dependencies: maven.RuntimeDependencies()}
	for _, d := range j.Spec.Dependencies {
		c, err := maven.ParseDependency(d)
		if err != nil {
			return nil, &builder.Failure{Message: err.Error()}
		}
		project.Dependencies = append(project.Dependencies, c)
	}
	builderImage, err := j.Registry.Qualify(j.BuilderImage)
	if err != nil {
		return nil, &builder.Failure{Message: fmt.Sprintf("the builder image %q: %v", j.BuilderImage, err)}
	}
	task := builder.Task{Project: project, BaseImage: j.Spec.BaseImage, Repository: j.Spec.Name(), Tag: j.Spec.Hash(),
		RegistryAddress: j.Registry.Address, Insecure: j.Registry.Insecure, Organization: j.Registry.Organization}
	return builder.Pod{
		Name: podName(j), Namespace: p.Namespace,
		Labels:       map[string]string{camelv1.OperatorIDLabel: p.OperatorID, BuildLabel: j.Build.Name},
		BuilderImage: builderImage, PublishImage: p.PublishImage, Task: task, Timeout: j.Timeout,
	}.Render()
}

// podName names the pod of a job's attempt: a retry gets a new pod.
func podName(j build.Job) string {
	suffix := "-builder-" + strconv.Itoa(int(j.Attempt))
	name := j.Build.Name
	if len(name)+len(suffix) > 63 {
		name = name[:63-len(suffix)]
	}
	return name + suffix
}

// remove deletes a builder pod once its attempt ended, whatever the outcome:
// a failure's log is already in the Build's status.
func (p *PodBuilder) remove(pod *corev1.Pod) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Client.Delete(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
		// The next attempt's pod has another name: a leftover only costs its room.
		ctrl.Log.WithName("builder").Error(err, "removing a builder pod", "pod", klog.KObj(pod))
	}
}
