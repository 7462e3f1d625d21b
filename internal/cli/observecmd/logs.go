package observecmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// LogsOptions are the options of `caravan logs`.
type LogsOptions struct {
	cmdutil.Cluster

	Name      string
	Follow    bool
	Container string
	Tail      int64
	Since     time.Duration
	// Timestamps starts each line with its RFC 3339 time.
	Timestamps bool
	// Previous prints the run of the container before the current one.
	Previous bool

	// Set by Complete.

	genericiooptions.IOStreams
}

// NewCmdLogs builds `caravan logs` and `caravan log`, which print an integration's logs.
func NewCmdLogs(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &LogsOptions{Cluster: cmdutil.Cluster{Kube: kube}, Tail: -1, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "logs NAME",
		Aliases: []string{"log"},
		Short:   "Print the logs of an integration's pods",
		Long: `Print the logs of the pods of an integration (those labelled
camel.apache.org/integration=NAME); with -f, wait for its first pod and follow
them as they grow, across restarts and new pods. With several pods each line
starts with [POD]. The main container's logs are printed unless -c names another
container. Called as "caravan log", kamel's name, it follows unless -f=false.`,
		Example: `  # Follow the logs of the integration orders
  caravan logs orders -f

  # The last 20 lines of each pod
  caravan logs orders --tail 20

  # The lines of the last ten minutes, with their times
  caravan logs orders --since 10m --timestamps

  # The log of the run before a container's restart
  caravan logs orders --previous`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if cmd.CalledAs() == "log" && !cmd.Flags().Changed("follow") {
				o.Follow = true
			}
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.Follow, "follow", "f", false, "follow the logs as they grow, until interrupted")
	f.StringVarP(&o.Container, "container", "c", "", "the container whose logs to print (default: the integration's main container)")
	f.Int64Var(&o.Tail, "tail", o.Tail, "print only the last N lines of each pod, -1 for all")
	f.DurationVar(&o.Since, "since", 0, "print only the lines newer than this, such as 5s, 2m or 3h")
	f.BoolVar(&o.Timestamps, "timestamps", false, "start each line with its time")
	f.BoolVarP(&o.Previous, "previous", "p", false, "print the log of the container's run before the current one")
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *LogsOptions) Complete() error { return nil }

// Preamble asks for the namespace and the clientset that reads pod logs.
func (o *LogsOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedPods
}

// Validate checks the flags.
func (o *LogsOptions) Validate() error {
	if o.Tail < -1 {
		return fmt.Errorf("--tail must be 0 or more, got %d", o.Tail)
	}
	if o.Since < 0 {
		return fmt.Errorf("--since must be positive, got %s", o.Since)
	}
	if o.Previous && o.Follow {
		return errors.New("--previous prints a run that ended: it cannot be followed, drop -f")
	}
	return nil
}

// Run streams the logs of every pod of the integration, each pod's lines whole; with -f it
// follows them until interrupted.
func (o *LogsOptions) Run(ctx context.Context) error {
	if o.Follow {
		return o.follow(ctx)
	}
	pods, err := o.startedPods(ctx)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return fmt.Errorf("integration %q has no started pods in namespace %s: see caravan describe integration %s", o.Name, o.Namespace, o.Name)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i := range pods {
		prefix := ""
		if len(pods) > 1 {
			prefix = "[" + pods[i].Name + "] "
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = o.stream(ctx, &pods[i], logRequest{prefix: prefix, tail: o.Tail, since: o.Since, previous: o.Previous}, &mu)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startedPods lists the integration's pods that are not pending or going, by name.
func (o *LogsOptions) startedPods(ctx context.Context) ([]corev1.Pod, error) {
	list, err := o.Pods.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: o.podSelector()})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of integration %q: %w", o.Name, err)
	}
	return keepStarted(list.Items), nil
}

// podSelector selects the pods of the integration.
func (o *LogsOptions) podSelector() string {
	return labels.SelectorFromSet(labels.Set{camelv1.IntegrationLabel: o.Name}).String()
}

// keepStarted keeps the pods that are not pending or going, sorted by name.
func keepStarted(all []corev1.Pod) []corev1.Pod {
	pods := slices.DeleteFunc(all, func(p corev1.Pod) bool {
		return p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodPending || len(p.Spec.Containers) == 0
	})
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods
}

// storedPods are the pods an informer's store holds.
func storedPods(store cache.Store) []corev1.Pod {
	var pods []corev1.Pod
	for _, obj := range store.List() {
		if pod, ok := obj.(*corev1.Pod); ok {
			pods = append(pods, *pod)
		}
	}
	return pods
}

