package observecmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/config/crd"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

// tableOptions say how `caravan get` lays out its table.
type tableOptions struct {
	wide          bool
	allNamespaces bool
	noHeaders     bool
	// orphaned adds the REASON column, from reasons.
	orphaned bool
	reasons  map[client.ObjectKey]string
	now      time.Time
	// labelColumns add a column per label key (-L); showLabels a LABELS column.
	labelColumns []string
	showLabels   bool
}

// writeTable prints objs, of type rt, as kubectl get prints them: the columns are their CRD's
// printer columns, which the API server gives kubectl, converted by the API server's own code, then
// laid out by kubectl's table printer. Ages count from opts.now.
func writeTable(w io.Writer, rt resourceType, objs []client.Object, opts tableOptions, scheme *runtime.Scheme) error {
	columns, err := printerColumns(rt.plural)
	if err != nil {
		return err
	}
	// Dates are read as strings and aged here, from opts.now rather than the clock.
	var dates []int
	for i := range columns {
		if columns[i].Type == "date" {
			dates = append(dates, i+1) // after the name
			columns[i].Type = "string"
		}
	}
	conv, err := tableconvertor.New(columns)
	if err != nil {
		return fmt.Errorf("the printer columns of %s: %w", rt.plural, err)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, o := range objs {
		u, err := cmdutil.ToUnstructured(o, scheme)
		if err != nil {
			return err
		}
		list.Items = append(list.Items, *u)
	}
	table, err := conv.ConvertToTable(context.Background(), list, nil)
	if err != nil {
		return fmt.Errorf("the table of %s: %w", rt.plural, err)
	}
	if opts.orphaned {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: "Reason", Type: "string",
			Description: "Why the resource is an orphan"})
	}
	for i := range table.Rows {
		row := &table.Rows[i]
		for _, c := range dates {
			if s, ok := row.Cells[c].(string); ok {
				if t, err := time.Parse(time.RFC3339, s); err == nil {
					row.Cells[c] = cmdutil.Age(t, opts.now)
				}
			}
		}
		if opts.orphaned {
			m, err := meta.Accessor(row.Object.Object)
			if err != nil {
				return err
			}
			row.Cells = append(row.Cells, cmdutil.OrNone(opts.reasons[client.ObjectKey{Namespace: m.GetNamespace(), Name: m.GetName()}]))
		}
	}
	p := printers.NewTablePrinter(printers.PrintOptions{NoHeaders: opts.noHeaders, WithNamespace: opts.allNamespaces,
		Wide: opts.wide, ShowLabels: opts.showLabels, ColumnLabels: opts.labelColumns})
	return p.PrintObj(table, w)
}

// printerColumns are the printer columns of the served version of Caravan's CRD of plural.
func printerColumns(plural string) ([]apiextensionsv1.CustomResourceColumnDefinition, error) {
	byPlural, err := crdPrinterColumns()
	if err != nil {
		return nil, err
	}
	columns, ok := byPlural[plural]
	if !ok {
		return nil, fmt.Errorf("no CRD of %s", plural)
	}
	return slices.Clone(columns), nil
}

// crdPrinterColumns decodes the embedded CRDs once, for every table a watch prints, and keeps
// their storage version's printer columns by plural.
var crdPrinterColumns = sync.OnceValues(func() (map[string][]apiextensionsv1.CustomResourceColumnDefinition, error) {
	crds, err := crd.CustomResourceDefinitions()
	if err != nil {
		return nil, err
	}
	byPlural := map[string][]apiextensionsv1.CustomResourceColumnDefinition{}
	for _, d := range crds {
		for _, v := range d.Spec.Versions {
			if v.Storage {
				byPlural[d.Spec.Names.Plural] = v.AdditionalPrinterColumns
			}
		}
	}
	return byPlural, nil
})
