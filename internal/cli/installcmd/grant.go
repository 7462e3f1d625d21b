package installcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// GrantOptions are the options of `caravan grant`.
type GrantOptions struct {
	cmdutil.Cluster

	OperatorID string
	To         []string
	Revoke     bool
	AsOperator bool
	DryRun     cmdutil.DryRun
	Output     string

	// Set by Complete and Validate.
	subjects []rbacv1.Subject

	genericiooptions.IOStreams
}

// NewCmdGrant builds `caravan grant`, which lets a team assign work to an operator.
func NewCmdGrant(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &GrantOptions{Cluster: cmdutil.Cluster{Kube: kube}, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "grant -x ID --to KIND:NAME [--to KIND:NAME...]",
		Short: "Let users, groups or service accounts run their work on an operator, in one namespace",
		Long: `Bind the ClusterRole <id>-operator-user, the verb use on operator ID, to each subject
in the namespace, by a RoleBinding of each: they may then assign Integrations, Pipes,
KameletBindings and kits of that namespace to the operator, and nowhere else. What a
team may create and read there is Kubernetes' edit and view roles, into which Caravan's
roles aggregate. --revoke deletes the bindings. A subject is user:NAME, group:NAME, or
serviceaccount:NAME (of the namespace) or serviceaccount:NAMESPACE:NAME.

--as-operator declares the subjects to be operator ID itself, one that is not Caravan's
(Camel K's), in every namespace: a ClusterRoleBinding each to caravan:foreign-operator:ID,
the verb use on ID (it assigns its Pipes' Integrations, its kits and builds to itself)
and the verb foreign, under which the admission policies refuse its writes to anything
labelled for a Caravan operator, such as what a Caravan operator took over from it.
No Caravan operator may have that id.`,
		Example: `  # Onboard team-a: edit in its namespace, and the use of operator tenant-a there
  kubectl create rolebinding team-a-edit -n team-a --clusterrole=edit --group=team-a
  caravan grant -x tenant-a --to group:team-a -n team-a

  # Take it back
  caravan grant -x tenant-a --to group:team-a -n team-a --revoke

  # Camel K's operator, id camel-k, runs beside Caravan's
  caravan grant -x camel-k --as-operator --to serviceaccount:camel-k:camel-k-operator`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(o),
	}
	f := cmd.Flags()
	f.StringVarP(&o.OperatorID, "operator-id", "x", "", "the operator whose use is granted (required)")
	f.StringArrayVar(&o.To, "to", nil, "a subject: user:NAME, group:NAME, serviceaccount:NAME or serviceaccount:NAMESPACE:NAME (repeatable)")
	f.BoolVar(&o.Revoke, "revoke", false, "delete the bindings instead")
	f.BoolVar(&o.AsOperator, "as-operator", false, "the subjects are operator ID, one that is not Caravan's, in every namespace")
	cmdutil.AddDryRunFlag(f, &o.DryRun, "client: print what would be done and do nothing; server: also send each write with dryRun=All")
	f.StringVarP(&o.Output, "output", "o", "", "print the RoleBindings as yaml or json, and change nothing")
	_ = cmd.RegisterFlagCompletionFunc("to", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"user:", "group:", "serviceaccount:"}, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *GrantOptions) Complete() error {
	return nil
}

// Preamble asks for the namespace and a client.
func (o *GrantOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedClient
}

// Validate checks the operator id, the output format and each subject.
func (o *GrantOptions) Validate() error {
	if o.OperatorID == "" {
		return errors.New("-x/--operator-id is required: the operator whose use is granted")
	}
	if err := ownership.ValidateID(o.OperatorID); err != nil {
		return fmt.Errorf("-x/--operator-id: %w", err)
	}
	if o.Output != "" && o.Output != "yaml" && o.Output != "json" {
		return fmt.Errorf("-o/--output %q: want yaml or json", o.Output)
	}
	if len(o.To) == 0 {
		return errors.New("--to is required: whom to grant the use of the operator, as user:NAME, group:NAME or serviceaccount:NAME")
	}
	o.subjects = nil
	for _, to := range o.To {
		s, err := parseSubject(to, o.Namespace)
		if err != nil {
			return fmt.Errorf("--to %q: %w", to, err)
		}
		o.subjects = append(o.subjects, s)
	}
	return nil
}

// parseSubject reads KIND:NAME as an RBAC subject; a service account without a namespace is
// of namespace.
func parseSubject(s, namespace string) (rbacv1.Subject, error) {
	kind, name, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return rbacv1.Subject{}, errors.New("want user:NAME, group:NAME or serviceaccount:[NAMESPACE:]NAME")
	}
	switch strings.ToLower(kind) {
	case "user":
		return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}, nil
	case "group":
		return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: name}, nil
	case "serviceaccount", "sa":
		ns, sa, hasNS := strings.Cut(name, ":")
		if !hasNS {
			ns, sa = namespace, name
		}
		for what, v := range map[string]string{"namespace": ns, "name": sa} {
			if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
				return rbacv1.Subject{}, fmt.Errorf("the service account's %s %q: %s", what, v, strings.Join(errs, "; "))
			}
		}
		return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}, nil
	}
	return rbacv1.Subject{}, fmt.Errorf("unknown kind %q: want user, group or serviceaccount", kind)
}

