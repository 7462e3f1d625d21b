package observecmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/describe"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// maxEvents is how many of an object's most recent Events describe shows.
const maxEvents = 10

// DescribeOptions are the options of `caravan describe`.
type DescribeOptions struct {
	cmdutil.Cluster
	// args are TYPE NAME.
	args []string

	// Set by Complete.
	kind describeType
	name string

	now func() time.Time
	genericiooptions.IOStreams
}

// NewCmdDescribe builds `caravan describe`, which shows one resource in detail.
func NewCmdDescribe(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DescribeOptions{Cluster: cmdutil.Cluster{Kube: kube}, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "describe TYPE NAME",
		Short: "Show an integration, pipe, kit, platform or operator in detail",
		Long: `Show one resource in detail: who it is assigned to and who owns it, its
phase and conditions, the objects made for it and its recent Events, in
kubectl describe's layout (the events section is kubectl's own).

TYPE is one of:
  integration (it)     with its Deployment, ConfigMaps and Service
  pipe (pp)            with the Integration made from it
  kameletbinding (klb) as a pipe
  kamelet (kl)         its properties and dependencies
  build (ikb)          its image, jars, duration and failure
  kit (ik)
  platform (itp)
  operator (iop)       NAME is the operator id; shows its registration, whether
                       it is live, and how many integrations it owns (one
                       metadata-only list of the integrations labelled with
                       its id, in all namespaces)`,
		Example: `  # Describe an integration of the current namespace
  caravan describe integration timer-to-log

  # Describe the registration of operator tenant-a
  caravan describe operator tenant-a`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeDescribeArgs(kube),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.args = args
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	return cmd
}

// Complete resolves the type, the namespace and the client.
func (o *DescribeOptions) Complete() error {
	var err error
	if o.kind, err = lookupDescribeType(o.args[0]); err != nil {
		return command.WithExitCode(command.ExitUsage, err)
	}
	o.name = o.args[1]
	if !o.kind.namespaced {
		o.Namespace = ""
	}
	return nil
}

// Preamble asks for the namespace, which a cluster-scoped kind leaves out, and a client.
func (o *DescribeOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedClient
}

// Validate checks the name of an operator, which is its id.
func (o *DescribeOptions) Validate() error {
	if o.kind.namespaced {
		return nil
	}
	return ownership.ValidateID(o.name)
}

// Run reads the resource and what belongs to it, and prints the report.
func (o *DescribeOptions) Run(ctx context.Context) error {
	switch o.kind.name {
	case "pipe":
		return o.describePipe(ctx)
	case "kameletbinding":
		return o.describeKameletBinding(ctx)
	case "kamelet":
		return o.describeKamelet(ctx)
	case "build":
		return o.describeBuild(ctx)
	case "kit":
		return o.describeKit(ctx)
	case "platform":
		return o.describePlatform(ctx)
	case "operator":
		return o.describeOperator(ctx)
	default:
		return o.describeIntegration(ctx)
	}
}

// describeType is a kind of resource `caravan describe` reports on.
type describeType struct {
	name       string
	aliases    []string
	namespaced bool
	newList    func() client.ObjectList
}

func describeTypes() []describeType {
	return []describeType{
		{name: "integration", aliases: []string{"integrations", "it"}, namespaced: true,
			newList: func() client.ObjectList { return &camelv1.IntegrationList{} }},
		{name: "pipe", aliases: []string{"pipes", "pp"}, namespaced: true,
			newList: func() client.ObjectList { return &camelv1.PipeList{} }},
		{name: "kameletbinding", aliases: []string{"kameletbindings", "klb"}, namespaced: true,
			newList: func() client.ObjectList { return &camelv1alpha1.KameletBindingList{} }},
		{name: "kamelet", aliases: []string{"kamelets", "kl"}, namespaced: true,
			newList: func() client.ObjectList { return &camelv1.KameletList{} }},
		{name: "build", aliases: []string{"builds", "ikb"}, namespaced: true,
			newList: func() client.ObjectList { return &camelv1.BuildList{} }},
		{name: "kit", aliases: []string{"kits", "ik", "integrationkit", "integrationkits"}, namespaced: true,
			newList: func() client.ObjectList { return &camelv1.IntegrationKitList{} }},
		{name: "platform", aliases: []string{"platforms", "itp", "integrationplatform", "integrationplatforms"}, namespaced: true,
			newList: func() client.ObjectList { return &camelv1.IntegrationPlatformList{} }},
		{name: "operator", aliases: []string{"operators", "iop", "integrationoperator", "integrationoperators"},
			newList: func() client.ObjectList { return &camelv1alpha1.IntegrationOperatorList{} }},
	}
}

func lookupDescribeType(name string) (describeType, error) {
	n := strings.TrimSuffix(strings.ToLower(name), "."+camelv1.GroupVersion.Group)
	var known []string
	for _, dt := range describeTypes() {
		if n == dt.name || slices.Contains(dt.aliases, n) {
			return dt, nil
		}
		known = append(known, dt.name)
	}
	return describeType{}, fmt.Errorf("unknown resource type %q: use one of %s", name, strings.Join(known, ", "))
}

// section sorts the error of reading one part of a report. A part the API
// server refuses (forbidden, say) is shown as unavailable, with its reason,
// rather than failing the whole report; other errors (the cluster is
// unreachable) fail it.
func section(err error) (unavailable error, fatal error) {
	var status apierrors.APIStatus
	if err != nil && errors.As(err, &status) {
		return err, nil
	}
	return nil, err
}

// integrationReport is what `caravan describe integration` shows.
type integrationReport struct {
	it          *camelv1.Integration
	deployments []appsv1.Deployment
	configMaps  []corev1.ConfigMap
	services    []corev1.Service
	// childrenErr says why the children could not be listed.
	childrenErr error
	events      *corev1.EventList
	eventsErr   error
}

func (o *DescribeOptions) describeIntegration(ctx context.Context) error {
	r := &integrationReport{it: &camelv1.Integration{}}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.name}, r.it); err != nil {
		return err
	}
	children := []client.ListOption{client.InNamespace(o.Namespace), client.MatchingLabels{camelv1.IntegrationLabel: o.name}}
	deployments, configMaps, services := &appsv1.DeploymentList{}, &corev1.ConfigMapList{}, &corev1.ServiceList{}
	for _, list := range []client.ObjectList{deployments, configMaps, services} {
		var fatal error
		if r.childrenErr, fatal = section(o.Client.List(ctx, list, children...)); fatal != nil {
			return fatal
		}
		if r.childrenErr != nil {
			break
		}
	}
	r.deployments, r.configMaps, r.services = deployments.Items, configMaps.Items, services.Items
	var err error
	if r.events, r.eventsErr, err = o.events(ctx, r.it, "Integration"); err != nil {
		return err
	}
	return writeIntegrationReport(o.Out, r, o.now())
}

