package runcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/pipe"
	"github.com/caravan-dev/caravan/internal/trait"
)

// Kinds bind creates.
const (
	kindPipe           = "Pipe"
	kindKameletBinding = "KameletBinding"
)

// BindOptions are the options of `caravan bind`.
type BindOptions struct {
	cmdutil.Cluster

	Source     string
	Sink       string
	Steps      []string
	Properties []string
	Name       string
	OperatorID string
	Force      bool
	Kind       string
	// Traits are -t settings of the Integration made from the binding (spec.traits).
	Traits []string
	// ErrorHandler is kamel's --error-handler: none, log or sink:ENDPOINT.
	ErrorHandler string
	Labels       []string
	Annotations  []string
	// ServiceAccount is the service account the binding's integration runs as.
	ServiceAccount string
	DryRun         cmdutil.DryRun
	Output         string

	// Set by Complete.
	binding client.Object
	now     func() time.Time

	genericiooptions.IOStreams
}

// NewCmdBind builds `caravan bind`, which binds a source to a sink as a Pipe.
func NewCmdBind(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &BindOptions{Cluster: cmdutil.Cluster{Kube: kube}, Kind: kindPipe, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "bind SOURCE SINK",
		Short: "Create or update a Pipe that binds a source to a sink",
		Long: `Create or update a Pipe (or a KameletBinding) from a source, optional steps
and a sink. Each endpoint is one of:

  NAME               a Kamelet, such as timer-source
  NAME?KEY=VALUE&... a Kamelet with its properties inline, as kamel takes it
  kamelet:NAME       a Kamelet (also with ?KEY=VALUE&...)
  integration/NAME   an Integration (not as the source)
  SCHEME:...         a Camel endpoint URI, such as log:info

Endpoint properties are set with -p source.KEY=VALUE, -p sink.KEY=VALUE and
-p step-N.KEY=VALUE (N counts the --step flags from 0). The name defaults to
<source>-to-<sink>. As with run, -x/--operator-id assigns the binding to a
registered operator (checked first, unless --force); without it the
assignment is left as it is.`,
		Example: `  # Log a message every second
  caravan bind timer-source log:info -p source.message=hello

  # The same, with the properties inline
  caravan bind 'timer-source?message=hello&period=1000' log-sink

  # Add a step, on the operator tenant-a
  caravan bind timer-source log:info --step insert-header-action -p step-0.name=x -p step-0.value=y -x tenant-a

  # Send to an Integration, as a KameletBinding
  caravan bind timer-source integration/receiver --kind KameletBinding

  # Print the Pipe instead of applying it (no cluster needed)
  caravan bind timer-source log:info -x tenant-a --dry-run -o yaml`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Source, o.Sink = args[0], args[1]
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.Steps, "step", nil, "an intermediate step, with the endpoint syntax (repeatable, in order)")
	f.StringArrayVarP(&o.Properties, "property", "p", nil, "an endpoint property source.KEY=VALUE, sink.KEY=VALUE, error-handler.KEY=VALUE or step-N.KEY=VALUE (repeatable)")
	f.StringVar(&o.Name, "name", "", "name of the binding (default <source>-to-<sink>)")
	f.StringVarP(&o.OperatorID, "operator-id", "x", "", "assign the binding to this operator")
	f.BoolVar(&o.Force, "force", false, "assign the binding to --operator-id even if that operator is not registered")
	f.StringVar(&o.Kind, "kind", o.Kind, "kind to create: Pipe or KameletBinding (camel.apache.org/v1alpha1)")
	f.StringArrayVarP(&o.Traits, "trait", "t", nil, "a trait setting TRAIT.KEY=VALUE of the integration made from the binding (repeatable)")
	f.StringVar(&o.ErrorHandler, "error-handler", "", "what handles a failed message: none, log, or sink:ENDPOINT (a Kamelet or a URI), as kamel bind --error-handler")
	f.StringArrayVar(&o.Labels, "label", nil, "a label KEY=VALUE of the binding (repeatable)")
	f.StringVar(&o.ServiceAccount, "service-account", "", "the service account the binding's integration runs as (spec.serviceAccountName)")
	f.StringArrayVar(&o.Annotations, "annotation", nil, "an annotation KEY=VALUE of the binding (repeatable)")
	cmdutil.AddDryRunFlag(f, &o.DryRun, "client: print what would be applied, contacting no cluster; server: send it with dryRun=All, so admission (the operator's use check) runs and nothing is stored")
	f.StringVarP(&o.Output, "output", "o", "", "print the binding as yaml or json instead of applying it, as kamel bind -o does (no cluster needed)")
	return cmd
}

