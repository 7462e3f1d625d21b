// Package build runs kit image builds for the operator, in builder pods or, for a dependency list, in the
// operator itself. It is a queue with a limit on the builds running at once, a timeout per build, and cancellation. The
// Build reconciler submits jobs and reads their state; the runner tells it, through notify, when a
// job starts or ends.
package build

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/kit"
)

// MaxAttempts is how many times a build is tried before it is in Error.
const MaxAttempts = 5

// Backoff is the wait before attempt n+1 after n failed attempts:
// base, 2×base, 4×base… capped at 32×base.
func Backoff(base time.Duration, failed int32) time.Duration {
	if failed < 1 {
		return 0
	}
	return base << min(failed-1, 5)
}

// Job is one attempt at building one kit image.
type Job struct {
	// Build names the Build resource.
	Build    types.NamespacedName
	Attempt  int32
	Spec     kit.Spec
	Registry image.Registry
	Timeout  time.Duration
	// Strategy is where the build runs and what it makes: StrategyPod or StrategyDependencyList.
	Strategy string
	// BuilderImage runs Maven in a builder pod (StrategyPod).
	BuilderImage string
	// Parent, when set, is the image of a Ready kit whose dependencies this
	// kit's contain, and its artifacts (StrategyPod): the kit adds only what
	// it lacks.
	Parent *Parent
	// MavenCache names the claim of Maven's local repository (StrategyPod);
	// empty, each pod starts with an empty one.
	MavenCache string
	// MavenSettings is a volume whose settings.xml is Maven's settings (StrategyPod); nil, Maven's own.
	MavenSettings *corev1.VolumeSource
	// MavenArgs are the platform's Maven properties and options, for Maven's command line (StrategyPod).
	MavenArgs []string
	// PodNodeSelector and PodAnnotations are the builder pod's (StrategyPod).
	PodNodeSelector, PodAnnotations map[string]string
	// Report, set by the Runner, records what the running attempt waits for ("" for nothing it
	// can name), for the Build's status; a Func may call it from any goroutine.
	Report func(waiting string) `json:"-"`
	// RegistrySecret is the key of the Secret that holds Registry's credentials, a Docker config
	// (StrategyPod: the builder pod pushes with them); nil, anonymous.
	RegistrySecret *corev1.SecretKeySelector
	// MavenCA is a volume of PEM certificates Maven trusts besides the public ones (StrategyPod).
	MavenCA *corev1.VolumeSource
	// RegistryCA is a volume of the registry's CA certificates, *.crt files (StrategyPod); the
	// dependency-list strategy has them in Registry.
	RegistryCA *corev1.VolumeSource
	// MavenResources are the requests and limits the platform sets for Maven's container
	// (StrategyPod), each over the builder's default.
	MavenResources corev1.ResourceRequirements
}

// Parent is a Ready kit an incremental kit builds on.
type Parent struct {
	// Kit names it; Image is its image by digest.
	Kit   string `json:"kit,omitempty"`
	Image string `json:"image"`
	// Artifacts are its jars, each at its Target in the image.
	Artifacts []camelv1.Artifact `json:"artifacts"`
}

// Build strategies, as Camel K names them (the platform's
// spec.build.buildConfiguration.strategy).
const (
	// StrategyDependencyList builds in the operator, in Go: kits that list their dependencies and
	// hold no jars, for clusters whose integration pods are simulated. It is Caravan's own.
	StrategyDependencyList = "dependency-list"
	// StrategyRoutine is Camel K's build inside its operator, with Maven; Caravan's operator runs
	// no Maven, and refuses it.
	StrategyRoutine = "routine"
	// StrategyPod builds in a builder pod, with Maven: kits that hold the jars.
	StrategyPod = "pod"
)

// Func builds the image of a job.
type Func func(ctx context.Context, job Job) (Output, error)

// Output is a built kit image and the artifacts its kit layers hold.
type Output struct {
	image.Result
	Artifacts []camelv1.Artifact
	// Maven tells, for a kit of jars, how it was made; nil for a dependency list.
	Maven *MavenOutput
	// Archive says, for a kit of jars, whether its image holds a class-data-sharing archive.
	Archive *ArchiveOutput
}

// ArchiveOutput says whether a kit image holds a class-data-sharing archive, and why not.
type ArchiveOutput struct {
	// Classes and Size are the archive's, Why says why there is none.
	Classes int
	Size    int64
	Why     string
	// Training is how long the training start that made it took.
	Training time.Duration
}

