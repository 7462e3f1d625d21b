package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// LogsOptions are the options of `caravan logs`.
type LogsOptions struct {
	Kube *KubeFlags

	Name      string
	Follow    bool
	Container string
	Tail      int64

	// Set by Complete.
	namespace string
	pods      kubernetes.Interface

	genericiooptions.IOStreams
}

func newCmdLogs(kube *KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &LogsOptions{Kube: kube, Tail: -1, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the logs of an integration's pods",
		Long: `Print the logs of the pods of an integration (those labelled
camel.apache.org/integration=NAME), as kamel logs does; with -f, follow them as
they grow. With several pods each line starts with [POD]. The main container's
logs are printed unless -c names another container.`,
		Example: `  # Follow the logs of the integration orders
  caravan logs orders -f

  # The last 20 lines of each pod
  caravan logs orders --tail 20`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.Follow, "follow", "f", false, "follow the logs as they grow, until interrupted")
	f.StringVarP(&o.Container, "container", "c", "", "the container whose logs to print (default: the integration's main container)")
	f.Int64Var(&o.Tail, "tail", o.Tail, "print only the last N lines of each pod (default: all)")
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *LogsOptions) Complete() error {
	ns, err := o.Kube.Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	cfg, err := o.Kube.RESTConfig()
	if err != nil {
		return err
	}
	o.pods, err = kubernetes.NewForConfig(cfg)
	return err
}

// Validate checks the flags.
func (o *LogsOptions) Validate() error {
	if o.Tail < -1 {
		return fmt.Errorf("--tail must be 0 or more, got %d", o.Tail)
	}
	return nil
}

// Run streams the logs of every pod of the integration, each pod's lines whole.
func (o *LogsOptions) Run(ctx context.Context) error {
	list, err := o.pods.CoreV1().Pods(o.namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{camelv1.IntegrationLabel: o.Name}).String()})
	if err != nil {
		return fmt.Errorf("listing the pods of integration %q: %w", o.Name, err)
	}
	pods := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool {
		return p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodPending || len(p.Spec.Containers) == 0
	})
	if len(pods) == 0 {
		return fmt.Errorf("integration %q has no started pods in namespace %s: see caravan describe integration %s", o.Name, o.namespace, o.Name)
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
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
			errs[i] = o.stream(ctx, &pods[i], prefix, &mu)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stream copies one pod's log to Out, a whole line at a time under mu.
func (o *LogsOptions) stream(ctx context.Context, pod *corev1.Pod, prefix string, mu *sync.Mutex) error {
	container := o.Container
	if container == "" {
		container = pod.Spec.Containers[0].Name
	}
	opts := &corev1.PodLogOptions{Container: container, Follow: o.Follow}
	if o.Tail >= 0 {
		opts.TailLines = &o.Tail
	}
	r, err := o.pods.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).Stream(ctx)
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
