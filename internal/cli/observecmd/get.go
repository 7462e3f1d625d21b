package observecmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlget "k8s.io/kubectl/pkg/cmd/get"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// GetOptions are the options of `caravan get`.
type GetOptions struct {
	cmdutil.Cluster
	// args are [TYPE [NAME...]].
	args []string

	Output        string
	AllNamespaces bool
	OperatorID    string
	Unassigned    bool
	Orphaned      bool
	Selector      string
	Watch         bool
	// NoHeaders, ShowLabels, LabelColumns and SortBy lay out the table as kubectl's flags do.
	NoHeaders     bool
	ShowLabels    bool
	LabelColumns  []string
	SortBy        string
	FieldSelector string

	// Set by Complete.
	resource resourceType
	names    []string
	selector labels.Selector
	scheme   *runtime.Scheme

	now func() time.Time
	genericiooptions.IOStreams
}

// NewCmdGet builds `caravan get`, which lists resources with their operator.
func NewCmdGet(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &GetOptions{Cluster: cmdutil.Cluster{Kube: kube}, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "get [TYPE] [NAME...]",
		Short: "List integrations, pipes, kits, builds or platforms and the operators they are assigned to",
		Long: `List Camel resources of a namespace, or of all namespaces with -A, with the
operator each one is assigned to by its camel.apache.org/operator.id annotation.

TYPE is one of (default integrations):
  integrations (integration, it)
  pipes (pipe, pp)
  kameletbindings (kameletbinding, klb)
  kamelets (kamelet, kl)
  integrationkits (kits, kit, ik)
  builds (build, ikb)
  integrationplatforms (platforms, platform, itp)

Filters, at most one at a time, and -l/--selector with any of them:
  -x ID           the resources assigned to operator ID, selected by the API
                  server with the label camel.apache.org/operator.id=ID (the
                  operator mirrors its annotation into it); a resource whose
                  annotation already names another operator is left out.
  --unassigned    the resources that name no operator.
  --orphaned      the resources that name an operator which is not registered
                  (no IntegrationOperator) or whose heartbeat is stale; the
                  REASON column says which. It also lists IntegrationOperators,
                  once.

The table's columns are the printer columns of the resource's CRD, rendered as
kubectl get renders them (an empty cell is a missing value); -o wide adds the
columns of priority 1.`,
		Example: `  # List the integrations of the current namespace
  caravan get

  # List the integrations of every namespace, with their image, owner and epoch
  caravan get it -A -o wide

  # List the integrations that operator tenant-a owns
  caravan get integrations -x tenant-a -A

  # The names and phases of a team's integrations, then follow their changes
  caravan get it -l team=orders -o custom-columns=NAME:.metadata.name,PHASE:.status.phase
  caravan get it -l team=orders -w

  # List the resources nobody runs: unassigned ones, then orphans
  caravan get it --unassigned
  caravan get it --orphaned -A

  # Print one kit as YAML
  caravan get kit kit-abc123 -o yaml`,
		ValidArgsFunction: CompleteGetArgs(kube),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.args = args
			if cmd.Flags().Changed("operator") {
				fmt.Fprintln(o.ErrOut, "Flag --operator has been deprecated: use -x/--operator-id, as every command does")
			}
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "",
		"output format: wide, name, yaml, json, or kubectl's jsonpath=, go-template=, custom-columns= (and their -file forms)")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "list the resources of all namespaces")
	f.StringVarP(&o.OperatorID, "operator-id", "x", "", "only the resources assigned to this operator id")
	// The name --operator is kept for scripts written before -x/--operator-id;
	// it warns on stderr, which cobra's own deprecation notice does not use.
	f.StringVar(&o.OperatorID, "operator", "", "only the resources assigned to this operator id")
	_ = f.MarkHidden("operator")
	f.StringVarP(&o.Selector, "selector", "l", "", "only the resources whose labels match this selector, such as team=orders")
	f.BoolVarP(&o.Watch, "watch", "w", false, "after listing, print each change of the listed resources until interrupted")
	f.BoolVar(&o.NoHeaders, "no-headers", false, "print the table without its header")
	f.BoolVar(&o.ShowLabels, "show-labels", false, "add a LABELS column with every label")
	f.StringSliceVarP(&o.LabelColumns, "label-columns", "L", nil, "add a column for each of these label keys")
	f.StringVar(&o.SortBy, "sort-by", "", "sort by a JSONPath field, as {.metadata.creationTimestamp} or .status.phase")
	f.StringVar(&o.FieldSelector, "field-selector", "", "select by fields on the server, as metadata.name=orders")
	cmd.Flags().BoolVar(&o.Unassigned, "unassigned", false, "only the resources that name no operator")
	cmd.Flags().BoolVar(&o.Orphaned, "orphaned", false, "only the resources whose operator is not registered or not live")
	_ = cmd.RegisterFlagCompletionFunc("operator-id", cmdutil.CompleteOperatorIDs(kube))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]string{cmdutil.OutputWide, cmdutil.OutputName, cmdutil.OutputYAML, cmdutil.OutputJSON}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete resolves the resource type, the names, the namespace and the client.
