package trait

import (
	"strings"
	"testing"
)

func TestRunFlagsBecomeTraitTrees(t *testing.T) {
	cases := []struct {
		name       string
		traits     []string
		properties []string
		image      string
		provider   string
		configs    []string
		resources  []string
		volumes    []string
		env        []string
		want       map[string]string
		wantErr    string
	}{
		{name: "integers, booleans and strings are typed",
			traits: []string{"container.port=8080", "service.enabled=true", "container.name=main", "container.imagePullPolicy=Always"},
			want: map[string]string{
				"container": `{"imagePullPolicy":"Always","name":"main","port":8080}`,
				"service":   `{"enabled":true}`,
			}},
		{name: "a list field of Camel K's takes one item per -t, as Camel K's service-ports case writes them",
			traits: []string{"container.ports=hello;8085", "service.ports=hello;85;8085", "builder.tasks-request-cpu=builder:500m"},
			want: map[string]string{
				"container": `{"ports":["hello;8085"]}`,
				"service":   `{"ports":["hello;85;8085"]}`,
				"builder":   `{"tasksRequestCPU":["builder:500m"]}`,
			}},
		{name: "a number with leading zeros or a fraction stays a string",
			traits: []string{"jolokia.code=007", "jolokia.ratio=0.5", "jolokia.negative=-3"},
			want:   map[string]string{"jolokia": `{"code":"007","negative":-3,"ratio":"0.5"}`}},
		{name: "quantities stay strings even when they look like numbers",
			traits: []string{"container.limitMemory=1024", "container.requestCPU=1"},
			want:   map[string]string{"container": `{"limitMemory":"1024","requestCPU":"1"}`}},
		{name: "a property from a ConfigMap or a Secret is mounted as a configuration, as kamel does",
			properties: []string{"a=1", "configmap:more-props", "secret:creds/user"}, configs: []string{"configmap:app"},
			want: map[string]string{
				"camel": `{"properties":["a=1"]}`,
				"mount": `{"configs":["configmap:app","configmap:more-props","secret:creds/user"]}`,
			}},
		{name: "kamel's kebab-case properties are stored in camelCase, capitals kept for acronyms",
			traits: []string{"health.startup-probe-enabled=true", "container.request-cpu=1", "container.limit-memory=1024", "mount.empty-dirs=x:/y"},
			want: map[string]string{
				"health":    `{"startupProbeEnabled":true}`,
				"container": `{"limitMemory":"1024","requestCPU":"1"}`,
				"mount":     `{"emptyDirs":["x:/y"]}`,
			}},
		{name: "nested keys make nested objects",
			traits: []string{"master.lease.enabled=true", "master.lease.resourceName=lock"},
			want:   map[string]string{"master": `{"lease":{"enabled":true,"resourceName":"lock"}}`}},
		{name: "an indexed key sets an item of a list of objects, as kamel's -t does, every key in camelCase",
			traits: []string{"jvm.ca-certificates[0].cert-path=/etc/ca/a.crt", "jvm.ca-certificates[1].cert-path=/etc/ca/b.crt",
				"jvm.truststore-password-path=/etc/pw/password", "jvm.base-truststore.truststore-path=/etc/base.jks",
				"jvm.base-truststore.password-path=/etc/pw/base"},
			want: map[string]string{"jvm": `{"baseTruststore":{"passwordPath":"/etc/pw/base","truststorePath":"/etc/base.jks"},` +
				`"caCertificates":[{"certPath":"/etc/ca/a.crt"},{"certPath":"/etc/ca/b.crt"}],"truststorePasswordPath":"/etc/pw/password"}`}},
		{name: "items of a list are set in order", traits: []string{"jvm.ca-certificates[1].cert-path=/etc/ca/b.crt"},
			wantErr: "ca-certificates[1].cert-path=/etc/ca/b.crt: caCertificates[1] comes before caCertificates[0]"},
		{name: "CA certificates need the truststore's password, as on Camel K", traits: []string{"jvm.ca-certificates[0].cert-path=/etc/ca/a.crt"},
			wantErr: "trait jvm.truststorePasswordPath: is required with caCertificates and no baseTruststore"},
		{name: "a bracketed value is a list of typed items",
			traits: []string{"jolokia.items=[a, 2, true]", "jolokia.none=[]"},
			want:   map[string]string{"jolokia": `{"items":["a",2,true],"none":[]}`}},
		{name: "a list field gets a list from one setting, and one item per repeat",
			traits: []string{"environment.vars=A=1", "environment.vars=B=2", "mount.configs=configmap:cm"},
			want: map[string]string{
				"environment": `{"vars":["A=1","B=2"]}`,
				"mount":       `{"configs":["configmap:cm"]}`,
			}},
		{name: "a repeated key of another field becomes a list",
			traits: []string{"jolokia.x=1", "jolokia.x=two"},
			want:   map[string]string{"jolokia": `{"x":[1,"two"]}`}},
		{name: "properties go into the camel trait after -t ones",
			traits:     []string{"camel.properties=a=1"},
			properties: []string{"greeting=hello world", "empty="},
			want:       map[string]string{"camel": `{"properties":["a=1","greeting=hello world","empty="]}`}},
		{name: "--image sets container.image",
			traits: []string{"container.port=8080"}, image: "example/app:1",
			want: map[string]string{"container": `{"image":"example/app:1","port":8080}`}},
		{name: "--config, --resource, -v and -e go into the mount and environment traits, after -t ones",
			traits: []string{"mount.configs=configmap:first"}, configs: []string{"configmap:app", "secret:creds"},
			resources: []string{"configmap:data@/data"}, volumes: []string{"claim:/var/claim"}, env: []string{"GREETING=hi"},
			want: map[string]string{
				"mount":       `{"configs":["configmap:first","configmap:app","secret:creds"],"resources":["configmap:data@/data"],"volumes":["claim:/var/claim"]}`,
				"environment": `{"vars":["GREETING=hi"]}`,
			}},
		{name: "a --config the operator would refuse is refused", configs: []string{"file:/a.txt"},
			wantErr: "trait mount.configs[0]: must be configmap:NAME[/KEY] or secret:NAME[/KEY]"},
		{name: "an -e without a name is refused", env: []string{"=x"}, wantErr: "trait environment.vars[0]: must be NAME=value"},
		{name: "no settings give no traits", want: nil},
		{name: "a trait Camel K does not have is refused, as kamel does",
			traits: []string{"foo.bar=1", "container.port=8080", "contianer.port=1"}, wantErr: "trait contianer, foo does not exist in catalog"},
		{name: "a property Camel K's trait does not have is refused, naming those it has",
			traits:  []string{"container.nosuch=1", "health.liveness-prob-enabled=true"},
			wantErr: "trait container has no property nosuch: Camel K's takes allowPrivilegeEscalation, auto, capabilitiesAdd"},
		{name: "kamel's kebab-case properties are Camel K's", traits: []string{"container.limit-cpu=1", "health.liveness-probe-enabled=true"},
			want: map[string]string{"container": `{"limitCPU":"1"}`, "health": `{"livenessProbeEnabled":true}`}},
		{name: "a setting without = is refused", traits: []string{"container.port"}, wantErr: "-t container.port: a trait setting must be TRAIT.KEY=VALUE"},
		{name: "a setting without a key is refused", traits: []string{"container=x"}, wantErr: "must be TRAIT.KEY=VALUE"},
		{name: "an empty key segment is refused", traits: []string{"container..port=1"}, wantErr: "must be TRAIT.KEY=VALUE"},
		{name: "an upper-case trait name is refused", traits: []string{"Container.port=1"}, wantErr: `"Container" is not a trait name`},
		{name: "a value cannot also hold keys", traits: []string{"a.b=1", "a.b.c=2"}, wantErr: "-t a.b.c=2: a.b is already set to a value"},
		{name: "keys cannot also be a value", traits: []string{"a.b.c=2", "a.b=1"}, wantErr: "-t a.b=1: a.b already holds keys"},
		{name: "a port that is not a number is refused as the operator would",
			traits: []string{"container.port=http"}, wantErr: "trait container.port: must be an integer between 1 and 65535"},
		{name: "a bad quantity is refused as the operator would",
			traits: []string{"container.limitMemory=lots"}, wantErr: "trait container.limitMemory"},
		{name: "--image and -t container.image together are refused",
			traits: []string{"container.image=a"}, image: "b", wantErr: "--image and -t container.image both set the image"},
		{name: "--runtime-provider is the camel trait's runtimeProvider", provider: "plain-quarkus",
			want: map[string]string{"camel": `{"runtimeProvider":"plain-quarkus"}`}},
		{name: "a runtime provider Caravan does not run is refused naming those it runs", provider: "jbang",
			wantErr: `trait camel.runtimeProvider: runtime provider "jbang" is not one this operator runs: use main or quarkus`},
		{name: "a Camel version for the quarkus provider is refused naming a platform version",
			traits: []string{"camel.runtimeProvider=quarkus", "camel.runtimeVersion=4.18.0"}, wantErr: "4.18.0 is no Quarkus platform version"},
		{name: "--runtime-provider and -t camel.runtimeProvider together are refused",
			traits: []string{"camel.runtimeProvider=main"}, provider: "quarkus", wantErr: "--runtime-provider and -t camel.runtimeProvider both"},
		{name: "a property without = is refused", properties: []string{"greeting"}, wantErr: "-p greeting: a property must be KEY=VALUE"},
		{name: "a property without a key is refused", properties: []string{"=x"}, wantErr: "a property must be KEY=VALUE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			traits, err := FromFlags(Flags{Settings: tc.traits, Properties: tc.properties, Image: tc.image, RuntimeProvider: tc.provider,
				Configs: tc.configs, Resources: tc.resources, Volumes: tc.volumes, Env: tc.env})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for name, raw := range traits {
				got[name] = string(raw.Raw)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got traits %v, want %v", got, tc.want)
			}
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("trait %s: got %s, want %s", name, got[name], want)
				}
			}
		})
	}
}
