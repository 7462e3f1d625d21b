package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// none is printed for a value that is not set, as kubectl does.
const none = "<none>"

// Output formats of the read commands (-o).
const (
	outputTable = ""
	outputWide  = "wide"
	outputName  = "name"
	outputYAML  = "yaml"
	outputJSON  = "json"
)

// templateFormats are kubectl's -o forms that carry a template or a
// column spec, after '=': each names the printer that renders them.
var templateFormats = []string{"jsonpath", "jsonpath-file", "go-template", "go-template-file", "template", "templatefile",
	"custom-columns", "custom-columns-file"}

// validateOutput checks -o against the formats a command supports; a
// command that supports yaml also takes kubectl's template forms
// (jsonpath=, go-template=, custom-columns= and their -file forms).
func validateOutput(format string, supported ...string) error {
	if format == outputTable || slices.Contains(supported, format) {
		return nil
	}
	if kind, _, ok := strings.Cut(format, "="); ok && slices.Contains(templateFormats, kind) && slices.Contains(supported, outputYAML) {
		_, err := templatePrinter(format)
		return err
	}
	return fmt.Errorf("unsupported output format %q: use one of %s, or %s=…", format, strings.Join(supported, ", "),
		strings.Join(templateFormats, "=…, "))
}

// templatePrinter is the printer of a template form of -o, as kubectl
// makes it: missing keys print empty, a file form reads its template.
func templatePrinter(format string) (printers.ResourcePrinter, error) {
	kind, arg, _ := strings.Cut(format, "=")
	if strings.HasSuffix(kind, "-file") || kind == "templatefile" {
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, fmt.Errorf("-o %s: %w", kind, err)
		}
		arg = string(data)
	}
	if arg == "" {
		return nil, fmt.Errorf("-o %s= needs a template or a column spec", kind)
	}
	switch kind {
	case "jsonpath", "jsonpath-file":
		p, err := printers.NewJSONPathPrinter(arg)
		if err != nil {
			return nil, fmt.Errorf("-o %s: %w", kind, err)
		}
		p.AllowMissingKeys(true)
		return p, nil
	case "custom-columns":
		p, err := get.NewCustomColumnsPrinterFromSpec(arg, unstructured.UnstructuredJSONScheme, false)
		if err != nil {
			return nil, fmt.Errorf("-o %s: %w", kind, err)
		}
		return p, nil
	case "custom-columns-file":
		p, err := get.NewCustomColumnsPrinterFromTemplate(strings.NewReader(arg), unstructured.UnstructuredJSONScheme)
		if err != nil {
			return nil, fmt.Errorf("-o %s: %w", kind, err)
		}
		return p, nil
	}
	p, err := printers.NewGoTemplatePrinter([]byte(arg))
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", kind, err)
	}
	p.AllowMissingKeys(true)
	return p, nil
}

// table is a kubectl-style table: upper-case headers, columns aligned with
// printers.GetNewTabWriter.
type table struct {
	columns []string
	rows    [][]string
}

func newTable(columns ...string) *table { return &table{columns: columns} }

// add appends a row; cells are made single-line so they keep the columns
// aligned.
func (t *table) add(cells ...string) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = oneLine(c)
	}
	t.rows = append(t.rows, row)
}

// write prints the header and the rows, each line starting with indent.
func (t *table) write(w io.Writer, indent string) error {
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, indent+strings.Join(t.columns, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, indent+strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// writeRows prints the rows without the header, each cell padded to its
// header's width, for the rows a watch prints under a table already
// printed.
func (t *table) writeRows(w io.Writer) error {
	for _, r := range t.rows {
		var line strings.Builder
		for i, cell := range r {
			if i == len(r)-1 {
				line.WriteString(cell)
				break
			}
			width := len(cell)
			if i < len(t.columns) {
				width = max(width, len(t.columns[i]))
			}
			line.WriteString(cell + strings.Repeat(" ", width-len(cell)+3))
		}
		if _, err := fmt.Fprintln(w, line.String()); err != nil {
			return err
		}
	}
	return nil
}

// oneLine replaces the line breaks and tabs of s with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\t", " ")), " ")
}

// orNone returns s, or <none> when it is empty.
func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// age formats the time since t as kubectl does (5m, 3h, 2d), or
// <unknown> when t is not set.
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// conditionStatus is the status of the condition of type t, or <none>.
func conditionStatus(conditions []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conditions, t); c != nil {
		return string(c.Status)
	}
	return none
}

// operatorOf is the operator id a resource is assigned to, or <none>.
func operatorOf(o metav1.Object) string {
	return orNone(o.GetAnnotations()[camelv1.OperatorIDAnnotation])
}

// int32OrNone formats an optional count.
func int32OrNone(n *int32) string {
	if n == nil {
		return none
	}
	return fmt.Sprint(*n)
}

// printObjects prints objects with the YAML, JSON or name printer of
// cli-runtime. One object asked for by name prints as itself; anything
// else prints as a v1 List, like kubectl. Managed fields are left out.
func printObjects(w io.Writer, format string, scheme *runtime.Scheme, objs []client.Object, single bool) error {
	items := make([]unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		u, err := toUnstructured(o, scheme)
		if err != nil {
			return err
		}
		items = append(items, *u)
	}
	var out runtime.Object
	if single && len(items) == 1 {
		out = &items[0]
	} else {
		list := &unstructured.UnstructuredList{Object: map[string]any{
			"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""},
		}}
		list.Items = items
		out = list
	}
	var p printers.ResourcePrinter
	switch format {
	case outputYAML:
		p = &printers.YAMLPrinter{}
	case outputJSON:
		p = &printers.JSONPrinter{}
	case outputName:
		p = &printers.NamePrinter{}
	default:
		var err error
		if p, err = templatePrinter(format); err != nil {
			return err
		}
	}
	return p.PrintObj(out, w)
}

// toUnstructured converts a typed object, whose apiVersion and kind a
// typed client leaves empty, into an unstructured one that has them.
func toUnstructured(o client.Object, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(o, scheme)
	if err != nil {
		return nil, err
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, fmt.Errorf("converting %s %s: %w", gvk.Kind, o.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	u.SetManagedFields(nil)
	return u, nil
}

// noResources is kubectl's message for an empty result.
func noResources(namespace string, allNamespaces bool) string {
	if allNamespaces || namespace == "" {
		return "No resources found"
	}
	return fmt.Sprintf("No resources found in %s namespace.", namespace)
}
