package installcmd

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/install"
)

// runAsOperator declares the subjects to be operator o.OperatorID, one that is not Caravan's: the
// ClusterRole install.ForeignRole and a ClusterRoleBinding per subject (or, with --revoke, deletes
// the bindings, and the role once none is left).
func (o *GrantOptions) runAsOperator(ctx context.Context) error {
	role := install.ForeignRoleManifest(o.OperatorID)
	bindings := make([]*rbacv1.ClusterRoleBinding, len(o.subjects))
	for i, s := range o.subjects {
		bindings[i] = install.ForeignBinding(o.OperatorID, s)
	}
	if o.Output != "" {
		return printManifests(append([]client.Object{role}, asObjects(bindings)...), o.Output, o.IOStreams)
	}
	if o.Revoke {
		return o.revokeAsOperator(ctx, role, bindings)
	}
	if err := o.refuseCaravanOperator(ctx); err != nil {
		return err
	}
	if err := o.ensureForeignRole(ctx, role); err != nil {
		return err
	}
	for _, b := range bindings {
		if err := o.ensureForeignBinding(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

func asObjects(bindings []*rbacv1.ClusterRoleBinding) []client.Object {
	objs := make([]client.Object, len(bindings))
	for i, b := range bindings {
		objs[i] = b
	}
	return objs
}

// writeOptions say whether o asks for the server's dry run, and the suffix of the lines that
// report a write under o's dry run.
func (o *GrantOptions) writeOptions() (serverDryRun bool, suffix string) {
	switch {
	case o.DryRun.Client():
		return false, " (dry run)"
	case o.DryRun.Server():
		return true, " (server dry run)"
	}
	return false, ""
}

func createOptions(serverDryRun bool) []client.CreateOption {
	if serverDryRun {
		return []client.CreateOption{client.DryRunAll}
	}
	return nil
}

func updateOptions(serverDryRun bool) []client.UpdateOption {
	if serverDryRun {
		return []client.UpdateOption{client.DryRunAll}
	}
	return nil
}

func deleteOptions(serverDryRun bool) []client.DeleteOption {
	if serverDryRun {
		return []client.DeleteOption{client.DryRunAll}
	}
	return nil
}

// refuseCaravanOperator refuses an id that a Caravan operator has: both would reconcile what
// names it.
func (o *GrantOptions) refuseCaravanOperator(ctx context.Context) error {
	id := o.OperatorID
	err := o.Client.Get(ctx, client.ObjectKey{Name: id}, &camelv1alpha1.IntegrationOperator{})
	if err == nil {
		return command.WithExitCode(command.ExitUsage, fmt.Errorf("operator %s is a Caravan operator (its IntegrationOperator exists): "+
			"an operator that is not Caravan's must run with another id, or both would reconcile what names %s", id, id))
	}
	if !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("reading IntegrationOperator %s: %w", id, err)
	}
	err = o.Client.Get(ctx, client.ObjectKey{Name: install.UserRole(id)}, &rbacv1.ClusterRole{})
	if err == nil {
		return command.WithExitCode(command.ExitUsage, fmt.Errorf("operator %s is a Caravan operator (its ClusterRole %s exists): "+
			"an operator that is not Caravan's must run with another id, or both would reconcile what names %s", id, install.UserRole(id), id))
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the ClusterRole %s: %w", install.UserRole(id), err)
	}
	return nil
}

// ensureForeignRole creates role, or brings the one of that name Caravan made back to its rules.
func (o *GrantOptions) ensureForeignRole(ctx context.Context, role *rbacv1.ClusterRole) error {
	dryRun, suffix := o.writeOptions()
	where := "clusterrole " + role.Name
	existing := &rbacv1.ClusterRole{}
	err := o.Client.Get(ctx, client.ObjectKeyFromObject(role), existing)
	switch {
	case apierrors.IsNotFound(err):
		if !o.DryRun.Client() {
			if err := o.Client.Create(ctx, role, createOptions(dryRun)...); err != nil {
				return fmt.Errorf("creating %s: %w", where, err)
			}
		}
		fmt.Fprintf(o.Out, "%s created%s: the verbs use on operator %s and %s\n", where, suffix, o.OperatorID, install.ForeignVerb)
		return nil
	case err != nil:
		return fmt.Errorf("reading %s: %w", where, err)
	case existing.Labels[install.ForeignLabel] != o.OperatorID:
		return fmt.Errorf("%s exists and was not made by caravan grant --as-operator: left alone; delete it first", where)
	case equality.Semantic.DeepEqual(existing.Rules, role.Rules):
		return nil
	}
	existing.Rules = role.Rules
	if !o.DryRun.Client() {
		if err := o.Client.Update(ctx, existing, updateOptions(dryRun)...); err != nil {
			return fmt.Errorf("updating %s: %w", where, err)
		}
	}
	fmt.Fprintf(o.Out, "%s updated%s: its rules were changed, and are Caravan's again\n", where, suffix)
	return nil
}

// ensureForeignBinding creates b, or says it exists.
func (o *GrantOptions) ensureForeignBinding(ctx context.Context, b *rbacv1.ClusterRoleBinding) error {
	dryRun, suffix := o.writeOptions()
	who := describeSubject(b.Subjects[0])
	where := "clusterrolebinding " + b.Name
	var err error
	if !o.DryRun.Client() {
		err = o.Client.Create(ctx, b, createOptions(dryRun)...)
	}
	if apierrors.IsAlreadyExists(err) {
		existing := &rbacv1.ClusterRoleBinding{}
		if err := o.Client.Get(ctx, client.ObjectKeyFromObject(b), existing); err != nil {
			return fmt.Errorf("reading %s: %w", where, err)
		}
		if !sameGrant(existing.RoleRef, existing.Subjects, b.RoleRef, b.Subjects[0]) {
			return fmt.Errorf("%s exists and grants something else (%s to %v): delete it first", where, existing.RoleRef.Name, existing.Subjects)
		}
		fmt.Fprintf(o.Out, "%s unchanged: %s is already operator %s, not Caravan's\n", where, who, o.OperatorID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", where, err)
	}
	fmt.Fprintf(o.Out, "%s created%s: %s is operator %s, not Caravan's: it may assign work to %s in every namespace, "+
		"and may not write what a Caravan operator owns\n", where, suffix, who, o.OperatorID, o.OperatorID)
	return nil
}

// revokeAsOperator deletes the bindings, then the role when no binding of it is left.
func (o *GrantOptions) revokeAsOperator(ctx context.Context, role *rbacv1.ClusterRole, bindings []*rbacv1.ClusterRoleBinding) error {
	dryRun, suffix := o.writeOptions()
	gone := map[string]bool{}
	for _, b := range bindings {
		where := "clusterrolebinding " + b.Name
		existing := &rbacv1.ClusterRoleBinding{}
		err := o.Client.Get(ctx, client.ObjectKeyFromObject(b), existing)
		if err == nil && existing.RoleRef != b.RoleRef {
			return fmt.Errorf("%s grants something else (%s): left alone", where, existing.RoleRef.Name)
		}
		if err == nil && !o.DryRun.Client() {
			err = o.Client.Delete(ctx, existing, append(deleteOptions(dryRun),
				client.Preconditions{UID: &existing.UID, ResourceVersion: &existing.ResourceVersion})...)
		}
		switch {
		case apierrors.IsNotFound(err):
			fmt.Fprintf(o.Out, "%s not found: %s was not operator %s\n", where, describeSubject(b.Subjects[0]), o.OperatorID)
		case err != nil:
			return fmt.Errorf("deleting %s: %w", where, err)
		default:
			gone[b.Name] = true
			fmt.Fprintf(o.Out, "%s deleted%s: %s is no longer operator %s\n", where, suffix, describeSubject(b.Subjects[0]), o.OperatorID)
		}
	}
	left := &rbacv1.ClusterRoleBindingList{}
	if err := o.Client.List(ctx, left, client.MatchingLabels{install.ForeignLabel: o.OperatorID}); err != nil {
		return fmt.Errorf("listing the bindings of %s: %w", role.Name, err)
	}
	for _, b := range left.Items {
		if !gone[b.Name] && b.RoleRef.Name == role.Name {
			return nil
		}
	}
	return o.deleteForeignRole(ctx, role, dryRun, suffix)
}

// deleteForeignRole deletes role, the last binding of which is gone.
func (o *GrantOptions) deleteForeignRole(ctx context.Context, role *rbacv1.ClusterRole, dryRun bool, suffix string) error {
	var err error
	if !o.DryRun.Client() {
		err = o.Client.Delete(ctx, role, deleteOptions(dryRun)...)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("deleting clusterrole %s: %w", role.Name, err)
	}
	fmt.Fprintf(o.Out, "clusterrole %s deleted%s: %s is no operator's id that is not Caravan's any more\n", role.Name, suffix, o.OperatorID)
	return nil
}
