// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"slices"
	"testing"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestAFileExtensionNamesItsLanguageWhateverItsCase(t *testing.T) {
	for name, want := range map[string]camelv1.Language{
		"route.yaml": camelv1.LanguageYAML, "Route.JAVA": camelv1.LanguageJava, "a.b.kts": camelv1.LanguageKotlin,
	} {
		if got, ok := LanguageOf(name); !ok || got != want {
			t.Errorf("LanguageOf(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if _, ok := LanguageOf("notes.txt"); ok {
		t.Error("notes.txt names a language")
	}
	exts := Extensions()
	if !slices.Equal(exts, []string{".java", ".xml", ".yaml", ".yml"}) {
		t.Errorf("Extensions() = %v", exts)
	}
}
