package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/localcluster"
)

// nodeIdle is how long a node's processes idle before and while their cost is read.
const nodeIdle = 15 * time.Second

// runNodes measures the local cluster's two nodes of real pods one after the other, each on a
// full cluster of its own: the start to ready, the idle memory and CPU of the node's own
// processes, and the first message of integrations, on a kit it builds and then on that kit.
// The kubelet node needs root; without it, it is reported as skipped.
func runNodes(ctx context.Context, o Options) (*result.Nodes, error) {
	res := &result.Nodes{Integrations: o.RuntimeIntegrations}
	for _, node := range []localcluster.NodeKind{localcluster.NodeProcess, localcluster.NodeKubelet} {
		if node == localcluster.NodeKubelet && os.Geteuid() != 0 {
			res.Nodes = append(res.Nodes, result.NodeFigures{Node: string(node), Skipped: "the kubelet node needs root"})
			continue
		}
		fig, err := measureNode(ctx, o, node)
		if err != nil {
			return nil, fmt.Errorf("the %s node: %w", node, err)
		}
		res.Nodes = append(res.Nodes, fig)
	}
	return res, nil
}

// measureNode starts a full cluster with the node of that kind, measures it, and stops it.
func measureNode(ctx context.Context, o Options, node localcluster.NodeKind) (fig result.NodeFigures, err error) {
	fig.Node = string(node)
	e, err := startEnvOn(ctx, o.Binary, o.Progress, node)
	if err != nil {
		return fig, err
	}
	defer func() {
		if serr := e.stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	fig.UpSeconds = e.upSeconds
	fmt.Fprintf(o.Progress, "nodes: the %s node's cluster was ready in %.1f s; its processes idle for %s\n", node, fig.UpSeconds, 2*nodeIdle)
	if err := nodeIdleCost(ctx, e.cluster, &fig); err != nil {
		return fig, err
	}
	ops, err := e.startMavenOperators(ctx, "nodes")
	if err != nil {
		return fig, err
	}
	if err := e.createNamespace(ctx, runtimeNamespace); err != nil {
		return fig, err
	}
	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		return fig, err
	}
	s := &tickStarter{e: e, cs: cs, op: ops[0]}
	fmt.Fprintf(o.Progress, "nodes: a kit of camel:jackson with an empty Maven cache, to the first message\n")
	if fig.KitSeconds, err = s.first(ctx, "kit", runtimeDeps); err != nil {
		return fig, err
	}
	fmt.Fprintf(o.Progress, "nodes:   %.1f s; %d integrations on that kit, one at a time\n", fig.KitSeconds, o.RuntimeIntegrations)
	fig.ExistingSeconds, err = s.existing(ctx, o.RuntimeIntegrations)
	return fig, err
}

// nodeIdleCost reads the resident and anonymous memory of each of the node's processes, and
// their CPU together over nodeIdle, after they idled as long, into fig.
func nodeIdleCost(ctx context.Context, c *localcluster.Cluster, fig *result.NodeFigures) error {
	if sleep(ctx, nodeIdle); ctx.Err() != nil {
		return ctx.Err()
	}
	procs := c.NodeProcesses()
	cpu := func() (float64, error) {
		var sum float64
		for _, p := range procs {
			secs, err := measure.ProcessCPU(p.PID)
			if err != nil {
				return 0, fmt.Errorf("reading the CPU of %s: %w", p.Name, err)
			}
			sum += secs
		}
		return sum, nil
	}
	before, err := cpu()
	if err != nil {
		return err
	}
	start := time.Now()
	if sleep(ctx, nodeIdle); ctx.Err() != nil {
		return ctx.Err()
	}
	after, err := cpu()
	if err != nil {
		return err
	}
	fig.IdleCPUMillicores = measure.Round3((after - before) / time.Since(start).Seconds() * 1000)
	fig.IdleRSSMiB, fig.IdleAnonymousMiB = map[string]float64{}, map[string]float64{}
	for _, p := range procs {
		if fig.IdleRSSMiB[p.Name], err = residentMiB(p.PID); err != nil {
			return err
		}
		if fig.IdleAnonymousMiB[p.Name], err = anonymousMiB(p.PID); err != nil {
			return err
		}
	}
	return nil
}
