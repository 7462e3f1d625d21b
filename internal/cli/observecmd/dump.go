package observecmd

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// redacted replaces a value a support archive must not carry.
const redacted = "<redacted>"

// dumpLogLines bounds each operator container's log in the archive.
const dumpLogLines = int64(2000)

// DumpOptions are the options of `caravan dump`.
type DumpOptions struct {
	cmdutil.Cluster

	OperatorID    string
	AllNamespaces bool
	// File is the archive written; "-" is standard output.
	File string

	// Set by Complete.
	now func() time.Time

	genericiooptions.IOStreams
}

// dumpKinds are the Camel kinds an archive holds, by file name.
var dumpKinds = []struct {
	file string
	gvk  schema.GroupVersionKind
}{
	{"integrations", camelv1.GroupVersion.WithKind("Integration")},
	{"pipes", camelv1.GroupVersion.WithKind("Pipe")},
	{"kameletbindings", camelv1alpha1.GroupVersion.WithKind("KameletBinding")},
	{"integrationkits", camelv1.GroupVersion.WithKind("IntegrationKit")},
	{"builds", camelv1.GroupVersion.WithKind("Build")},
	{"integrationplatforms", camelv1.GroupVersion.WithKind("IntegrationPlatform")},
	{"kamelets", camelv1.GroupVersion.WithKind("Kamelet")},
}

// NewCmdDump builds `caravan dump`, which archives what a support request needs.
func NewCmdDump(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DumpOptions{Cluster: cmdutil.Cluster{Kube: kube}, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "dump",
		Short: "Write what a support request needs into an archive, secrets left out",
		Long: `Write a gzipped tar archive of what a support request needs: the Camel
resources of the namespace (-A: of all namespaces), or of one operator's share
with -x/--operator-id; the Deployments and pods of those integrations; the
namespaces' Events; the operators' registrations; and, with -x, the operator's
Deployment, pods and the end of each of its containers' logs.

Secrets are never read. Environment variable values, Camel properties set in
the camel trait, endpoint properties named as credentials (password, token,
secret, ...) and the last-applied-configuration annotation are replaced by
"<redacted>", and managed fields are left out. The archive lists every file it
holds in index.txt.`,
		Example: `  # Everything of the operator tenant-a, in all namespaces
  caravan dump -x tenant-a -A -o tenant-a.tar.gz

  # The namespace apps, to standard output
  caravan dump -n apps -o - > apps.tar.gz`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(o),
	}
	f := cmd.Flags()
	f.StringVarP(&o.OperatorID, "operator-id", "x", "", "only what is assigned to this operator, and the operator itself")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "every namespace")
	f.StringVarP(&o.File, "output", "o", "", "the archive to write, - for standard output (default caravan-dump-TIME.tar.gz)")
	return cmd
}

// Complete resolves the namespace, the file and the clients.
func (o *DumpOptions) Complete() error {
	if o.File == "" {
		o.File = "caravan-dump-" + o.now().UTC().Format("20060102-150405") + ".tar.gz"
	}
	return nil
}

// Preamble asks for the namespace, a client, and the clientset that reads pod logs.
func (o *DumpOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedClient | cmdutil.NeedPods
}

// Validate checks the operator id.
func (o *DumpOptions) Validate() error {
	if o.OperatorID != "" {
		if err := ownership.ValidateID(o.OperatorID); err != nil {
			return fmt.Errorf("-x/--operator-id: %w", err)
		}
	}
	return nil
}

// dumpArchive writes the files of a dump.
type dumpArchive struct {
	tw    *tar.Writer
	now   time.Time
	files []string
}

func (a *dumpArchive) add(name string, data []byte) error {
	if err := a.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: a.now}); err != nil {
		return err
	}
	_, err := a.tw.Write(data)
	a.files = append(a.files, name)
	return err
}

