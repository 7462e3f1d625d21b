package measure

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"
)

// stackProfile is a CPU profile with one sample per stack (leaf first),
// each of the given nanoseconds.
func stackProfile(nanos int64, stacks ...[]string) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	functions := map[string]*profile.Function{}
	for _, stack := range stacks {
		s := &profile.Sample{Value: []int64{1, nanos}}
		for _, name := range stack {
			f, ok := functions[name]
			if !ok {
				f = &profile.Function{ID: uint64(len(functions) + 1), Name: name}
				functions[name] = f
				p.Function = append(p.Function, f)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func TestAPIServerCPUIsSplitByKindOfWork(t *testing.T) {
	p := stackProfile(250_000_000,
		[]string{"encoding/json.Marshal", "k8s.io/apiextensions-apiserver/pkg/registry/customresource.(*StatusREST).Update",
			"k8s.io/apiserver/pkg/endpoints/handlers.PatchResource.func1"},
		[]string{"k8s.io/apiserver/pkg/endpoints/handlers.(*applyPatcher).applyPatchToCurrentObject",
			"k8s.io/apiserver/pkg/endpoints/handlers.PatchResource.func1"},
		[]string{"k8s.io/apiserver/pkg/endpoints/handlers.UpdateResource.func1"},
		[]string{"k8s.io/apiserver/pkg/endpoints/handlers.UpdateResource.func1"},
		[]string{"runtime.scanobject", "runtime.gcBgMarkWorker"},
		[]string{"crypto/tls.(*Conn).Write"},
	)
	// Written and read back, as the API server sends it.
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	read, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got, err := CPUByWork(read)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"status writes of custom resources (Integrations)":                          0.25,
		"server-side applies":                                                       0.25,
		"other updates and patches (status of Deployments, ReplicaSets, Pods, ...)": 0.5,
		"Go garbage collector (background)":                                         0.25,
		otherWork:                                                                   0.25,
	}
	if len(got) != len(want) {
		t.Errorf("kinds of work = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v s, want %v s", k, got[k], v)
		}
	}

	shares := WorkShares(got, map[string]float64{"server-side applies": 0.5}, map[string]float64{"server-side applies": 1})
	if len(shares) != len(workKinds)+1 || shares[len(shares)-1].Work != otherWork {
		t.Fatalf("shares = %+v, want every kind of work in order, other last", shares)
	}
	if s := shares[2]; s.Work != "server-side applies" || s.Caravan != 0.25 || s.Bare != 0.5 || s.Floor != 1 {
		t.Errorf("shares[2] = %+v, want server-side applies 0.25 s / 0.5 s / 1 s", s)
	}
}

func TestAProfileWithoutCPUSamplesIsRefused(t *testing.T) {
	p := stackProfile(1, []string{"main.main"})
	p.SampleType = p.SampleType[:1]
	for _, s := range p.Sample {
		s.Value = s.Value[:1]
	}
	if _, err := CPUByWork(p); err == nil {
		t.Error("a profile without cpu samples was read as CPU")
	}
}
