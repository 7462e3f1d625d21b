package trait

import (
	"slices"
	"strings"
	"testing"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestTraitsCaravanDoesNotActOnAreToldApartFromUnknownOnes(t *testing.T) {
	traits := camelv1.Traits{"container": {}, "route": {}, "jolokia": {}, "promethues": {}, "mount": {}, "health": {}}
	camelK, unknown := Ignored(traits)
	if !slices.Equal(camelK, []string{"jolokia", "route"}) || !slices.Equal(unknown, []string{"promethues"}) {
		t.Fatalf("Ignored = %v, %v", camelK, unknown)
	}
	if camelK, unknown := Ignored(camelv1.Traits{"container": {}}); camelK != nil || unknown != nil {
		t.Fatalf("a trait Caravan acts on is ignored: %v, %v", camelK, unknown)
	}
}

func TestCheckNamesEverythingThatTakesNoEffect(t *testing.T) {
	raw := func(v string) camelv1.RawObject {
		var r camelv1.RawObject
		r.Raw = []byte(v)
		return r
	}
	u := Check(camelv1.Traits{
		"jolokia":     raw(`{}`),
		"gitops":      raw(`{}`),
		"promethus":   raw(`{}`),
		"container":   raw(`{"port":8080,"runAsUser":1000,"prot":1}`),
		"mount":       raw(`{"configs":["configmap:a"],"hotReload":true,"scanKameletsImplicitLabelSecrets":true}`),
		"jvm":         raw(`{"enabled":false,"agents":["x"]}`),
		"service":     raw(`{"auto":true,"nodePort":true}`),
		"pull-secret": raw(`{"imagePullerDelegation":true}`),
		"camel":       raw(`{"properties":["quarkus.http.port=8081","camel.main.name=a","quarkus.log.level = DEBUG","quarkus.http.port=1"]}`),
	})
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"Camel K traits", u.CamelK, []string{"gitops", "jolokia"}},
		{"unknown traits", u.Unknown, []string{"promethus"}},
		{"unknown properties", u.UnknownProperties, []string{"container.prot"}},
		{"inert properties, none of a disabled trait", u.Inert, []string{"container.runAsUser", "mount.scanKameletsImplicitLabelSecrets", "pull-secret.imagePullerDelegation"}},
		{"Quarkus properties", u.Quarkus, []string{"quarkus.http.port", "quarkus.log.level"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	msg := u.Message()
	for _, want := range []string{"container.runAsUser, mount.scanKameletsImplicitLabelSecrets, pull-secret.imagePullerDelegation are kept but do nothing",
		"does not read the Quarkus properties quarkus.http.port, quarkus.log.level", "promethus names no Camel K trait"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message %q does not say %q", msg, want)
		}
	}
	if !u.Typos() || Check(camelv1.Traits{"mount": raw(`{"scanKameletsImplicitLabelSecrets":true}`)}).Typos() {
		t.Error("Typos tells an inert property from a typo wrongly")
	}
	if !Check(camelv1.Traits{"container": raw(`{"port":8080}`)}).Empty() {
		t.Error("a trait that takes effect is named")
	}
	for _, provider := range []string{"quarkus", "plain-quarkus"} {
		if q := Check(camelv1.Traits{"camel": raw(`{"runtimeProvider":"` + provider + `","properties":["quarkus.log.level=DEBUG"]}`)}); !q.Empty() {
			t.Errorf("on the %s provider, which reads them, Quarkus properties are named: %+v", provider, q)
		}
	}
	if q := Check(camelv1.Traits{"camel": raw(`{"runtimeProvider":"main","properties":["quarkus.log.level=DEBUG"]}`)}); len(q.Quarkus) != 1 {
		t.Errorf("on camel-main, Quarkus properties are not named: %+v", q)
	}
}