// events lists the Events about obj as kubectl describe finds them (core v1, selected by the API
// server on involvedObject's kind, name and uid), oldest first, at most the maxEvents most recent.
// Events about a cluster-scoped object are looked for in every namespace. The errors are those of
// section.
func (o *DescribeOptions) events(ctx context.Context, obj client.Object, kind string) (*corev1.EventList, error, error) {
	list := &corev1.EventList{}
	opts := []client.ListOption{client.MatchingFields{
		"involvedObject.kind": kind, "involvedObject.name": obj.GetName(), "involvedObject.uid": string(obj.GetUID()),
	}}
	if obj.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(obj.GetNamespace()))
	}
	unavailable, fatal := section(o.Client.List(ctx, list, opts...))
	if unavailable != nil || fatal != nil {
		return nil, unavailable, fatal
	}
	return recentEvents(list, maxEvents), nil, nil
}

// recentEvents sorts events oldest first by when each was last seen, and keeps the n most recent.
// kubectl's sort reads only the core lastTimestamp, which events of the events.k8s.io API lack.
func recentEvents(events *corev1.EventList, n int) *corev1.EventList {
	slices.SortStableFunc(events.Items, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	if len(events.Items) > n {
		events.Items = events.Items[len(events.Items)-n:]
	}
	return events
}

// eventTime is when an Event was last observed.
func eventTime(e corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	default:
		return e.CreationTimestamp.Time
	}
}

