// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestMerge(t *testing.T) {
	cases := []struct {
		name        string
		platform    string
		integration string
		want        string
	}{
		{name: "integration keys replace platform keys and other platform keys stay",
			platform:    `{"container":{"image":"p","requestCPU":"1","limitCPU":"2"}}`,
			integration: `{"container":{"image":"i","limitCPU":"3"}}`,
			want:        `{"container":{"image":"i","limitCPU":"3","requestCPU":"1"}}`},
		{name: "traits set on one side only are kept",
			platform:    `{"service":{"type":"NodePort"}}`,
			integration: `{"camel":{"properties":["a=1"]}}`,
			want:        `{"camel":{"properties":["a=1"]},"service":{"type":"NodePort"}}`},
		{name: "lists are replaced, not appended",
			platform:    `{"environment":{"vars":["A=1"]}}`,
			integration: `{"environment":{"vars":["B=2"]}}`,
			want:        `{"environment":{"vars":["B=2"]}}`},
		{name: "nested objects are replaced whole, as the merge is shallow",
			platform:    `{"addons":{"a":{"x":1},"b":{"y":2}}}`,
			integration: `{"addons":{"a":{"z":3}}}`,
			want:        `{"addons":{"a":{"z":3},"b":{"y":2}}}`},
		{name: "an integration trait that is not an object replaces the platform's, to be reported by Parse",
			platform:    `{"container":{"image":"p"}}`,
			integration: `{"container":"oops"}`,
			want:        `{"container":"oops"}`},
		{name: "a null integration trait keeps the platform's defaults",
			platform:    `{"container":{"image":"p"}}`,
			integration: `{"container":null}`,
			want:        `{"container":{"image":"p"}}`},
		{name: "no traits on either side is nothing", platform: `null`, integration: `null`, want: `null`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			platform, integration := traitsOrNil(t, tc.platform), traitsOrNil(t, tc.integration)
			platformBefore, integrationBefore := mustJSON(t, platform), mustJSON(t, integration)

			got := Merge(platform, integration)

			g.Expect(mustJSON(t, got)).To(MatchJSON(tc.want))
			g.Expect(mustJSON(t, platform)).To(Equal(platformBefore), "the platform traits were modified")
			g.Expect(mustJSON(t, integration)).To(Equal(integrationBefore), "the integration traits were modified")
		})
	}
}

func TestMergedTraitsParseWithIntegrationPrecedence(t *testing.T) {
	g := NewWithT(t)
	merged := Merge(traits(t, `{"container":{"image":"platform","port":8080}}`), traits(t, `{"container":{"image":"mine"}}`))
	tr, err := Parse(merged)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.Container.Image()).To(Equal("mine"))
	g.Expect(tr.Container.Port()).To(Equal(int32(8080)))
}

func traitsOrNil(t *testing.T, s string) camelv1.Traits {
	if s == "null" {
		return nil
	}
	return traits(t, s)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
