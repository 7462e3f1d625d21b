// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/trait"
)

// MaxConfigMapBytes is the most data a ConfigMap can hold.
const MaxConfigMapBytes = 1 << 20

// file is one key of the integration's ConfigMap.
type file struct {
	key    string
	path   string // the file name it is mounted under
	data   []byte
	binary bool // goes into BinaryData
	// ref names the user's ConfigMap that holds the file under key, for a contentRef source;
	// "" for a file of the integration's own ConfigMap.
	ref string
}

// ConfigMap renders the ConfigMap <integration>-camel. It holds each source under its
// name, the flows as one YAML list under flows.yaml, and application.properties: the
// runtime's properties, then the camel trait's. A sourceless integration (a pre-built
// image) has a ConfigMap only when it has properties, and then with
// application.properties alone: ConfigMap returns nil when there is nothing to hold. It
// refuses an invalid, duplicate or reserved source name, an unknown language, a
// contentRef source, or more data than a ConfigMap holds.
func ConfigMap(in Input) (*corev1.ConfigMap, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if !in.hasConfigMap() {
		return nil, nil
	}
	files, err := integrationFiles(in.Integration)
	if err != nil {
		return nil, err
	}
	files = append(in.oneShot(decodeKameletURIs(files)), file{key: PropertiesKey, data: []byte(in.properties())})
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: in.objectMeta(ConfigMapName(in.Integration.Name)),
	}
	size := 0
	for _, f := range files {
		if f.ref != "" {
			continue // mounted from the user's ConfigMap
		}
		size += len(f.data)
		if f.binary {
			if cm.BinaryData == nil {
				cm.BinaryData = map[string][]byte{}
			}
			cm.BinaryData[f.key] = f.data
			continue
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[f.key] = string(f.data)
	}
	if size > MaxConfigMapBytes {
		return nil, fmt.Errorf("the integration's sources, flows and properties take %d bytes, more than the %d bytes a ConfigMap holds", size, MaxConfigMapBytes)
	}
	stampHash(cm)
	return cm, nil
}

// Sourceless reports whether the integration has no sources and no flows: it runs a
// pre-built image (the container trait's image) that holds its routes, with the image's
// own entrypoint.
func Sourceless(it *camelv1.Integration) bool {
	return len(it.Spec.Sources) == 0 && len(it.Spec.Flows) == 0
}

// integrationFiles are the sources then flows.yaml, validated, in spec order; none for a
// sourceless integration.
func integrationFiles(it *camelv1.Integration) ([]file, error) {
	var files []file
	var errs []error
	seen := map[string]bool{}
	for i, s := range it.Spec.Sources {
		f, err := sourceFile(i, s, seen)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, f)
	}
	if len(it.Spec.Flows) > 0 {
		data, err := flowsYAML(it.Spec.Flows)
		if err != nil {
			errs = append(errs, err)
		}
		files = append(files, file{key: FlowsKey, path: FlowsKey, data: data})
	}
	mounted := map[string]string{}
	for _, f := range files {
		what := "source " + f.key
		if f.key == FlowsKey {
			what = "spec.flows"
		}
		if other, ok := mounted[f.path]; ok {
			errs = append(errs, fmt.Errorf("%s: the runtime would load it as %s, like %s: rename one", what, f.path, other))
		}
		mounted[f.path] = what
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return files, nil
}

// sourceFile validates source i and reads its content; seen collects the names so far.
func sourceFile(i int, s camelv1.SourceSpec, seen map[string]bool) (file, error) {
	switch {
	case s.Name == "":
		return file{}, fmt.Errorf("spec.sources[%d]: the source has no name", i)
	case len(validation.IsConfigMapKey(s.Name)) > 0:
		return file{}, fmt.Errorf("source %s: the name must be a valid file name (letters, digits, '-', '_' and '.'): %s",
			s.Name, strings.Join(validation.IsConfigMapKey(s.Name), "; "))
	case s.Name == PropertiesKey || s.Name == FlowsKey:
		return file{}, fmt.Errorf("source %s: the name is reserved by the operator", s.Name)
	case seen[s.Name]:
		return file{}, fmt.Errorf("source %s: more than one source has this name", s.Name)
	}
	seen[s.Name] = true
	lang, err := SourceLanguage(s)
	if err != nil {
		return file{}, err
	}
	if s.ContentRef != "" {
		return contentRefFile(s, lang)
	}
	data, binary, err := sourceContent(s)
	if err != nil {
		return file{}, fmt.Errorf("source %s: %w", s.Name, err)
	}
	return file{key: s.Name, path: mountedName(s.Name, lang), data: data, binary: binary}, nil
}