func writeIntegrationReport(w io.Writer, r *integrationReport, now time.Time) error {
	it := r.it
	kit := cmdutil.None
	if ref := it.Status.IntegrationKit; ref != nil {
		kit = ref.Name
		if ref.Namespace != "" && ref.Namespace != it.Namespace {
			kit = ref.Namespace + "/" + ref.Name
		}
	}
	fields := []field{
		{"Name", it.Name}, {"Namespace", it.Namespace},
		{"Operator", cmdutil.OperatorOf(it)},
		{"Owner", ownerText(it.Status.Ownership, now)},
	}
	if move := moveText(it, now); move != "" {
		fields = append(fields, field{"Move", move})
	}
	fields = append(fields, []field{
		{"Phase", cmdutil.OrNone(string(it.Status.Phase))},
		{"Digest", cmdutil.OrNone(it.Status.Digest)},
		{"Image", cmdutil.OrNone(it.Status.Image)},
		{"Kit", kit},
		{"Replicas", cmdutil.Int32OrNone(it.Spec.Replicas)},
		{"Created", timeText(it.CreationTimestamp.Time, now)},
	}...)
	children := cmdutil.NewTable("Kind", "Name", "Status", "Age")
	for _, d := range r.deployments {
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		children.Add("Deployment", d.Name, fmt.Sprintf("%d/%d ready", d.Status.ReadyReplicas, want), cmdutil.Age(d.CreationTimestamp.Time, now))
	}
	for _, cm := range r.configMaps {
		children.Add("ConfigMap", cm.Name, fmt.Sprintf("%d keys", len(cm.Data)+len(cm.BinaryData)), cmdutil.Age(cm.CreationTimestamp.Time, now))
	}
	for _, s := range r.services {
		children.Add("Service", s.Name, fmt.Sprintf("%s %s", s.Spec.Type, cmdutil.OrNone(s.Spec.ClusterIP)), cmdutil.Age(s.CreationTimestamp.Time, now))
	}
	return writeReport(w, fields, it.Status.Conditions, &tableSection{"Children", children, r.childrenErr}, r.events, r.eventsErr, now)
}

// moveText tells where a move of the integration to another operator
// stands, or "" when none is in flight (its owner is the operator it is
// assigned to, or it has none yet).
func moveText(it *camelv1.Integration, now time.Time) string {
	o, to := it.Status.Ownership, it.OperatorID()
	if o.Owner == "" || to == "" || o.Owner == to {
		return ""
	}
	if o.ReleasedAt == nil {
		return fmt.Sprintf("to %s: waiting for %s to release it", to, o.Owner)
	}
	return fmt.Sprintf("to %s: released by %s %s ago, waiting for %s to adopt it", to, o.Owner, cmdutil.Age(o.ReleasedAt.Time, now), to)
}

// ownerText shows the owning operator, the epoch and any release.
func ownerText(o camelv1.Ownership, now time.Time) string {
	if o.Owner == "" && o.Epoch == 0 {
		return cmdutil.None
	}
	s := fmt.Sprintf("%s (epoch %d", cmdutil.OrNone(o.Owner), o.Epoch)
	if o.ReleasedAt != nil {
		s += ", released " + cmdutil.Age(o.ReleasedAt.Time, now) + " ago"
	}
	return s + ")"
}

// pipeReport is what `caravan describe pipe` shows.
type pipeReport struct {
	pipe *camelv1.Pipe
	// integration is the Integration made from the Pipe, if any.
	integration *camelv1.Integration
	events      *corev1.EventList
	eventsErr   error
}