// addObjects writes objs, redacted, as one YAML stream; nothing when there are none.
func (a *dumpArchive) addObjects(name string, objs []unstructured.Unstructured) error {
	if len(objs) == 0 {
		return nil
	}
	var b strings.Builder
	for i := range objs {
		data, err := yaml.Marshal(redact(objs[i].Object))
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return a.add(name, []byte(b.String()))
}

// Run reads what the dump holds and writes the archive.
func (o *DumpOptions) Run(ctx context.Context) error {
	var w io.Writer = o.Out
	if o.File != "-" {
		f, err := os.OpenFile(o.File, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("writing the archive: %w", err)
		}
		defer f.Close()
		w = f
	}
	gz := gzip.NewWriter(w)
	a := &dumpArchive{tw: tar.NewWriter(gz), now: o.now()}
	if err := o.write(ctx, a); err != nil {
		if o.File != "-" {
			_ = os.Remove(o.File)
		}
		return err
	}
	if err := a.add("index.txt", []byte(strings.Join(a.files, "\n")+"\n")); err != nil {
		return err
	}
	if err := errors.Join(a.tw.Close(), gz.Close()); err != nil {
		return fmt.Errorf("writing the archive: %w", err)
	}
	if o.File != "-" {
		fmt.Fprintf(o.ErrOut, "wrote %s: %d files\n", o.File, len(a.files))
	}
	return nil
}

// write adds every part of the dump to a.
func (o *DumpOptions) write(ctx context.Context, a *dumpArchive) error {
	var scope []client.ListOption
	if !o.AllNamespaces {
		scope = append(scope, client.InNamespace(o.Namespace))
	}
	namespaces := map[string]bool{}
	var integrations []string // namespace/name
	for _, k := range dumpKinds {
		objs, err := o.list(ctx, k.gvk, scope...)
		if err != nil {
			return err
		}
		objs = slices.DeleteFunc(objs, func(u unstructured.Unstructured) bool {
			return o.OperatorID != "" && k.gvk.Kind != "Kamelet" && k.gvk.Kind != "IntegrationPlatform" &&
				u.GetAnnotations()[camelv1.OperatorIDAnnotation] != o.OperatorID
		})
		byNamespace := map[string][]unstructured.Unstructured{}
		for _, u := range objs {
			byNamespace[u.GetNamespace()] = append(byNamespace[u.GetNamespace()], u)
			if k.gvk.Kind == "Integration" {
				integrations = append(integrations, u.GetNamespace()+"/"+u.GetName())
			}
			if k.gvk.Kind != "Kamelet" && k.gvk.Kind != "IntegrationPlatform" {
				namespaces[u.GetNamespace()] = true
			}
		}
		for ns, objs := range byNamespace {
			if err := a.addObjects(path.Join("namespaces", ns, k.file+".yaml"), objs); err != nil {
				return err
			}
		}
	}
	for _, key := range integrations {
		ns, name, _ := strings.Cut(key, "/")
		for file, gvk := range map[string]schema.GroupVersionKind{
			"deployments": appsv1.SchemeGroupVersion.WithKind("Deployment"), "pods": corev1.SchemeGroupVersion.WithKind("Pod"),
		} {
			objs, err := o.list(ctx, gvk, client.InNamespace(ns), client.MatchingLabels{camelv1.IntegrationLabel: name})
			if err != nil {
				return err
			}
			if err := a.addObjects(path.Join("namespaces", ns, "integrations", name, file+".yaml"), objs); err != nil {
				return err
			}
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) {
		events, err := o.list(ctx, eventsv1.SchemeGroupVersion.WithKind("Event"), client.InNamespace(ns))
		if err != nil {
			return err
		}
		if err := a.addObjects(path.Join("namespaces", ns, "events.yaml"), events); err != nil {
			return err
		}
	}
	operators, err := o.list(ctx, camelv1alpha1.GroupVersion.WithKind("IntegrationOperator"))
	if err != nil {
		return err
	}
	operators = slices.DeleteFunc(operators, func(u unstructured.Unstructured) bool {
		return o.OperatorID != "" && u.GetName() != o.OperatorID
	})
	if err := a.addObjects("cluster/integrationoperators.yaml", operators); err != nil {
		return err
	}
	if o.OperatorID == "" {
		return nil
	}
	return o.writeOperator(ctx, a, operators)
}

// writeOperator adds operator -x's Deployment, pods and the end of its containers' logs.
func (o *DumpOptions) writeOperator(ctx context.Context, a *dumpArchive, registrations []unstructured.Unstructured) error {
	if len(registrations) == 0 {
		return a.add("operator/NOT-REGISTERED.txt", []byte("no IntegrationOperator is named "+o.OperatorID+"\n"))
	}
	ns, _, _ := unstructured.NestedString(registrations[0].Object, "status", "namespace")
	if ns == "" {
		return a.add("operator/NOT-RUNNING.txt", []byte("the registration of "+o.OperatorID+" names no namespace\n"))
	}
	selector := client.MatchingLabels{"app.kubernetes.io/instance": o.OperatorID}
	deployments, err := o.list(ctx, appsv1.SchemeGroupVersion.WithKind("Deployment"), client.InNamespace(ns), selector)
	if err != nil {
		return err
	}
	if err := a.addObjects("operator/deployments.yaml", deployments); err != nil {
		return err
	}
	pods := &corev1.PodList{}
	if err := o.Client.List(ctx, pods, client.InNamespace(ns), selector); err != nil {
		return fmt.Errorf("listing the operator's pods: %w", err)
	}
	if len(pods.Items) == 0 {
		return a.add("operator/NO-PODS.txt", []byte("operator "+o.OperatorID+" runs no pod in namespace "+ns+"\n"))
	}
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			name := path.Join("operator", "logs", p.Name+"-"+c.Name+".log")
			data, err := o.Pods.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, TailLines: ptr.To(dumpLogLines)}).DoRaw(ctx)
			if err != nil {
				data = []byte("the log could not be read: " + err.Error() + "\n")
			}
			if err := a.add(name, data); err != nil {
				return err
			}
		}
	}
	objs, err := o.list(ctx, corev1.SchemeGroupVersion.WithKind("Pod"), client.InNamespace(ns), selector)
	if err != nil {
		return err
	}
	return a.addObjects("operator/pods.yaml", objs)
}

