package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/caravan-dev/caravan/internal/install"
)

// value is one value of the chart: its documentation, its default as values.yaml writes it,
// and its JSON schema. values.yaml, values.schema.json and the chart's README are all written
// from chartValues, so they cannot disagree.
type value struct {
	Name string
	Doc  string
	// Default is the YAML of the default, on the key's line or, when it spans lines, below
	// it; "" for an object of Fields.
	Default string
	// Schema is the value's JSON schema; for an object of Fields, what it adds to the object's
	// (another type the value may take, say).
	Schema map[string]any
	// Fields are the values of an object, each with its own default.
	Fields []value
}

var (
	str     = map[string]any{"type": "string"}
	boolean = map[string]any{"type": "boolean"}
	strList = map[string]any{"type": "array", "items": str}
	object  = map[string]any{"type": "object"}
	// strMap is a map of strings (labels, annotations); objList a list of objects.
	strMap  = map[string]any{"type": "object", "additionalProperties": str}
	objList = map[string]any{"type": "array", "items": object}
	// dnsLabel is a DNS-1123 label: a namespace's name, say.
	dnsLabel = map[string]any{"type": "string", "maxLength": 63, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}
	// quantities are resource quantities by resource name, as a container's requests or limits.
	quantities = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": []string{"string", "number"},
		"minimum": 0, "pattern": `^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|([eE][-+]?[0-9]+))?$`}}
	// pullSecrets are a pod's image pull secrets: [{name: regcred}], as Kubernetes writes them,
	// or names alone.
	pullSecrets = map[string]any{"type": "array", "items": map[string]any{"oneOf": []any{
		map[string]any{"type": "string", "minLength": 1},
		map[string]any{"type": "object", "additionalProperties": false, "required": []string{"name"},
			"properties": map[string]any{"name": map[string]any{"type": "string", "minLength": 1}}},
	}}}
)

// Image references as the distribution library parses them; "" (unset) too. The patterns are
// Go's regular expressions, which Helm's schema validator uses, with no POSIX class so that
// editors' validators read them too.
var (
	referencePattern  = "^$|" + portable(reference.ReferenceRegexp.String())
	repositoryPattern = "^(" + portable(reference.NameRegexp.String()) + ")?$"
	tagPattern        = "^(" + reference.TagRegexp.String() + ")?$"
)

func portable(pattern string) string {
	return strings.ReplaceAll(pattern, "[[:xdigit:]]", "[0-9A-Fa-f]")
}

// yamlOf is v as YAML, without its last newline.
func yamlOf(v any) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(data), "\n")
}

// podSecurityContext is the operator pod's security context, as caravan install sets it.
var podSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](install.OperatorUID),
	RunAsGroup: ptr.To[int64](install.OperatorUID), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}

