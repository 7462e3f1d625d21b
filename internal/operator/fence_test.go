package operator

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestWritesGoOnlyWhileTheRegistrationIsSurelyLive(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	r := &Registrar{ID: "a", Interval: 2 * time.Second, StaleAfter: 6 * time.Second, Clock: clk}
	fence := &writeFence{}
	wrote := func() error {
		return fence.write(context.Background(), func(ctx context.Context) error {
			deadline, ok := ctx.Deadline()
			g.Expect(ok).To(BeTrue(), "a write carries the fence's deadline")
			g.Expect(deadline).To(Equal(t0.Add(4 * time.Second)))
			return nil
		})
	}

	g.Expect(wrote()).To(MatchError(errNotLive), "no write before the registrar exists")
	fence.deadline = r.WriteDeadline
	g.Expect(wrote()).To(MatchError(ContainSubstring("does not hold its registration")))

	r.setState(true, "", false)
	r.renewedAt, r.running = t0, true
	clk.SetTime(t0.Add(3 * time.Second))
	g.Expect(wrote()).To(Succeed())

	t.Log("one interval before others may count it gone, writes stop")
	clk.SetTime(t0.Add(4 * time.Second))
	err := wrote()
	g.Expect(errors.Is(err, errNotLive)).To(BeTrue())
	g.Expect(err).To(MatchError(ContainSubstring("operator a last renewed it 4s ago")))
	g.Expect(r.checkNotExpired(clk.Now())).To(Succeed(), "the registration itself lasts 6s")

	t.Log("once the registration's whole life has passed without renewal, the operator may not renew it: it stops")
	err = r.checkNotExpired(t0.Add(6 * time.Second))
	g.Expect(errors.Is(err, errRegistrationExpired)).To(BeTrue())
	g.Expect(err).To(MatchError(ContainSubstring("operator a could not renew it for 6s (it counts as gone after 6s)")))
}