func (o *DescribeOptions) describePipe(ctx context.Context) error {
	r := &pipeReport{pipe: &camelv1.Pipe{}}
	key := client.ObjectKey{Namespace: o.Namespace, Name: o.name}
	if err := o.Client.Get(ctx, key, r.pipe); err != nil {
		return err
	}
	it := &camelv1.Integration{}
	err := o.Client.Get(ctx, key, it)
	switch _, fatal := section(err); {
	case fatal != nil:
		return fatal
	case err == nil && madeFromPipe(it, r.pipe):
		r.integration = it
	}
	if r.events, r.eventsErr, err = o.events(ctx, r.pipe, "Pipe"); err != nil {
		return err
	}
	return writePipeReport(o.Out, r, o.now())
}

// describeKameletBinding reports on a KameletBinding as on the Pipe it is the older name of.
func (o *DescribeOptions) describeKameletBinding(ctx context.Context) error {
	b := &camelv1alpha1.KameletBinding{}
	key := client.ObjectKey{Namespace: o.Namespace, Name: o.name}
	if err := o.Client.Get(ctx, key, b); err != nil {
		return err
	}
	r := &pipeReport{pipe: &camelv1.Pipe{ObjectMeta: b.ObjectMeta, Spec: b.Spec, Status: b.Status}}
	it := &camelv1.Integration{}
	err := o.Client.Get(ctx, key, it)
	switch _, fatal := section(err); {
	case fatal != nil:
		return fatal
	case err == nil && metav1.IsControlledBy(it, b):
		r.integration = it
	}
	if r.events, r.eventsErr, err = o.events(ctx, b, "KameletBinding"); err != nil {
		return err
	}
	return writePipeReport(o.Out, r, o.now())
}

// describeKamelet reports on a Kamelet: its properties, dependencies and the operator that validated it.
func (o *DescribeOptions) describeKamelet(ctx context.Context) error {
	k := &camelv1.Kamelet{}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.name}, k); err != nil {
		return err
	}
	events, eventsErr, err := o.events(ctx, k, "Kamelet")
	if err != nil {
		return err
	}
	props := make([]string, 0, len(k.Status.Properties))
	for _, p := range k.Status.Properties {
		props = append(props, p.Name)
	}
	now := o.now()
	fields := []field{
		{"Name", k.Name}, {"Namespace", k.Namespace},
		{"Operator", cmdutil.OperatorOf(k)},
		{"Type", cmdutil.OrNone(k.Labels[camelv1.KameletTypeLabel])},
		{"Phase", cmdutil.OrNone(string(k.Status.Phase))},
		{"Properties", cmdutil.OrNone(strings.Join(props, ", "))},
		{"Dependencies", cmdutil.OrNone(strings.Join(k.Spec.Dependencies, ", "))},
		{"Created", timeText(k.CreationTimestamp.Time, now)},
	}
	return writeReport(o.Out, fields, k.Status.Conditions, nil, events, eventsErr, now)
}

// describeBuild reports on a Build: its image, how long it took, its failure and its jars.
func (o *DescribeOptions) describeBuild(ctx context.Context) error {
	b := &camelv1.Build{}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.name}, b); err != nil {
		return err
	}
	events, eventsErr, err := o.events(ctx, b, "Build")
	if err != nil {
		return err
	}
	now := o.now()
	failure, started := cmdutil.None, cmdutil.None
	if f := b.Status.Failure; f != nil {
		failure = fmt.Sprintf("%s (attempt %d of %d, %s ago)", f.Reason, f.Recovery.Attempt, f.Recovery.AttemptMax, cmdutil.Age(f.Time.Time, now))
	}
	if b.Status.StartedAt != nil {
		started = timeText(b.Status.StartedAt.Time, now)
	}
	fields := []field{
		{"Name", b.Name}, {"Namespace", b.Namespace},
		{"Operator", cmdutil.OperatorOf(b)},
		{"Phase", cmdutil.OrNone(string(b.Status.Phase))},
		{"Image", cmdutil.OrNone(b.Status.Image)},
		{"Base image", cmdutil.OrNone(b.Status.BaseImage)},
		{"Jars", fmt.Sprint(len(b.Status.Artifacts))},
		{"Started", started},
		{"Duration", cmdutil.OrNone(b.Status.Duration)},
		{"Failure", failure},
		{"Created", timeText(b.CreationTimestamp.Time, now)},
	}
	return writeReport(o.Out, fields, b.Status.Conditions, nil, events, eventsErr, now)
}

