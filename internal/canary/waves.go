// Package canary plans a move of resources between operators in waves:
// each wave moves a share of them, and the next one starts only once the
// moved ones are ready under the new operator.
package canary

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Wave is how far one wave takes the move: a percentage of everything to
// move, or a count, cumulative either way.
type Wave struct {
	Percent int
	Count   int
}

func (w Wave) String() string {
	if w.Count > 0 {
		return strconv.Itoa(w.Count)
	}
	return strconv.Itoa(w.Percent) + "%"
}

// ParseWaves reads waves as "10%,50%,100%" or "5,20,50": percentages or
// counts of all that moves, rising, each reached at the end of its wave.
// The last wave of percentages must be 100%; after the last count, a move
// of more resources has a final wave with the rest.
func ParseWaves(spec string) ([]Wave, error) {
	var waves []Wave
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		var w Wave
		if p, isPercent := strings.CutSuffix(part, "%"); isPercent {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 100 {
				return nil, fmt.Errorf("wave %q: a percentage is a whole number from 1%% to 100%%", part)
			}
			w.Percent = n
		} else {
			n, err := strconv.Atoi(part)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("wave %q: give a count (5) or a percentage (10%%)", part)
			}
			w.Count = n
		}
		if len(waves) > 0 {
			prev := waves[len(waves)-1]
			if (prev.Count > 0) != (w.Count > 0) {
				return nil, fmt.Errorf("waves %q mix counts and percentages: use one or the other", spec)
			}
			if w.Count+w.Percent <= prev.Count+prev.Percent {
				return nil, fmt.Errorf("waves %q must rise: %s comes after %s", spec, w, prev)
			}
		}
		waves = append(waves, w)
	}
	if last := waves[len(waves)-1]; last.Percent > 0 && last.Percent != 100 {
		return nil, fmt.Errorf("waves %q end at %s: the last wave of percentages is 100%%", spec, last)
	}
	return waves, nil
}

// Sizes are the cumulative numbers of resources, out of n, moved by the
// end of each wave: at least one more per wave, none empty, ending at n.
func Sizes(waves []Wave, n int) []int {
	var sizes []int
	for _, w := range waves {
		size := w.Count
		if w.Percent > 0 {
			size = int(math.Ceil(float64(n) * float64(w.Percent) / 100))
		}
		size = min(size, n)
		if len(sizes) > 0 && size <= sizes[len(sizes)-1] {
			continue
		}
		sizes = append(sizes, size)
	}
	if len(sizes) == 0 || sizes[len(sizes)-1] < n {
		sizes = append(sizes, n)
	}
	return sizes
}