// Reasons of ArchiveCondition.
const (
	ReasonArchived  = "Archived"
	ReasonNoArchive = "NoArchive"
)

// Condition is the ArchiveCondition of a, at generation.
func (a ArchiveOutput) Condition(generation int64) metav1.Condition {
	if a.Why != "" {
		return metav1.Condition{Type: kit.ArchiveCondition, Status: metav1.ConditionFalse, Reason: ReasonNoArchive, ObservedGeneration: generation,
			Message: "the kit image holds no class-data-sharing archive, so its integrations start without one: " + a.Why}
	}
	return metav1.Condition{Type: kit.ArchiveCondition, Status: metav1.ConditionTrue, Reason: ReasonArchived, ObservedGeneration: generation,
		Message: fmt.Sprintf("the kit image holds a class-data-sharing archive of %d classes (%.1f MiB, made by a training start of %s), which its integrations start from",
			a.Classes, float64(a.Size)/(1<<20), a.Training.Round(100*time.Millisecond))}
}

// MavenOutput tells how a kit of jars was made.
type MavenOutput struct {
	// Parent is the kit built on, "" for the base image.
	Parent string
	// Added counts the jars of the new layer.
	Added int
	// DownloadedFiles and DownloadedBytes are what Maven downloaded.
	DownloadedFiles int
	DownloadedBytes int64
}

// Summary says what a build made, for its Succeeded condition.
func (o Output) Summary() string {
	s := "built and pushed " + o.Image
	if m := o.Maven; m != nil {
		on := "the base image"
		if m.Parent != "" {
			on = "kit " + m.Parent
		}
		s += fmt.Sprintf(": %d jars, %d of them in a new layer on %s; Maven downloaded %d files (%d bytes)",
			len(o.Artifacts), m.Added, on, m.DownloadedFiles, m.DownloadedBytes)
		return s
	}
	return s + " " + DependencyListNote
}

// DependencyListNote says what a kit of the dependency-list strategy lacks, wherever one is reported.
const DependencyListNote = "by the dependency-list strategy: the kit holds its dependency list and no jars, so Camel does not run on it; " +
	"build with the platform's spec.build.buildConfiguration.strategy pod (the default) for kits that run"

// mavenSummary matches what Summary writes of a kit of jars.
var mavenSummary = regexp.MustCompile(`: (\d+) jars, (\d+) of them in a new layer on (?:kit (\S+)|the base image); Maven downloaded (\d+) files \((\d+) bytes\)$`)

// ParseSummary reads back what Summary wrote of a kit of jars: the jars,
// and the MavenOutput. It is false for a dependency list's summary.
func ParseSummary(s string) (jars int, m MavenOutput, ok bool) {
	g := mavenSummary.FindStringSubmatch(s)
	if g == nil {
		return 0, MavenOutput{}, false
	}
	jars, _ = strconv.Atoi(g[1])
	m.Added, _ = strconv.Atoi(g[2])
	m.Parent = g[3]
	m.DownloadedFiles, _ = strconv.Atoi(g[4])
	m.DownloadedBytes, _ = strconv.ParseInt(g[5], 10, 64)
	return jars, m, true
}

// State is where a job is.
type State int

// Job states.
const (
	Queued State = iota + 1
	Running
	Done
)

// Status is what the runner knows of a job.
type Status struct {
	State    State
	Attempt  int32
	Queued   time.Time
	Started  time.Time
	Finished time.Time
	Result   Output
	// Err is the failure of a Done job, nil when it succeeded.
	Err error
	// Waiting is what a Running job waits for now, as its Func reported it (Job.Report); "" for
	// nothing it can name.
	Waiting string
}

type job struct {
	Job
	status Status
	cancel context.CancelFunc
}

// Runner runs jobs, at most Limit at once.
type Runner struct {
	build  Func
	notify func(types.NamespacedName)
	// observe receives each job that ends, once (for metrics).
	observe func(Status)
	clock   clock.Clock

	mu      sync.Mutex
	limit   int
	jobs    map[types.NamespacedName]*job
	queue   []types.NamespacedName
	running int
}

// NewRunner returns a runner that builds with build, and calls notify
// whenever a job starts or ends and observe when it ends.
func NewRunner(build Func, notify func(types.NamespacedName), observe func(Status), clk clock.Clock, limit int) *Runner {
	return &Runner{build: build, notify: notify, observe: observe, clock: clk, limit: max(limit, 1),
		jobs: map[types.NamespacedName]*job{}}
}

