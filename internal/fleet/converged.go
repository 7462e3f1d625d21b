package fleet

import (
	"sync"
	"time"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// convergeEvery is how long an operator whose declaration has not changed goes without its objects
// applied again. A reconcile in between (a roll-out's progress, a canary's wave) only reads, and
// what someone changed by hand is set back within this time. A deleted Deployment is applied again
// at once.
const convergeEvery = 10 * time.Minute

// convergeMarks records, per declared operator, the generation of its
// IntegrationOperator whose objects were last applied, and when.
type convergeMarks struct {
	m sync.Map // name → convergeMark
}

type convergeMark struct {
	uid        string
	generation int64
	at         time.Time
}

// mark records that the objects iop declares were applied at now.
func (c *convergeMarks) mark(iop *camelv1alpha1.IntegrationOperator, now time.Time) {
	c.m.Store(iop.Name, convergeMark{uid: string(iop.UID), generation: iop.Generation, at: now})
}

// recent tells whether the objects of iop, as declared now, were applied
// less than convergeEvery before now.
func (c *convergeMarks) recent(iop *camelv1alpha1.IntegrationOperator, now time.Time) bool {
	v, ok := c.m.Load(iop.Name)
	if !ok {
		return false
	}
	m := v.(convergeMark)
	return m.uid == string(iop.UID) && m.generation == iop.Generation && now.Sub(m.at) < convergeEvery
}
