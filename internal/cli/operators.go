package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// readyStale is the READY of an operator whose registration is not live.
const readyStale = "Stale"

// OperatorsOptions are the options of `caravan operators`.
type OperatorsOptions struct {
	Kube *KubeFlags

	Output string
	Count  bool

	// Set by Complete.
	client client.Client

	now func() time.Time
	genericiooptions.IOStreams
}

func newCmdOperators(kube *KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &OperatorsOptions{Kube: kube, Count: true, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "operators",
		Short: "List the registered operators: namespace, version, leader, heartbeat and readiness",
		Long: `List the operators registered on the cluster, from their IntegrationOperators,
with one list call.

READY is the registration's Ready condition, or Stale when the operator has
stopped renewing its registration (its integrations are orphans).

INTEGRATIONS counts the integrations each operator owns: it costs one more
list call, of integration metadata only, in all namespaces, selected on the
API server by the camel.apache.org/operator.id label of the listed ids.
Its size grows with the number of integrations those operators own; skip it
with --count=false. When you may not list integrations in all namespaces, the
column shows ?.`,
		Example: `  # List the operators and how many integrations each one owns
  caravan operators

  # List them without counting integrations
  caravan operators --count=false

  # Print their registrations as YAML
  caravan operators -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: name, yaml or json")
	cmd.Flags().BoolVar(&o.Count, "count", o.Count, "count the integrations each operator owns (one more list call)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]string{outputName, outputYAML, outputJSON}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete builds the client.
func (o *OperatorsOptions) Complete() error {
	var err error
	o.client, err = o.Kube.Client()
	return err
}

// Validate checks the output format.
func (o *OperatorsOptions) Validate() error {
	return validateOutput(o.Output, outputName, outputYAML, outputJSON)
}

// Run lists the IntegrationOperators and prints them.
func (o *OperatorsOptions) Run(ctx context.Context) error {
	list := &camelv1alpha1.IntegrationOperatorList{}
	if err := o.client.List(ctx, list); err != nil {
		return fmt.Errorf("listing the registered operators: %w", err)
	}
	iops := list.Items
	slices.SortFunc(iops, func(a, b camelv1alpha1.IntegrationOperator) int { return strings.Compare(a.Name, b.Name) })
	if o.Output != outputTable {
		objs := make([]client.Object, len(iops))
		for i := range iops {
			objs[i] = &iops[i]
		}
		return printObjects(o.Out, o.Output, o.client.Scheme(), objs, false)
	}
	if len(iops) == 0 {
		fmt.Fprintln(o.ErrOut, noResources("", true))
		return nil
	}
	var counts map[string]int
	if o.Count {
		ids := make([]string, len(iops))
		for i, iop := range iops {
			ids[i] = iop.Name
		}
		var err error
		counts, err = countOwnedIntegrations(ctx, o.client, ids)
		if err != nil && !apierrors.IsForbidden(err) {
			return err
		}
	}
	return operatorsTable(iops, o.Count, counts, o.now()).write(o.Out, "")
}

// operatorsTable builds the table of `caravan operators`. withCount adds
// the INTEGRATIONS column, from counts; nil counts print as ?.
func operatorsTable(iops []camelv1alpha1.IntegrationOperator, withCount bool, counts map[string]int, now time.Time) *table {
	columns := []string{"ID", "NAMESPACE", "DEFAULT", "VERSION", "LEADER", "HEARTBEAT", "READY"}
	if withCount {
		columns = append(columns, "INTEGRATIONS")
	}
	t := newTable(columns...)
	for i := range iops {
		iop := &iops[i]
		heartbeat := none
		if iop.Status.HeartbeatTime != nil {
			heartbeat = age(iop.Status.HeartbeatTime.Time, now)
		}
		row := []string{iop.Name, orNone(iop.Status.Namespace), fmt.Sprint(iop.Spec.Default), orNone(iop.Status.Version),
			orNone(iop.Status.Leader), heartbeat, operatorReady(iop, now)}
		if withCount {
			n := "?"
			if counts != nil {
				n = fmt.Sprint(counts[iop.Name])
			}
			row = append(row, n)
		}
		t.add(row...)
	}
	return t
}

// operatorReady is the Ready condition's status of a live registration,
// or Stale.
func operatorReady(iop *camelv1alpha1.IntegrationOperator, now time.Time) string {
	if !ownership.FromOperator(iop).Live(now) {
		return readyStale
	}
	return conditionStatus(iop.Status.Conditions, camelv1.ConditionReady)
}

// countOwnedIntegrations counts, by operator id, the integrations of all
// namespaces labelled with one of ids: one list of metadata only, selected
// by the API server.
func countOwnedIntegrations(ctx context.Context, c client.Client, ids []string) (map[string]int, error) {
	counts := make(map[string]int, len(ids))
	if len(ids) == 0 {
		return counts, nil
	}
	req, err := labels.NewRequirement(camelv1.OperatorIDLabel, selection.In, ids)
	if err != nil {
		return nil, err
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(camelv1.GroupVersion.WithKind("IntegrationList"))
	if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)}); err != nil {
		return nil, fmt.Errorf("counting the integrations of the operators: %w", err)
	}
	for _, item := range list.Items {
		counts[item.Labels[camelv1.OperatorIDLabel]]++
	}
	return counts, nil
}