// Preamble asks for the namespace; Run connects once the input is checked, and not for a
// client-side dry run.
func (o *BindOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace
}

// Complete builds the binding from the arguments and flags, in the preamble's namespace.
func (o *BindOptions) Complete() error {
	return command.WithExitCode(command.ExitUsage, o.build())
}

// build makes the binding from the arguments and flags; its errors are the user's input.
func (o *BindOptions) build() error {
	ns := o.Namespace
	spec, err := bindSpec(o.Source, o.Sink, o.ErrorHandler, o.Steps, o.Properties)
	if err != nil {
		return err
	}
	if o.Name == "" {
		o.Name = sanitizeResourceName(endpointNamePart(spec.Source) + "-to-" + endpointNamePart(spec.Sink))
	}
	meta := metav1.ObjectMeta{Name: o.Name, Namespace: ns}
	if err := setMetadata(&meta, o.Labels, o.Annotations); err != nil {
		return err
	}
	if o.OperatorID != "" {
		metav1.SetMetaDataAnnotation(&meta, camelv1.OperatorIDAnnotation, o.OperatorID)
	}
	if spec.Traits, err = trait.FromFlags(trait.Flags{Settings: o.Traits}); err != nil {
		return err
	}
	// The operator's rules that need no Kamelet refuse the binding here, before it is applied.
	if err := pipe.Check(spec, ns); err != nil {
		return err
	}
	if o.ServiceAccount != "" {
		if errs := validation.IsDNS1123Subdomain(o.ServiceAccount); len(errs) > 0 {
			return fmt.Errorf("--service-account %q: %s", o.ServiceAccount, strings.Join(errs, "; "))
		}
		spec.ServiceAccountName = o.ServiceAccount
	}
	switch strings.ToLower(o.Kind) {
	case strings.ToLower(kindPipe):
		o.binding = &camelv1.Pipe{
			TypeMeta:   metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: kindPipe},
			ObjectMeta: meta, Spec: spec,
		}
	case strings.ToLower(kindKameletBinding):
		o.binding = &camelv1alpha1.KameletBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: camelv1alpha1.GroupVersion.String(), Kind: kindKameletBinding},
			ObjectMeta: meta, Spec: spec,
		}
	default:
		return fmt.Errorf("--kind %q is not supported: use Pipe or KameletBinding", o.Kind)
	}
	return nil
}

// Validate checks the flags.
func (o *BindOptions) Validate() error {
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("invalid binding name %q (set one with --name): %s", o.Name, strings.Join(errs, "; "))
	}
	if o.OperatorID != "" {
		if err := cmdutil.ValidateOperatorIDFlag("-x/--operator-id", o.OperatorID); err != nil {
			return err
		}
	}
	if o.Force && o.OperatorID == "" {
		return errors.New("--force only applies with -x/--operator-id")
	}
	return cmdutil.ValidateOutputFormat(o.Output)
}

// Run applies the binding.
func (o *BindOptions) Run(ctx context.Context) error {
	kind := strings.ToLower(o.binding.GetObjectKind().GroupVersionKind().Kind)
	if o.DryRun.Client() || o.Output != "" && !o.DryRun.Server() {
		// -o alone prints and applies nothing, as kamel bind -o does.
		return cmdutil.PrintApplyResult(o.Out, o.binding, o.Output, kind, "created (dry run)")
	}
	if err := o.Connect(cmdutil.NeedClient); err != nil {
		return err
	}
	c := o.Client
	if o.OperatorID != "" && !o.Force {
		if err := cmdutil.CheckOperatorRegistered(ctx, c, o.OperatorID, o.now(), o.ErrOut); err != nil {
			return err
		}
	}
	var opts []client.ApplyOption
	if o.DryRun.Server() {
		opts = append(opts, client.DryRunAll)
	}
	result, applied, err := cmdutil.ApplyAsCaravan(ctx, c, o.binding, o.OperatorID != "", opts...)
	if err != nil {
		return err
	}
	if o.DryRun.Server() {
		result += " (server dry run)"
	}
	return cmdutil.PrintApplyResult(o.Out, applied, o.Output, kind, result)
}

