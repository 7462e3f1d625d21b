package runcmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/render"
	"github.com/caravan-dev/caravan/internal/trait"
)

// PromotedFromAnnotation records, on a promoted Integration or Pipe, the namespace, name
// and image it was promoted from.
const PromotedFromAnnotation = "caravan.dev/promoted-from"

// PromoteOptions are the options of `caravan promote`.
type PromoteOptions struct {
	cmdutil.Cluster

	Name       string
	To         string
	OperatorID string
	Force      bool
	Output     string

	// Set by Complete.
	now func() time.Time

	genericiooptions.IOStreams
}

// NewCmdPromote builds `caravan promote`, which copies an integration onto the image it runs.
func NewCmdPromote(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &PromoteOptions{Cluster: cmdutil.Cluster{Kube: kube}, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "promote NAME --to NAMESPACE",
		Short: "Copy a running integration or pipe to another namespace, on the image it runs",
		Long: `Promote an integration, or the Pipe of that name, to another namespace, as kamel
promote does: the copy runs the image the source runs, so nothing is built again.

The source must be Running. An integration built from a kit gets, in the target
namespace, an IntegrationKit of that image (named promoted-<hash of the image>) with
the kit's dependencies, and is pinned to it; one that runs the container trait's
image keeps it. A Pipe is copied with its Kamelet references pointing at the target
namespace and the container trait's image set. The copy is annotated with
` + PromotedFromAnnotation + `: NAMESPACE/NAME@IMAGE.

It keeps the source's operator, or goes to -x/--operator-id; that operator must be
registered and serve the target namespace (checked first, unless --force). With -o
the copy is printed and nothing is applied.`,
		Example: `  # Promote the integration orders from the namespace dev to prod
  caravan promote orders -n dev --to prod

  # Promote it to the operator of the prod tenant, printing it first
  caravan promote orders -n dev --to prod -x prod-operator -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.To, "to", "", "the namespace to promote to")
	f.StringVarP(&o.OperatorID, "operator-id", "x", "", "assign the copy to this operator (default: the source's)")
	f.BoolVar(&o.Force, "force", false, "skip the checks of the target operator")
	f.StringVarP(&o.Output, "output", "o", "", "print the copy as yaml or json instead of applying it")
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *PromoteOptions) Complete() error {
	return nil
}

// Preamble asks for the namespace and a client.
func (o *PromoteOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedClient
}

// Validate checks the flags.
func (o *PromoteOptions) Validate() error {
	switch {
	case o.To == "":
		return errors.New("--to is required: the namespace to promote to")
	case len(validation.IsDNS1123Label(o.To)) > 0:
		return fmt.Errorf("--to %q is not a namespace name", o.To)
	case o.To == o.Namespace:
		return fmt.Errorf("--to %s is the namespace of the source: promote to another one", o.To)
	}
	if o.OperatorID != "" {
		if err := cmdutil.ValidateOperatorIDFlag("-x/--operator-id", o.OperatorID); err != nil {
			return err
		}
	}
	return cmdutil.ValidateOutputFormat(o.Output)
}

// Run reads the source, checks the target operator, and applies the copy.
func (o *PromoteOptions) Run(ctx context.Context) error {
	it := &camelv1.Integration{}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, it); err != nil {
		return fmt.Errorf("reading integration %q: %w", o.Name, err)
	}
	ready := meta.FindStatusCondition(it.Status.Conditions, camelv1.ConditionReady)
	if it.Status.Phase != camelv1.IntegrationPhaseRunning || ready == nil || ready.Status != metav1.ConditionTrue || it.Status.Image == "" {
		return fmt.Errorf("integration %q is in phase %q: only a Running integration is promoted, so that what is promoted is what runs",
			o.Name, it.Status.Phase)
	}
	pipe := &camelv1.Pipe{}
	err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, pipe)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading pipe %q: %w", o.Name, err)
	}
	isPipe := err == nil && metav1.IsControlledBy(it, pipe)
	id := o.OperatorID
	if id == "" {
		id = it.OperatorID()
	}
	if id != "" && !o.Force && o.Output == "" {
		if err := o.checkOperator(ctx, id); err != nil {
			return err
		}
	}
	var objs []client.Object
	if isPipe {
		objs = []client.Object{o.promotedPipe(pipe, it.Status.Image, id)}
	} else {
		objs, err = o.promotedIntegration(ctx, it, id)
		if err != nil {
			return err
		}
	}
	if o.Output != "" {
		return cmdutil.PrintObjects(o.Out, o.Output, o.Client.Scheme(), objs, len(objs) == 1)
	}
	return o.apply(ctx, objs, id != "")
}

// checkOperator refuses a target operator that is not registered, or does not serve the
// target namespace: the admission policies would refuse the copy, or nothing would run it.
func (o *PromoteOptions) checkOperator(ctx context.Context, id string) error {
	iop, err := cmdutil.ReadRegistration(ctx, o.Client, id, o.now(), o.ErrOut)
	if err != nil || iop == nil {
		return err // nil: not readable, which the admission policies still judge
	}
	if reason, msg := ownership.Orphaned(id, o.To, iop, o.now()); reason == ownership.ReasonNotServingNamespace {
		return fmt.Errorf("%s (use -x to pick another operator, or --force)", msg)
	}
	return nil
}

// promotedMeta is the metadata of a copy in the target namespace: the source's labels
// and annotations, but what the operators and the CLI stamp, and the operator id.
func (o *PromoteOptions) promotedMeta(src metav1.ObjectMeta, id, image string) metav1.ObjectMeta {
	annotations := maps.Clone(src.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	for _, k := range []string{corev1.LastAppliedConfigAnnotation, render.AppliedHashAnnotation, RebuildRequestedAnnotation, camelv1.OperatorIDAnnotation} {
		delete(annotations, k)
	}
	if id != "" {
		annotations[camelv1.OperatorIDAnnotation] = id
	}
	annotations[PromotedFromAnnotation] = fmt.Sprintf("%s/%s@%s", src.Namespace, src.Name, image)
	labels := maps.Clone(src.Labels)
	delete(labels, camelv1.OperatorIDLabel) // mirrored from the annotation by the cluster
	return metav1.ObjectMeta{Name: src.Name, Namespace: o.To, Labels: labels, Annotations: annotations}
}

// promotedIntegration is the copy of it, and the kit of its image it is pinned to when it
// was built from a kit.
func (o *PromoteOptions) promotedIntegration(ctx context.Context, it *camelv1.Integration, id string) ([]client.Object, error) {
	image := it.Status.Image
	dst := &camelv1.Integration{
		TypeMeta:   metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: "Integration"},
		ObjectMeta: o.promotedMeta(it.ObjectMeta, id, image),
		Spec:       *it.Spec.DeepCopy(),
	}
	if traits, err := trait.Parse(it.Spec.Traits); it.Status.IntegrationKit == nil || err == nil && traits.Container.Image() != "" {
		// It runs the container trait's image, which the copy keeps.
		return []client.Object{dst}, nil
	}
	deps := kit.NormalizeDependencies(it.Spec.Dependencies)
	src := &camelv1.IntegrationKit{}
	ref := it.Status.IntegrationKit
	kitNS := ref.Namespace
	if kitNS == "" {
		kitNS = it.Namespace
	}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: kitNS, Name: ref.Name}, src); err == nil {
		deps = kit.NormalizeDependencies(src.Spec.Dependencies)
	} else if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading the kit %s/%s of integration %q: %w", kitNS, ref.Name, it.Name, err)
	}
	sum := sha256.Sum256([]byte(image))
	k := &camelv1.IntegrationKit{
		TypeMeta: metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: "IntegrationKit"},
		ObjectMeta: metav1.ObjectMeta{Name: "promoted-" + hex.EncodeToString(sum[:])[:16], Namespace: o.To,
			Labels:      map[string]string{camelv1.IntegrationKitTypeLabel: camelv1.IntegrationKitTypeExternal},
			Annotations: map[string]string{PromotedFromAnnotation: fmt.Sprintf("%s/%s@%s", kitNS, ref.Name, image)}},
		Spec: camelv1.IntegrationKitSpec{Image: image, Dependencies: deps},
	}
	if id != "" {
		k.Annotations[camelv1.OperatorIDAnnotation] = id
	}
	dst.Spec.IntegrationKit = &corev1.ObjectReference{Name: k.Name}
	return []client.Object{k, dst}, nil
}

// promotedPipe is the copy of p, on image, its Kamelet references in the target namespace.
func (o *PromoteOptions) promotedPipe(p *camelv1.Pipe, image, id string) *camelv1.Pipe {
	dst := &camelv1.Pipe{
		TypeMeta:   metav1.TypeMeta{APIVersion: camelv1.GroupVersion.String(), Kind: "Pipe"},
		ObjectMeta: o.promotedMeta(p.ObjectMeta, id, image),
		Spec:       *p.Spec.DeepCopy(),
	}
	for _, e := range append([]*camelv1.Endpoint{&dst.Spec.Source, &dst.Spec.Sink}, endpoints(dst.Spec.Steps)...) {
		if e.Ref != nil && e.Ref.Namespace != "" {
			e.Ref.Namespace = o.To
		}
	}
	if dst.Spec.Traits == nil {
		dst.Spec.Traits = camelv1.Traits{}
	}
	container := map[string]any{}
	if raw, ok := dst.Spec.Traits["container"]; ok {
		_ = json.Unmarshal(raw.Raw, &container)
	}
	container["image"] = image
	data, _ := json.Marshal(container)
	var raw camelv1.RawObject
	raw.Raw = data
	dst.Spec.Traits["container"] = raw
	return dst
}

func endpoints(steps []camelv1.Endpoint) []*camelv1.Endpoint {
	out := make([]*camelv1.Endpoint, len(steps))
	for i := range steps {
		out[i] = &steps[i]
	}
	return out
}

// apply applies the objects in order; when one is refused, the ones this command created
// before it are deleted again, so that a refused promotion leaves nothing behind.
func (o *PromoteOptions) apply(ctx context.Context, objs []client.Object, assign bool) error {
	var created []client.Object
	for _, obj := range objs {
		result, _, err := cmdutil.ApplyAsCaravan(ctx, o.Client, obj, assign)
		if err != nil {
			for _, c := range created {
				if derr := client.IgnoreNotFound(o.Client.Delete(ctx, c)); derr != nil {
					fmt.Fprintf(o.ErrOut, "Warning: could not delete %s %s/%s again: %v\n",
						c.GetObjectKind().GroupVersionKind().Kind, c.GetNamespace(), c.GetName(), derr)
				}
			}
			return err
		}
		if result == "created" {
			created = append(created, obj)
		}
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		fmt.Fprintf(o.Out, "%s %q %s in namespace %s\n", kindWord(kind), obj.GetName(), result, o.To)
	}
	return nil
}

// kindWord is how the CLI names a kind in its lines.
func kindWord(kind string) string {
	return map[string]string{"Integration": "integration", "Pipe": "pipe", "IntegrationKit": "integrationkit"}[kind]
}
