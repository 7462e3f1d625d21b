package measure

import (
	"testing"

	"github.com/caravan-dev/caravan/internal/metrics"
)

func TestLiveHeapIsTheHeapGoalOverGOGC(t *testing.T) {
	s := metrics.Samples{{Name: "go_memstats_next_gc_bytes", Value: 40}}
	if got := LiveHeap(s); got != 20 {
		t.Errorf("LiveHeap with the default GOGC = %v, want 20", got)
	}
	s = append(s, metrics.Sample{Name: "go_gc_gogc_percent", Value: 300})
	if got := LiveHeap(s); got != 10 {
		t.Errorf("LiveHeap with GOGC=300 = %v, want 10", got)
	}
}
