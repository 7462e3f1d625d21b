package command

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// recorder records the steps it ran and fails the one named in failAt.
type recorder struct {
	ran    []string
	failAt string
}

func (r *recorder) step(name string) error {
	r.ran = append(r.ran, name)
	if name == r.failAt {
		return errors.New(name + " failed")
	}
	return nil
}

func (r *recorder) Complete() error           { return r.step("Complete") }
func (r *recorder) Validate() error           { return r.step("Validate") }
func (r *recorder) Run(context.Context) error { return r.step("Run") }

func TestACommandRunsItsStepsInOrderAndStopsAtTheFirstError(t *testing.T) {
	for failAt, want := range map[string][]string{
		"":         {"Complete", "Validate", "Run"},
		"Complete": {"Complete"},
		"Validate": {"Complete", "Validate"},
		"Run":      {"Complete", "Validate", "Run"},
	} {
		r := &recorder{failAt: failAt}
		err := Run(context.Background(), r)
		if (err != nil) != (failAt != "") {
			t.Errorf("failing at %q: error %v", failAt, err)
		}
		if !reflect.DeepEqual(r.ran, want) {
			t.Errorf("failing at %q: ran %v, want %v", failAt, r.ran, want)
		}
	}
}