// madeFromPipe tells whether the Integration was made from the Pipe, by
// its controller reference or its created-by labels.
func madeFromPipe(it *camelv1.Integration, p *camelv1.Pipe) bool {
	if ref := metav1.GetControllerOf(it); ref != nil && ref.UID == p.UID {
		return true
	}
	return it.Labels[camelv1.CreatedByKindLabel] == "Pipe" && it.Labels[camelv1.CreatedByNameLabel] == p.Name
}

func writePipeReport(w io.Writer, r *pipeReport, now time.Time) error {
	p := r.pipe
	steps := make([]string, 0, len(p.Spec.Steps))
	for _, s := range p.Spec.Steps {
		steps = append(steps, endpointText(s))
	}
	integration := cmdutil.None
	if r.integration != nil {
		integration = fmt.Sprintf("%s (phase %s)", r.integration.Name, cmdutil.OrNone(string(r.integration.Status.Phase)))
	}
	fields := []field{
		{"Name", p.Name}, {"Namespace", p.Namespace},
		{"Operator", cmdutil.OperatorOf(p)},
		{"Phase", cmdutil.OrNone(string(p.Status.Phase))},
		{"Source", endpointText(p.Spec.Source)},
		{"Steps", cmdutil.OrNone(strings.Join(steps, ", "))},
		{"Sink", endpointText(p.Spec.Sink)},
		{"Replicas", cmdutil.Int32OrNone(p.Status.Replicas)},
		{"Integration", integration},
		{"Created", timeText(p.CreationTimestamp.Time, now)},
	}
	return writeReport(w, fields, p.Status.Conditions, nil, r.events, r.eventsErr, now)
}

// endpointText names a Pipe endpoint: the kind and name it refers to, or its URI.
func endpointText(e camelv1.Endpoint) string {
	switch {
	case e.Ref != nil:
		return strings.TrimSpace(e.Ref.Kind + " " + e.Ref.Name)
	case e.URI != nil:
		return *e.URI
	default:
		return cmdutil.None
	}
}

// kitReport is what `caravan describe kit` shows.
type kitReport struct {
	kit       *camelv1.IntegrationKit
	events    *corev1.EventList
	eventsErr error
}

func (o *DescribeOptions) describeKit(ctx context.Context) error {
	r := &kitReport{kit: &camelv1.IntegrationKit{}}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.name}, r.kit); err != nil {
		return err
	}
	var err error
	if r.events, r.eventsErr, err = o.events(ctx, r.kit, "IntegrationKit"); err != nil {
		return err
	}
	return writeKitReport(o.Out, r, o.now())
}

func writeKitReport(w io.Writer, r *kitReport, now time.Time) error {
	k := r.kit
	failure := cmdutil.None
	if f := k.Status.Failure; f != nil {
		failure = fmt.Sprintf("%s (attempt %d of %d, %s ago)", f.Reason, f.Recovery.Attempt, f.Recovery.AttemptMax, cmdutil.Age(f.Time.Time, now))
	}
	fields := []field{
		{"Name", k.Name}, {"Namespace", k.Namespace},
		{"Operator", cmdutil.OperatorOf(k)},
		{"Type", cmdutil.OrNone(k.Labels[camelv1.IntegrationKitTypeLabel])},
		{"Phase", cmdutil.OrNone(string(k.Status.Phase))},
		{"Image", cmdutil.OrNone(kitImage(k))},
		{"Digest", cmdutil.OrNone(k.Status.Digest)},
		{"Base image", cmdutil.OrNone(k.Status.BaseImage)},
		{"Dependencies", cmdutil.OrNone(strings.Join(k.Spec.Dependencies, ", "))},
		{"Failure", failure},
		{"Created", timeText(k.CreationTimestamp.Time, now)},
	}
	return writeReport(w, fields, k.Status.Conditions, nil, r.events, r.eventsErr, now)
}

// platformReport is what `caravan describe platform` shows.
type platformReport struct {
	platform  *camelv1.IntegrationPlatform
	events    *corev1.EventList
	eventsErr error
}

