package report

import (
	"fmt"
	"image/color"
	"maps"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
)

var (
	caravanColor = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	floorColor   = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	otherColor   = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	bareColor    = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
)

// writePlots draws one PNG per scenario that ran, and three per sweep.
func writePlots(dir string, res *result.Results) error {
	var plots []struct {
		name string
		p    *plot.Plot
	}
	add := func(name string, p *plot.Plot, err error) error {
		if err != nil {
			return fmt.Errorf("plotting %s: %w", name, err)
		}
		plots = append(plots, struct {
			name string
			p    *plot.Plot
		}{name, p})
		return nil
	}
	if r := res.Rollout; r != nil {
		p, err := rolloutPlot(r)
		if err := add("rollout.png", p, err); err != nil {
			return err
		}
	}
	if r := res.Share; r != nil {
		p, err := sharePlot(r)
		if err := add("share.png", p, err); err != nil {
			return err
		}
	}
	if r := res.Handoff; r != nil {
		p, err := handoffPlot(r)
		if err := add("handoff.png", p, err); err != nil {
			return err
		}
	}
	if r := res.Build; r != nil {
		p, err := buildPlot(r)
		if err := add("build.png", p, err); err != nil {
			return err
		}
	}
	if r := res.Runtime; r != nil && r.Move != nil {
		p, err := runtimeMovesPlot(r)
		if err := add("runtime-moves.png", p, err); err != nil {
			return err
		}
	}
	for _, sweep := range []struct {
		prefix, varies string
		points         []result.SweepPoint
	}{{"sweep-integrations", "N", res.SweepIntegrations}, {"sweep-operators", "M", res.SweepOperators}} {
		if len(sweep.points) == 0 {
			continue
		}
		ps, err := sweepPlots(sweep.prefix, sweep.varies, sweep.points)
		if err != nil {
			return fmt.Errorf("plotting %s: %w", sweep.prefix, err)
		}
		for _, name := range slices.Sorted(maps.Keys(ps)) {
			_ = add(name, ps[name], nil)
		}
	}
	for _, x := range plots {
		if err := x.p.Save(16*vg.Centimeter, 10*vg.Centimeter, filepath.Join(dir, x.name)); err != nil {
			return fmt.Errorf("writing %s: %w", x.name, err)
		}
	}
	return nil
}

// steps turns a curve into a step line.
func steps(points []measure.Point) plotter.XYs {
	xys := make(plotter.XYs, 0, 2*len(points))
	for i, p := range points {
		if i > 0 {
			xys = append(xys, plotter.XY{X: p.T, Y: float64(points[i-1].Count)})
		}
		xys = append(xys, plotter.XY{X: p.T, Y: float64(p.Count)})
	}
	return xys
}

func addLine(p *plot.Plot, name string, xys plotter.XYs, c color.Color) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

func rolloutPlot(r *result.Rollout) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Rollout: %d integrations, %d operators (%.2fx the floor)", r.Integrations, r.Operators, r.Ratio)
	p.X.Label.Text = "seconds since the creation burst started"
	p.Y.Label.Text = "ready"
	p.Add(plotter.NewGrid())
	if err := addLine(p, "Caravan (integrations Ready)", steps(r.CaravanCurve), caravanColor); err != nil {
		return nil, err
	}
	if len(r.DeploymentsCurve) > 0 {
		if err := addLine(p, "Caravan's Deployments ready", steps(r.DeploymentsCurve), otherColor); err != nil {
			return nil, err
		}
	}
	if len(r.Bare.Curve) > 0 {
		if err := addLine(p, fmt.Sprintf("bare operator (Ready; %.2fx)", r.Bare.Ratio), steps(r.Bare.Curve), bareColor); err != nil {
			return nil, err
		}
	}
	if err := addLine(p, "floor (the Deployments alone, ready)", steps(r.FloorCurve), floorColor); err != nil {
		return nil, err
	}
	// Top left: every curve starts low and the floor's rises first.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(10)
	return p, nil
}

