package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// profileChunk is the length, in seconds, of each CPU profile the API
// server is asked for; a phase's profile is the merge of its chunks.
const profileChunk = 2

// WorkShare is the API server's CPU, in seconds, spent on one kind of
// work during a phase, from its CPU profile.
type WorkShare struct {
	Work    string  `json:"work"`
	Caravan float64 `json:"caravan"`
	Bare    float64 `json:"bare"`
	Floor   float64 `json:"floor"`
}

// workKinds sort the API server's CPU samples: a sample is of the first
// kind that has a frame whose function name contains one of its markers.
var workKinds = []struct {
	work    string
	markers []string
}{
	{"watches (filtering, encoding, sending events)", []string{
		"handlers.(*WatchServer)", "cacher.(*cacheWatcher)", "cacher.(*Cacher).dispatchEvent"}},
	{"status writes of custom resources (Integrations)", []string{"customresource.(*StatusREST).Update"}},
	{"server-side applies", []string{"handlers.(*applyPatcher)"}},
	{"creates of custom resources (Integrations)", []string{"(*crdHandler).serveResource.CreateResource"}},
	{"other creates (Deployments, ReplicaSets, Pods, Events, ...)", []string{"handlers.CreateResource", "handlers.createHandler"}},
	{"other updates and patches (status of Deployments, ReplicaSets, Pods, ...)", []string{
		"handlers.UpdateResource", "handlers.PatchResource"}},
	{"gets and lists", []string{"handlers.GetResource", "handlers.ListResource", "handlers.getResourceHandler"}},
	{"deletes", []string{"handlers.DeleteResource", "handlers.DeleteCollection"}},
	{"storage watch (decoding etcd events)", []string{"etcd3.(*watchChan)"}},
	{"Go garbage collector (background)", []string{"runtime.gcBgMarkWorker"}},
}

const otherWork = "other (HTTP, TLS, authentication, audit log, flow control, ...)"

// ProfileSource fetches a CPU profile of the given seconds from one
// process.
type ProfileSource struct {
	name  string
	fetch func(ctx context.Context, seconds int) ([]byte, error)
}

// APIServerProfiles fetches the API server's profiles behind cfg (which
// must allow /debug/pprof: the local cluster runs with --profiling).
func APIServerProfiles(cfg *rest.Config) (ProfileSource, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return ProfileSource{}, err
	}
	c := cs.CoreV1().RESTClient()
	return ProfileSource{name: "the API server", fetch: func(ctx context.Context, seconds int) ([]byte, error) {
		return c.Get().AbsPath("/debug/pprof/profile").Param("seconds", fmt.Sprint(seconds)).DoRaw(ctx)
	}}, nil
}

// HTTPProfiles fetches the profiles of process name from the
// /debug/pprof served at baseURL (an operator's: caravan operator
// --pprof-bind-address).
func HTTPProfiles(name, baseURL string, get func(ctx context.Context, url string) ([]byte, error)) ProfileSource {
	return ProfileSource{name: name, fetch: func(ctx context.Context, seconds int) ([]byte, error) {
		return get(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", baseURL, seconds))
	}}
}

// Profiler collects a process's CPU profile while a phase runs, in chunks
// of profileChunk seconds, until stopped.
type Profiler struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	chunks []*profile.Profile
	err    error
}

// StartProfile starts profiling the process of src.
func StartProfile(ctx context.Context, src ProfileSource) *Profiler {
	ctx, cancel := context.WithCancel(ctx)
	p := &Profiler{name: src.name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for ctx.Err() == nil {
			// The chunk runs to its end even when the phase ends during
			// it: the request is not tied to ctx.
			data, err := src.fetch(context.WithoutCancel(ctx), profileChunk)
			if err != nil {
				p.err = fmt.Errorf("profiling %s: %w", src.name, err)
				return
			}
			prof, err := profile.Parse(bytes.NewReader(data))
			if err != nil {
				p.err = fmt.Errorf("reading the profile of %s: %w", src.name, err)
				return
			}
			p.chunks = append(p.chunks, prof)
		}
	}()
	return p
}

// Stop ends the profiling once the running chunk is complete and returns
// the merged profile.
func (p *Profiler) Stop() (*profile.Profile, error) {
	p.cancel()
	<-p.done
	if p.err != nil {
		return nil, p.err
	}
	if len(p.chunks) == 0 {
		return nil, fmt.Errorf("profiling %s: no profile", p.name)
	}
	return profile.Merge(p.chunks)
}

// Discard stops a profiler whose phase failed, returning only an error
// of the profiling itself.
func (p *Profiler) Discard() error {
	p.cancel()
	<-p.done
	return p.err
}

// CPUByWork sums a CPU profile's samples by kind of work, in seconds.
func CPUByWork(p *profile.Profile) (map[string]float64, error) {
	index := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			index = i
		}
	}
	if index < 0 {
		return nil, errors.New("the API server's profile has no cpu/nanoseconds samples")
	}
	out := map[string]float64{}
	for _, s := range p.Sample {
		out[workOf(s)] += float64(s.Value[index]) / 1e9
	}
	return out, nil
}

func workOf(s *profile.Sample) string {
	for _, k := range workKinds {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				for _, m := range k.markers {
					if strings.Contains(line.Function.Name, m) {
						return k.work
					}
				}
			}
		}
	}
	return otherWork
}

// WorkShares lines up Caravan's, the bare operator's and the floor's CPU
// by kind of work, in the order of workKinds, other last.
func WorkShares(caravan, bare, floor map[string]float64) []WorkShare {
	kinds := make([]string, 0, len(workKinds)+1)
	for _, k := range workKinds {
		kinds = append(kinds, k.work)
	}
	kinds = append(kinds, otherWork)
	out := make([]WorkShare, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, WorkShare{Work: k, Caravan: Round3(caravan[k]), Bare: Round3(bare[k]), Floor: Round3(floor[k])})
	}
	return out
}