// SetLimit changes how many builds may run at once (the platform's
// spec.build.maxRunningBuilds).
func (r *Runner) SetLimit(n int) {
	r.mu.Lock()
	r.limit = max(n, 1)
	r.mu.Unlock()
	r.schedule()
}

// Submit queues a job, unless a job for the same Build and attempt is
// already known; it returns the job's status either way.
func (r *Runner) Submit(j Job) Status {
	r.mu.Lock()
	if existing, ok := r.jobs[j.Build]; ok && existing.Attempt == j.Attempt {
		st := existing.status
		r.mu.Unlock()
		return st
	}
	if existing, ok := r.jobs[j.Build]; ok && existing.cancel != nil {
		existing.cancel()
	}
	r.jobs[j.Build] = &job{Job: j, status: Status{State: Queued, Attempt: j.Attempt, Queued: r.clock.Now()}}
	r.queue = append(r.queue, j.Build)
	r.mu.Unlock()
	r.schedule()
	st, _ := r.Status(j.Build)
	return st
}

// Status returns the status of the job of a Build.
func (r *Runner) Status(key types.NamespacedName) (Status, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[key]
	if !ok {
		return Status{}, false
	}
	return j.status, true
}

// Cancel stops the job of a Build, queued or running, and forgets it. It
// reports whether there was one.
func (r *Runner) Cancel(key types.NamespacedName) bool {
	r.mu.Lock()
	j, ok := r.jobs[key]
	if ok {
		delete(r.jobs, key)
		if j.cancel != nil {
			j.cancel()
		}
	}
	r.mu.Unlock()
	return ok
}

// Forget drops a finished job once its outcome is recorded.
func (r *Runner) Forget(key types.NamespacedName, attempt int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j, ok := r.jobs[key]; ok && j.Attempt == attempt && j.status.State == Done {
		delete(r.jobs, key)
	}
}

// Running is the number of jobs running now.
func (r *Runner) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running
}

// schedule starts queued jobs while there is room.
func (r *Runner) schedule() {
	var started []types.NamespacedName
	r.mu.Lock()
	for r.running < r.limit && len(r.queue) > 0 {
		key := r.queue[0]
		r.queue = r.queue[1:]
		j, ok := r.jobs[key]
		if !ok || j.status.State != Queued {
			continue // cancelled, or superseded by a newer attempt
		}
		ctx, cancel := context.WithTimeout(context.Background(), j.Timeout)
		j.cancel = cancel
		j.status.State, j.status.Started = Running, r.clock.Now()
		r.running++
		started = append(started, key)
		go r.run(ctx, j)
	}
	r.mu.Unlock()
	for _, key := range started {
		r.notify(key)
	}
}

func (r *Runner) run(ctx context.Context, j *job) {
	run := j.Job
	run.Report = func(waiting string) { r.report(j, waiting) }
	res, err := r.build(ctx, run)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("the build did not finish within its timeout of %s (the platform's spec.build.timeout): %w", j.Timeout, err)
	}
	j.cancel()
	r.mu.Lock()
	r.running--
	current, tracked := r.jobs[j.Build]
	tracked = tracked && current == j
	if tracked {
		j.status.State, j.status.Finished, j.status.Result, j.status.Err = Done, r.clock.Now(), res, err
	}
	st := j.status
	r.mu.Unlock()
	if tracked {
		r.observe(st)
		r.notify(j.Build)
	}
	r.schedule()
}

// report records what a running job waits for, and tells when it changed.
func (r *Runner) report(j *job, waiting string) {
	r.mu.Lock()
	current, tracked := r.jobs[j.Build]
	changed := tracked && current == j && j.status.State == Running && j.status.Waiting != waiting
	if changed {
		j.status.Waiting = waiting
	}
	r.mu.Unlock()
	if changed {
		r.notify(j.Build)
	}
}

// BuildImage is the Func that builds for real: the kit layer of the job's spec, on its base image.
// The image is pushed to the job's registry as the kit's name, tagged with its hash.
func BuildImage(ctx context.Context, j Job) (Output, error) {
	files, err := kit.Layer(j.Spec)
	if err != nil {
		return Output{}, err
	}
	res, err := image.Build(ctx, j.Registry, j.Spec.BaseImage, files, j.Spec.Name(), j.Spec.Hash())
	if err != nil {
		return Output{}, err
	}
	arts := make([]camelv1.Artifact, 0, len(files))
	for _, f := range files {
		arts = append(arts, camelv1.Artifact{ID: f.Path, Target: f.Path})
	}
	return Output{Result: res, Artifacts: arts}, nil
}
