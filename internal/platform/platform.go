// Package platform resolves an IntegrationPlatform's effective settings:
// what the user set, with Caravan's defaults filled in.
package platform

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// Defaults of a platform's build settings.
const (
	DefaultMaxRunningBuilds = 3
	DefaultBuildTimeout     = 5 * time.Minute
	DefaultCluster          = "Kubernetes"
)

// Resolve returns spec with every unset setting given its default.
func Resolve(spec camelv1.IntegrationPlatformSpec) camelv1.IntegrationPlatformSpec {
	out := *spec.DeepCopy()
	if out.Cluster == "" {
		out.Cluster = DefaultCluster
	}
	b := &out.Build
	if b.BaseImage == "" {
		b.BaseImage = runtime.BaseImage.Repository
	}
	if b.RuntimeProvider == "" {
		b.RuntimeProvider = runtime.DefaultProvider
	}
	if b.RuntimeVersion == "" {
		b.RuntimeVersion = runtime.DefaultCamelVersion
		if p, err := runtime.ProviderNamed(b.RuntimeProvider); err == nil {
			b.RuntimeVersion = p.DefaultVersion()
		}
	}
	if b.MaxRunningBuilds == nil || *b.MaxRunningBuilds == 0 {
		b.MaxRunningBuilds = ptr.To[int32](DefaultMaxRunningBuilds)
	}
	if b.Timeout == nil || b.Timeout.Duration <= 0 {
		b.Timeout = &metav1.Duration{Duration: DefaultBuildTimeout}
	}
	return out
}

// BuildConfiguration is what Caravan reads of Camel K's spec.build.buildConfiguration.
type BuildConfiguration struct {
	// Strategy is pod (Maven in a builder pod) or dependency-list (in the operator, no jars).
	Strategy string `json:"strategy,omitempty"`
	// ToolImage is the builder pods' image; a name without a host is looked
	// up in the platform's registry.
	ToolImage string `json:"toolImage,omitempty"`
	// RequestCPU, RequestMemory, LimitCPU and LimitMemory are the builder pods' Maven
	// container's requests and limits, quantities; "" keeps the builder's default.
	RequestCPU    string `json:"requestCPU,omitempty"`
	RequestMemory string `json:"requestMemory,omitempty"`
	LimitCPU      string `json:"limitCPU,omitempty"`
	LimitMemory   string `json:"limitMemory,omitempty"`
	// NodeSelector and Annotations go on the builder pods.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	// OrderStrategy is Camel K's: sequential runs one build at a time; fifo and dependencies are
	// what Caravan does anyway (builds start in order, each on the Ready kit with most of its
	// dependencies).
	OrderStrategy string `json:"orderStrategy,omitempty"`
	// Platforms (multi-architecture kits) and OperatorNamespace are Camel K's, refused while set.
	Platforms         []string `json:"platforms,omitempty"`
	OperatorNamespace string   `json:"operatorNamespace,omitempty"`
}

// Sequential tells whether the builds run one at a time (orderStrategy sequential).
func (c BuildConfiguration) Sequential() bool { return c.OrderStrategy == "sequential" }

// checkCamelK refuses the fields of Camel K's build configuration that Caravan does not apply,
// and checks the pods' node selector and annotations.
func (c BuildConfiguration) checkCamelK() error {
	switch {
	case c.OrderStrategy != "" && c.OrderStrategy != "sequential" && c.OrderStrategy != "fifo" && c.OrderStrategy != "dependencies":
		return fmt.Errorf("spec.build.buildConfiguration.orderStrategy %q is not Camel K's: use sequential, fifo or dependencies", c.OrderStrategy)
	case len(c.Platforms) > 0:
		return errors.New("spec.build.buildConfiguration.platforms: Caravan builds kits for the builder pod's architecture only; remove it")
	case c.OperatorNamespace != "":
		return errors.New("spec.build.buildConfiguration.operatorNamespace: Caravan's builder pods run in the operator's namespace; remove it")
	}
	if errs := metav1validation.ValidateLabels(c.NodeSelector, field.NewPath("spec.build.buildConfiguration.nodeSelector")); len(errs) > 0 {
		return errs.ToAggregate()
	}
	if errs := apivalidation.ValidateAnnotations(c.Annotations, field.NewPath("spec.build.buildConfiguration.annotations")); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}

// Resources are the requests and limits the configuration sets, by resource; a quantity
// that does not parse is an error naming its field.
func (c BuildConfiguration) Resources() (requests, limits corev1.ResourceList, err error) {
	requests, limits = corev1.ResourceList{}, corev1.ResourceList{}
	for _, f := range []struct {
		field, value string
		list         corev1.ResourceList
		name         corev1.ResourceName
	}{
		{"requestCPU", c.RequestCPU, requests, corev1.ResourceCPU},
		{"requestMemory", c.RequestMemory, requests, corev1.ResourceMemory},
		{"limitCPU", c.LimitCPU, limits, corev1.ResourceCPU},
		{"limitMemory", c.LimitMemory, limits, corev1.ResourceMemory},
	} {
		if f.value == "" {
			continue
		}
		q, perr := resource.ParseQuantity(f.value)
		if perr != nil || q.Sign() <= 0 {
			return nil, nil, fmt.Errorf("spec.build.buildConfiguration.%s %q must be a positive quantity, such as 500m or 1Gi", f.field, f.value)
		}
		f.list[f.name] = q
	}
	return requests, limits, nil
}