// bindSpec builds the source, steps and sink, and routes each property
// to its endpoint.
func bindSpec(source, sink, errorHandler string, steps, properties []string) (camelv1.PipeSpec, error) {
	var spec camelv1.PipeSpec
	props, err := endpointProperties(properties, len(steps))
	if err != nil {
		return spec, err
	}
	// parse reads an endpoint and adds its inline properties to those
	// of its -p flags.
	parse := func(s, where, what string) (camelv1.Endpoint, error) {
		e, inline, err := parseEndpoint(s)
		if err != nil {
			return e, fmt.Errorf("%s: %w", what, err)
		}
		for key, value := range inline {
			if _, dup := props[where][key]; dup {
				return e, fmt.Errorf("%s: the property %s is set both inline and with -p %s.%s", what, key, where, key)
			}
			if props[where] == nil {
				props[where] = map[string]string{}
			}
			props[where][key] = value
		}
		return e, nil
	}
	if spec.Source, err = parse(source, "source", "source"); err != nil {
		return spec, err
	}
	if spec.Sink, err = parse(sink, "sink", "sink"); err != nil {
		return spec, err
	}
	for i, s := range steps {
		e, err := parse(s, "step-"+strconv.Itoa(i), fmt.Sprintf("--step %d", i))
		if err != nil {
			return spec, err
		}
		spec.Steps = append(spec.Steps, e)
	}
	set := func(e *camelv1.Endpoint, where string) error {
		if len(props[where]) == 0 {
			return nil
		}
		raw, err := json.Marshal(props[where])
		if err != nil {
			return fmt.Errorf("encoding the properties of %s: %w", where, err)
		}
		e.Properties = &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: raw}}
		return nil
	}
	if err := set(&spec.Source, "source"); err != nil {
		return spec, err
	}
	if err := set(&spec.Sink, "sink"); err != nil {
		return spec, err
	}
	for i := range spec.Steps {
		if err := set(&spec.Steps[i], "step-"+strconv.Itoa(i)); err != nil {
			return spec, err
		}
	}
	spec.ErrorHandler, err = errorHandlerFlag(errorHandler, props[errorHandlerKey])
	return spec, err
}

var uriScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// parseEndpoint reads NAME or kamelet:NAME (a Kamelet), either with its
// properties inline as kamel writes them (NAME?KEY=VALUE&...),
// integration/NAME (an Integration) or a Camel URI. It returns the inline
// properties apart.
func parseEndpoint(s string) (camelv1.Endpoint, map[string]string, error) {
	const syntax = "use a Kamelet name (timer-source, timer-source?message=hi), kamelet:NAME, integration/NAME or a Camel URI (log:info)"
	ref := func(kind, name string) camelv1.Endpoint {
		return camelv1.Endpoint{Ref: &corev1.ObjectReference{Kind: kind, APIVersion: camelv1.GroupVersion.String(), Name: name}}
	}
	kamelet, query, inline := strings.Cut(strings.TrimPrefix(s, "kamelet:"), "?")
	if len(validation.IsDNS1123Label(kamelet)) == 0 {
		if !inline {
			return ref("Kamelet", kamelet), nil, nil
		}
		props, err := inlineProperties(query)
		if err != nil {
			return camelv1.Endpoint{}, nil, fmt.Errorf("%q: %w", s, err)
		}
		return ref("Kamelet", kamelet), props, nil
	}
	if name, ok := strings.CutPrefix(s, "integration/"); ok {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return camelv1.Endpoint{}, nil, fmt.Errorf("%q: invalid integration name: %s", s, strings.Join(errs, "; "))
		}
		return ref("Integration", name), nil, nil
	}
	if strings.Contains(s, ":") {
		if !uriScheme.MatchString(s) {
			return camelv1.Endpoint{}, nil, fmt.Errorf("%q is not a Camel URI: it must start with a component name such as log: (%s)", s, syntax)
		}
		uri := s
		return camelv1.Endpoint{URI: &uri}, nil, nil
	}
	return camelv1.Endpoint{}, nil, fmt.Errorf("%q is not an endpoint: %s", s, syntax)
}

// inlineProperties reads the KEY=VALUE&... of a Kamelet endpoint, values
// URL-encoded as in a Camel URI; a key given twice or without a value is
// refused.
func inlineProperties(query string) (map[string]string, error) {
	props := map[string]string{}
	for pair := range strings.SplitSeq(query, "&") {
		rawKey, rawValue, ok := strings.Cut(pair, "=")
		key, kerr := url.QueryUnescape(rawKey)
		value, verr := url.QueryUnescape(rawValue)
		switch {
		case !ok || key == "":
			return nil, fmt.Errorf("inline property %q must be KEY=VALUE", pair)
		case kerr != nil || verr != nil:
			return nil, fmt.Errorf("inline property %q is not URL-encoded", pair)
		}
		if _, dup := props[key]; dup {
			return nil, fmt.Errorf("inline property %s is set twice", key)
		}
		props[key] = value
	}
	return props, nil
}