func (o *DescribeOptions) describePlatform(ctx context.Context) error {
	r := &platformReport{platform: &camelv1.IntegrationPlatform{}}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.name}, r.platform); err != nil {
		return err
	}
	var err error
	if r.events, r.eventsErr, err = o.events(ctx, r.platform, "IntegrationPlatform"); err != nil {
		return err
	}
	return writePlatformReport(o.Out, r, o.now())
}

func writePlatformReport(w io.Writer, r *platformReport, now time.Time) error {
	p := r.platform
	build := p.Status.Build
	fields := []field{
		{"Name", p.Name}, {"Namespace", p.Namespace},
		{"Operator", cmdutil.OperatorOf(p)},
		{"Phase", cmdutil.OrNone(string(p.Status.Phase))},
		{"Version", cmdutil.OrNone(p.Status.Version)},
		{"Registry", cmdutil.OrNone(cmp.Or(build.Registry.Address, p.Spec.Build.Registry.Address))},
		{"Base image", cmdutil.OrNone(cmp.Or(build.BaseImage, p.Spec.Build.BaseImage))},
		{"Runtime version", cmdutil.OrNone(cmp.Or(build.RuntimeVersion, p.Spec.Build.RuntimeVersion))},
		{"Created", timeText(p.CreationTimestamp.Time, now)},
	}
	return writeReport(w, fields, p.Status.Conditions, nil, r.events, r.eventsErr, now)
}

// operatorReport is what `caravan describe operator` shows.
type operatorReport struct {
	iop *camelv1alpha1.IntegrationOperator
	// owned is the number of integrations labelled with the id; ownedErr
	// says why it could not be counted.
	owned     int
	ownedErr  error
	events    *corev1.EventList
	eventsErr error
}

func (o *DescribeOptions) describeOperator(ctx context.Context) error {
	r := &operatorReport{iop: &camelv1alpha1.IntegrationOperator{}}
	if err := o.Client.Get(ctx, client.ObjectKey{Name: o.name}, r.iop); err != nil {
		if apierrors.IsNotFound(err) {
			return command.WithExitCode(command.ExitNotFound,
				fmt.Errorf("operator %q is not registered: no IntegrationOperator named %s", o.name, o.name))
		}
		return err
	}
	var err error
	counts, countErr := cmdutil.CountOwnedIntegrations(ctx, o.Client, []string{o.name})
	if r.ownedErr, err = section(countErr); err != nil {
		return err
	}
	r.owned = counts[o.name]
	if r.events, r.eventsErr, err = o.events(ctx, r.iop, "IntegrationOperator"); err != nil {
		return err
	}
	return writeOperatorReport(o.Out, r, o.now())
}

func writeOperatorReport(w io.Writer, r *operatorReport, now time.Time) error {
	iop := r.iop
	watch := "<all>"
	if len(iop.Spec.WatchNamespaces) > 0 {
		watch = strings.Join(iop.Spec.WatchNamespaces, ", ")
	}
	heartbeat := cmdutil.None
	if iop.Status.HeartbeatTime != nil {
		heartbeat = timeText(iop.Status.HeartbeatTime.Time, now)
	}
	reg := ownership.FromOperator(iop)
	staleAfter := reg.StaleAfter
	if staleAfter <= 0 {
		staleAfter = ownership.DefaultStaleAfter
	}
	live := "yes"
	if !reg.Live(now) {
		live = "no: its heartbeat is older than " + staleAfter.String() + ", its integrations are orphans"
		if reg.Heartbeat.IsZero() {
			live = "no: it never renewed its registration, its integrations are orphans"
		}
	}
	owned := fmt.Sprint(r.owned)
	if r.ownedErr != nil {
		owned = "? (" + r.ownedErr.Error() + ")"
	}
	fields := []field{
		{"Name", iop.Name},
		{"Default", fmt.Sprint(iop.Spec.Default)},
		{"Watch namespaces", watch},
		{"Wanted version", cmdutil.OrNone(iop.Spec.Version)},
		{"Namespace", cmdutil.OrNone(iop.Status.Namespace)},
		{"Version", cmdutil.OrNone(iop.Status.Version)},
		{"Leader", cmdutil.OrNone(iop.Status.Leader)},
		{"Heartbeat", heartbeat},
		{"Stale after", staleAfter.String()},
		{"Live", live},
		{"Integrations", owned},
		{"Created", timeText(iop.CreationTimestamp.Time, now)},
	}
	return writeReport(w, fields, iop.Status.Conditions, nil, r.events, r.eventsErr, now)
}

