package packaging

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/install"
)

// OperatorComponent is the kustomize component that gives the base's operator another id and
// namespace, read from the overlay's ValuesName ConfigMap.
const OperatorComponent = KustomizeDir + "/components/operator"

// AnotherOperatorExample is an overlay that installs a second operator with OperatorComponent.
const AnotherOperatorExample = KustomizeDir + "/examples/another-operator"

// ValuesName names the ConfigMap, local to kustomize, that Caravan's components read their
// settings from (keys ValuesID and ValuesNamespace). kustomize never outputs it.
const ValuesName = "caravan-values"

// Keys of the ValuesName ConfigMap.
const (
	ValuesID        = "id"
	ValuesNamespace = "namespace"
)

// Probe id and namespace: OperatorComponent's replacements are found by rendering install's
// objects for them and for the base, and comparing. Neither holds a delimiter the
// replacements split by.
const (
	probeID        = "probeid"
	probeNamespace = "probens"
)

// nameDelimiters are the separators by which the id and the namespace are joined into names:
// caravan:operator:NAMESPACE:ID[:suffix] and ID-operator[-suffix].
var nameDelimiters = []string{":", "-operator"}

// valueSource is where a replacement reads its value: a key of ValuesName.
type valueSource struct {
	key, delimiter string
	index          int
}

// replacementTarget is one object a replacement writes, and the fields it writes.
type replacementTarget struct {
	kind, name, namespace, label string
	fieldPaths                   []string
}

// operatorComponent adds OperatorComponent and AnotherOperatorExample to files. The component's
// replacements are every field in which install's objects for another id and namespace differ
// from the base's; it fails on a difference it cannot express as a replacement.
func operatorComponent(files map[string][]byte, r Release) error {
	rs := replacements{byValue: map[valueSource][]replacementTarget{}, seen: map[string]bool{}}
	// The operator of every namespace, then one of some (WatchedNamespacesComponent's objects).
	for _, watch := range [][]string{nil, {watchedPlaceholder}} {
		if err := rs.compare(r, watch); err != nil {
			return err
		}
	}
	var out strings.Builder
	out.WriteString(operatorComponentIntro)
	rs.write(&out)
	patches, err := notDefaultPatches(Base(r))
	if err != nil {
		return err
	}
	out.WriteString(patches)
	files[path.Join(OperatorComponent, "kustomization.yaml")] = []byte(out.String())
	files[path.Join(AnotherOperatorExample, "kustomization.yaml")] = []byte(anotherOperatorKustomization)
	files[path.Join(AnotherOperatorExample, "values.yaml")] = []byte(header +
		valuesDocument([2]string{ValuesID, "team-a"}, [2]string{ValuesNamespace, "team-a"}))
	return nil
}

// operatorComponentIntro is OperatorComponent's kustomization up to its replacements.
const operatorComponentIntro = header + `# Gives the base's operator another id and namespace, as caravan install -x ID -n NAMESPACE
# does, read from the ConfigMap ` + ValuesName + ` of the overlay, which kustomize does not output:
#
#   apiVersion: v1
#   kind: ConfigMap
#   metadata:
#     name: ` + ValuesName + `
#     annotations:
#       config.kubernetes.io/local-config: "true"
#   data:
#     ` + ValuesID + `: team-a
#     ` + ValuesNamespace + `: team-a
#
# The operator is not the cluster's default (the base's is). List the ConfigMap's file under the
# overlay's resources, with the base; set the namespace there, not with kustomize's namespace
# field. One operator per overlay: see ` + AnotherOperatorExample + `.
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
replacements:
`

// anotherOperatorKustomization is AnotherOperatorExample's kustomization.
const anotherOperatorKustomization = header + `# A second operator, team-a in namespace team-a, beside the base's default operator: apply
# both, in either order. Copy this directory and change values.yaml for yours.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
  - values.yaml
components:
  - ../../components/operator
`

// replacements gathers OperatorComponent's replacements, by the value each writes.
type replacements struct {
	byValue map[valueSource][]replacementTarget
	order   []valueSource       // the keys of byValue, in the order found
	moves   []replacementTarget // metadata.namespace and the Namespace's name: written last
	seen    map[string]bool     // the source and target pairs already added
}

