// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"slices"
	"strings"
	"testing"
)

func TestAPropertiesFileReadsAsJavaReadsIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want []Property
	}{
		{name: "a unicode escape reads as its character", data: `greeting=caf\u00e9`,
			want: []Property{{"greeting", "café"}}},
		{name: "a line ending in a backslash goes on on the next, without its leading blanks",
			data: "long = one, \\\n    two\n", want: []Property{{"long", "one, two"}}},
		{name: "an escaped backslash at the end of a line ends it", data: "trailing=ends\\\\\nnext=1\n",
			want: []Property{{"trailing", `ends\`}, {"next", "1"}}},
		{name: "a colon, an equals sign or white space separates the key from the value",
			data: "colon:value\nequals = value\nspaced  value here\ncolon-spaced : v\n",
			want: []Property{{"colon", "value"}, {"equals", "value"}, {"spaced", "value here"}, {"colon-spaced", "v"}}},
		{name: "escaped separators belong to the key", data: "escaped\\:key=v\na\\=b=c\nwith\\ blank=d\n",
			want: []Property{{"escaped:key", "v"}, {"a=b", "c"}, {"with blank", "d"}}},
		{name: "comments with # and ! and blank lines are skipped", data: "# a comment\n  ! another\n\n\t\nk=v\n",
			want: []Property{{"k", "v"}}},
		{name: "Camel's placeholders stay as written", data: "a={{other}}\nb=${x}\nc=${env:HOME:/root}\n",
			want: []Property{{"a", "{{other}}"}, {"b", "${x}"}, {"c", "${env:HOME:/root}"}}},
		{name: "a key alone has an empty value", data: "empty\nalso=\n",
			want: []Property{{"empty", ""}, {"also", ""}}},
		{name: "escapes of line breaks and tabs read as those characters", data: `k=a\tb\nc`,
			want: []Property{{"k", "a\tb\nc"}}},
		{name: "Windows line ends are line ends", data: "windows=yes\r\nother=no\r\n",
			want: []Property{{"windows", "yes"}, {"other", "no"}}},
		{name: "a key set twice keeps its first place and its last value", data: "a=1\nb=2\na=3\n",
			want: []Property{{"a", "3"}, {"b", "2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProperties(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestPropertiesThatJavaCannotReadOrThatHaveNoKeyAreRefused(t *testing.T) {
	for _, data := range []string{"=no key\n", ": no key\n", `bad=\u12`} {
		if got, err := ParseProperties(data); err == nil {
			t.Errorf("%q was read into %q", data, got)
		}
	}
}

func TestAnEntryReadsBackAsItsProperty(t *testing.T) {
	for _, tc := range []struct {
		property Property
		want     string
	}{
		{Property{"greeting", "café"}, `greeting=caf\u00e9`},
		{Property{"a=b", "c"}, `a\=b=c`},
		{Property{"escaped:key", "v"}, `escaped\:key=v`},
		{Property{"#not.a.comment", "v"}, `\#not.a.comment=v`},
		{Property{"with blank", "  spaced"}, `with\ blank=\  spaced`},
		{Property{"trailing", `ends\`}, `trailing=ends\\`},
		{Property{"lines", "one\ntwo\r\tthree"}, `lines=one\ntwo\r\tthree`},
		{Property{"emoji", "😀"}, `emoji=\ud83d\ude00`},
		{Property{"placeholder", "{{other}} ${x}"}, `placeholder={{other}} ${x}`},
	} {
		got := tc.property.Entry()
		if got != tc.want {
			t.Errorf("%q: got the entry %s, want %s", tc.property, got, tc.want)
		}
		if strings.ContainsFunc(tc.property.Key+tc.property.Value, func(r rune) bool { return r > 0xffff }) {
			continue // the library reads a \u surrogate pair as two U+FFFD, where Java joins them
		}
		if back, err := ParseProperties(got); err != nil || !slices.Equal(back, []Property{tc.property}) {
			t.Errorf("%s read back as %q (%v), want %q", got, back, err, tc.property)
		}
	}
}

func TestAnEntrysKeyIsReadAsJavaReadsIt(t *testing.T) {
	for entry, want := range map[string]string{
		"a=1": "a", "a = 1": "a", `a\=b=1`: "a=b", "a:b=1": "a", "# comment": "", "quarkus.x=1": "quarkus.x",
	} {
		if got := PropertyKey(entry); got != want {
			t.Errorf("PropertyKey(%q) = %q, want %q", entry, got, want)
		}
	}
}