// list reads the objects of gvk, as unstructured ones with their kind, sorted by namespace and name.
func (o *DumpOptions) list(ctx context.Context, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := o.Client.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	items := list.Items
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int {
		return strings.Compare(a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName())
	})
	for i := range items {
		items[i].SetGroupVersionKind(gvk)
	}
	return items, nil
}

// redact removes from an object what a support archive must not carry: managed fields, the
// last applied configuration, environment values and the camel trait's property values.
func redact(obj map[string]any) map[string]any {
	unstructured.RemoveNestedField(obj, "metadata", "managedFields")
	unstructured.RemoveNestedField(obj, "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				switch k {
				case "env":
					redactEnv(child)
				case "properties", "vars":
					switch c := child.(type) {
					case []any:
						redactProperties(c)
					case map[string]any:
						redactSecretKeys(c)
					}
				}
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(obj)
	return obj
}

// redactEnv replaces the value of each environment variable of a container's env list.
func redactEnv(v any) {
	list, ok := v.([]any)
	if !ok {
		return
	}
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			if _, has := m["value"]; has {
				m["value"] = redacted
			}
		}
	}
}

// redactProperties replaces the value of each KEY=VALUE entry of a properties list.
func redactProperties(list []any) {
	for i, e := range list {
		if s, ok := e.(string); ok {
			if k, _, found := strings.Cut(s, "="); found {
				list[i] = k + "=" + redacted
			}
		}
	}
}

// secretWords mark an endpoint property whose value is a credential.
var secretWords = []string{"password", "passphrase", "secret", "token", "credential", "apikey", "accesskey", "privatekey"}

// redactSecretKeys replaces the values of the endpoint properties whose names say they are credentials.
func redactSecretKeys(m map[string]any) {
	for k := range m {
		lower := strings.ToLower(k)
		if slices.ContainsFunc(secretWords, func(w string) bool { return strings.Contains(lower, w) }) {
			m[k] = redacted
		}
	}
}
