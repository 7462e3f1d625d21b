// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package kamelets_test

import (
	"slices"
	"testing"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/config/kamelets"
	"github.com/caravan-dev/caravan/internal/kamelet"
)

func TestCatalog(t *testing.T) {
	catalog, err := kamelets.Catalog()
	if err != nil {
		t.Fatalf("the catalog does not decode: %v", err)
	}
	var names []string
	for _, k := range catalog {
		names = append(names, k.Name)
	}
	want := []string{"http-sink", "insert-header-action", "log-sink", "timer-source"}
	if !slices.Equal(names, want) {
		t.Fatalf("the catalog holds %v, want %v sorted by name", names, want)
	}
	for _, k := range catalog {
		t.Run(k.Name+" is a valid Kamelet", func(t *testing.T) {
			if k.APIVersion != "camel.apache.org/v1" || k.Kind != "Kamelet" {
				t.Errorf("apiVersion/kind = %s/%s, want camel.apache.org/v1/Kamelet", k.APIVersion, k.Kind)
			}
			if p := kamelet.Validate(k); len(p) > 0 {
				t.Errorf("Validate found problems: %v", p)
			}
			if kamelet.Type(k) == "" {
				t.Errorf("label %s is not set", camelv1.KameletTypeLabel)
			}
			if len(k.Spec.Dependencies) == 0 {
				t.Error("spec.dependencies is empty")
			}
			props, _, err := kamelet.Properties(k)
			if err != nil || len(props) == 0 {
				t.Errorf("spec.definition has no readable properties: %v", err)
			}
			for name, p := range props {
				if p.Title == "" || p.Description == "" {
					t.Errorf("property %q needs a title and a description", name)
				}
			}
		})
	}
}
