package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/catalog"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/cli/observecmd"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/inspect"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/trait"
)

// RunOptions are the options of `caravan run`.
type RunOptions struct {
	cmdutil.Cluster

	Files        []string
	Name         string
	OperatorID   string
	Dependencies []string
	// Repositories are Maven repositories of the kit's build, in Camel K's form.
	Repositories []string
	Traits       []string
	Properties   []string
	// BuildProperties are --build-property KEY=VALUE or file:PATH entries.
	BuildProperties []string
	Image           string
	RuntimeProvider string
	Replicas        int32
	// ServiceAccount is the service account the integration's pods run as.
	ServiceAccount string
	// Kit pins the IntegrationKit, of the integration's namespace, to run on.
	Kit string
	// PodTemplate is kamel's --pod-template: a file, or inline YAML or JSON, of a pod spec
	// merged into the integration's pods (spec.template.spec).
	PodTemplate string
	Wait        bool
	// Logs follows the integration's logs once it is applied (and, with Wait, runs).
	Logs bool
	// Dev is kamel's --dev: wait, follow the logs, and delete the integration on interrupt.
	Dev     bool
	Timeout time.Duration
	Force   bool
	DryRun  cmdutil.DryRun
	Output  string
	// DontRunAfterBuild stops the integration at Build Complete.
	DontRunAfterBuild bool
	Configs           []string
	Resources         []string
	Env               []string
	Volumes           []string
	Labels            []string
	Annotations       []string

	// Set by the command and Complete. flags are every flag of the command, localFlags
	// run's own; modelines set them as the command line does.
	flags       *pflag.FlagSet
	localFlags  *pflag.FlagSet
	replicasSet bool
	integration *camelv1.Integration
	now         func() time.Time

	genericiooptions.IOStreams
}