func (o *GetOptions) Complete() error {
	rt, names := "integrations", []string(nil)
	if len(o.args) > 0 {
		rt, names = o.args[0], o.args[1:]
	}
	var err error
	if o.resource, err = lookupResource(rt); err != nil {
		return command.WithExitCode(command.ExitUsage, err)
	}
	o.names = names
	if o.selector, err = labels.Parse(o.Selector); err != nil {
		return fmt.Errorf("-l/--selector: %w", err)
	}
	o.scheme = o.Cluster.Watch.Scheme()
	return nil
}

// Preamble asks for the namespace and a client that watches, for --watch.
func (o *GetOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedWatch
}

// Validate checks the flags against each other.
func (o *GetOptions) Validate() error {
	if err := cmdutil.ValidateOutput(o.Output, cmdutil.OutputWide, cmdutil.OutputName, cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
		return err
	}
	set := 0
	for _, on := range []bool{o.OperatorID != "", o.Unassigned, o.Orphaned} {
		if on {
			set++
		}
	}
	if set > 1 {
		return errors.New("-x/--operator-id, --unassigned and --orphaned exclude each other: use one of them")
	}
	if o.OperatorID != "" {
		if err := ownership.ValidateID(o.OperatorID); err != nil {
			return fmt.Errorf("-x/--operator-id: %w", err)
		}
	}
	if o.AllNamespaces && len(o.names) > 0 {
		return errors.New("a resource cannot be retrieved by name across all namespaces: drop -A or the names")
	}
	if o.Selector != "" && len(o.names) > 0 {
		return errors.New("-l/--selector selects from a list: drop the names or the selector")
	}
	if o.FieldSelector != "" {
		if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
			return fmt.Errorf("--field-selector: %w", err)
		}
		if len(o.names) > 0 {
			return errors.New("--field-selector selects from a list: drop the names or the selector")
		}
	}
	if o.Watch && (o.Orphaned || len(o.names) > 0) {
		return errors.New("-w/--watch follows a list: it takes no names, and not --orphaned, whose answer depends on the operators' heartbeats")
	}
	return nil
}

// Run lists or gets the resources, filters, sorts and prints them.
func (o *GetOptions) Run(ctx context.Context) error {
	objs, notFound, err := o.fetch(ctx)
	if err != nil {
		return err
	}
	var reasons map[client.ObjectKey]string
	if o.Orphaned {
		operators, err := o.registeredOperators(ctx)
		if err != nil {
			return err
		}
		reasons = orphanReasons(objs, operators, o.now())
		objs = keep(objs, func(obj client.Object) bool { return reasons[client.ObjectKeyFromObject(obj)] != "" })
	}
	objs = keep(objs, o.matches)
	sortObjects(objs)
	if o.SortBy != "" {
		if objs, err = sortByField(objs, o.SortBy, o.scheme); err != nil {
			return err
		}
	}
	if len(objs) == 0 && notFound != nil {
		// Like kubectl: the names that do not exist are the whole answer.
		return notFound
	}
	if err := o.print(objs, reasons); err != nil {
		return err
	}
	if o.Watch {
		return o.watch(ctx)
	}
	return notFound
}

// fetch lists the resources, or gets the named ones. Names that do not
// exist come back as one error, printed after what was found.
func (o *GetOptions) fetch(ctx context.Context) (objs []client.Object, notFound error, err error) {
	if len(o.names) == 0 {
		list := o.resource.newList()
		if err := o.Cluster.Watch.List(ctx, list, o.listOptions()...); err != nil {
			return nil, nil, fmt.Errorf("listing %s: %w", o.resource.plural, err)
		}
		objs, err := cmdutil.ListItems(list)
		return objs, nil, err
	}
	var missing []error
	for _, name := range o.names {
		obj := o.resource.newObject()
		err := o.Cluster.Watch.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: name}, obj)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, err)
		case err != nil:
			return nil, nil, err
		default:
			objs = append(objs, obj)
		}
	}
	return objs, errors.Join(missing...), nil
}

