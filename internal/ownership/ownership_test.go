package ownership

import (
	"strings"
	"testing"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestResolveID(t *testing.T) {
	cases := []struct {
		name       string
		flag       string
		env        map[string]string
		want       string
		wantSource string
		wantErr    string
	}{
		{name: "the flag wins over both variables", flag: "flag-id",
			env: map[string]string{EnvOperatorID: "env-id", EnvKamelOperatorID: "kamel-id"}, want: "flag-id", wantSource: "--operator-id"},
		{name: "OPERATOR_ID wins over KAMEL_OPERATOR_ID",
			env: map[string]string{EnvOperatorID: "env-id", EnvKamelOperatorID: "kamel-id"}, want: "env-id", wantSource: EnvOperatorID},
		{name: "KAMEL_OPERATOR_ID is used when it is the only one",
			env: map[string]string{EnvKamelOperatorID: "kamel-id"}, want: "kamel-id", wantSource: EnvKamelOperatorID},
		{name: "camel-k is the default", want: "camel-k", wantSource: "default"},
		{name: "an upper-case id is refused, naming its source", flag: "Tenant-A", wantErr: "--operator-id: invalid operator id \"Tenant-A\""},
		{name: "an id with a dot is refused", env: map[string]string{EnvOperatorID: "a.b"}, wantErr: "OPERATOR_ID: invalid operator id"},
		{name: "an id longer than 63 characters is refused", flag: strings.Repeat("a", 64), wantErr: "at most 63 characters"},
		{name: "an id ending with a dash is refused", flag: "tenant-", wantErr: "DNS-1123 label"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, source, err := ResolveID(tc.flag, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil || id != tc.want || source != tc.wantSource {
				t.Fatalf("got %q from %q (%v), want %q from %q", id, source, err, tc.want, tc.wantSource)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	ann := func(id string) map[string]string { return map[string]string{camelv1.OperatorIDAnnotation: id} }
	cases := []struct {
		name        string
		annotations map[string]string
		labels      map[string]string
		isDefault   bool
		want        Action
	}{
		{name: "a resource assigned and labelled for me is reconciled", annotations: ann("a"), labels: ann("a"), want: Reconcile},
		{name: "a resource assigned to me without the label gets the label", annotations: ann("a"), want: MirrorLabel},
		{name: "a resource assigned to me with another operator's label gets my label", annotations: ann("a"), labels: ann("b"), want: MirrorLabel},
		{name: "a resource that moved to another operator is ignored even with my label", annotations: ann("b"), labels: ann("a"), want: Ignore},
		{name: "an unassigned resource is adopted by the default operator", isDefault: true, want: Adopt},
		{name: "an empty annotation counts as unassigned", annotations: ann(""), isDefault: true, want: Adopt},
		{name: "an unassigned resource is ignored by other operators", want: Ignore},
		{name: "the default operator leaves others' resources alone", annotations: ann("b"), isDefault: true, want: Ignore},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.annotations, tc.labels, "a", tc.isDefault); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