// chartValues are the chart's values, in the order values.yaml lists them.
var chartValues = []value{
	{Name: "operatorId", Default: "camel-k", Schema: str,
		Doc: "The operator id, a DNS-1123 label: resources whose camel.apache.org/operator.id annotation names it are this operator's. Several releases with different ids can share a namespace or a cluster."},
	{Name: "default", Default: "null", Schema: map[string]any{"type": []string{"boolean", "null"}},
		Doc: "Whether the operator adopts resources that name no operator. Unset: true for camel-k only. There can be only one default operator on a cluster."},
	{Name: "watchNamespaces", Default: "[]", Schema: map[string]any{"type": "array", "items": dnsLabel},
		Doc: "Namespaces the operator serves; empty: every namespace. A limited operator gets its rights on namespaced resources only in its own namespace and these, which must exist."},
	{Name: "image", Schema: map[string]any{"type": []string{"string", "object"}, "pattern": referencePattern},
		Doc: "The operator image: a reference (by digest, preferably), or these fields. Unset: caravan/operator:<appVersion>; a released chart's is its image by digest. Use one form: Helm merges no reference with fields, so it warns when an upgrade with --reuse-values switches forms (the new one wins), and refuses --set image.tag over a reference from a values file.",
		Fields: []value{
			{Name: "repository", Default: "caravan/operator", Schema: map[string]any{"type": "string", "pattern": repositoryPattern},
				Doc: "The image's repository, with its registry."},
			{Name: "tag", Default: `""`, Schema: map[string]any{"type": "string", "pattern": tagPattern},
				Doc: "The image's tag. Unset: the chart's appVersion. A tag of digits alone is a number to --set: give it with --set-string."},
			{Name: "digest", Default: `""`, Schema: map[string]any{"type": "string", "pattern": "^(sha256:[0-9a-f]{64})?$"},
				Doc: "The image's digest, sha256:..., which wins over the tag. A released chart sets its image's digest here: to run another tag, set digest to \"\" as well. The notes warn when a tag and a digest are both set, since the tag is then unused."},
			{Name: "pullPolicy", Default: "IfNotPresent", Schema: map[string]any{"type": "string", "enum": []string{"Always", "IfNotPresent", "Never"}},
				Doc: "The image's pull policy."},
		}},
	{Name: "replicas", Default: "1", Schema: map[string]any{"type": "integer", "minimum": 0},
		Doc: "Replicas of the Deployment; one leads, on the Lease <operatorId>-lock."},
	{Name: "resources", Schema: map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{"requests": quantities, "limits": quantities, "claims": objList}},
		Default: "requests:\n  cpu: 100m\n  memory: 64Mi\nlimits:\n  cpu: \"1\"\n  memory: 512Mi",
		Doc:     "Requests and limits of the operator container. The operator runs as many Go processors as its CPU limit, rounded up, and sets its Go memory limit to 90% of its memory limit. The chart refuses a limit below its request, which Kubernetes would refuse."},
	{Name: "nodeSelector", Default: "{}", Schema: strMap,
		Doc: "The node selector of the operator's pod."},
	{Name: "tolerations", Default: "[]", Schema: objList,
		Doc: "The tolerations of the operator's pod."},
	{Name: "imagePullSecrets", Default: "[]", Schema: pullSecrets,
		Doc: "Secrets, in the release namespace, to pull the image with, as a pod lists them: [{name: regcred}]. Names alone ([regcred]) are taken too."},
	{Name: "podSecurityContext", Default: yamlOf(podSecurityContext), Schema: object,
		Doc: "The security context of the operator's pod, which PodSecurity restricted admits. Helm merges what you set into it: set a field to null to remove it."},
	{Name: "securityContext", Default: yamlOf(install.Restricted()), Schema: object,
		Doc: "The security context of the operator container, which PodSecurity restricted admits. Helm merges what you set into it: set a field to null to remove it."},
	{Name: "affinity", Default: "{}", Schema: object, Doc: "The affinity of the operator's pod."},
	{Name: "podDisruptionBudget", Doc: "A PodDisruptionBudget of the operator's pods, which keeps a node drain from evicting them all at once.",
		Fields: []value{
			{Name: "enabled", Default: "null", Schema: map[string]any{"type": []string{"boolean", "null"}},
				Doc: "Render the PodDisruptionBudget. Unset: when replicas is more than 1; with one replica and minAvailable 1, it would keep nodes from draining."},
			{Name: "minAvailable", Default: "1", Schema: map[string]any{"type": []string{"integer", "string"}, "minimum": 0, "pattern": "^[0-9]+%$"},
				Doc: "The operator pods a disruption leaves running: a number, or a percentage of replicas (\"50%\"). One leads at a time; the others take over at once."},
		}},
	{Name: "topologySpreadConstraints", Default: "[]", Schema: objList,
		Doc: "The topology spread constraints of the operator's pod, for replicas across zones."},
	{Name: "priorityClassName", Default: `""`, Schema: str, Doc: "The priority class of the operator's pod."},
	{Name: "podAnnotations", Default: "{}", Schema: strMap,
		Doc: "Annotations added to the operator's pod."},
	{Name: "podLabels", Default: "{}", Schema: strMap,
		Doc: "Labels added to the operator's pod; the chart's own labels win over them."},
	{Name: "extraEnv", Default: "[]", Schema: objList,
		Doc: "Environment variables added to the operator container, as a container's env lists them (HTTPS_PROXY, ...)."},
	{Name: "extraArgs", Default: "[]", Schema: strList,
		Doc: "Arguments added to the operator's command line, after the chart's (see caravan operator --help)."},
	{Name: "serviceAccount", Doc: "The operator's ServiceAccount, whose name is its identity: <operatorId>-operator, which the admission policies read, so it cannot be renamed.",
		Fields: []value{
			{Name: "create", Default: "true", Schema: boolean,
				Doc: "Create the ServiceAccount; false uses one made beforehand, with the same name, in the release namespace."},
			{Name: "annotations", Default: "{}", Schema: strMap,
				Doc: "Annotations of the ServiceAccount the chart creates: a cloud's workload identity for the kit registry."},
		}},
	{Name: "registry", Doc: "The registry kits are pushed to: the IntegrationPlatform's spec.build.registry, set when the chart creates the platform.",
		Fields: []value{
			{Name: "address", Default: `""`, Schema: str, Doc: "The registry's host[:port]."},
			{Name: "insecure", Default: "false", Schema: boolean, Doc: "Allow plain HTTP, or TLS that cannot be verified."},
			{Name: "secret", Default: `""`, Schema: str,
				Doc: "A Secret of the registry's credentials in the release namespace, of type kubernetes.io/dockerconfigjson (kubectl create secret docker-registry); builds push with them."},
		}},
	{Name: "skipAdmission", Default: "false", Schema: boolean,
		Doc: "Leave out the admission policies that enforce who may assign resources to which operator. Needed only before Kubernetes 1.30, which serves no ValidatingAdmissionPolicy v1; on 1.30 to 1.35 the chart renders the validating policies alone."},
	{Name: "sharedResources", Default: "true", Schema: boolean,
		Doc: "Render the objects that every operator of the cluster shares: the admission policies and the shared roles. Helm adopts no object another release made: leave it true in the first release of the cluster, set it to false in the others. Helm keeps those objects when that release is uninstalled."},
	{Name: "skipKamelets", Default: "false", Schema: boolean,
		Doc: "Have the operator install no Kamelet catalog of its Camel version: the platform the chart creates opts out (spec.kamelet.catalog: false). The chart itself carries no Kamelet."},
	{Name: "heartbeatInterval", Default: `""`, Schema: map[string]any{"type": "string", "pattern": `^([0-9]+(ms|s|m))*$`},
		Doc: "How often the operator renews its registration, 1s to 30s. Unset: 10s."},
	{Name: "logVerbosity", Default: "0", Schema: map[string]any{"type": "integer", "minimum": 0},
		Doc: "The operator's log verbosity."},
	{Name: "logFormat", Default: "text", Schema: map[string]any{"type": "string", "enum": []string{"text", "json"}},
		Doc: "The operator's log format: text, or json for one JSON object a line."},
	{Name: "pprof", Default: "false", Schema: boolean,
		Doc: "Serve the Go runtime's /debug/pprof beside the metrics (HTTPS, port 8443), to callers bound to the caravan-metrics-reader ClusterRole."},
	{Name: "fleet", Doc: "Render the fleet controller instead of an operator: it runs the operators that IntegrationOperators declare (spec.namespace), with image as their default image and registry as their platforms' (see docs/install.md). One release per cluster.",
		Fields: []value{{Name: "enabled", Default: "false", Schema: boolean, Doc: "Render the fleet controller."}}},
	{Name: "monitoring", Doc: "The Prometheus Operator's PodMonitor of every Caravan operator, with the identity it scrapes as, a PrometheusRule with the alerts docs/operations.md recommends, and a Grafana dashboard (a ConfigMap labelled grafana_dashboard=1 in the release namespace, which Grafana's dashboard sidecar finds only if it searches that namespace or all of them: sidecar.dashboards.searchNamespace: ALL in Grafana's chart). Needs the monitoring.coreos.com CRDs; made by the release that holds the shared objects (sharedResources).",
		Fields: []value{{Name: "enabled", Default: "false", Schema: boolean, Doc: "Render the monitoring objects."},
			{Name: "labels", Default: "{}", Schema: strMap,
				Doc: "Labels of the PodMonitor and the PrometheusRule, those a Prometheus selects them by: release: <release name> for kube-prometheus-stack's."}}},
}