// listOptions select what a list, or a watch, reads: the namespace, the
// label of -x, and -l.
func (o *GetOptions) listOptions() []client.ListOption {
	var opts []client.ListOption
	if !o.AllNamespaces {
		opts = append(opts, client.InNamespace(o.Namespace))
	}
	sel := o.selector
	if sel == nil {
		sel = labels.Everything()
	}
	if o.OperatorID != "" {
		req, err := labels.NewRequirement(camelv1.OperatorIDLabel, selection.Equals, []string{o.OperatorID})
		if err == nil {
			sel = sel.Add(*req)
		}
	}
	if !sel.Empty() {
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	if o.FieldSelector != "" {
		if fs, err := fields.ParseSelector(o.FieldSelector); err == nil {
			opts = append(opts, client.MatchingFieldsSelector{Selector: fs})
		}
	}
	return opts
}

// watch prints a row, or the object in the -o format, for each change of
// the listed resources, until ctx ends: the table's header was printed
// with the list.
func (o *GetOptions) watch(ctx context.Context) error {
	w, err := o.Cluster.Watch.Watch(ctx, o.resource.newList(), o.listOptions()...)
	if err != nil {
		return fmt.Errorf("watching %s: %w", o.resource.plural, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, open := <-w.ResultChan():
			if !open {
				return nil
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("watching %s: %v", o.resource.plural, apierrors.FromObject(ev.Object))
			}
			obj, ok := ev.Object.(client.Object)
			if !ok || !o.matches(obj) {
				continue
			}
			if err := o.printChange(obj); err != nil {
				return err
			}
		}
	}
}

// matches applies the filters the API server cannot. They are the
// annotation of -x (the label selected on the server; the annotation,
// which the label mirrors, decides while a move is being mirrored), and
// --unassigned.
func (o *GetOptions) matches(obj client.Object) bool {
	switch {
	case o.OperatorID != "":
		return ownership.AssignedID(obj.GetAnnotations()) == o.OperatorID
	case o.Unassigned:
		return ownership.AssignedID(obj.GetAnnotations()) == ""
	}
	return true
}

// printChange prints one watched object: a table row without its header,
// or the object in the -o format.
func (o *GetOptions) printChange(obj client.Object) error {
	switch o.Output {
	case cmdutil.OutputTable, cmdutil.OutputWide:
		return writeTable(o.Out, o.resource, []client.Object{obj}, tableOptions{
			wide: o.Output == cmdutil.OutputWide, allNamespaces: o.AllNamespaces, noHeaders: true, now: o.now(),
			labelColumns: o.LabelColumns, showLabels: o.ShowLabels,
		}, o.scheme)
	default:
		return cmdutil.PrintObjects(o.Out, o.Output, o.scheme, []client.Object{obj}, true)
	}
}

// registeredOperators lists the IntegrationOperators, by id: the one
// extra call of --orphaned.
func (o *GetOptions) registeredOperators(ctx context.Context) (map[string]*camelv1alpha1.IntegrationOperator, error) {
	list := &camelv1alpha1.IntegrationOperatorList{}
	if err := o.Cluster.Watch.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing the registered operators: %w", err)
	}
	byID := make(map[string]*camelv1alpha1.IntegrationOperator, len(list.Items))
	for i := range list.Items {
		byID[list.Items[i].Name] = &list.Items[i]
	}
	return byID, nil
}

func (o *GetOptions) print(objs []client.Object, reasons map[client.ObjectKey]string) error {
	if len(objs) == 0 && o.Output != cmdutil.OutputYAML && o.Output != cmdutil.OutputJSON {
		fmt.Fprintln(o.ErrOut, cmdutil.NoResources(o.Namespace, o.AllNamespaces))
		return nil
	}
	switch o.Output {
	case cmdutil.OutputTable, cmdutil.OutputWide:
		return writeTable(o.Out, o.resource, objs, tableOptions{
			wide: o.Output == cmdutil.OutputWide, allNamespaces: o.AllNamespaces, noHeaders: o.NoHeaders,
			orphaned: o.Orphaned, reasons: reasons, now: o.now(),
			labelColumns: o.LabelColumns, showLabels: o.ShowLabels,
		}, o.scheme)
	default:
		return cmdutil.PrintObjects(o.Out, o.Output, o.scheme, objs, len(o.names) == 1)
	}
}

// orphanReason says why a resource of namespace assigned to the operator
// id is an orphan, or returns "" when it is not one. It applies the rule
// the operators apply (ownership.Orphaned): a resource is not an orphan
// when it names no operator, or its operator is registered, live and
// serves namespace.
func orphanReason(id, namespace string, operators map[string]*camelv1alpha1.IntegrationOperator, now time.Time) string {
	if id == "" {
		return ""
	}
	reason, _ := ownership.Orphaned(id, namespace, operators[id], now)
	return reason
}

// orphanReasons decides, for each object, why it is an orphan ("" for
// the ones that are not).
func orphanReasons(objs []client.Object, operators map[string]*camelv1alpha1.IntegrationOperator, now time.Time) map[client.ObjectKey]string {
	reasons := make(map[client.ObjectKey]string, len(objs))
	for _, obj := range objs {
		reasons[client.ObjectKeyFromObject(obj)] = orphanReason(ownership.AssignedID(obj.GetAnnotations()), obj.GetNamespace(), operators, now)
	}
	return reasons
}

