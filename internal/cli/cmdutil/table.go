package cmdutil

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

// None is printed for a value that is not set, as kubectl does.
const None = "<none>"

// Output formats of the read commands (-o).
const (
	OutputTable = ""
	OutputWide  = "wide"
	OutputName  = "name"
	OutputYAML  = "yaml"
	OutputJSON  = "json"
)

// templateFormats are kubectl's -o forms that carry a template or a
// column spec, after '=': each names the printer that renders them.
var templateFormats = []string{"jsonpath", "jsonpath-file", "go-template", "go-template-file", "template", "templatefile",
	"custom-columns", "custom-columns-file"}

// ValidateOutput checks -o against the formats a command supports; a
// command that supports yaml also takes kubectl's template forms
// (jsonpath=, go-template=, custom-columns= and their -file forms).
func ValidateOutput(format string, supported ...string) error {
	if format == OutputTable || slices.Contains(supported, format) {
		return nil
	}
	if kind, _, ok := strings.Cut(format, "="); ok && slices.Contains(templateFormats, kind) && slices.Contains(supported, OutputYAML) {
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

// Table is a kubectl-style table: upper-case headers, columns aligned with
// printers.GetNewTabWriter.
type Table struct {
	columns []string
	Rows    [][]string
}

// NewTable returns an empty table with these column headers.
func NewTable(columns ...string) *Table { return &Table{columns: columns} }

// Columns are the table's column headers.
func (t *Table) Columns() []string { return t.columns }

// Add appends a row; cells are made single-line so they keep the columns
// aligned.
func (t *Table) Add(cells ...string) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = OneLine(c)
	}
	t.Rows = append(t.Rows, row)
}

// Write prints the header and the rows, each line starting with indent.
func (t *Table) Write(w io.Writer, indent string) error {
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, indent+strings.Join(t.columns, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, indent+strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// writeRows prints the rows without the header, each cell padded to its
// header's width, for the rows a watch prints under a table already
// printed.
func (t *Table) writeRows(w io.Writer) error {
	for _, r := range t.Rows {
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

// OneLine replaces the line breaks and tabs of s with spaces.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\t", " ")), " ")
}

// OrNone returns s, or <none> when it is empty.
func OrNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

// Age formats the time since t as kubectl does (5m, 3h, 2d), or
// <unknown> when t is not set.
func Age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// ConditionStatus is the status of the condition of type t, or <none>.
func ConditionStatus(conditions []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conditions, t); c != nil {
		return string(c.Status)
	}
	return None
}

// OperatorOf is the operator id a resource is assigned to, or <none>.
func OperatorOf(o metav1.Object) string {
	return OrNone(o.GetAnnotations()[camelv1.OperatorIDAnnotation])
}

// Int32OrNone formats an optional count.
func Int32OrNone(n *int32) string {
	if n == nil {
		return None
	}
	return fmt.Sprint(*n)
}

// PrintObjects prints objects with the YAML, JSON or name printer of
// cli-runtime. One object asked for by name prints as itself; anything
// else prints as a v1 List, like kubectl. Managed fields are left out.
func PrintObjects(w io.Writer, format string, scheme *runtime.Scheme, objs []client.Object, single bool) error {
	items := make([]unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		u, err := ToUnstructured(o, scheme)
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
	case OutputYAML:
		p = &printers.YAMLPrinter{}
	case OutputJSON:
		p = &printers.JSONPrinter{}
	case OutputName:
		p = &printers.NamePrinter{}
	default:
		var err error
		if p, err = templatePrinter(format); err != nil {
			return err
		}
	}
	return p.PrintObj(out, w)
}

// ToUnstructured converts a typed object, whose apiVersion and kind a
// typed client leaves empty, into an unstructured one that has them.
func ToUnstructured(o client.Object, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
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

// NoResources is kubectl's message for an empty result.
func NoResources(namespace string, allNamespaces bool) string {
	if allNamespaces || namespace == "" {
		return "No resources found"
	}
	return fmt.Sprintf("No resources found in %s namespace.", namespace)
}