// add appends t to list unless it was already added for src.
func (rs *replacements) add(list []replacementTarget, t replacementTarget, src valueSource) []replacementTarget {
	key := fmt.Sprint(src, t)
	if rs.seen[key] {
		return list
	}
	rs.seen[key] = true
	return append(list, t)
}

// compare adds the replacements that turn the base's objects, watching watch, into the probe's.
func (rs *replacements) compare(r Release, watch []string) error {
	base := Base(r)
	base.Default, base.WatchNamespaces = false, watch
	probe := base
	probe.ID, probe.Namespace = probeID, probeNamespace
	baseDocs, err := operatorDocuments(base)
	if err != nil {
		return err
	}
	probeDocs, err := operatorDocuments(probe)
	if err != nil {
		return err
	}
	if len(baseDocs) != len(probeDocs) {
		return fmt.Errorf("install gives %d objects for operator %s and %d for %s", len(baseDocs), base.ID, len(probeDocs), probe.ID)
	}
	for i, b := range baseDocs {
		if err := rs.compareDocument(b, probeDocs[i], base.Namespace); err != nil {
			return err
		}
	}
	return nil
}

// compareDocument adds the replacements that turn base document b into probe document p.
func (rs *replacements) compareDocument(b, p *unstructured.Unstructured, baseNamespace string) error {
	fields := map[valueSource][]string{}
	if err := diffFields(b.Object, p.Object, "", fields); err != nil {
		return fmt.Errorf("%s %s: %w", p.GetKind(), p.GetName(), err)
	}
	target, err := selectorOf(b, p, baseNamespace)
	if err != nil {
		return err
	}
	sources := make([]valueSource, 0, len(fields))
	for src := range fields {
		sources = append(sources, src)
	}
	slices.SortFunc(sources, func(a, b valueSource) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	for _, src := range sources {
		var kept []string
		for _, fp := range fields[src] {
			if src.delimiter == "" && (fp == "metadata.namespace" || fp == "metadata.name" && p.GetKind() == "Namespace") {
				move := target
				move.fieldPaths = []string{fp}
				rs.moves = rs.add(rs.moves, move, src)
				continue
			}
			kept = append(kept, fp)
		}
		if len(kept) == 0 {
			continue
		}
		t := target
		t.fieldPaths = kept
		if _, ok := rs.byValue[src]; !ok {
			rs.order = append(rs.order, src)
		}
		rs.byValue[src] = rs.add(rs.byValue[src], t, src)
	}
	return nil
}

// write writes the replacements to out, sorted by value, the moves last.
func (rs *replacements) write(out *strings.Builder) {
	slices.SortStableFunc(rs.order, func(a, b valueSource) int {
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
	for _, src := range rs.order {
		writeReplacement(out, src, rs.byValue[src])
	}
	writeReplacement(out, valueSource{key: ValuesNamespace}, rs.moves)
}

// valuesDocument is the ValuesName ConfigMap holding the key and value pairs, in their order.
func valuesDocument(pairs ...[2]string) string {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + ValuesName +
		"\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n"
	for _, kv := range pairs {
		doc += "  " + kv[0] + ": " + kv[1] + "\n"
	}
	return doc
}

// operatorDocuments are install's objects for c, its namespace first and without the CRDs, as
// the YAML documents of the kustomize base decode.
func operatorDocuments(c install.Config) ([]*unstructured.Unstructured, error) {
	objs, err := install.Manifests(c)
	if err != nil {
		return nil, err
	}
	var docs []*unstructured.Unstructured
	for _, o := range append([]client.Object{install.Namespace(c.Namespace)}, objs...) {
		if o.GetObjectKind().GroupVersionKind().Kind == "CustomResourceDefinition" {
			continue
		}
		data, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, err
		}
		docs = append(docs, &unstructured.Unstructured{Object: doc})
	}
	return docs, nil
}

// selectorOf selects the object of base document b (probe document p) among an overlay's: by
// kind, by its install.ObjectLabel, which replacements do not change, and by the base's namespace
// if it is in it. Names are not selected by: the replacements change them, and the regular
// expressions that would match them whatever their id need kustomize 5.8 (kubectl 1.36).
func selectorOf(b, p *unstructured.Unstructured, baseNamespace string) (replacementTarget, error) {
	if p.GetKind() == "Namespace" {
		// The base's only Namespace, whose name is moved last.
		return replacementTarget{kind: "Namespace", name: b.GetName()}, nil
	}
	slot, ok := p.GetLabels()[install.ObjectLabel]
	if !ok && b.GetName() == p.GetName() {
		// A name no operator changes.
		return replacementTarget{kind: p.GetKind(), name: b.GetName(), namespace: b.GetNamespace()}, nil
	}
	if !ok {
		return replacementTarget{}, fmt.Errorf("%s %s differs between operators but has no label %s to select it by",
			p.GetKind(), p.GetName(), install.ObjectLabel)
	}
	t := replacementTarget{kind: p.GetKind(), label: install.ObjectLabel + "=" + slot}
	if b.GetNamespace() == baseNamespace {
		t.namespace = baseNamespace
	}
	return t, nil
}

// diffFields adds to fields, by the value each takes, the kustomize field paths under at which
// base and probe differ. They must differ in scalar values only.
func diffFields(base, probe any, at string, fields map[valueSource][]string) error {
	switch b := base.(type) {
	case map[string]any:
		p, ok := probe.(map[string]any)
		if !ok || len(p) != len(b) {
			return fmt.Errorf("%s differs in shape", at)
		}
		keys := make([]string, 0, len(b))
		for k := range b {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			pv, ok := p[k]
			if !ok {
				return fmt.Errorf("%s has no %s for another id", at, k)
			}
			key := k
			if strings.ContainsAny(k, "./") {
				key = "[" + k + "]"
			}
			if err := diffFields(b[k], pv, join(at, key), fields); err != nil {
				return err
			}
		}
	case []any:
		p, ok := probe.([]any)
		if !ok || len(p) != len(b) {
			return fmt.Errorf("%s differs in length", at)
		}
		for i := range b {
			if err := diffFields(b[i], p[i], join(at, elementPath(at, b[i], p[i], i)), fields); err != nil {
				return err
			}
		}
	default:
		if fmt.Sprint(base) == fmt.Sprint(probe) {
			return nil
		}
		sources, err := sourcesOf(fmt.Sprint(base), fmt.Sprint(probe))
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		for _, s := range sources {
			fields[s] = append(fields[s], at)
		}
	}
	return nil
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// elementPath names the i-th element of the list at: by its name for containers and
// environment variables whose name is the same for any id, any rule for RBAC rules, by its
// index otherwise.
func elementPath(at string, b, p any, i int) string {
	if at == "rules" {
		// The rule that names the operator is not at the same place for an operator of some
		// namespaces: every rule with resourceNames names it (TestTheOperatorComponent…).
		return "*"
	}
	bm, _ := b.(map[string]any)
	pm, _ := p.(map[string]any)
	if strings.HasSuffix(at, "containers") || strings.HasSuffix(at, "env") {
		if n, ok := bm["name"].(string); ok && n == pm["name"] {
			return "[name=" + n + "]"
		}
	}
	return strconv.Itoa(i)
}

// sourcesOf tells how probe, a value of the probe's objects, is made of the probe id and
// namespace, so that the same replacements turn base into it.
func sourcesOf(base, probe string) ([]valueSource, error) {
	switch probe {
	case probeID:
		return []valueSource{{key: ValuesID}}, nil
	case probeNamespace:
		return []valueSource{{key: ValuesNamespace}}, nil
	}
	for _, d := range nameDelimiters {
		b, p := strings.Split(base, d), strings.Split(probe, d)
		if len(p) < 2 || len(b) != len(p) {
			continue
		}
		var sources []valueSource
		for i := range p {
			switch {
			case p[i] == probeID:
				sources = append(sources, valueSource{key: ValuesID, delimiter: d, index: i})
			case p[i] == probeNamespace:
				sources = append(sources, valueSource{key: ValuesNamespace, delimiter: d, index: i})
			case p[i] != b[i]:
				sources = nil
			}
			if p[i] != b[i] && sources == nil {
				break
			}
		}
		if len(sources) > 0 {
			return sources, nil
		}
	}
	return nil, fmt.Errorf("%q (for another id %q) is not made of the id and the namespace by any of %q", base, probe, nameDelimiters)
}

// writeReplacement writes to out the replacement of the targets' fields by the value of src.
func writeReplacement(out *strings.Builder, src valueSource, targets []replacementTarget) {
	fmt.Fprintf(out, "  - source:\n      kind: ConfigMap\n      name: %s\n      fieldPath: data.%s\n", ValuesName, src.key)
	out.WriteString("    targets:\n")
	for _, t := range targets {
		fmt.Fprintf(out, "      - select:\n          kind: %s\n", t.kind)
		if t.name != "" {
			fmt.Fprintf(out, "          name: %s\n", quote(t.name))
		}
		if t.namespace != "" {
			fmt.Fprintf(out, "          namespace: %s\n", quote(t.namespace))
		}
		if t.label != "" {
			fmt.Fprintf(out, "          labelSelector: %s\n", quote(t.label))
		}
		out.WriteString("        fieldPaths:\n")
		for _, fp := range t.fieldPaths {
			fmt.Fprintf(out, "          - %s\n", quote(fp))
		}
		if src.delimiter != "" {
			fmt.Fprintf(out, "        options:\n          delimiter: %s\n          index: %d\n", quote(src.delimiter), src.index)
		}
	}
}

// quote is s as a YAML string.
func quote(s string) string {
	data, err := yaml.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return strings.TrimSpace(string(data))
}

// notDefaultPatches are the component's patches that make the base's operator, the cluster's
// default, an operator like any other: its registration, its label and its --default argument.
func notDefaultPatches(base install.Config) (string, error) {
	docs, err := operatorDocuments(base)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	out.WriteString("patches:\n")
	for _, d := range docs {
		switch d.GetKind() {
		case "IntegrationOperator":
			fmt.Fprintf(&out, `  - target:
      kind: IntegrationOperator
      labelSelector: %s=true
    patch: |-
      - op: remove
        path: /metadata/labels/%s
      - op: remove
        path: /spec/default
`, install.DefaultLabel, strings.ReplaceAll(install.DefaultLabel, "/", "~1"))
		case "Deployment":
			for i, c := range containers(d) {
				args, _ := c["args"].([]any)
				at := slices.Index(args, any("--default"))
				if at < 0 {
					continue
				}
				// The test operation makes the build fail, rather than remove another argument,
				// if the base's arguments were changed.
				fmt.Fprintf(&out, `  - target:
      kind: Deployment
      name: %s
    patch: |-
      - op: test
        path: /spec/template/spec/containers/%d/args/%d
        value: --default
      - op: remove
        path: /spec/template/spec/containers/%d/args/%d
`, quote(regexp.QuoteMeta(d.GetName())), i, at, i, at)
			}
		}
	}
	return out.String(), nil
}

// WatchedNamespacesComponent is the kustomize component that limits the base's operator to the
// namespaces of its overlay's ValuesWatchNamespaces, as caravan install --watch-namespaces does.
const WatchedNamespacesComponent = KustomizeDir + "/components/watched-namespaces"

// WatchedNamespace is the kustomization of the RoleBindings the operator needs in each namespace
// it watches: an overlay lists it once per namespace, each time with kustomize's namespace field.
const WatchedNamespace = KustomizeDir + "/watched-namespace"

// WatchedNamespacesExample is an overlay that installs an operator of two namespaces.
const WatchedNamespacesExample = KustomizeDir + "/examples/watched-namespaces"

// ValuesWatchNamespaces is the key of ValuesName that lists the watched namespaces, separated by
// commas as --watch-namespaces takes them.
const ValuesWatchNamespaces = "watchNamespaces"

// watchedPlaceholder stands for a watched namespace in WatchedNamespace.
const watchedPlaceholder = "watched-namespace"

// watchedComponent adds WatchedNamespacesComponent, WatchedNamespace and WatchedNamespacesExample
// to files, from the differences between install's objects for the base and for the base
// limited to one namespace. It fails on a difference it does not know how to write.
func watchedComponent(files map[string][]byte, r Release) error {
	global := Base(r)
	w, err := diffWatched(r)
	if err != nil {
		return err
	}
	deployment := install.OperatorDeployment(global.ID, global.Namespace)
	files[path.Join(WatchedNamespacesComponent, "operator.yaml")] = []byte(w.added.String())
	files[path.Join(WatchedNamespacesComponent, "kustomization.yaml")] = []byte(w.kustomization(deployment))
	files[path.Join(WatchedNamespace, "rolebindings.yaml")] = []byte(w.perNamespace.String())
	files[path.Join(WatchedNamespace, "kustomization.yaml")] = []byte(watchedNamespaceKustomization)
	addWatchedNamespacesExample(files)
	return nil
}

// watchedDiff is what WatchedNamespacesComponent and WatchedNamespace write: how an operator of
// some namespaces differs from the base's.
type watchedDiff struct {
	added        strings.Builder // the objects only it has, outside the watched namespace
	perNamespace strings.Builder // the objects only it has in the watched namespace
	patches      strings.Builder // the component's patches to the objects both have
	argIndex     int             // where the Deployment's container takes --watch-namespaces
}

// diffWatched compares install's objects for the base and for the base limited to one namespace.
func diffWatched(r Release) (*watchedDiff, error) {
	global, limited := Base(r), Base(r)
	limited.WatchNamespaces = []string{watchedPlaceholder}
	globalDocs, err := operatorDocuments(global)
	if err != nil {
		return nil, err
	}
	limitedDocs, err := operatorDocuments(limited)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*unstructured.Unstructured{}
	for _, d := range globalDocs {
		byKey[documentKey(d)] = d
	}
	w := &watchedDiff{argIndex: -1}
	w.added.WriteString(header)
	w.perNamespace.WriteString(header)
	for _, d := range limitedDocs {
		g, ok := byKey[documentKey(d)]
		delete(byKey, documentKey(d))
		if !ok {
			if err := w.addObject(d); err != nil {
				return nil, err
			}
			continue
		}
		if reflect.DeepEqual(g, d) {
			continue
		}
		if err := w.patch(g, d); err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(g, d) {
			return nil, fmt.Errorf("%s differs for an operator of some namespaces in ways the component does not write", documentKey(d))
		}
	}
	if len(byKey) > 0 {
		return nil, fmt.Errorf("an operator of some namespaces lacks %v", slices.Collect(maps.Keys(byKey)))
	}
	return w, nil
}

// documentKey names document d by its kind, namespace and name.
func documentKey(d *unstructured.Unstructured) string {
	return fmt.Sprint(d.GetKind(), " ", d.GetNamespace(), "/", d.GetName())
}

// addObject writes document d, which only the limited operator has, to the objects it goes with.
func (w *watchedDiff) addObject(d *unstructured.Unstructured) error {
	out := &w.added
	if d.GetNamespace() == watchedPlaceholder {
		d.SetNamespace("")
		out = &w.perNamespace
	}
	data, err := yaml.Marshal(d.Object)
	if err != nil {
		return err
	}
	out.WriteString("---\n")
	out.Write(data)
	return nil
}

// patch writes the patch that turns global document g into limited document d, and applies it
// to g so that the caller can tell whether it covers every difference.
func (w *watchedDiff) patch(g, d *unstructured.Unstructured) error {
	switch d.GetKind() {
	case "ClusterRole":
		return w.patchClusterRole(g, d)
	case "Deployment":
		return w.patchDeployment(g, d)
	case "IntegrationOperator":
		return w.patchIntegrationOperator(g, d)
	}
	return nil
}

// patchClusterRole replaces the ClusterRole's rules by those of the limited operator.
func (w *watchedDiff) patchClusterRole(g, d *unstructured.Unstructured) error {
	rules, err := json.Marshal(d.Object["rules"])
	if err != nil {
		return err
	}
	g.Object["rules"] = d.Object["rules"]
	fmt.Fprintf(&w.patches, `  - target:
      kind: ClusterRole
      name: %s
    patch: |-
      - op: replace
        path: /rules
        value: %s
`, quote(regexp.QuoteMeta(d.GetName())), rules)
	return nil
}

// patchDeployment adds --watch-namespaces to the operator container's arguments, and records where.
func (w *watchedDiff) patchDeployment(g, d *unstructured.Unstructured) error {
	gContainer, dContainer := containers(g)[0], containers(d)[0]
	gArgs, _ := gContainer["args"].([]any)
	dArgs, _ := dContainer["args"].([]any)
	for i := range dArgs {
		if i >= len(gArgs) || dArgs[i] != gArgs[i] {
			w.argIndex = i
			break
		}
	}
	if w.argIndex < 0 || dArgs[w.argIndex] != "--watch-namespaces="+watchedPlaceholder {
		return fmt.Errorf("the Deployment %s of an operator of some namespaces has the arguments %q", d.GetName(), dArgs)
	}
	gContainer["args"] = slices.Insert(slices.Clone(gArgs), w.argIndex, dArgs[w.argIndex])
	fmt.Fprintf(&w.patches, `  - target:
      kind: Deployment
      name: %s
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/args/%d
        value: %s
`, quote(regexp.QuoteMeta(d.GetName())), w.argIndex, quote(fmt.Sprint(dArgs[w.argIndex])))
	return nil
}

// patchIntegrationOperator annotates the registration to take its namespaces from the operator.
func (w *watchedDiff) patchIntegrationOperator(g, d *unstructured.Unstructured) error {
	// The operator declares its namespaces in its registration itself (Registrar), as
	// the annotation asks: kustomize cannot make the list of them from the values' text.
	watch, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "watchNamespaces")
	if err := unstructured.SetNestedField(g.Object, watch, "spec", "watchNamespaces"); err != nil {
		return err
	}
	fmt.Fprintf(&w.patches, `  - target:
      kind: IntegrationOperator
      name: %s
    patch: |-
      - op: add
        path: /metadata/annotations/%s
        value: %s
`, quote(regexp.QuoteMeta(d.GetName())), strings.ReplaceAll(camelv1alpha1.WatchNamespacesFromAnnotation, "/", "~1"),
		camelv1alpha1.WatchNamespacesFromOperator)
	return nil
}

// kustomization is WatchedNamespacesComponent's kustomization, for the base's operator Deployment.
func (w *watchedDiff) kustomization(deployment client.ObjectKey) string {
	return header + `# Limits the base's operator to the namespaces of the ConfigMap ` + ValuesName + ` of the overlay, as
# caravan install --watch-namespaces does:
#
#   data:
#     ` + ValuesWatchNamespaces + `: team-a-dev,team-a-prod
#
# The overlay also lists, for each of those namespaces, a kustomization of its own that sets
# kustomize's namespace field to it and holds ../watched-namespace: the operator's RoleBindings
# there. The operator writes the namespaces into its registration, which the component annotates
# ` + camelv1alpha1.WatchNamespacesFromAnnotation + `: ` + camelv1alpha1.WatchNamespacesFromOperator + ` to ask for them. With the
# component operator, list this one first. See ` + WatchedNamespacesExample + `.
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
  - operator.yaml
patches:
` + w.patches.String() + `replacements:
  - source:
      kind: ConfigMap
      name: ` + ValuesName + `
      fieldPath: data.` + ValuesWatchNamespaces + `
    targets:
      - select:
          kind: Deployment
          name: ` + quote(regexp.QuoteMeta(deployment.Name)) + `
          namespace: ` + quote(regexp.QuoteMeta(deployment.Namespace)) + `
        fieldPaths:
          - spec.template.spec.containers.[name=operator].args.` + strconv.Itoa(w.argIndex) + `
        options:
          delimiter: "="
          index: 1
`
}

// watchedNamespaceKustomization is WatchedNamespace's kustomization.
const watchedNamespaceKustomization = header + `# The RoleBindings of the base's operator in one namespace it watches (component
# watched-namespaces). Use it from a kustomization that sets kustomize's namespace field to that
# namespace; the component operator, if any, renames them with the operator.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - rolebindings.yaml
`

// addWatchedNamespacesExample adds WatchedNamespacesExample's files to files.
func addWatchedNamespacesExample(files map[string][]byte) {
	example := map[string]string{
		"kustomization.yaml": `# Operator team-b, in namespace team-b, serving the namespaces team-b-dev and team-b-prod, as
# caravan install -x team-b -n team-b --watch-namespaces team-b-dev,team-b-prod installs it. The
# watched namespaces must exist. Copy this directory and change values.yaml and the namespace
# directories for yours.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
  - values.yaml
  - team-b-dev
  - team-b-prod
components:
  - ../../components/watched-namespaces
  - ../../components/operator
`,
		"values.yaml": valuesDocument([2]string{ValuesID, "team-b"}, [2]string{ValuesNamespace, "team-b"},
			[2]string{ValuesWatchNamespaces, "team-b-dev,team-b-prod"}),
	}
	for _, ns := range []string{"team-b-dev", "team-b-prod"} {
		example[ns+"/kustomization.yaml"] = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ` + ns + `
resources:
  - ../../../watched-namespace
`
	}
	for name, data := range example {
		files[path.Join(WatchedNamespacesExample, name)] = []byte(header + data)
	}
}

// containers are the containers of Deployment document d, as it holds them.
func containers(d *unstructured.Unstructured) []map[string]any {
	list, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "template", "spec", "containers")
	items, _ := list.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, c := range items {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
