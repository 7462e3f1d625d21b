package buildcontroller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/builderpod"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/publish"
	"github.com/caravan-dev/caravan/internal/runtime"
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
	// Proxy are the operator's proxy variables, which builder pods get, Maven as its proxies.
	Proxy []corev1.EnvVar

	// untrainable are the base images whose JVM could not train a kit's archive, by why: their
	// kits' pods train no more, while the operator runs.
	untrainable sync.Map
}

// Build is the build.Func of the pod strategy: it starts the attempt's pod
// (or finds it, after a restart), waits for it to end, and removes it.
func (p *PodBuilder) Build(ctx context.Context, j build.Job) (build.Output, error) {
	if p.PublishImage == "" {
		return build.Output{}, &build.Failure{Message: "the operator runs outside a pod, so it knows no image to run builder pods with: " +
			"set the platform's spec.build.buildConfiguration.strategy to dependency-list, which builds kits without jars in the operator"}
	}
	pod, err := p.pod(j)
	if err != nil {
		return build.Output{}, err
	}
	if err := p.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return build.Output{}, fmt.Errorf("creating the builder pod %s: %w", pod.Name, err)
	}
	defer p.remove(pod)
	current := pod
	for {
		read := &corev1.Pod{}
		if err := p.Reader.Get(ctx, client.ObjectKeyFromObject(pod), read); err != nil {
			if ctx.Err() != nil {
				return build.Output{}, stuck(current, ctx.Err())
			}
			return build.Output{}, fmt.Errorf("reading the builder pod %s: %w", pod.Name, err)
		}
		current = read
		if j.Report != nil {
			j.Report(waitingFor(current))
		}
		res, done, err := builderpod.Outcome(current, j.Spec.RuntimeVersion)
		if done {
			if u, ok := errors.AsType[*builderpod.Untrainable](err); ok {
				// The next attempt's pod builds the kit without an archive, and says why: every kit of
				// a base image that cannot run java, this kit alone when its training failed.
				p.untrainable.Store(untrainableKey(j, u.Image), u.Why)
				return build.Output{}, fmt.Errorf("%w; the next attempt builds the kit without one", err)
			}
			if err != nil {
				return build.Output{}, err
			}
			return p.output(ctx, j, res, current)
		}
		select {
		case <-ctx.Done():
			return build.Output{}, stuck(current, ctx.Err())
		case <-time.After(p.Poll):
		}
	}
}

// output reads the artifacts of a pushed kit image from its config, where
// the builder pod listed them: its termination message is too small to.
func (p *PodBuilder) output(ctx context.Context, j build.Job, res publish.Result, pod *corev1.Pod) (build.Output, error) {
	img, err := image.Pull(ctx, j.Registry, res.Image)
	if err != nil {
		return build.Output{}, err
	}
	arts, err := publish.ImageArtifacts(img)
	if err != nil {
		return build.Output{}, fmt.Errorf("the kit image %s: %w", res.Image, err)
	}
	out := build.Output{Result: res.Result, Artifacts: publish.StatusArtifacts(arts),
		Maven: &build.MavenOutput{Added: res.Added, DownloadedFiles: res.Downloads.Files, DownloadedBytes: res.Downloads.Bytes}}
	if j.Parent != nil {
		out.Maven.Parent = j.Parent.Kit
	}
	out.Archive = &build.ArchiveOutput{Classes: res.Archive.Classes, Size: res.Archive.Size, Why: res.Archive.Why,
		Training: builderpod.Took(pod, builderpod.TrainingContainer)}
	if why := p.untrained(j); why != "" {
		out.Archive.Why = why
	}
	return out, nil
}

// stuck wraps the error that ended the wait for a pod with what held the pod
// back: a scheduling failure (an unbound Maven cache claim, say) or a
// container that could not start.
func stuck(pod *corev1.Pod, err error) error {
	if held := heldBack(pod); held != "" {
		return fmt.Errorf("%w: %s", err, held)
	}
	return err
}

