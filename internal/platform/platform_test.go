package platform

import (
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/runtime"
)

func TestResolveFillsDefaultsAndKeepsWhatIsSet(t *testing.T) {
	empty := Resolve(camelv1.IntegrationPlatformSpec{})
	if empty.Build.BaseImage != runtime.BaseImage.Repository || *empty.Build.MaxRunningBuilds != DefaultMaxRunningBuilds ||
		empty.Build.Timeout.Duration != DefaultBuildTimeout || empty.Cluster != DefaultCluster {
		t.Fatalf("defaults not filled: %+v", empty)
	}
	set := camelv1.IntegrationPlatformSpec{Build: camelv1.IntegrationPlatformBuildSpec{
		BaseImage: "example/base:1", MaxRunningBuilds: ptr.To[int32](7),
		Timeout: &metav1.Duration{Duration: time.Minute},
	}}
	got := Resolve(set)
	if got.Build.BaseImage != "example/base:1" || *got.Build.MaxRunningBuilds != 7 || got.Build.Timeout.Duration != time.Minute {
		t.Fatalf("set values not kept: %+v", got.Build)
	}
	if set.Build.RuntimeVersion != "" {
		t.Fatal("Resolve changed its input")
	}
}

func TestTheBuildConfigurationIsReadAsCamelKWritesIt(t *testing.T) {
	for _, c := range []struct {
		name, raw       string
		strategy, image string
		wantErr         string
	}{
		{name: "none gives the pod strategy and the default builder image", strategy: "pod", image: runtime.BuilderImage.Repository},
		{name: "the pod strategy with a tool image", raw: `{"strategy":"pod","toolImage":"builders/maven:1","orderStrategy":"fifo"}`,
			strategy: "pod", image: "builders/maven:1"},
		{name: "a strategy Caravan does not run is refused", raw: `{"strategy":"spectrum"}`, wantErr: `"spectrum" is not one Caravan runs`},
		{name: "Camel K's routine strategy is refused, naming pod", raw: `{"strategy":"routine"}`,
			wantErr: `"routine" is Camel K's build inside its operator, with Maven there; Caravan's operator runs no Maven: use pod`},
		{name: "the dependency-list strategy", raw: `{"strategy":"dependency-list"}`, strategy: "dependency-list", image: runtime.BuilderImage.Repository},
		{name: "a configuration that is no object is refused", raw: `"pod"`, wantErr: "spec.build.buildConfiguration"},
		{name: "the builder's requests and limits are read", raw: `{"requestCPU":"500m","limitMemory":"2Gi"}`,
			strategy: "pod", image: runtime.BuilderImage.Repository},
		{name: "a limit that is no quantity is refused", raw: `{"limitMemory":"lots"}`,
			wantErr: `spec.build.buildConfiguration.limitMemory "lots" must be a positive quantity`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b camelv1.IntegrationPlatformBuildSpec
			if c.raw != "" {
				b.BuildConfiguration = &camelv1.RawObject{}
				b.BuildConfiguration.Raw = []byte(c.raw)
			}
			got, err := BuildConfigurationOf(b)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want an error saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got.Strategy != c.strategy || got.ToolImage != c.image {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
	}
}

func TestTheMavenCacheClaimAndSettingsAreReadFromTheMavenSettings(t *testing.T) {
	raw := func(s string) camelv1.IntegrationPlatformBuildSpec {
		return camelv1.IntegrationPlatformBuildSpec{Maven: &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(s)}}}
	}
	for _, tc := range []struct {
		name, maven, claim, settings, err string
		cas                               int
	}{
		{name: "no Maven settings name no claim"},
		{name: "Camel K's CLI options and properties are read", maven: `{"cliOptions":["-V"],"properties":{"b":"2","a":"x y"}}`},
		{name: "Camel K's profiles are refused, saying what to do", maven: `{"profiles":[{"configMapKeyRef":{"name":"p","key":"k"}}]}`,
			err: "spec.build.maven.profiles is Camel K's, which Caravan does not apply: put the profiles in the settings.xml"},
		{name: "settingsSecurity is refused", maven: `{"settingsSecurity":{"secretKeyRef":{"name":"s","key":"k"}}}`, err: "spec.build.maven.settingsSecurity"},
		{name: "a local repository is refused for the cache claim", maven: `{"localRepository":"/m2"}`, err: "cacheVolumeClaim"},
		{name: "an option that is no option is refused", maven: `{"cliOptions":["clean"]}`, err: `cliOptions[0]: "clean" is no Maven option`},
		{name: "an option that sets the builder's settings is refused", maven: `{"cliOptions":["-s=/etc/x.xml"]}`, err: "the builder's own"},
		{name: "a property without a name is refused", maven: `{"properties":{"":"x"}}`, err: "is no property name"},
		{name: "a claim is read", maven: `{"cacheVolumeClaim":"operator-a-maven"}`, claim: "operator-a-maven"},
		{name: "a name no claim can have is refused", maven: `{"cacheVolumeClaim":"Not_A_Name"}`, err: `"Not_A_Name" names no PersistentVolumeClaim`},
		{name: "a claim that is not a string is refused", maven: `{"cacheVolumeClaim":3}`, err: "spec.build.maven"},
		{name: "settings from a ConfigMap", maven: `{"settings":{"configMapKeyRef":{"name":"maven-settings","key":"settings.xml"}}}`,
			settings: "configmap/maven-settings key settings.xml"},
		{name: "settings from a Secret", maven: `{"settings":{"secretKeyRef":{"name":"maven-settings","key":"settings.xml"}}}`,
			settings: "secret/maven-settings key settings.xml"},
		{name: "settings from both are refused", maven: `{"settings":{"configMapKeyRef":{"name":"a","key":"k"},"secretKeyRef":{"name":"b","key":"k"}}}`,
			err: "spec.build.maven.settings: set configMapKeyRef or secretKeyRef, not both"},
		{name: "settings from neither are refused", maven: `{"settings":{}}`, err: "spec.build.maven.settings: set configMapKeyRef or secretKeyRef"},
		{name: "settings without a key are refused", maven: `{"settings":{"configMapKeyRef":{"name":"a"}}}`, err: `spec.build.maven.settings: key ""`},
		{name: "CA certificates from Secrets", maven: `{"caSecrets":[{"name":"corp-ca","key":"ca.crt"},{"name":"other-ca","key":"tls.crt"}]}`, cas: 2},
		{name: "a CA Secret without a key is refused", maven: `{"caSecrets":[{"name":"corp-ca","key":"ca.crt"},{"name":"other-ca"}]}`,
			err: `spec.build.maven.caSecrets[1]: key ""`},
		{name: "a CA Secret without a name is refused", maven: `{"caSecrets":[{"key":"ca.crt"}]}`, err: `spec.build.maven.caSecrets[0]: name ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := camelv1.IntegrationPlatformBuildSpec{}
			if tc.maven != "" {
				b = raw(tc.maven)
			}
			m, err := MavenOf(b)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || m.CacheVolumeClaim != tc.claim || len(m.CASecrets) != tc.cas {
				t.Fatalf("got %+v, %v; want claim %q", m, err, tc.claim)
			}
			if got := ""; m.Settings != nil || tc.settings != "" {
				if m.Settings != nil {
					got = m.Settings.String()
				}
				if got != tc.settings {
					t.Fatalf("settings %q, want %q", got, tc.settings)
				}
			}
		})
	}
}

func TestCamelKsBuildConfigurationIsAppliedOrRefused(t *testing.T) {
	raw := func(s string) camelv1.IntegrationPlatformBuildSpec {
		return camelv1.IntegrationPlatformBuildSpec{BuildConfiguration: &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(s)}}}
	}
	c, err := BuildConfigurationOf(raw(`{"nodeSelector":{"pool":"builds"},"annotations":{"a":"b"},"orderStrategy":"sequential"}`))
	if err != nil || c.NodeSelector["pool"] != "builds" || c.Annotations["a"] != "b" || !c.Sequential() {
		t.Fatalf("got %+v, %v", c, err)
	}
	for doc, want := range map[string]string{
		`{"orderStrategy":"random"}`:          `orderStrategy "random" is not Camel K's`,
		`{"platforms":["linux/arm64"]}`:       "builds kits for the builder pod's architecture only",
		`{"operatorNamespace":"other"}`:       "run in the operator's namespace",
		`{"nodeSelector":{"bad key!":"x"}}`:   "spec.build.buildConfiguration.nodeSelector",
		`{"annotations":{"Not Valid/x":"y"}}`: "spec.build.buildConfiguration.annotations",
	} {
		if _, err := BuildConfigurationOf(raw(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
}

func TestMavensPropertiesAndOptionsAreItsArgumentsInAStableOrder(t *testing.T) {
	m := Maven{Properties: map[string]string{"b": "2", "a": "x y"}, CLIOptions: []string{"-V", "--no-transfer-progress"}}
	if got, want := m.Args(), []string{"-Da=x y", "-Db=2", "-V", "--no-transfer-progress"}; !slices.Equal(got, want) {
		t.Errorf("Args = %q, want %q", got, want)
	}
}

func TestTheBuildConfigurationsResourcesAreTheQuantitiesSet(t *testing.T) {
	c := BuildConfiguration{RequestCPU: "500m", LimitMemory: "2Gi"}
	requests, limits, err := c.Resources()
	if err != nil {
		t.Fatal(err)
	}
	if len(requests) != 1 || requests.Cpu().String() != "500m" || len(limits) != 1 || limits.Memory().String() != "2Gi" {
		t.Errorf("requests %v, limits %v", requests, limits)
	}
}