func sharePlot(r *result.Share) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Share: heap against owned integrations (%d in all)", r.Integrations)
	p.X.Label.Text = "integrations owned"
	p.Y.Label.Text = "steady-state heap (MiB)"
	p.Add(plotter.NewGrid())
	pts := plotter.XYs{{X: 0, Y: r.IdleHeapMiB}}
	labels := []string{"idle"}
	for _, o := range r.Operators {
		pts = append(pts, plotter.XY{X: float64(o.Owned), Y: o.HeapMiB})
		labels = append(labels, o.ID)
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	s.Color = caravanColor
	s.Radius = vg.Points(4)
	p.Add(s)
	lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range lbl.TextStyle {
		lbl.TextStyle[i].XAlign = -0.1
	}
	p.Add(lbl)
	// The line of a heap that grows only with the share, from the idle
	// heap to the heap owning all.
	ideal := plotter.XYs{{X: 0, Y: r.IdleHeapMiB}, pts[len(pts)-1]}
	if err := addLine(p, "idle + per-integration cost × owned", ideal, floorColor); err != nil {
		return nil, err
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// runtimeMovesPlot draws the runtime scenario's moves of running JVMs: kept pods, and rolled ones.
func runtimeMovesPlot(r *result.Runtime) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Runtime: %d running JVMs moved in canaries of two waves", r.Move.Integrations)
	p.X.Label.Text = "seconds from the annotation patch to Ready under the new owner"
	p.Y.Label.Text = "moved integrations (cumulative %)"
	p.Add(plotter.NewGrid())
	if err := addLine(p, fmt.Sprintf("%s, same kits: pods kept (p99 %.2f s)", r.Move.To, r.Move.MoveSeconds.P99),
		cdf(r.Move.MoveTimes), caravanColor); err != nil {
		return nil, err
	}
	if r.Roll != nil {
		if err := addLine(p, fmt.Sprintf("%s, another base image: kits built, pods rolled (p99 %.2f s)", r.Roll.To, r.Roll.MoveSeconds.P99),
			cdf(r.Roll.MoveTimes), bareColor); err != nil {
			return nil, err
		}
	}
	target := plotter.XYs{{X: 3, Y: 0}, {X: 3, Y: 100}}
	if err := addLine(p, "target p99 of a move that keeps the pods (3 s)", target, otherColor); err != nil {
		return nil, err
	}
	// High on the left, right of the target: the kept moves rise before it, the rolled ones
	// after the kits' builds, and reach the top last.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(50), vg.Points(-10)
	return p, nil
}

func handoffPlot(r *result.Handoff) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Hand-off: %d integrations %s → %s (p99 %.2f s)", r.Integrations, r.From, r.To, r.MoveSeconds.P99)
	p.X.Label.Text = "seconds from the annotation patch to Ready under the new owner"
	p.Y.Label.Text = "moved integrations (cumulative %)"
	p.Add(plotter.NewGrid())
	if err := addLine(p, "Caravan", cdf(r.MoveTimes), caravanColor); err != nil {
		return nil, err
	}
	if len(r.FloorMoveTimes) > 0 {
		if err := addLine(p, "floor (relabelling bare Deployments)", cdf(r.FloorMoveTimes), floorColor); err != nil {
			return nil, err
		}
	}
	target := plotter.XYs{{X: 3, Y: 0}, {X: 3, Y: 100}}
	if err := addLine(p, "target p99 (3 s)", target, otherColor); err != nil {
		return nil, err
	}
	// Bottom right, left of the target: both curves rise from the left
	// and are high by the time they get there.
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-20), vg.Points(20)
	return p, nil
}

// cdf is the cumulative distribution of times, in percent.
func cdf(times []float64) plotter.XYs {
	times = slices.Clone(times)
	slices.Sort(times)
	xys := make(plotter.XYs, 0, 2*len(times)+1)
	xys = append(xys, plotter.XY{X: 0, Y: 0})
	for i, t := range times {
		xys = append(xys, plotter.XY{X: t, Y: 100 * float64(i) / float64(len(times))},
			plotter.XY{X: t, Y: 100 * float64(i+1) / float64(len(times))})
	}
	return xys
}

func buildPlot(r *result.Build) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Build: %d integrations, %d dependency sets, %d builds", r.Integrations, r.DependencySets, r.Builds)
	p.X.Label.Text = "seconds since the creation burst started"
	p.Y.Label.Text = "integrations Ready"
	p.Add(plotter.NewGrid())
	if err := addLine(p, "Caravan", steps(r.Curve), caravanColor); err != nil {
		return nil, err
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(20)
	return p, nil
}
