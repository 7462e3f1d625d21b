package build

import (
	"testing"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/kit"
)

func TestTask(t *testing.T) {
	spec := kit.Spec{BaseImage: "eclipse-temurin:21", Dependencies: []string{"camel:timer"}}
	task, err := TaskOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		tasks   []camelv1.RawObject
		wantErr bool
	}{
		{"a build with Caravan's task builds its kit spec", []camelv1.RawObject{task}, false},
		{"a build without Caravan's task has nothing to build", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SpecOf(&camelv1.Build{Spec: camelv1.BuildSpec{Tasks: tc.tasks}})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if !tc.wantErr && got.Hash() != spec.Hash() {
				t.Errorf("decoded %+v, want %+v", got, spec)
			}
		})
	}
}