// waitingFor says what a builder pod waits for, and since when: its scheduling, or a container
// that cannot start (an image it cannot pull, say); "" while nothing holds it back.
func waitingFor(pod *corev1.Pod) string {
	held := heldBack(pod)
	if held == "" {
		return ""
	}
	since := pod.CreationTimestamp.Time
	for _, c := range pod.Status.Conditions {
		if (c.Type == corev1.PodScheduled || c.Type == corev1.PodInitialized || c.Type == corev1.ContainersReady) &&
			c.Status == corev1.ConditionFalse && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	if since.IsZero() {
		return held
	}
	return fmt.Sprintf("%s (since %s)", held, since.UTC().Format(time.RFC3339))
}

// heldBack says what holds a builder pod back: an unscheduled pod, or a container waiting with
// a message (ErrImagePull, ImagePullBackOff, CreateContainerConfigError, ...); "" for nothing.
func heldBack(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
			return fmt.Sprintf("the builder pod %s was not scheduled: %s", pod.Name, c.Message)
		}
	}
	for _, s := range append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if w := s.State.Waiting; w != nil && w.Message != "" {
			return fmt.Sprintf("container %s of the builder pod %s is waiting: %s: %s", s.Name, pod.Name, w.Reason, w.Message)
		}
	}
	return ""
}

// pod renders the builder pod of a job.
func (p *PodBuilder) pod(j build.Job) (*corev1.Pod, error) {
	provider, err := runtime.ProviderNamed(j.Spec.RuntimeProvider)
	if err != nil {
		return nil, &build.Failure{Message: err.Error()}
	}
	deps, err := runtime.ParseDependencies(j.Spec.Dependencies)
	if err != nil {
		return nil, &build.Failure{Message: err.Error()}
	}
	if _, err := maven.ParseRepositories(j.Spec.Repositories); err != nil {
		return nil, &build.Failure{Message: "spec.repositories: " + err.Error()}
	}
	project := maven.NewProject(provider, j.Spec.RuntimeVersion, deps, j.Spec.Repositories)
	builderImage, err := j.Registry.Qualify(j.BuilderImage)
	if err != nil {
		return nil, &build.Failure{Message: fmt.Sprintf("the builder image %q: %v", j.BuilderImage, err)}
	}
	// The kit's archive is made with the JVM of the image it is layered onto, unless it cannot.
	baseImage, err := j.Registry.Qualify(j.Spec.BaseImage)
	if err != nil {
		return nil, &build.Failure{Message: fmt.Sprintf("the base image %q: %v", j.Spec.BaseImage, err)}
	}
	if p.untrained(j) != "" {
		baseImage = ""
	}
	req := publish.Request{Project: project, Parent: j.Parent, BaseImage: j.Spec.BaseImage, Repository: j.Spec.Name(), Tag: j.Spec.Hash(),
		RegistryAddress: j.Registry.Address, Insecure: j.Registry.Insecure, Organization: j.Registry.Organization}
	var cache *corev1.VolumeSource
	if j.MavenCache != "" {
		cache = &corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: j.MavenCache}}
	}
	return builderpod.Pod{
		Name: podName(j), Namespace: p.Namespace,
		Labels:       map[string]string{camelv1.OperatorIDLabel: p.OperatorID, BuildLabel: j.Build.Name},
		BuilderImage: builderImage, PublishImage: p.PublishImage, BaseImage: baseImage, Provider: provider.Name(), Request: req, Timeout: j.Timeout, Cache: cache,
		Settings: j.MavenSettings, CA: j.MavenCA, RegistrySecret: j.RegistrySecret, RegistryCA: j.RegistryCA,
		MavenResources: j.MavenResources, Proxy: p.Proxy, MavenArgs: j.MavenArgs,
		NodeSelector: j.PodNodeSelector, Annotations: j.PodAnnotations,
	}.Render()
}

// untrainableKey keys PodBuilder.untrainable: the job's base image, or its kit's spec.
func untrainableKey(j build.Job, image bool) string {
	if image {
		return "image " + j.Spec.BaseImage
	}
	return "kit " + j.Spec.Hash()
}

// untrained says why the job's kit is built without a training start, "" when it gets one.
func (p *PodBuilder) untrained(j build.Job) string {
	if why, ok := p.untrainable.Load(untrainableKey(j, true)); ok {
		return fmt.Sprintf("the base image %s could not run the training start: %s", j.Spec.BaseImage, why)
	}
	if why, ok := p.untrainable.Load(untrainableKey(j, false)); ok {
		return fmt.Sprintf("the training start on the kit's jars failed: %s", why)
	}
	return ""
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
