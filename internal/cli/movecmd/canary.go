package movecmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/caravan-dev/caravan/internal/canary"
	"github.com/caravan-dev/caravan/internal/reassign"
)

// validateCanary checks the selector and the flags of a move in waves.
func (o *ReassignOptions) validateCanary() error {
	if o.Selector != "" {
		if o.From == "" || len(o.Names) > 0 {
			return errors.New("-l/--selector narrows --from: give --from and no names")
		}
		sel, err := labels.Parse(o.Selector)
		if err != nil {
			return fmt.Errorf("-l/--selector: %w", err)
		}
		o.selector = sel
	}
	if o.Waves == "" {
		if o.Pause != 0 || o.RollbackOnFailure {
			return errors.New("--pause and --rollback-on-failure are for a move in --waves")
		}
		return nil
	}
	if o.From == "" || len(o.Names) > 0 {
		return errors.New("--waves moves what --from has: give --from and no names")
	}
	if o.WaveTimeout <= 0 || o.Pause < 0 {
		return fmt.Errorf("--wave-timeout must be positive and --pause not negative, got %s and %s", o.WaveTimeout, o.Pause)
	}
	waves, err := canary.ParseWaves(o.Waves)
	if err != nil {
		return fmt.Errorf("--waves: %w", err)
	}
	o.waves = waves
	return nil
}

// runWaves moves targets in waves: each wave moves its share, then waits
// until its integrations (and those of its Pipes and KameletBindings) run
// under --to. A wave that fails ends the move; with --rollback-on-failure
// its resources move back to --from first. Resources of later waves never
// move.
func (o *ReassignOptions) runWaves(ctx context.Context, targets []reassign.Target) error {
	slices.SortFunc(targets, func(a, b reassign.Target) int { return strings.Compare(a.String(), b.String()) })
	sizes := canary.Sizes(o.waves, len(targets))
	if len(targets) == 0 {
		fmt.Fprintf(o.Out, "operator %s has nothing to move\n", o.From)
		return nil
	}
	start := time.Now()
	done := 0
	for i, size := range sizes {
		wave := targets[done:size]
		fmt.Fprintf(o.Out, "wave %d/%d: moving %d to %s (%d of %d)\n", i+1, len(sizes), len(wave), o.To, size, len(targets))
		waveStart := time.Now()
		moved, err := o.moveWave(ctx, wave, o.From, o.To)
		if err == nil {
			err = waitRunningUnder(ctx, o.Watch, o.Out, o.listNamespace(), integrationsOf(moved), o.To, o.WaveTimeout, o.settledUnder(o.To))
		}
		if err != nil {
			return o.waveFailed(ctx, i, len(sizes), moved, done, len(targets), err)
		}
		done = size
		fmt.Fprintf(o.Out, "wave %d/%d: %d running under %s after %s\n", i+1, len(sizes), len(wave), o.To,
			time.Since(waveStart).Round(time.Second))
		if o.Pause > 0 && i < len(sizes)-1 {
			fmt.Fprintf(o.Out, "pausing %s before the next wave\n", o.Pause)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(o.Pause):
			}
		}
	}
	fmt.Fprintf(o.Out, "moved %d from %s to %s in %d waves, in %s\n", len(targets), o.From, o.To, len(sizes),
		time.Since(start).Round(time.Second))
	return nil
}

// moveWave moves the wave from one operator to another, and returns what
// it moved; the first resource it fails to move ends the wave.
func (o *ReassignOptions) moveWave(ctx context.Context, wave []reassign.Target, from, to string) ([]reassign.Target, error) {
	step := *o
	step.From, step.To = from, to
	var moved []reassign.Target
	for _, t := range wave {
		if _, err := step.move(ctx, o.Watch, t); err != nil {
			return moved, fmt.Errorf("moving %s to %s: %w", t, to, err)
		}
		moved = append(moved, t)
	}
	return moved, nil
}

// waveFailed reports wave i's failure and, with --rollback-on-failure,
// moves what it moved back to --from and waits until it runs there.
func (o *ReassignOptions) waveFailed(ctx context.Context, i, waves int, moved []reassign.Target, done, total int, cause error) error {
	msg := fmt.Sprintf("wave %d/%d failed: %v; %d moved to %s in earlier waves, %d not moved", i+1, waves, cause, done, o.To, total-done-len(moved))
	if !o.RollbackOnFailure || len(moved) == 0 {
		if len(moved) > 0 {
			msg += fmt.Sprintf("; the %d of this wave stay on %s (--rollback-on-failure moves them back)", len(moved), o.To)
		}
		return errors.New(msg)
	}
	fmt.Fprintf(o.Out, "wave %d/%d failed; moving its %d back to %s\n", i+1, waves, len(moved), o.From)
	back, err := o.moveWave(ctx, moved, o.To, o.From)
	if err == nil {
		err = waitRunningUnder(ctx, o.Watch, o.Out, o.listNamespace(), integrationsOf(back), o.From, o.WaveTimeout, o.settledUnder(o.From))
	}
	if err != nil {
		return fmt.Errorf("%s; moving the wave back to %s failed too: %w", msg, o.From, err)
	}
	return fmt.Errorf("%s; the %d of this wave are back on %s", msg, len(back), o.From)
}

// integrationsOf are the Integrations that show whether targets run.
func integrationsOf(targets []reassign.Target) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(targets))
	for _, t := range targets {
		keys = append(keys, t.Integration())
	}
	return keys
}
