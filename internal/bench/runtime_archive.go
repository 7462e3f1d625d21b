package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// archivedFloorFigures times the floor started from a class-data-sharing archive made as a kit's
// is, n times, and tells whether the integration's JVM used its kit's archive.
func archivedFloorFigures(ctx context.Context, e *env, cs kubernetes.Interface, floor *floorRun, n int, res *result.Runtime) error {
	res.KitArchive = floor.kitArchive
	if floor.kitArchived {
		log, err := podLogOf(ctx, e, cs, "existing-0")
		if err != nil {
			return err
		}
		res.ArchiveUsed = !strings.Contains(log, "Unable to use shared archive")
	}
	fmt.Fprintln(e.progress, "runtime: the floor from an archive made as a kit's is: the training start, on the floor's jars and Java")
	archived, err := floor.archived(ctx)
	if err != nil {
		return err
	}
	if res.ArchivedFloorSeconds, err = archived.firstTicks(ctx, n); err != nil {
		return err
	}
	res.ArchivedFloorRatio = measure.Ratio(res.ExistingSeconds.P50, res.ArchivedFloorSeconds.P50)
	return nil
}

// archived makes the floor's archive with the provider's training start, its paths moved under
// f.dir, and returns the floor that starts from it. -Xshare:on: a JVM that cannot use it fails.
func (f *floorRun) archived(ctx context.Context) (*floorRun, error) {
	camelDir := strings.TrimPrefix(runtime.CamelDir, "/")
	training, moved := filepath.Join(f.dir, "training", camelDir), filepath.Join(f.dir, camelDir)
	toTraining := func(s string) string { return strings.ReplaceAll(s, runtime.CamelDir, training) }
	for p, data := range runtime.Main.Training() {
		path := toTraining(p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(toTraining(string(data))), 0o644); err != nil {
			return nil, err
		}
	}
	archive := filepath.Join(f.dir, "floor.jsa")
	args := []string{"-XX:ArchiveClassesAtExit=" + archive, "-Xlog:cds=off"}
	for _, a := range f.args {
		args = append(args, strings.ReplaceAll(a, moved, training))
	}
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(tctx, f.java, args...)
	cmd.Env, cmd.Dir = f.env, f.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("the floor's training start (%s %s): %w; its output ends:\n%s", f.java, strings.Join(args, " "), err, lastOf(string(out), 2000))
	}
	a := *f
	a.args = slices.Concat([]string{"-Xshare:on", runtime.ArchiveOption + archive}, f.args)
	return &a, nil
}

// lastOf is the last n bytes of s.
func lastOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// podLogOf is the log of the first pod of integration name.
func podLogOf(ctx context.Context, e *env, cs kubernetes.Interface, name string) (string, error) {
	pods := &corev1.PodList{}
	if err := e.client.List(ctx, pods, client.InNamespace(runtimeNamespace), client.MatchingLabels{camelv1.IntegrationLabel: name}); err != nil {
		return "", err
	}
	if len(pods.Items) == 0 {
		return "", fmt.Errorf("integration %s has no pod", name)
	}
	data, err := cs.CoreV1().Pods(runtimeNamespace).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the log of pod %s: %w", pods.Items[0].Name, err)
	}
	return string(data), nil
}