// grantBindingName names the RoleBinding that grants the use of operator id to subject s.
func grantBindingName(id string, s rbacv1.Subject) string {
	return "caravan:use:" + id + ":" + install.SubjectName(s)
}

// Run checks that the operator is installed, then creates (or deletes) a RoleBinding per subject
// and prints a line each.
func (o *GrantOptions) Run(ctx context.Context) error {
	if o.AsOperator {
		return o.runAsOperator(ctx)
	}
	role := install.UserRole(o.OperatorID)
	bindings := make([]*rbacv1.RoleBinding, len(o.subjects))
	for i, s := range o.subjects {
		bindings[i] = &rbacv1.RoleBinding{
			TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: grantBindingName(o.OperatorID, s), Namespace: o.Namespace,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "caravan", install.GrantLabel: o.OperatorID}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{s},
		}
	}
	if o.Output != "" {
		objs := make([]client.Object, len(bindings))
		for i, b := range bindings {
			objs[i] = b
		}
		return printManifests(objs, o.Output, o.IOStreams)
	}
	if !o.Revoke {
		if err := o.Client.Get(ctx, client.ObjectKey{Name: role}, &rbacv1.ClusterRole{}); apierrors.IsNotFound(err) {
			return command.WithExitCode(command.ExitUsage, fmt.Errorf(
				"operator %s is not installed: the ClusterRole %s that grants its use does not exist", o.OperatorID, role))
		} else if err != nil {
			return fmt.Errorf("reading the ClusterRole %s: %w", role, err)
		}
	}
	var writeOpts []client.CreateOption
	var deleteOpts []client.DeleteOption
	suffix := ""
	switch {
	case o.DryRun.Client():
		suffix = " (dry run)"
	case o.DryRun.Server():
		writeOpts, deleteOpts, suffix = append(writeOpts, client.DryRunAll), append(deleteOpts, client.DryRunAll), " (server dry run)"
	}
	for _, b := range bindings {
		who := describeSubject(b.Subjects[0])
		where := "rolebinding " + b.Namespace + "/" + b.Name
		if o.Revoke {
			existing := &rbacv1.RoleBinding{}
			err := o.Client.Get(ctx, client.ObjectKeyFromObject(b), existing)
			if err == nil && !sameGrant(existing.RoleRef, existing.Subjects, b.RoleRef, b.Subjects[0]) {
				return fmt.Errorf("%s grants something else (%s to %v): left alone", where, existing.RoleRef.Name, existing.Subjects)
			}
			if err == nil && !o.DryRun.Client() {
				// Only the binding read: one changed meanwhile is not deleted.
				err = o.Client.Delete(ctx, b, append([]client.DeleteOption{client.Preconditions{UID: &existing.UID,
					ResourceVersion: &existing.ResourceVersion}}, deleteOpts...)...)
			}
			switch {
			case apierrors.IsNotFound(err):
				fmt.Fprintf(o.Out, "%s not found: %s had no grant of operator %s here\n", where, who, o.OperatorID)
			case err != nil:
				return fmt.Errorf("deleting %s: %w", where, err)
			default:
				fmt.Fprintf(o.Out, "%s deleted%s: %s may no longer run work on operator %s in namespace %s\n", where, suffix, who, o.OperatorID, o.Namespace)
			}
			continue
		}
		var err error
		if !o.DryRun.Client() {
			err = o.Client.Create(ctx, b, writeOpts...)
		}
		if apierrors.IsAlreadyExists(err) {
			existing := &rbacv1.RoleBinding{}
			if err := o.Client.Get(ctx, client.ObjectKeyFromObject(b), existing); err != nil {
				return fmt.Errorf("reading %s: %w", where, err)
			}
			if !sameGrant(existing.RoleRef, existing.Subjects, b.RoleRef, b.Subjects[0]) {
				return fmt.Errorf("%s exists and grants something else (%s to %v): delete it first", where, existing.RoleRef.Name, existing.Subjects)
			}
			fmt.Fprintf(o.Out, "%s unchanged: %s may already run work on operator %s in namespace %s\n", where, who, o.OperatorID, o.Namespace)
			continue
		}
		if err != nil {
			return fmt.Errorf("creating %s: %w", where, err)
		}
		fmt.Fprintf(o.Out, "%s created%s: %s may run work on operator %s in namespace %s\n", where, suffix, who, o.OperatorID, o.Namespace)
	}
	return nil
}

// sameGrant tells whether a binding of ref to subjects grants wantRef to wantSubject, and nothing else.
func sameGrant(ref rbacv1.RoleRef, subjects []rbacv1.Subject, wantRef rbacv1.RoleRef, wantSubject rbacv1.Subject) bool {
	return ref == wantRef && len(subjects) == 1 && subjects[0] == wantSubject
}

// describeSubject says who s is, as the grant's lines name it.
func describeSubject(s rbacv1.Subject) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		return "serviceaccount " + s.Namespace + "/" + s.Name
	}
	return strings.ToLower(s.Kind) + " " + s.Name
}