// valuesFiles adds values.yaml, values.schema.json and README.md of the chart to files.
func valuesFiles(files map[string][]byte) error {
	files[path.Join(ChartDir, "values.yaml")] = ValuesYAML()
	schema, err := valuesSchema()
	if err != nil {
		return err
	}
	files[path.Join(ChartDir, "values.schema.json")] = schema
	files[path.Join(ChartDir, "README.md")] = chartReadme()
	return nil
}

// wrap breaks text into lines of at most 90 characters, each after prefix.
func wrap(text, prefix string) string {
	var b, line strings.Builder
	for _, w := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(w) > 90-len(prefix) {
			b.WriteString(prefix + line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	if line.Len() > 0 {
		b.WriteString(prefix + line.String() + "\n")
	}
	return b.String()
}

// ValuesYAML is the chart's values.yaml, as the source tree holds it.
func ValuesYAML() []byte {
	return valuesYAML(chartValues)
}

// ReleaseValues is the chart's values.yaml whose default image is operator, a reference (by
// digest, as a release pins it): its repository, and its tag or digest.
func ReleaseValues(operator string) ([]byte, error) {
	ref, err := reference.Parse(operator)
	if err != nil {
		return nil, fmt.Errorf("the operator image %q: %w", operator, err)
	}
	named, ok := ref.(reference.Named)
	if !ok {
		return nil, fmt.Errorf("the operator image %q names no repository", operator)
	}
	image := map[string]string{"repository": strconv.Quote(named.Name()), "tag": `""`, "digest": `""`}
	if t, ok := ref.(reference.Tagged); ok {
		image["tag"] = strconv.Quote(t.Tag())
	}
	if d, ok := ref.(reference.Digested); ok {
		image["digest"] = strconv.Quote(d.Digest().String())
	}
	vals := make([]value, len(chartValues))
	for i, v := range chartValues {
		vals[i] = v
		if v.Name != "image" {
			continue
		}
		vals[i].Fields = make([]value, len(v.Fields))
		for j, f := range v.Fields {
			if d, ok := image[f.Name]; ok {
				f.Default = d
			}
			vals[i].Fields[j] = f
		}
	}
	return valuesYAML(vals), nil
}

// valuesYAML is the chart's values.yaml of vals, each with its documentation as a comment.
func valuesYAML(vals []value) []byte {
	var b bytes.Buffer
	b.WriteString("# Generated by `make generate` (internal/packaging/values.go), with values.schema.json and\n# README.md: do not edit.\n")
	for _, v := range vals {
		b.WriteString("\n" + wrap(v.Doc, "# "))
		switch {
		case len(v.Fields) > 0:
			b.WriteString(v.Name + ":\n")
			for _, f := range v.Fields {
				b.WriteString(wrap(f.Doc, "  # "))
				b.WriteString("  " + f.Name + ": " + f.Default + "\n")
			}
		case strings.Contains(v.Default, "\n"):
			b.WriteString(v.Name + ":\n")
			for _, line := range strings.Split(v.Default, "\n") {
				b.WriteString("  " + line + "\n")
			}
		default:
			b.WriteString(v.Name + ": " + v.Default + "\n")
		}
	}
	return b.Bytes()
}

func valuesSchema() ([]byte, error) {
	props := map[string]any{}
	for _, v := range chartValues {
		if len(v.Fields) == 0 {
			props[v.Name] = withDescription(v.Schema, v.Doc)
			continue
		}
		fields := map[string]any{}
		for _, f := range v.Fields {
			fields[f.Name] = withDescription(f.Schema, f.Doc)
		}
		obj := map[string]any{"type": "object", "description": v.Doc, "additionalProperties": false, "properties": fields}
		for k, s := range v.Schema {
			obj[k] = s
		}
		props[v.Name] = obj
	}
	data, err := json.MarshalIndent(map[string]any{"title": "Values of the Caravan chart", "type": "object",
		"additionalProperties": false, "properties": props}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func withDescription(schema map[string]any, doc string) map[string]any {
	out := map[string]any{"description": doc}
	for k, v := range schema {
		out[k] = v
	}
	return out
}

func chartReadme() []byte {
	var b bytes.Buffer
	b.WriteString(`<!-- Generated by ` + "`make generate`" + ` (internal/packaging/values.go): do not edit. -->
# Caravan

One Caravan operator, named by its id, that runs Apache Camel integrations next to other
operators on one cluster. See docs/install.md in the source tree for the whole story:
several releases, the objects they share, Kubernetes before 1.36, and onboarding a team.

` + "```sh" + `
helm install tenant-a deploy/helm/caravan -n operators --create-namespace \
  --set operatorId=tenant-a --set image=REGISTRY/caravan/operator@sha256:...
` + "```" + `

The chart refuses values that its schema (values.schema.json) does not describe: a misspelt
key, a value of the wrong type, an image that is no reference or a watched namespace that is no
DNS-1123 label fails helm install, upgrade, template and lint. So does a CPU or memory limit
below its request, which the templates check.

## Values

| Key | Type | Default | Description |
| --- | --- | --- | --- |
`)
	row := func(key string, schema map[string]any, def, doc string) {
		if def != "" {
			def = "`" + strings.ReplaceAll(def, "\n", " ") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", key, typeOf(schema), def, doc)
	}
	for _, v := range chartValues {
		if len(v.Fields) == 0 {
			row(v.Name, v.Schema, v.Default, v.Doc)
			continue
		}
		parent := map[string]any{"type": "object"}
		if t, ok := v.Schema["type"]; ok {
			parent["type"] = t
		}
		row(v.Name, parent, "", v.Doc)
		for _, f := range v.Fields {
			row(v.Name+"."+f.Name, f.Schema, f.Default, f.Doc)
		}
	}
	return b.Bytes()
}

// typeOf names the JSON type of schema.
func typeOf(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		return t
	case []string:
		return strings.Join(t, " or ")
	}
	return "any"
}