// DefaultContentKey is the key of a contentRef source's ConfigMap that holds it, when
// contentKey is unset, as in Camel K.
const DefaultContentKey = "content"

// contentRefFile is a source held by a ConfigMap of the integration's namespace, which is
// mounted as it is: its key contentKey, else DefaultContentKey.
func contentRefFile(s camelv1.SourceSpec, lang camelv1.Language) (file, error) {
	key := s.ContentKey
	if key == "" {
		key = DefaultContentKey
	}
	if msgs := validation.IsDNS1123Subdomain(s.ContentRef); len(msgs) > 0 {
		return file{}, fmt.Errorf("source %s: contentRef %q must name a ConfigMap: %s", s.Name, s.ContentRef, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsConfigMapKey(key); len(msgs) > 0 {
		return file{}, fmt.Errorf("source %s: contentKey %q must be a ConfigMap key: %s", s.Name, key, strings.Join(msgs, "; "))
	}
	if s.Content != "" || len(s.RawContent) > 0 {
		return file{}, fmt.Errorf("source %s: set content or contentRef, not both", s.Name)
	}
	return file{key: key, path: mountedName(s.Name, lang), ref: s.ContentRef}, nil
}

// mountedName is the file name a source is mounted under: the name with its language's
// extension, and dots before it made '_'. The runtime picks its loader by what follows the
// first dot; a Kamelet's .kamelet.yaml is kept, which has a loader of its own.
func mountedName(name string, lang camelv1.Language) string {
	ext := "." + string(lang)
	if lang == camelv1.LanguageYAML && strings.HasSuffix(name, KameletSuffix) {
		return strings.ReplaceAll(strings.TrimSuffix(name, KameletSuffix), ".", "_") + KameletSuffix
	}
	return strings.ReplaceAll(strings.TrimSuffix(name, ext), ".", "_") + ext
}

// KameletSuffix ends the name of a source that holds a Kamelet.
const KameletSuffix = ".kamelet.yaml"

// flowsYAML writes all flows as one YAML list.
func flowsYAML(flows []camelv1.RawObject) ([]byte, error) {
	list := make([]json.RawMessage, len(flows))
	for i, f := range flows {
		if !json.Valid(f.Raw) {
			return nil, fmt.Errorf("spec.flows[%d]: invalid JSON", i)
		}
		list[i] = f.Raw
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("spec.flows: %w", err)
	}
	out, err := yaml.JSONToYAML(b)
	if err != nil {
		return nil, fmt.Errorf("spec.flows: %w", err)
	}
	return out, nil
}

// properties writes the runtime's properties (for an integration with sources), the deprecated
// spec.configuration's properties, then the camel trait's, one key=value per line, in order: a
// property set again later wins, as in Camel K. A character outside ASCII is written \uXXXX:
// the runtime reads the file as ISO-8859-1, as java.util.Properties does.
func (in Input) properties() string {
	var props []string
	if !Sourceless(in.Integration) {
		props = in.runtimeProperties()
	}
	var b strings.Builder
	props = append(props, configurationValues(in.Integration, "property")...)
	for _, p := range append(props, in.Traits.Camel.Properties()...) {
		for _, r := range p {
			if r < 0x80 {
				b.WriteRune(r)
			} else {
				b.WriteString(trait.UnicodeEscape(r))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// oneShot replaces, in the files of an integration that runs as a CronJob, each quartz or cron
// consumer by trait.OneShotURI, so that its pod's routes fire at once, as in Camel K.
func (in Input) oneShot(files []file) []file {
	_, overrides, ok := in.Traits.Cron.CronJob()
	if !ok || len(overrides) == 0 {
		return files
	}
	out := slices.Clone(files)
	for i, f := range out {
		if f.binary || f.ref != "" {
			continue
		}
		if strings.HasSuffix(f.path, ".yaml") {
			if data, ok := oneShotYAML(f.data, overrides); ok {
				out[i].data = data
				continue
			}
		}
		data, oneShot := string(f.data), trait.OneShotURI
		if strings.HasSuffix(f.path, ".xml") {
			// In an XML attribute, & is written &amp;.
			oneShot = strings.ReplaceAll(oneShot, "&", "&amp;")
		}
		for _, uri := range overrides {
			data = strings.ReplaceAll(data, uri, oneShot)
		}
		out[i].data = []byte(data)
	}
	return out
}

// oneShotYAML replaces, in a YAML route file, the from of each route whose uri is one of overrides
// by trait.OneShotURI and drops its parameters, as Camel K does: a schedule given as a parameter
// goes with the consumer. ok is false when the file is not a list of routes it can read.
func oneShotYAML(data []byte, overrides []string) (out []byte, ok bool) {
	var doc yamlv3.Node
	if yamlv3.Unmarshal(data, &doc) != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yamlv3.SequenceNode {
		return nil, false
	}
	for _, item := range doc.Content[0].Content {
		from := mappingValue(item, "from")
		if route := mappingValue(item, "route"); route != nil {
			from = mappingValue(route, "from")
		}
		uri := mappingValue(from, "uri")
		if uri == nil || uri.Kind != yamlv3.ScalarNode || !slices.Contains(overrides, uri.Value) {
			continue
		}
		uri.Value, uri.Style = trait.OneShotURI, yamlv3.DoubleQuotedStyle
		for i := 0; i+1 < len(from.Content); i += 2 {
			if from.Content[i].Value == "parameters" {
				from.Content = slices.Delete(from.Content, i, i+2)
				break
			}
		}
	}
	var b bytes.Buffer
	enc := yamlv3.NewEncoder(&b)
	enc.SetIndent(2)
	if enc.Encode(doc.Content[0]) != nil || enc.Close() != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// mappingValue is the value of key in the YAML mapping n, nil when n is no mapping or lacks it.
func mappingValue(n *yamlv3.Node, key string) *yamlv3.Node {
	if n == nil || n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// configurationValues are the values of the deprecated spec.configuration entries of type kind,
// in order. Camel K 2.x reads those of type property and env alone.
func configurationValues(it *camelv1.Integration, kind string) []string {
	var out []string
	for _, c := range it.Spec.Configuration {
		if c.Type == kind && strings.TrimSpace(c.Value) != "" {
			out = append(out, c.Value)
		}
	}
	return out
}

// configurationEnv are the deprecated spec.configuration entries of type env, NAME=value, as
// variables; an entry without a name, or naming a variable the operator sets, is left out.
func configurationEnv(it *camelv1.Integration) []corev1.EnvVar {
	var env []corev1.EnvVar
	for _, v := range configurationValues(it, "env") {
		if name, value, ok := strings.Cut(v, "="); ok && strings.TrimSpace(name) != "" && !slices.Contains(trait.ReservedEnvVars, strings.TrimSpace(name)) {
			env = append(env, corev1.EnvVar{Name: strings.TrimSpace(name), Value: value})
		}
	}
	return env
}

// IgnoredConfigurations are the types of the deprecated spec.configuration entries that take no
// effect, sorted: all but property and env, as in Camel K 2.x.
func IgnoredConfigurations(it *camelv1.Integration) []string {
	var out []string
	for _, c := range it.Spec.Configuration {
		if c.Type != "property" && c.Type != "env" && !slices.Contains(out, c.Type) {
			out = append(out, c.Type)
		}
	}
	slices.Sort(out)
	return out
}

// decodeKameletURIs decodes the options of the kamelet: URIs of the routes' files, as
// decodeKameletOptions says.
func decodeKameletURIs(files []file) []file {
	out := slices.Clone(files)
	for i, f := range out {
		if f.binary || f.ref != "" {
			continue
		}
		out[i].data = []byte(decodeKameletOptions(string(f.data), strings.HasSuffix(f.path, ".xml")))
	}
	return out
}