// resourceType is a kind of resource `caravan get` lists.
type resourceType struct {
	// plural is the resource's name in the API; aliases are the other
	// names it is asked for by.
	plural    string
	aliases   []string
	newObject func() client.Object
	newList   func() client.ObjectList
}

// resourceTypes are the types `caravan get` lists, integrations first.
func resourceTypes() []resourceType {
	return []resourceType{{
		plural: "integrations", aliases: []string{"integration", "it"},
		newObject: func() client.Object { return &camelv1.Integration{} },
		newList:   func() client.ObjectList { return &camelv1.IntegrationList{} },
	}, {
		plural: "pipes", aliases: []string{"pipe", "pp"},
		newObject: func() client.Object { return &camelv1.Pipe{} },
		newList:   func() client.ObjectList { return &camelv1.PipeList{} },
	}, {
		plural: "kameletbindings", aliases: []string{"kameletbinding", "klb"},
		newObject: func() client.Object { return &camelv1alpha1.KameletBinding{} },
		newList:   func() client.ObjectList { return &camelv1alpha1.KameletBindingList{} },
	}, {
		plural: "kamelets", aliases: []string{"kamelet", "kl"},
		newObject: func() client.Object { return &camelv1.Kamelet{} },
		newList:   func() client.ObjectList { return &camelv1.KameletList{} },
	}, {
		plural: "integrationkits", aliases: []string{"integrationkit", "kits", "kit", "ik"},
		newObject: func() client.Object { return &camelv1.IntegrationKit{} },
		newList:   func() client.ObjectList { return &camelv1.IntegrationKitList{} },
	}, {
		plural: "builds", aliases: []string{"build", "ikb"},
		newObject: func() client.Object { return &camelv1.Build{} },
		newList:   func() client.ObjectList { return &camelv1.BuildList{} },
	}, {
		plural: "integrationplatforms", aliases: []string{"integrationplatform", "platforms", "platform", "itp"},
		newObject: func() client.Object { return &camelv1.IntegrationPlatform{} },
		newList:   func() client.ObjectList { return &camelv1.IntegrationPlatformList{} },
	}}
}

// lookupResource finds a type by its plural, an alias, or either with the
// .camel.apache.org suffix, in any case.
func lookupResource(name string) (resourceType, error) {
	n := strings.TrimSuffix(strings.ToLower(name), "."+camelv1.GroupVersion.Group)
	var known []string
	for _, rt := range resourceTypes() {
		if n == rt.plural || slices.Contains(rt.aliases, n) {
			return rt, nil
		}
		known = append(known, fmt.Sprintf("%s (%s)", rt.plural, strings.Join(rt.aliases, ", ")))
	}
	return resourceType{}, fmt.Errorf("unknown resource type %q: use one of %s", name, strings.Join(known, "; "))
}

// kitImage is the image the kit observed, else the external image it names.
func kitImage(k *camelv1.IntegrationKit) string {
	if k.Status.Image != "" {
		return k.Status.Image
	}
	return k.Spec.Image
}

// keep returns the objects for which ok holds.
func keep(objs []client.Object, ok func(client.Object) bool) []client.Object {
	return slices.DeleteFunc(objs, func(obj client.Object) bool { return !ok(obj) })
}

// sortObjects orders objects by namespace, then name.
func sortObjects(objs []client.Object) {
	slices.SortStableFunc(objs, func(a, b client.Object) int {
		if c := strings.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
}

// sortByField sorts objs by the value of a JSONPath field, with kubectl's sorter.
func sortByField(objs []client.Object, sortBy string, scheme *runtime.Scheme) ([]client.Object, error) {
	items := make([]runtime.Object, len(objs))
	for i, obj := range objs {
		u, err := cmdutil.ToUnstructured(obj, scheme)
		if err != nil {
			return nil, err
		}
		items[i] = u
	}
	sorter := kubectlget.NewRuntimeSorter(items, sortBy)
	if err := sorter.Sort(); err != nil {
		return nil, fmt.Errorf("--sort-by %s: %w", sortBy, err)
	}
	sorted := make([]client.Object, len(objs))
	for i := range objs {
		sorted[i] = objs[sorter.OriginalPosition(i)]
	}
	return sorted, nil
}

// CompleteGetArgs completes the TYPE of `caravan get`, then the names of
// that type in the namespace.
func CompleteGetArgs(kube *cmdutil.KubeFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			var types []cobra.Completion
			for _, rt := range resourceTypes() {
				types = append(types, rt.plural)
			}
			return types, cobra.ShellCompDirectiveNoFileComp
		}
		rt, err := lookupResource(args[0])
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return cmdutil.CompleteNames(cmd.Context(), kube, rt.newList(), true), cobra.ShellCompDirectiveNoFileComp
	}
}