// DefaultBuildStrategy builds kits of jars with Maven, in builder pods.
const DefaultBuildStrategy = build.StrategyPod

// CheckStrategy says why Caravan does not run builds of strategy s, naming those it runs; nil when it does.
func CheckStrategy(s string) error {
	switch {
	case s == build.StrategyPod || s == build.StrategyDependencyList:
		return nil
	case s == build.StrategyRoutine:
		return fmt.Errorf("%q is Camel K's build inside its operator, with Maven there; Caravan's operator runs no Maven: "+
			"use pod (the default), which builds the same kits in builder pods", s)
	}
	return fmt.Errorf("%q is not one Caravan runs: use pod (Maven in builder pods, the default), "+
		"or dependency-list (kits without jars, for clusters whose integration pods are simulated)", s)
}

// BuildConfigurationOf reads spec.build.buildConfiguration, defaults filled
// in; a strategy Caravan does not know is an error that says which it does.
func BuildConfigurationOf(b camelv1.IntegrationPlatformBuildSpec) (BuildConfiguration, error) {
	var c BuildConfiguration
	if b.BuildConfiguration != nil && len(b.BuildConfiguration.Raw) > 0 {
		if err := json.Unmarshal(b.BuildConfiguration.Raw, &c); err != nil {
			return c, fmt.Errorf("spec.build.buildConfiguration: %w", err)
		}
	}
	if c.Strategy == "" {
		c.Strategy = DefaultBuildStrategy
	}
	if err := CheckStrategy(c.Strategy); err != nil {
		return c, fmt.Errorf("spec.build.buildConfiguration.strategy %w", err)
	}
	if c.ToolImage == "" {
		c.ToolImage = runtime.BuilderImage.Repository
	}
	if _, _, err := c.Resources(); err != nil {
		return c, err
	}
	return c, c.checkCamelK()
}

// Maven is what Caravan reads of Camel K's spec.build.maven.
type Maven struct {
	// CacheVolumeClaim names a PersistentVolumeClaim of the operator's
	// namespace that holds Maven's local repository across builds; empty,
	// each builder pod downloads into an empty directory.
	CacheVolumeClaim string `json:"cacheVolumeClaim,omitempty"`
	// Settings is Maven's settings.xml, a key of a ConfigMap or Secret of the operator's namespace
	// (Camel K's spec.build.maven.settings): mirrors, repositories, proxies and their credentials.
	Settings *ValueSource `json:"settings,omitempty"`
	// CASecrets are keys of Secrets of the operator's namespace holding PEM certificates that
	// Maven trusts besides the public ones (Camel K's spec.build.maven.caSecrets).
	CASecrets []corev1.SecretKeySelector `json:"caSecrets,omitempty"`
	// Properties are system properties of every build's Maven, -DKEY=VALUE (Camel K's
	// spec.build.maven.properties).
	Properties map[string]string `json:"properties,omitempty"`
	// CLIOptions are options of every build's Maven command line (Camel K's
	// spec.build.maven.cliOptions), such as -V or --no-transfer-progress.
	CLIOptions []string `json:"cliOptions,omitempty"`

	// The fields of Camel K's that Caravan does not apply, refused while set.
	Profiles         json.RawMessage `json:"profiles,omitempty"`
	SettingsSecurity json.RawMessage `json:"settingsSecurity,omitempty"`
	Extension        json.RawMessage `json:"extension,omitempty"`
	LocalRepository  string          `json:"localRepository,omitempty"`
}

// reservedMavenOptions are the options Caravan's builder sets itself, which cliOptions may not.
var reservedMavenOptions = []string{"-s", "--settings", "-f", "--file", "-Dmaven.repo.local", "-gs", "--global-settings"}

// Args are Maven's arguments of the properties, sorted by key, then the CLI options.
func (m Maven) Args() []string {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(m.Properties)) {
		args = append(args, "-D"+k+"="+m.Properties[k])
	}
	return append(args, m.CLIOptions...)
}