// field is one "Key: value" line of a report.
type field struct{ key, value string }

// tableSection is a titled table of a report; err says why its rows
// could not be read.
type tableSection struct {
	title string
	table *cmdutil.Table
	err   error
}

// writeReport prints the fields, the conditions, an optional extra section and the events, with
// kubectl describe's writer, and its events section.
func writeReport(out io.Writer, fields []field, conditions []metav1.Condition, extra *tableSection,
	events *corev1.EventList, eventsErr error, now time.Time) error {
	tw := printers.GetNewTabWriter(out)
	w := describe.NewPrefixWriter(tw)
	for _, f := range fields {
		w.Write(describe.LEVEL_0, "%s:\t%s\n", f.key, cmdutil.OneLine(f.value))
	}
	conds := cmdutil.NewTable("Type", "Status", "Reason", "Message", "Age")
	for _, c := range conditions {
		conds.Add(c.Type, string(c.Status), cmdutil.OrNone(c.Reason), cmdutil.OrNone(c.Message), cmdutil.Age(c.LastTransitionTime.Time, now))
	}
	sections := []*tableSection{{"Conditions", conds, nil}}
	if extra != nil {
		sections = append(sections, extra)
	}
	for _, s := range sections {
		s.write(w)
	}
	switch {
	case eventsErr != nil:
		w.Write(describe.LEVEL_0, "Events:\t<unavailable: %s>\n", cmdutil.OneLine(eventsErr.Error()))
	case events == nil:
		describe.DescribeEvents(&corev1.EventList{}, w)
	default:
		describe.DescribeEvents(events, w)
	}
	return tw.Flush()
}

// write prints the section as kubectl describe prints a table: its title, then its columns over
// dashes, indented; or <none>, or why it could not be read.
func (s *tableSection) write(w describe.PrefixWriter) {
	switch {
	case s.err != nil:
		w.Write(describe.LEVEL_0, "%s:\t<unavailable: %s>\n", s.title, cmdutil.OneLine(s.err.Error()))
		return
	case len(s.table.Rows) == 0:
		w.Write(describe.LEVEL_0, "%s:\t<none>\n", s.title)
		return
	}
	w.Flush()
	w.Write(describe.LEVEL_0, "%s:\n", s.title)
	columns := s.table.Columns()
	dashes := make([]string, len(columns))
	for i, c := range columns {
		dashes[i] = strings.Repeat("-", len(c))
	}
	w.Write(describe.LEVEL_1, "%s\n", strings.Join(columns, "\t"))
	w.Write(describe.LEVEL_1, "%s\n", strings.Join(dashes, "\t"))
	for _, row := range s.table.Rows {
		w.Write(describe.LEVEL_1, "%s\n", strings.Join(row, "\t"))
	}
	w.Flush()
}

// timeText shows a time in UTC with its age.
func timeText(t time.Time, now time.Time) string {
	if t.IsZero() {
		return cmdutil.None
	}
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), cmdutil.Age(t, now))
}

// completeDescribeArgs completes the TYPE of `caravan describe`, then a
// name of that type (an operator id for operators).
func completeDescribeArgs(kube *cmdutil.KubeFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			var types []cobra.Completion
			for _, dt := range describeTypes() {
				types = append(types, dt.name)
			}
			return types, cobra.ShellCompDirectiveNoFileComp
		case 1:
			dt, err := lookupDescribeType(strings.ToLower(args[0]))
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return cmdutil.CompleteNames(cmd.Context(), kube, dt.newList(), dt.namespaced), cobra.ShellCompDirectiveNoFileComp
		default:
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
}
