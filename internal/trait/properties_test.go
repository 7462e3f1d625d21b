// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"slices"
	"strings"
	"testing"
)

func TestAPropertiesFileReadsAsJavaReadsIt(t *testing.T) {
	data := "# a comment\n! another\n\ngreeting = hello world\ncolon:value\nspaced  value here\n" +
		"escaped\\:key=v\nlong = one, \\\n    two\nempty\nwindows=yes\r\ntrailing=ends\\\\\n"
	got, err := ParseProperties(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"greeting=hello world", "colon=value", "spaced=value here", "escaped:key=v",
		"long=one, two", "empty=", "windows=yes", `trailing=ends\`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if _, err := ParseProperties("=no key\n"); err == nil {
		t.Fatal("a line without a key was read")
	}
	if _, err := ParseProperties("a\\=b=c\n"); err == nil || !strings.Contains(err.Error(), "holds '='") {
		t.Fatalf("a key with '=' was read: %v", err)
	}
}
