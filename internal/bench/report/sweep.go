package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
)

// sweepTable lists the points of a sweep over what it varies: "N", "M", "CPU" (the limit) or "RUN AS".
// When the points ran more than once, the last column is every run's
// ratio to the floor, in order (the other figures are the median run's).
func sweepTable(title, varies string, points []result.SweepPoint) table {
	t := table{Title: title, Header: []string{varies, "CARAVAN", "BARE", "FLOOR", "RATIO", "BARE RATIO",
		"BURST (FLOOR)", "CPU MS/INTEGRATION", "HEAP KIB/INTEGRATION", "RSS MIB/OPERATOR",
		"OWN MIB/OPERATOR", "IDLE OWN MIB/OPERATOR", "WATCH EVENTS/INTEGRATION (BARE)"}}
	runs := slices.ContainsFunc(points, func(p result.SweepPoint) bool { return len(p.Runs) > 0 })
	if runs {
		t.Header = append(t.Header, "EVERY RUN'S RATIO", "EVERY RUN'S CPU MS/INTEGRATION")
	}
	for _, p := range points {
		x := strconv.Itoa(p.Integrations)
		switch varies {
		case "M":
			x = strconv.Itoa(p.Operators)
		case "CPU":
			x = p.CPULimit
		case "RUN AS":
			x = p.RunAs
		}
		t.Rows = append(t.Rows, []string{x, secs(p.CaravanSeconds), secs(p.BareSeconds), secs(p.FloorSeconds),
			num(p.Ratio), num(p.BareRatio), fmt.Sprintf("%s (%s)", secs(p.CaravanCreateSeconds), secs(p.FloorCreateSeconds)),
			num(p.CPUMillisPerIntegration), num(p.HeapKiBPerIntegration), num(p.RSSMiBPerOperator),
			num(p.OwnMiBPerOperator), num(p.IdleOwnMiBPerOperator),
			fmt.Sprintf("%s (%s)", num(p.WatchEventsPerIntegration), num(p.BareWatchEventsPerIntegration))})
		if runs {
			ratios, cpu := make([]string, len(p.Runs)), make([]string, len(p.Runs))
			for i, r := range p.Runs {
				ratios[i] = num(r.Ratio)
				cpu[i] = num(measure.MillisEach(r.OperatorsCPUSeconds, p.Integrations))
			}
			row := &t.Rows[len(t.Rows)-1]
			*row = append(*row, strings.Join(ratios, ", "), strings.Join(cpu, ", "))
		}
	}
	return t
}

// sweepPlots draws a sweep's figures against what it varies, N or M.
// They are the ratio to the floor of Caravan and of the bare operator, the operators' CPU per
// integration, and their heap per integration.
func sweepPlots(prefix, varies string, points []result.SweepPoint) (map[string]*plot.Plot, error) {
	x := func(p result.SweepPoint) float64 {
		if varies == "M" {
			return float64(p.Operators)
		}
		return float64(p.Integrations)
	}
	series := func(y func(result.SweepPoint) float64) plotter.XYs {
		xys := make(plotter.XYs, len(points))
		for i, p := range points {
			xys[i] = plotter.XY{X: x(p), Y: y(p)}
		}
		return xys
	}
	label := map[string]string{"N": "integrations (N)", "M": "operators (M)"}[varies]
	out := map[string]*plot.Plot{}
	ratio := newSweepPlot("All-ready time over the floor's against "+label, label, "ratio to the floor")
	if err := addPoints(ratio, "Caravan", series(func(p result.SweepPoint) float64 { return p.Ratio }), caravanColor); err != nil {
		return nil, err
	}
	if err := addPoints(ratio, "bare operator", series(func(p result.SweepPoint) float64 { return p.BareRatio }), bareColor); err != nil {
		return nil, err
	}
	out[prefix+"-ratio.png"] = ratio
	cpu := newSweepPlot("Operators' CPU per integration against "+label, label, "CPU milliseconds per integration")
	if err := addPoints(cpu, "Caravan", series(func(p result.SweepPoint) float64 { return p.CPUMillisPerIntegration }), caravanColor); err != nil {
		return nil, err
	}
	out[prefix+"-cpu.png"] = cpu
	heap := newSweepPlot("Operators' peak heap per integration against "+label, label, "KiB per integration")
	if err := addPoints(heap, "Caravan", series(func(p result.SweepPoint) float64 { return p.HeapKiBPerIntegration }), caravanColor); err != nil {
		return nil, err
	}
	out[prefix+"-heap.png"] = heap
	return out, nil
}

func newSweepPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	// The lines keep well above zero, so the legend goes to the bottom
	// right, where it cannot cover them.
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-10), vg.Points(10)
	return p
}

// addPoints adds a line through xys with a mark at each point.
func addPoints(p *plot.Plot, name string, xys plotter.XYs, c interface {
	RGBA() (r, g, b, a uint32)
}) error {
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	line.Color, points.Color = c, c
	p.Add(line, points)
	p.Legend.Add(name, line, points)
	return nil
}