// NewCmdRun builds `caravan run`, which runs route files as an Integration, as kamel run.
func NewCmdRun(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &RunOptions{Cluster: cmdutil.Cluster{Kube: kube}, Timeout: 5 * time.Minute, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "run [FILE...]",
		Short:   "Create or update an Integration from source and flow files, or from a pre-built image",
		Long:    runLong,
		Example: runExample,
		RunE:    o.runE,
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// runLong is the help text of `caravan run`.
const runLong = `Create or update an Integration from files of Camel routes.

A .yaml or .yml file that holds a list of routes goes into spec.flows; any other
YAML file, and .java and .xml files, become sources: the runtime loads YAML, XML
and Java routes (Camel K's groovy, js, jsh and kts sources are refused).
The name defaults to the first file's name, in lowercase words joined by '-'.
A file may be an http(s) URL, fetched first and named by its last path element.

Comment lines such as "// camel-k: dependency=camel:http" ("# camel-k:" in YAML,
"<!-- camel-k: ... -->" in XML), on any line of a file, are modelines: their options
are applied as flags, as kamel run does. Lists (-d, -p, -t, --config, ...) add to the
command line's; a flag the command line sets, or a -p/-t key it gives, wins. An
option run does not take is refused.

Without files, --image runs a pre-built image that holds its routes (a
sourceless integration): no kit is built and the image's own entrypoint runs.
The name then defaults to the image's last path element.

The integration is applied with the field manager "caravan": fields others set
(a kubectl scale, an annotation) are kept. With -x/--operator-id it is assigned
to that operator, which must be registered (checked first, unless --force);
without it the annotation is left as it is, and a new integration goes to the
default operator.`

// runExample holds the examples of `caravan run`.
const runExample = `  # Run a YAML DSL route on a pre-built image, with the default operator
  caravan run routes.yaml --image quay.io/me/camel-app:1.0

  # Run an application built and packaged elsewhere (its routes are in the image)
  caravan run --image quay.io/me/orders:2.3 -x tenant-a

  # Run a Java route on the operator tenant-a and wait until it runs
  caravan run MyRoute.java -x tenant-a --wait

  # Run a route file served over HTTP(S), as kamel does
  caravan run https://example.com/routes/timer.yaml

  # Run a Java route whose "// camel-k: dependency=..." modelines add its dependencies
  caravan run Lang3.java

  # Set traits, properties and dependencies
  caravan run routes.yaml -t container.port=8080 -t service.enabled=true -p greeting=hello -d camel:http

  # Mount a ConfigMap of properties and one of data, set a variable, label it
  caravan run routes.yaml --config configmap:app-config --resource configmap:data@/data -e TZ=UTC --label team=orders

  # Develop a route: run it, follow its log, and delete it on Ctrl-C
  caravan run routes.yaml --dev

  # Print the Integration instead of applying it (no cluster needed)
  caravan run routes.yaml -x tenant-a -o yaml`

// runE fetches the URL arguments into a temporary directory and runs the command on the files.
func (o *RunOptions) runE(cmd *cobra.Command, args []string) error {
	var tmp string
	defer func() {
		if tmp != "" {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := refuseRepeatedFiles(args); err != nil {
		return command.WithExitCode(command.ExitUsage, err)
	}
	files, err := fetchURLSources(cmd.Context(), args, func() (string, error) {
		if tmp == "" {
			var err error
			tmp, err = os.MkdirTemp("", "caravan-run-")
			return tmp, err
		}
		return tmp, nil
	})
	if err != nil {
		return err
	}
	o.Files = files
	o.flags, o.localFlags = cmd.Flags(), cmd.LocalFlags()
	return cmdutil.Run(cmd.Context(), o)
}

// AddFlags registers run's flags on f.
func (o *RunOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Name, "name", "", "name of the integration (default: from the first file's name)")
	f.StringVarP(&o.OperatorID, "operator-id", "x", "", "assign the integration to this operator")
	f.StringArrayVarP(&o.Dependencies, "dependency", "d", nil, "a dependency, such as camel:http or mvn:org.example:lib:1.0 (repeatable)")
	f.StringArrayVar(&o.Repositories, "maven-repository", nil, "a Maven repository the kit's build looks up after the platform's, as Camel K writes one: "+
		maven.RepositoryForm+" (repeatable)")
	f.StringArrayVarP(&o.Traits, "trait", "t", nil, "a trait setting TRAIT.KEY=VALUE, such as container.port=8080; [a,b] is a list, a repeated key adds to a list (repeatable)")
	f.StringArrayVar(&o.BuildProperties, "build-property", nil, "a property KEY=VALUE of the kit's build, or file:PATH of a .properties file of them, read by Java's rules: "+
		"Maven gets each as -DKEY=VALUE (the builder trait's properties; repeatable)")
	f.StringArrayVarP(&o.Properties, "property", "p", nil, "a Camel property KEY=VALUE (the camel trait's properties), file:PATH of a .properties file, read by Java's rules, or configmap:NAME[/KEY] or secret:NAME[/KEY] whose entries are properties (repeatable)")
	f.StringVar(&o.Image, "image", "", "run this pre-built image, without a kit build (the trait container.image)")
	f.StringVar(&o.RuntimeProvider, "runtime-provider", "", "the runtime the kit holds: main (camel-main) or quarkus (Camel Quarkus; plain-quarkus too) (the trait camel.runtimeProvider)")
	f.Int32Var(&o.Replicas, "replicas", 0, "number of pods")
	f.StringVar(&o.ServiceAccount, "service-account", "", "the service account the integration's pods run as (spec.serviceAccountName)")
	f.StringVar(&o.PodTemplate, "pod-template", "", "a file, or inline YAML or JSON, of a pod spec (containers, initContainers, volumes, ...) merged into the integration's pods, as kamel's")
	f.StringVarP(&o.Kit, "kit", "k", "", "run on this IntegrationKit of the namespace instead of one built for the integration (spec.integrationKit)")
	f.BoolVarP(&o.Wait, "wait", "w", false, "wait until the integration runs (with --dont-run-after-build: until it is built), printing its phases; fail if it reaches Error")
	f.BoolVar(&o.Logs, "logs", false, "follow the integration's logs once it is applied, until interrupted")
	f.BoolVar(&o.Dev, "dev", false, "wait until the integration runs, follow its logs, and delete it when interrupted (Ctrl-C), as kamel run --dev")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long --wait waits")
	f.BoolVar(&o.Force, "force", false, "assign the integration to --operator-id even if that operator is not registered")
	cmdutil.AddDryRunFlag(f, &o.DryRun, "client: print what would be applied, contacting no cluster; server: send it with dryRun=All, so admission (the operator's use check) runs and nothing is stored")
	f.StringVarP(&o.Output, "output", "o", "", "print the integration as yaml or json instead of applying it, as kamel run -o does (no cluster needed)")
	f.StringArrayVar(&o.Configs, "config", nil, "configuration the runtime reads: configmap:NAME[/KEY] or secret:NAME[/KEY], "+
		"mounted under /etc/camel/conf.d (trait mount.configs), or file:PATH of a .properties file, read by Java's rules, into the camel trait's properties (repeatable)")
	f.StringArrayVar(&o.Resources, "resource", nil, "a file the routes read: configmap:NAME[/KEY][@PATH] or secret:NAME[/KEY][@PATH], "+
		"mounted under /etc/camel/resources.d or at PATH (trait mount.resources; repeatable)")
	f.StringArrayVarP(&o.Env, "env", "e", nil, "an environment variable NAME=VALUE of the integration's container (trait environment.vars; repeatable)")
	f.StringArrayVarP(&o.Volumes, "volume", "v", nil, "a PersistentVolumeClaim to mount, CLAIM:PATH (trait mount.volumes; repeatable)")
	f.StringArrayVar(&o.Labels, "label", nil, "a label KEY=VALUE of the Integration (repeatable)")
	f.StringArrayVar(&o.Annotations, "annotation", nil, "an annotation KEY=VALUE of the Integration (repeatable)")
	f.BoolVar(&o.DontRunAfterBuild, "dont-run-after-build", false,
		"build the integration and stop at phase Build Complete, without deploying it (annotation "+
			camelv1.DontRunAfterBuildAnnotation+"); deploy it later with caravan deploy")
}

// Preamble asks for nothing before Complete: a modeline may set the namespace, which Complete
// reads once the modelines are applied, and Run connects once the input is checked, and not for
// a client-side dry run.
func (o *RunOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, 0
}

// Complete applies the files' modelines to the flags, then reads the namespace and builds the
// Integration from the files and flags. A file or flag that cannot be read is an error here,
// before anything is sent to the cluster.
func (o *RunOptions) Complete() error {
	if err := o.applyModelines(); err != nil {
		return command.WithExitCode(command.ExitUsage, err)
	}
	if o.flags != nil {
		o.replicasSet = o.flags.Changed("replicas")
	}
	if err := o.Connect(cmdutil.NeedNamespace); err != nil {
		return err
	}
	return command.WithExitCode(command.ExitUsage, o.build())
}

// build makes the Integration from the files and flags; its errors are the user's input.
func (o *RunOptions) build() error {
	ns := o.Namespace
	if len(o.Files) == 0 && o.Image == "" {
		return errors.New("give the files of the routes to run, or --image to run a pre-built image that holds them")
	}
	if o.Name == "" && len(o.Files) > 0 {
		o.Name = nameFromFile(o.Files[0])
	}
	if o.Name == "" {
		if o.Name = nameFromImage(o.Image); o.Name == "" {
			return fmt.Errorf("cannot make an integration name from the image %q: set one with --name", o.Image)
		}
	}
	spec, err := o.spec()
	if err != nil {
		return err
	}
	o.integration = &camelv1.Integration{
		TypeMeta:   metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: "Integration"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: ns},
		Spec:       spec,
	}
	if err := o.setMetadata(); err != nil {
		return err
	}
	if o.OperatorID != "" {
		metav1.SetMetaDataAnnotation(&o.integration.ObjectMeta, camelv1.OperatorIDAnnotation, o.OperatorID)
	}
	if o.DontRunAfterBuild {
		metav1.SetMetaDataAnnotation(&o.integration.ObjectMeta, camelv1.DontRunAfterBuildAnnotation, "true")
	}
	return nil
}

// podTemplate reads a pod spec, from the file src names or from src itself, as Camel K's pod
// template: {"spec": <the pod spec>}. A field that no pod spec has is an error.
func podTemplate(src string) (*camelv1.RawObject, error) {
	data := []byte(src)
	if st, err := os.Stat(src); err == nil && !st.IsDir() {
		if data, err = os.ReadFile(src); err != nil {
			return nil, err
		}
	}
	raw, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("neither a file nor YAML or JSON: %w", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil || probe == nil {
		return nil, fmt.Errorf("want a pod spec, an object of containers, volumes, ...; got %s", strings.TrimSpace(string(data)))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&corev1.PodSpec{}); err != nil {
		return nil, fmt.Errorf("not a pod spec: %w", err)
	}
	out, err := json.Marshal(map[string]json.RawMessage{"spec": raw})
	if err != nil {
		return nil, err
	}
	return &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: out}}, nil
}

func (o *RunOptions) spec() (camelv1.IntegrationSpec, error) {
	var spec camelv1.IntegrationSpec
	sources, flows, err := loadRunFiles(o.Files)
	if err != nil {
		return spec, err
	}
	spec.Sources, spec.Flows = sources, flows
	spec.ServiceAccountName = o.ServiceAccount
	if o.PodTemplate != "" {
		tpl, err := podTemplate(o.PodTemplate)
		if err != nil {
			return spec, fmt.Errorf("--pod-template: %w", err)
		}
		spec.Template = tpl
	}
	if o.Kit != "" {
		spec.IntegrationKit = &corev1.ObjectReference{APIVersion: camelv1.GroupVersion.String(), Kind: "IntegrationKit", Name: o.Kit}
	}
	for _, d := range o.Dependencies {
		if strings.TrimSpace(d) == "" {
			return spec, errors.New("-d/--dependency: a dependency is empty")
		}
		spec.Dependencies = append(spec.Dependencies, d)
	}
	spec.Repositories = append(spec.Repositories, o.Repositories...)
	fromFiles, single, err := expandPropertyFiles("-p", o.Properties, camelEntry)
	if err != nil {
		return spec, err
	}
	var configs []string
	for _, c := range o.Configs {
		if path, ok := strings.CutPrefix(c, "file:"); ok {
			props, err := readPropertiesFile("--config", path, camelEntry)
			if err != nil {
				return spec, err
			}
			fromFiles = append(fromFiles, props...)
			continue
		}
		configs = append(configs, c)
	}
	properties := withPrecedence(fromFiles, single, trait.PropertyKey)
	buildFromFiles, buildSingle, err := expandPropertyFiles("--build-property", o.BuildProperties, mavenEntry)
	if err != nil {
		return spec, err
	}
	for _, r := range o.Resources {
		if strings.HasPrefix(r, "file:") {
			return spec, fmt.Errorf("--resource %s: a file is not uploaded; put it in a ConfigMap "+
				"(kubectl create configmap NAME --from-file=PATH) and give --resource configmap:NAME", r)
		}
	}
	spec.Traits, err = trait.FromFlags(trait.Flags{Settings: o.Traits, Properties: properties, Image: o.Image, RuntimeProvider: o.RuntimeProvider,
		BuildProperties: withPrecedence(buildFromFiles, buildSingle, mavenKey),
		Configs:         configs, Resources: o.Resources, Volumes: o.Volumes, Env: o.Env})
	if err != nil {
		return spec, err
	}
	if o.replicasSet {
		spec.Replicas = &o.Replicas
	}
	return spec, nil
}

// expandPropertyFiles splits a properties flag's values into the entries of its file:PATH
// values, each property written by entry, and its other values.
func expandPropertyFiles(flag string, properties []string, entry propertyEntry) (fromFiles, single []string, err error) {
	for _, p := range properties {
		path, ok := strings.CutPrefix(p, "file:")
		if !ok {
			single = append(single, p)
			continue
		}
		props, err := readPropertiesFile(flag, path, entry)
		if err != nil {
			return nil, nil, err
		}
		fromFiles = append(fromFiles, props...)
	}
	return fromFiles, single, nil
}

// withPrecedence merges properties as kamel does: a single -p KEY=VALUE wins over the same key
// of a file, whatever the order of the flags. A key set twice keeps its last value. key reads
// an entry's key.
func withPrecedence(fromFiles, single []string, key func(entry string) string) []string {
	var out, keys []string
	for _, p := range slices.Concat(fromFiles, single) {
		k := key(p)
		if i := slices.Index(keys, k); i >= 0 && k != "" {
			out, keys = slices.Delete(out, i, i+1), slices.Delete(keys, i, i+1)
		}
		out, keys = append(out, p), append(keys, k)
	}
	return out
}

// propertyEntry writes a property of a .properties file as the entry of a trait's list.
type propertyEntry func(trait.Property) (string, error)

// camelEntry writes a property as a camel.properties entry, a properties line the runtime reads back.
func camelEntry(p trait.Property) (string, error) { return p.Entry(), nil }

// mavenEntry writes a property as a builder.properties entry, KEY=VALUE as Maven's -D takes it,
// refusing a key that Maven would cut at its '='.
func mavenEntry(p trait.Property) (string, error) {
	if strings.Contains(p.Key, "=") {
		return "", fmt.Errorf("the key %q holds '=', which Maven's -DKEY=VALUE cannot pass", p.Key)
	}
	return p.Key + "=" + p.Value, nil
}

// mavenKey is the key of a builder.properties entry: the text before its first '='.
func mavenKey(entry string) string {
	k, _, _ := strings.Cut(entry, "=")
	return strings.TrimSpace(k)
}

// readPropertiesFile reads a .properties file given to flag, by Java's rules, into entries.
func readPropertiesFile(flag, path string, entry propertyEntry) ([]string, error) {
	if filepath.Ext(path) != ".properties" {
		return nil, fmt.Errorf("%s file:%s: only a .properties file is read into the camel trait's properties; "+
			"mount other files from a ConfigMap with --resource", flag, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s file:%s: %w", flag, path, err)
	}
	props, err := trait.ParseProperties(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s file:%s: %w", flag, path, err)
	}
	out := make([]string, 0, len(props))
	for _, p := range props {
		e, err := entry(p)
		if err != nil {
			return nil, fmt.Errorf("%s file:%s: %w", flag, path, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// setMetadata sets the --label and --annotation flags on the integration,
// refusing a key or value the API server would, and the operator id,
// which -x sets.
func (o *RunOptions) setMetadata() error {
	return setMetadata(&o.integration.ObjectMeta, o.Labels, o.Annotations)
}

// setMetadata sets the --label and --annotation entries, KEY=VALUE, on meta; the operator id is
// refused there, as -x sets it.
func setMetadata(meta *metav1.ObjectMeta, labels, annotations []string) error {
	set := func(flag string, entries []string, check func(k, v string) []string, put func(k, v string)) error {
		for _, e := range entries {
			k, v, ok := strings.Cut(e, "=")
			if !ok {
				return fmt.Errorf("%s %s: must be KEY=VALUE", flag, e)
			}
			if k == camelv1.OperatorIDAnnotation {
				return fmt.Errorf("%s %s: the operator id is set with -x/--operator-id, and mirrored into the label by the cluster", flag, e)
			}
			if errs := check(k, v); len(errs) > 0 {
				return fmt.Errorf("%s %s: %s", flag, e, strings.Join(errs, "; "))
			}
			put(k, v)
		}
		return nil
	}
	labelCheck := func(k, v string) []string {
		return append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...)
	}
	if err := set("--label", labels, labelCheck, func(k, v string) { metav1.SetMetaDataLabel(meta, k, v) }); err != nil {
		return err
	}
	annotationCheck := func(k, _ string) []string { return validation.IsQualifiedName(k) }
	return set("--annotation", annotations, annotationCheck, func(k, v string) { metav1.SetMetaDataAnnotation(meta, k, v) })
}

// validateBuildInputs checks what goes into a kit's build, with the rules the operator applies.
func (o *RunOptions) validateBuildInputs() error {
	for _, d := range o.Dependencies {
		// The builder reads each dependency with this same rule.
		if _, err := runtime.ParseDependency(d); err != nil {
			return fmt.Errorf("-d %s: %w", d, err)
		}
	}
	if o.Image != "" && len(o.Dependencies) > 0 {
		return errors.New("-d/--dependency cannot be used with --image: a pre-built image is run as it is, so it must hold its dependencies")
	}
	for _, r := range o.Repositories {
		// The operator refuses the repository with this same rule (InvalidRepository).
		if _, err := maven.ParseRepository(r); err != nil {
			return fmt.Errorf("--maven-repository: %w", err)
		}
	}
	if (o.Image != "" || o.Kit != "") && len(o.Repositories) > 0 {
		return errors.New("--maven-repository is for a kit's build: it cannot be used with --image or -k/--kit, which build nothing")
	}
	return nil
}

// Validate checks the flags.
func (o *RunOptions) Validate() error {
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("invalid integration name %q (set one with --name): %s", o.Name, strings.Join(errs, "; "))
	}
	if o.OperatorID != "" {
		if err := cmdutil.ValidateOperatorIDFlag("-x/--operator-id", o.OperatorID); err != nil {
			return err
		}
	} else if o.flags != nil && o.flags.Changed("operator-id") {
		return errors.New("cannot use an empty operator id: give -x ID, or leave -x out to keep the assignment as it is")
	}
	if o.Kit != "" {
		if errs := validation.IsDNS1123Subdomain(o.Kit); len(errs) > 0 {
			return fmt.Errorf("-k/--kit %q: %s", o.Kit, strings.Join(errs, "; "))
		}
		if o.Image != "" || len(o.Dependencies) > 0 {
			return errors.New("-k/--kit runs an existing kit: it cannot be used with --image or -d/--dependency")
		}
	}
	if o.ServiceAccount != "" {
		if errs := validation.IsDNS1123Subdomain(o.ServiceAccount); len(errs) > 0 {
			return fmt.Errorf("--service-account %q: %s", o.ServiceAccount, strings.Join(errs, "; "))
		}
	}
	if o.Image != "" {
		// The operator refuses the image with this same rule (InvalidImage).
		if err := image.ValidateReference(o.Image); err != nil {
			return fmt.Errorf("--image: %w", err)
		}
	}
	if err := o.validateBuildInputs(); err != nil {
		return err
	}
	if o.Force && o.OperatorID == "" {
		return errors.New("--force only applies with -x/--operator-id")
	}
	if o.replicasSet && o.Replicas < 0 {
		return fmt.Errorf("--replicas must be 0 or more, got %d", o.Replicas)
	}
	if (o.Logs || o.Dev) && (o.DryRun.Any() || o.Output != "") {
		return errors.New("--logs and --dev follow a running integration: they cannot be used with --dry-run or -o")
	}
	if o.Dev && o.DontRunAfterBuild {
		return errors.New("--dev runs the integration: it cannot be used with --dont-run-after-build")
	}
	if o.Wait && (o.DryRun.Any() || o.Output != "") {
		return errors.New("--wait cannot be used with --dry-run or -o, which print the integration without applying it")
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", o.Timeout)
	}
	return cmdutil.ValidateOutputFormat(o.Output)
}

// Run applies the integration and, with --wait, waits until it runs. It warns first of what the
// traits set that takes no effect on Caravan.
func (o *RunOptions) Run(ctx context.Context) error {
	unheeded := trait.Check(o.integration.Spec.Traits)
	if o.DryRun.Client() || o.Output != "" && !o.DryRun.Server() {
		o.warnUnheeded(unheeded)
		return cmdutil.PrintApplyResult(o.Out, o.integration, o.Output, "integration", "created (dry run)")
	}
	if err := o.Connect(cmdutil.NeedWatch); err != nil {
		return err
	}
	c := o.Watch
	if o.OperatorID != "" && !o.Force {
		reg, err := cmdutil.ReadRegistration(ctx, c, o.OperatorID, o.now(), o.ErrOut)
		if err != nil {
			return err
		}
		if len(unheeded.Quarkus) > 0 && cmdutil.PlatformProvider(ctx, c, reg) == runtime.Quarkus {
			unheeded.Quarkus = nil // the operator builds on Camel Quarkus, which reads them
		}
	}
	o.warnUnheeded(unheeded)
	var opts []client.ApplyOption
	if o.DryRun.Server() {
		opts = append(opts, client.DryRunAll)
	}
	result, applied, err := cmdutil.ApplyAsCaravan(ctx, c, o.integration, o.OperatorID != "", opts...)
	if err != nil {
		return err
	}
	if o.DryRun.Server() {
		result += " (server dry run)"
	}
	if err := cmdutil.PrintApplyResult(o.Out, applied, o.Output, "integration", result); err != nil {
		return err
	}
	if o.Dev {
		defer o.deleteAfterDev(c)
	}
	if o.Wait || o.Dev {
		done := camelv1.IntegrationPhaseRunning
		if o.DontRunAfterBuild {
			done = camelv1.IntegrationPhaseBuildComplete
		}
		if err := waitIntegrationPhase(ctx, c, o.Out, o.Namespace, o.Name, applied.GetGeneration(), done, o.Timeout); err != nil {
			return err
		}
	}
	if !o.Logs && !o.Dev {
		return nil
	}
	logs := &observecmd.LogsOptions{Cluster: o.Cluster, Name: o.Name, Follow: true, Tail: -1, IOStreams: o.IOStreams}
	return cmdutil.Run(ctx, logs)
}

// warnUnheeded warns of what the traits set that takes no effect on Caravan.
func (o *RunOptions) warnUnheeded(u trait.Unheeded) {
	if !u.Empty() {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", u.Message())
	}
}

// deleteAfterDev deletes the integration that --dev ran, when the command ends or is
// interrupted; the command's context may be done, so it has its own.
func (o *RunOptions) deleteAfterDev(c client.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}
	if err := c.Delete(ctx, it); err != nil && !apierrors.IsNotFound(err) {
		fmt.Fprintf(o.ErrOut, "error: deleting integration %s after --dev: %v\n", o.Name, err)
		return
	}
	fmt.Fprintf(o.Out, "integration %q deleted\n", o.Name)
}

// loadRunFiles reads the files: YAML route lists become flows, the rest
// sources named by their base name.
func loadRunFiles(paths []string) ([]camelv1.SourceSpec, []camelv1.RawObject, error) {
	var sources []camelv1.SourceSpec
	var flows []camelv1.RawObject
	seen := map[string]string{}
	for _, path := range paths {
		src, fl, err := loadRunFile(path)
		if err != nil {
			return nil, nil, err
		}
		if src != nil {
			if other, dup := seen[src.Name]; dup {
				return nil, nil, fmt.Errorf("%s and %s have the same file name %s: sources are stored by file name, rename one", other, path, src.Name)
			}
			seen[src.Name] = path
			sources = append(sources, *src)
		}
		flows = append(flows, fl...)
	}
	return sources, flows, nil
}

// loadRunFile reads one file: either a source or flows.
func loadRunFile(path string) (*camelv1.SourceSpec, []camelv1.RawObject, error) {
	lang, ok := render.LanguageOf(path)
	if !ok {
		return nil, nil, fmt.Errorf("%s: unknown file type %q: use one of %s", path, strings.ToLower(filepath.Ext(path)),
			strings.Join(render.Extensions(), ", "))
	}
	if !slices.Contains(render.RunnableLanguages, lang) {
		return nil, nil, fmt.Errorf("%s: %w", path, render.NotRunnable(lang))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil, fmt.Errorf("%s is empty", path)
	}
	if lang == camelv1.LanguageYAML {
		// The operator refuses such routes too (InvalidSource): the runtime would not start them.
		read := camelv1.SourceSpec{Name: filepath.Base(path), Content: string(data), Language: lang}
		if routes, _ := inspect.Integration(catalog.Camel(), &camelv1.IntegrationSpec{Sources: []camelv1.SourceSpec{read}}); routes.KebabCaseError() != nil {
			return nil, nil, routes.KebabCaseError()
		}
		flows, err := yamlFlows(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		if flows != nil {
			return nil, flows, nil
		}
	}
	return &camelv1.SourceSpec{Name: filepath.Base(path), Content: string(data), Language: lang}, nil, nil
}

// yamlFlows returns the routes of a YAML DSL file that is a list of
// objects, or nil when the file is YAML of another shape.
func yamlFlows(data []byte) ([]camelv1.RawObject, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var items []json.RawMessage
	if json.Unmarshal(js, &items) != nil || len(items) == 0 {
		return nil, nil
	}
	flows := make([]camelv1.RawObject, 0, len(items))
	for _, item := range items {
		if len(item) == 0 || item[0] != '{' {
			return nil, nil
		}
		flows = append(flows, camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: item}})
	}
	return flows, nil
}

var (
	acronymBoundary = regexp.MustCompile(`([A-Z]+)([A-Z][a-z])`)
	camelBoundary   = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	notNameChars    = regexp.MustCompile(`[^a-z0-9]+`)
)

// nameFromFile derives an integration name from a file name, as kamel
// does. It drops the extension, splits camel case with '-', lowercases,
// then sanitises into a DNS-1123 label ("MyHTTPRoute.java" is
// my-http-route).
func nameFromFile(path string) string {
	base := filepath.Base(path)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	base = acronymBoundary.ReplaceAllString(base, "${1}-${2}")
	base = camelBoundary.ReplaceAllString(base, "${1}-${2}")
	return sanitizeResourceName(base)
}

// nameFromImage is the last path element of an image reference, without
// its tag or digest, as a resource name.
func nameFromImage(image string) string {
	ref, _, _ := strings.Cut(image, "@")
	ref = ref[strings.LastIndex(ref, "/")+1:]
	ref, _, _ = strings.Cut(ref, ":")
	return sanitizeResourceName(ref)
}

// sanitizeResourceName lowercases s, turns every run of characters other
// than letters and digits into one '-', and cuts it to a DNS-1123 label.
func sanitizeResourceName(s string) string {
	s = strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > validation.DNS1123LabelMaxLength {
		s = strings.TrimRight(s[:validation.DNS1123LabelMaxLength], "-")
	}
	return s
}

// waitIntegrationPhase watches the integration and prints each phase it
// goes through, once its status describes generation and the operator it
// is assigned to. It returns when the phase is done, and fails when it is
// Error (with the Ready condition's message) or after timeout.
func waitIntegrationPhase(ctx context.Context, c client.WithWatch, out io.Writer, ns, name string, generation int64,
	done camelv1.IntegrationPhase, timeout time.Duration) error {
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lw := cmdutil.IntegrationListWatch(c, client.InNamespace(ns),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	var last *camelv1.Integration
	printed := camelv1.IntegrationPhaseNone
	_, err := watchtools.UntilWithSync(waitCtx, lw, &camelv1.Integration{}, nil, func(ev watch.Event) (bool, error) {
		it, ok := ev.Object.(*camelv1.Integration)
		if !ok {
			return false, nil
		}
		if ev.Type == watch.Deleted {
			return false, fmt.Errorf("integration %s was deleted while waiting for it to run", name)
		}
		last = it
		if !statusIsCurrent(it, generation) || it.Status.Phase == printed {
			return false, nil
		}
		printed = it.Status.Phase
		fmt.Fprintf(out, "integration %s: %s\n", name, printed)
		switch printed {
		case done:
			return true, nil
		case camelv1.IntegrationPhaseError:
			return false, command.WithExitCode(command.ExitFailed, fmt.Errorf("integration %s failed: %s", name, cmdutil.ReadyMessage(it)))
		}
		return false, nil
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case wait.Interrupted(err):
		return command.WithExitCode(command.ExitTimeout,
			fmt.Errorf("timed out after %s waiting for integration %s to reach phase %s: %s", timeout, name, done, cmdutil.DescribeWait(last)))
	}
	return err
}

// statusIsCurrent tells whether the status describes the given
// generation, as observed by the operator the integration is assigned to.
func statusIsCurrent(it *camelv1.Integration, generation int64) bool {
	id := it.OperatorID()
	return id != "" && it.Status.Ownership.Owner == id && it.Status.ObservedGeneration >= generation
}
