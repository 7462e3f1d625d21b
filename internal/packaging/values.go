package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
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
	Schema  map[string]any
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
)

// chartValues are the chart's values, in the order values.yaml lists them.
var chartValues = []value{
	{Name: "operatorId", Default: "camel-k", Schema: str,
		Doc: "The operator id, a DNS-1123 label: resources whose camel.apache.org/operator.id annotation names it are this operator's. Several releases with different ids can share a namespace or a cluster."},
	{Name: "default", Default: "null", Schema: map[string]any{"type": []string{"boolean", "null"}},
		Doc: "Whether the operator adopts resources that name no operator. Unset: true for camel-k only. There can be only one default operator on a cluster."},
	{Name: "watchNamespaces", Default: "[]", Schema: strList,
		Doc: "Namespaces the operator serves; empty: every namespace. A limited operator gets its rights on namespaced resources only in its own namespace and these, which must exist."},
	{Name: "image", Default: `""`, Schema: map[string]any{"type": []string{"string", "object"}, "additionalProperties": false,
		"properties": map[string]any{"repository": str, "tag": str, "digest": map[string]any{"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
			"pullPolicy": map[string]any{"type": "string", "enum": []string{"Always", "IfNotPresent", "Never"}}}},
		Doc: "The operator image: a reference (by digest, preferably), or an object of repository, tag, digest (sha256:..., which wins over the tag) and pullPolicy (IfNotPresent unless set). Unset: caravan/operator:<appVersion>."},
	{Name: "replicas", Default: "1", Schema: map[string]any{"type": "integer", "minimum": 0},
		Doc: "Replicas of the Deployment; one leads, on the Lease <operatorId>-lock."},
	{Name: "resources", Schema: object,
		Default: "requests:\n  cpu: 100m\n  memory: 64Mi\nlimits:\n  cpu: \"1\"\n  memory: 512Mi",
		Doc:     "Requests and limits of the operator container. The operator runs as many Go processors as its CPU limit, rounded up, and sets its Go memory limit to 90% of its memory limit."},
	{Name: "nodeSelector", Default: "{}", Schema: strMap,
		Doc: "The node selector of the operator's pod."},
	{Name: "tolerations", Default: "[]", Schema: objList,
		Doc: "The tolerations of the operator's pod."},
	{Name: "imagePullSecrets", Default: "[]", Schema: strList,
		Doc: "Names of Secrets, in the release namespace, to pull the image with."},
	{Name: "affinity", Default: "{}", Schema: object, Doc: "The affinity of the operator's pod."},
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
		Doc: "Leave out the Kamelets: those the chart carries (timer-source, log-sink, ...), and the catalog of the operator's Camel version, which the operator installs unless its platform opts out (spec.kamelet.catalog: false, which this sets on the platform the chart creates)."},
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
	{Name: "monitoring", Doc: "The Prometheus Operator's PodMonitor of every Caravan operator, with the identity it scrapes as, a PrometheusRule with the alerts docs/operations.md recommends, and a Grafana dashboard (a ConfigMap labelled grafana_dashboard=1). Needs the monitoring.coreos.com CRDs; made by the release that holds the shared objects (sharedResources).",
		Fields: []value{{Name: "enabled", Default: "false", Schema: boolean, Doc: "Render the monitoring objects."},
			{Name: "labels", Default: "{}", Schema: strMap,
				Doc: "Labels of the PodMonitor and the PrometheusRule, those a Prometheus selects them by: release: <release name> for kube-prometheus-stack's."}}},
}

// valuesFiles adds values.yaml, values.schema.json and README.md of the chart to files.
func valuesFiles(files map[string][]byte) error {
	files[path.Join(ChartDir, "values.yaml")] = valuesYAML()
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

func valuesYAML() []byte {
	var b bytes.Buffer
	b.WriteString("# Generated by `make generate` (internal/packaging/values.go), with values.schema.json and\n# README.md: do not edit.\n")
	for _, v := range chartValues {
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
		props[v.Name] = map[string]any{"type": "object", "description": v.Doc, "additionalProperties": false, "properties": fields}
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
key, or a value of the wrong type, fails helm install, upgrade, template and lint.

## Values

| Key | Type | Default | Description |
| --- | --- | --- | --- |
`)
	row := func(key string, schema map[string]any, def, doc string) {
		def = strings.ReplaceAll(def, "\n", " ")
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", key, typeOf(schema), def, doc)
	}
	for _, v := range chartValues {
		if len(v.Fields) == 0 {
			row(v.Name, v.Schema, v.Default, v.Doc)
			continue
		}
		for _, f := range v.Fields {
			row(v.Name+"."+f.Name, f.Schema, f.Default, f.Doc+" "+v.Doc)
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
