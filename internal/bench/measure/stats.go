package measure

import (
	"math"
	"slices"
	"time"
)

// percentile returns the p-th percentile (0 < p <= 100) of values by the
// nearest-rank method, or 0 for no values.
func percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Distribution summarises durations in seconds.
type Distribution struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Summarize returns the distribution of values (seconds).
func Summarize(values []float64) Distribution {
	return Distribution{
		Count: len(values),
		P50:   percentile(values, 50),
		P99:   percentile(values, 99),
		Max:   percentile(values, 100),
	}
}

// Point is one sample of a count over time: T seconds after the start.
type Point struct {
	T     float64 `json:"t"`
	Count int     `json:"count"`
}

// Curve turns the moments each object got ready into the number of ready
// objects over time, one point per change, starting at zero.
func Curve(start time.Time, readyAt []time.Time) []Point {
	ts := make([]float64, 0, len(readyAt))
	for _, t := range readyAt {
		ts = append(ts, t.Sub(start).Seconds())
	}
	slices.Sort(ts)
	points := []Point{{T: 0, Count: 0}}
	for i, t := range ts {
		points = append(points, Point{T: Round3(t), Count: i + 1})
	}
	return points
}

// Round3 rounds v to three decimals, the precision of every figure.
func Round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// MillisEach is seconds spread over n, in milliseconds each, rounded to
// three decimals; 0 when n is 0.
func MillisEach(seconds float64, n int) float64 { return Round3(Ratio(seconds*1000, float64(n))) }

// Ratio is a/b, or 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
