package harness

import (
	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/fixture"
)

// TestImage is the image test integrations run; kwok never pulls it.
const TestImage = fixture.Image

// NewIntegration is a timer-to-log flow on TestImage, assigned to
// operatorID ("" leaves it unassigned).
func NewIntegration(ns, name, operatorID string, replicas int32) *camelv1.Integration {
	return fixture.Integration(ns, name, operatorID, replicas, TestImage)
}

// Raw encodes v as a RawObject (a flow, a trait, a template).
func Raw(v any) camelv1.RawObject { return fixture.Raw(v) }

// PipeTimerToLog is a binding spec from the catalog: timer-source →
// log-sink, one replica of the test image (no kit to build).
func PipeTimerToLog() camelv1.PipeSpec { return fixture.PipeSpec() }

// NewPipe is a Pipe of PipeTimerToLog assigned to operatorID.
func NewPipe(ns, name, operatorID string) *camelv1.Pipe { return fixture.Pipe(ns, name, operatorID) }