// endpointProperties sorts -p ENDPOINT.KEY=VALUE flags by endpoint:
// source, sink or step-N with N below steps.
func endpointProperties(flags []string, steps int) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, f := range flags {
		path, value, ok := strings.Cut(f, "=")
		where, key, dotted := strings.Cut(path, ".")
		if !ok || !dotted || key == "" {
			return nil, fmt.Errorf("-p %s: a property must be source.KEY=VALUE, sink.KEY=VALUE, error-handler.KEY=VALUE or step-N.KEY=VALUE", f)
		}
		if err := checkEndpointName(where, steps); err != nil {
			return nil, fmt.Errorf("-p %s: %w", f, err)
		}
		if _, dup := out[where][key]; dup {
			return nil, fmt.Errorf("-p %s: %s.%s is set twice", f, where, key)
		}
		if out[where] == nil {
			out[where] = map[string]string{}
		}
		out[where][key] = value
	}
	return out, nil
}

func checkEndpointName(where string, steps int) error {
	if where == "source" || where == "sink" || where == errorHandlerKey {
		return nil
	}
	n, isStep := strings.CutPrefix(where, "step-")
	i, err := strconv.Atoi(n)
	switch {
	case !isStep || err != nil || strconv.Itoa(i) != n:
		return fmt.Errorf("%q is not an endpoint: use source, sink, error-handler or step-N", where)
	case steps == 0:
		return fmt.Errorf("there is no step %d: no --step is given", i)
	case i < 0 || i >= steps:
		return fmt.Errorf("there is no step %d: %d --step flags give step-0 to step-%d", i, steps, steps-1)
	}
	return nil
}

// endpointNamePart is what an endpoint contributes to a default name: the
// name of what it refers to, or the scheme of its URI.
func endpointNamePart(e camelv1.Endpoint) string {
	if e.Ref != nil {
		return e.Ref.Name
	}
	if e.URI != nil {
		scheme, _, _ := strings.Cut(*e.URI, ":")
		return scheme
	}
	return ""
}

// errorHandlerKey is the endpoint name of -p error-handler.KEY=VALUE, as in kamel.
const errorHandlerKey = "error-handler"

// errorHandlerFlag is kamel bind's --error-handler as the Pipe's spec.errorHandler: none, log,
// or sink:ENDPOINT, ENDPOINT in the syntax of the source and sink arguments, with the -p
// error-handler properties; "" sets none.
func errorHandlerFlag(v string, flagProps map[string]string) (*camelv1.RawObject, error) {
	kind, endpoint, _ := strings.Cut(v, ":")
	if kind != "sink" && len(flagProps) > 0 {
		return nil, errors.New("-p error-handler.KEY=VALUE sets a property of the endpoint of --error-handler sink:ENDPOINT, which is not given")
	}
	var handler map[string]any
	switch kind {
	case "":
		return nil, nil
	case "none":
		handler = map[string]any{"none": map[string]any{}}
	case "log":
		handler = map[string]any{"log": map[string]any{}}
	case "sink":
		if endpoint == "" {
			return nil, errors.New("--error-handler sink: name the endpoint, as sink:log-sink or sink:log:errors")
		}
		e, props, err := parseEndpoint(endpoint)
		if err != nil {
			return nil, fmt.Errorf("--error-handler %s: %w", v, err)
		}
		for key, value := range flagProps {
			if _, dup := props[key]; dup {
				return nil, fmt.Errorf("--error-handler %s: the property %s is set both inline and with -p error-handler.%s", v, key, key)
			}
			if props == nil {
				props = map[string]string{}
			}
			props[key] = value
		}
		if len(props) > 0 {
			raw, err := json.Marshal(props)
			if err != nil {
				return nil, err
			}
			e.Properties = &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: raw}}
		}
		handler = map[string]any{"sink": map[string]any{"endpoint": e}}
	default:
		return nil, fmt.Errorf("--error-handler %q: use none, log or sink:ENDPOINT", v)
	}
	raw, err := json.Marshal(handler)
	if err != nil {
		return nil, err
	}
	return &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: raw}}, nil
}
