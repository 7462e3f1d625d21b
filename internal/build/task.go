package build

import (
	"encoding/json"
	"fmt"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/kit"
)

// TaskName is the key of Caravan's task in a Build's spec.tasks: the kit spec to build.
const TaskName = "caravan"

// TaskOf encodes a kit spec as a Build task, which SpecOf reads back.
func TaskOf(s kit.Spec) (camelv1.RawObject, error) {
	data, err := json.Marshal(map[string]kit.Spec{TaskName: s})
	if err != nil {
		return camelv1.RawObject{}, err
	}
	var raw camelv1.RawObject
	raw.Raw = data
	return raw, nil
}

// SpecOf decodes the kit spec of a Build's Caravan task.
func SpecOf(b *camelv1.Build) (kit.Spec, error) {
	for _, t := range b.Spec.Tasks {
		var task map[string]json.RawMessage
		if err := json.Unmarshal(t.Raw, &task); err != nil {
			continue
		}
		if raw, ok := task[TaskName]; ok {
			var s kit.Spec
			if err := json.Unmarshal(raw, &s); err != nil {
				return kit.Spec{}, fmt.Errorf("task %s: %w", TaskName, err)
			}
			return s, nil
		}
	}
	return kit.Spec{}, fmt.Errorf("the build has no %q task", TaskName)
}
