// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import "testing"

func TestTheOptionsOfKameletURIsReachTheTemplateDecoded(t *testing.T) {
	cases := []struct {
		name, in, want string
		xml            bool
	}{
		{name: "a percent-encoded option becomes RAW of its value",
			in: `to: "kamelet:http-sink?url=http%3A%2F%2Fexample.com%2Fa&method=POST"`, want: `to: "kamelet:http-sink?url=RAW(http://example.com/a)&method=POST"`},
		{name: "a plus is a space, as in Camel's other endpoints",
			in: `.to("kamelet:echo/step?msg=a+b")`, want: `.to("kamelet:echo/step?msg=RAW(a b)")`},
		{name: "an option already RAW is kept", in: `kamelet:echo?msg=RAW(a%2Fb)`, want: `kamelet:echo?msg=RAW(a%2Fb)`},
		{name: "a plain option is kept", in: `uri: kamelet:timer-source?message=Hello from a Kamelet`, want: `uri: kamelet:timer-source?message=Hello from a Kamelet`},
		{name: "a value that would need escaping is kept", in: `"kamelet:echo?msg=%22quoted%22"`, want: `"kamelet:echo?msg=%22quoted%22"`},
		{name: "in XML the options are split at &amp;", xml: true,
			in: `<to uri="kamelet:echo?a=x%2Fy&amp;b=1"/>`, want: `<to uri="kamelet:echo?a=RAW(x/y)&amp;b=1"/>`},
		{name: "in XML a value holding & is kept", xml: true,
			in: `<to uri="kamelet:echo?a=x%26y"/>`, want: `<to uri="kamelet:echo?a=x%26y"/>`},
		{name: "other endpoints are left to Camel", in: `to: "http:example.com?q=a%2Fb"`, want: `to: "http:example.com?q=a%2Fb"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := decodeKameletOptions(tc.in, tc.xml); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