// checkArgs refuses the fields Caravan does not apply, properties whose key is empty or holds
// '=' or a space, and CLI options that are no option or that set what the builder sets.
func (m Maven) checkArgs() error {
	for field, set := range map[string]bool{"profiles": len(m.Profiles) > 0 && string(m.Profiles) != "null",
		"settingsSecurity": len(m.SettingsSecurity) > 0 && string(m.SettingsSecurity) != "null",
		"extension":        len(m.Extension) > 0 && string(m.Extension) != "null", "localRepository": m.LocalRepository != ""} {
		if set {
			return fmt.Errorf("spec.build.maven.%s is Camel K's, which Caravan does not apply: %s", field, unappliedMaven[field])
		}
	}
	for k := range m.Properties {
		if k == "" || strings.ContainsAny(k, "= \t\n") {
			return fmt.Errorf("spec.build.maven.properties: %q is no property name", k)
		}
	}
	for i, o := range m.CLIOptions {
		if !strings.HasPrefix(o, "-") || strings.ContainsAny(o, "\n") {
			return fmt.Errorf("spec.build.maven.cliOptions[%d]: %q is no Maven option (one starting with -)", i, o)
		}
		for _, r := range reservedMavenOptions {
			if o == r || strings.HasPrefix(o, r+"=") {
				return fmt.Errorf("spec.build.maven.cliOptions[%d]: %s is the builder's own: set spec.build.maven.settings or cacheVolumeClaim instead", i, o)
			}
		}
	}
	return nil
}

// unappliedMaven says what to do instead of each field of Camel K's that Caravan does not apply.
var unappliedMaven = map[string]string{
	"profiles":         "put the profiles in the settings.xml that spec.build.maven.settings names, active by activeProfiles, or remove it",
	"settingsSecurity": "give the credentials unencrypted in the settings.xml of a Secret (spec.build.maven.settings.secretKeyRef), or remove it",
	"extension":        "Maven extensions are not loaded by builder pods: remove it",
	"localRepository":  "builder pods keep Maven's repository in spec.build.maven.cacheVolumeClaim: set that, or remove it",
}

// ValueSource is one key of a ConfigMap or of a Secret, as Camel K's ValueSource.
type ValueSource struct {
	ConfigMapKeyRef *corev1.ConfigMapKeySelector `json:"configMapKeyRef,omitempty"`
	SecretKeyRef    *corev1.SecretKeySelector    `json:"secretKeyRef,omitempty"`
}

// validate checks that v names exactly one key of one object.
func (v *ValueSource) validate(field string) error {
	var name, key string
	switch {
	case v.ConfigMapKeyRef != nil && v.SecretKeyRef != nil:
		return fmt.Errorf("%s: set configMapKeyRef or secretKeyRef, not both", field)
	case v.ConfigMapKeyRef != nil:
		name, key = v.ConfigMapKeyRef.Name, v.ConfigMapKeyRef.Key
	case v.SecretKeyRef != nil:
		name, key = v.SecretKeyRef.Name, v.SecretKeyRef.Key
	default:
		return fmt.Errorf("%s: set configMapKeyRef or secretKeyRef", field)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%s: name %q: %s", field, name, strings.Join(errs, "; "))
	}
	if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
		return fmt.Errorf("%s: key %q: %s", field, key, strings.Join(errs, "; "))
	}
	return nil
}

// String names the key, as kubectl would: configmap/NAME key KEY.
func (v *ValueSource) String() string {
	if v.SecretKeyRef != nil {
		return fmt.Sprintf("secret/%s key %s", v.SecretKeyRef.Name, v.SecretKeyRef.Key)
	}
	return fmt.Sprintf("configmap/%s key %s", v.ConfigMapKeyRef.Name, v.ConfigMapKeyRef.Key)
}

// BuildSettingsOf reads what builds run with, the build configuration and Maven's settings; its
// error says why no build can run with them.
func BuildSettingsOf(b camelv1.IntegrationPlatformBuildSpec) (BuildConfiguration, Maven, error) {
	config, err := BuildConfigurationOf(b)
	if err != nil {
		return config, Maven{}, err
	}
	m, err := MavenOf(b)
	return config, m, err
}

// MavenOf reads spec.build.maven; a claim name that cannot name a claim is an error.
func MavenOf(b camelv1.IntegrationPlatformBuildSpec) (Maven, error) {
	var m Maven
	if b.Maven != nil && len(b.Maven.Raw) > 0 {
		if err := json.Unmarshal(b.Maven.Raw, &m); err != nil {
			return m, fmt.Errorf("spec.build.maven: %w", err)
		}
	}
	if m.CacheVolumeClaim != "" {
		if errs := validation.IsDNS1123Subdomain(m.CacheVolumeClaim); len(errs) > 0 {
			return m, fmt.Errorf("spec.build.maven.cacheVolumeClaim %q names no PersistentVolumeClaim: %s",
				m.CacheVolumeClaim, strings.Join(errs, "; "))
		}
	}
	if m.Settings != nil {
		if err := m.Settings.validate("spec.build.maven.settings"); err != nil {
			return m, err
		}
	}
	for i := range m.CASecrets {
		ref := &ValueSource{SecretKeyRef: &m.CASecrets[i]}
		if err := ref.validate(fmt.Sprintf("spec.build.maven.caSecrets[%d]", i)); err != nil {
			return m, err
		}
	}
	return m, m.checkArgs()
}