// follow streams each run of the container in each pod of the integration once, until
// interrupted: a container that restarts and the pods of a rollout, a move or a CronJob are
// followed too, as soon as the watch of the integration's pods shows them running. It waits for
// the first pod, as kamel does. Runs present at the start honour --tail; later ones print whole.
func (o *LogsOptions) follow(ctx context.Context) error {
	// A first list reports a failure (forbidden, no such namespace) at once: the watch's
	// informer would retry it until interrupted.
	if _, err := o.startedPods(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	streamed := map[string]bool{}
	var pods cache.Store
	startRuns := func(first bool) {
		started := keepStarted(storedPods(pods))
		for i := range started {
			req, ok := o.nextRun(&started[i], streamed)
			if !ok {
				continue
			}
			if len(started) > 1 {
				req.prefix = "[" + started[i].Name + "] "
			}
			if first {
				req.tail, req.since = o.Tail, o.Since
			} else if req.restart > 0 && !req.previous {
				fmt.Fprintf(o.ErrOut, "pod %s: container %s restarted (restart %d)\n", started[i].Name, req.container, req.restart)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := o.stream(ctx, &started[i], req, &mu); err != nil && ctx.Err() == nil {
					fmt.Fprintln(o.ErrOut, err)
				}
			}()
		}
	}
	_, err := watchtools.UntilWithSync(ctx, o.podListWatch(), &corev1.Pod{}, func(store cache.Store) (bool, error) {
		pods = store
		if len(keepStarted(storedPods(store))) == 0 {
			fmt.Fprintf(o.ErrOut, "waiting for a pod of integration %s in namespace %s to start\n", o.Name, o.Namespace)
		}
		startRuns(true)
		return false, nil
	}, func(watch.Event) (bool, error) {
		startRuns(false)
		return false, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("watching the pods of integration %q: %w", o.Name, err)
}

// podListWatch lists and watches the pods of the integration.
func (o *LogsOptions) podListWatch() cache.ListerWatcher {
	pods := o.Pods.CoreV1().Pods(o.Namespace)
	selector := o.podSelector()
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.LabelSelector = selector
			return pods.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = selector
			return pods.Watch(ctx, opts)
		},
	}, o.Pods)
}

// nextRun is the run of pod's container not streamed yet, if one has a log: the running or
// ended one, also while the container waits to restart. It marks it streamed. A run is
// told apart by its container ID and start, as restart counts are not reliably set at the time.
func (o *LogsOptions) nextRun(pod *corev1.Pod, streamed map[string]bool) (logRequest, bool) {
	req := logRequest{container: o.containerOf(pod), tail: -1}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != req.container {
			continue
		}
		req.restart = cs.RestartCount
		var id string
		var started metav1.Time
		switch st := cs.State; {
		case st.Running != nil:
			id, started = cs.ContainerID, st.Running.StartedAt
		case st.Terminated != nil:
			id, started = st.Terminated.ContainerID, st.Terminated.StartedAt
		case cs.LastTerminationState.Terminated != nil:
			// Waiting to restart: the run that ended is still the current one, as a kubelet
			// serves it, until the next run starts.
			last := cs.LastTerminationState.Terminated
			id, started = last.ContainerID, last.StartedAt
		default:
			return req, false
		}
		key := fmt.Sprintf("%s/%s/%s/%s", pod.UID, req.container, id, started.UTC().Format(time.RFC3339Nano))
		if streamed[key] {
			return req, false
		}
		streamed[key] = true
		return req, true
	}
	return req, false
}

// containerOf is the container whose log is printed: -c, or the pod's first.
func (o *LogsOptions) containerOf(pod *corev1.Pod) string {
	if o.Container != "" {
		return o.Container
	}
	return pod.Spec.Containers[0].Name
}

// logRequest is one container run's log to stream.
type logRequest struct {
	container string
	// restart is the run's restart count; previous reads the run before the current one.
	restart  int32
	previous bool
	// prefix starts each line; tail, when not negative, is how many last lines to print.
	prefix string
	// since, when positive, prints only the lines newer than it.
	since time.Duration
	tail  int64
}

// stream copies one container run's log to Out, a whole line at a time under mu.
func (o *LogsOptions) stream(ctx context.Context, pod *corev1.Pod, req logRequest, mu *sync.Mutex) error {
	if req.container == "" {
		req.container = o.containerOf(pod)
	}
	opts := &corev1.PodLogOptions{Container: req.container, Follow: o.Follow, Previous: req.previous, Timestamps: o.Timestamps}
	if req.tail >= 0 {
		opts.TailLines = &req.tail
	}
	if req.since > 0 {
		opts.SinceSeconds = ptr.To(int64(max(req.since.Round(time.Second), time.Second).Seconds()))
	}
	prefix := req.prefix
	r, err := o.Pods.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).Stream(ctx)
	if err != nil {
		return fmt.Errorf("reading the log of pod %s: %w", pod.Name, err)
	}
	defer r.Close()
	lines := bufio.NewReader(r)
	for {
		line, err := lines.ReadString('\n')
		if line != "" {
			mu.Lock()
			_, werr := io.WriteString(o.Out, prefix+line)
			if werr == nil && line[len(line)-1] != '\n' {
				_, werr = io.WriteString(o.Out, "\n")
			}
			mu.Unlock()
			if werr != nil {
				return werr
			}
		}
		switch {
		case err == io.EOF || ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("reading the log of pod %s: %w", pod.Name, err)
		}
	}
}
