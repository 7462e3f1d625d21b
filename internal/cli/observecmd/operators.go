package observecmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// readyStale is the READY of an operator that stopped renewing its registration; readyPending of
// one that has never renewed it.
const (
	readyStale   = "Stale"
	readyPending = "Pending"
)

// OperatorsOptions are the options of `caravan operators`.
type OperatorsOptions struct {
	cmdutil.Cluster

	Output string
	Count  bool

	// Set by Complete.

	now func() time.Time
	genericiooptions.IOStreams
}

// NewCmdOperators builds `caravan operators`, which lists the registered operators.
func NewCmdOperators(kube *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &OperatorsOptions{Cluster: cmdutil.Cluster{Kube: kube}, Count: true, now: time.Now, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "operators",
		Short: "List the registered operators: namespace, version, leader, heartbeat and readiness",
		Long: `List the operators registered on the cluster, from their IntegrationOperators,
with one list call.

READY is the registration's Ready condition. It is Pending until the operator
first renews its registration (just installed, or its pod does not start), and
Stale once it has stopped renewing it. In both cases its integrations are
orphans until it renews.

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
		[]string{cmdutil.OutputName, cmdutil.OutputYAML, cmdutil.OutputJSON}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete builds the client.
func (o *OperatorsOptions) Complete() error { return nil }

// Preamble asks for a client: operators are cluster-scoped.
func (o *OperatorsOptions) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedClient
}

// Validate checks the output format.
func (o *OperatorsOptions) Validate() error {
	return cmdutil.ValidateOutput(o.Output, cmdutil.OutputName, cmdutil.OutputYAML, cmdutil.OutputJSON)
}

// Run lists the IntegrationOperators and prints them.
func (o *OperatorsOptions) Run(ctx context.Context) error {
	list := &camelv1alpha1.IntegrationOperatorList{}
	if err := o.Client.List(ctx, list); err != nil {
		return fmt.Errorf("listing the registered operators: %w", err)
	}
	iops := list.Items
	slices.SortFunc(iops, func(a, b camelv1alpha1.IntegrationOperator) int { return strings.Compare(a.Name, b.Name) })
	if o.Output != cmdutil.OutputTable {
		objs := make([]client.Object, len(iops))
		for i := range iops {
			objs[i] = &iops[i]
		}
		return cmdutil.PrintObjects(o.Out, o.Output, o.Client.Scheme(), objs, false)
	}
	if len(iops) == 0 {
		fmt.Fprintln(o.ErrOut, cmdutil.NoResources("", true))
		return nil
	}
	var counts map[string]int
	if o.Count {
		ids := make([]string, len(iops))
		for i, iop := range iops {
			ids[i] = iop.Name
		}
		var err error
		counts, err = cmdutil.CountOwnedIntegrations(ctx, o.Client, ids)
		if err != nil && !apierrors.IsForbidden(err) {
			return err
		}
	}
	return operatorsTable(iops, o.Count, counts, o.now()).Write(o.Out, "")
}

// operatorsTable builds the table of `caravan operators`. withCount adds
// the INTEGRATIONS column, from counts; nil counts print as ?.
func operatorsTable(iops []camelv1alpha1.IntegrationOperator, withCount bool, counts map[string]int, now time.Time) *cmdutil.Table {
	columns := []string{"ID", "NAMESPACE", "DEFAULT", "VERSION", "LEADER", "HEARTBEAT", "READY"}
	if withCount {
		columns = append(columns, "INTEGRATIONS")
	}
	t := cmdutil.NewTable(columns...)
	for i := range iops {
		iop := &iops[i]
		heartbeat := cmdutil.None
		if iop.Status.HeartbeatTime != nil {
			heartbeat = cmdutil.Age(iop.Status.HeartbeatTime.Time, now)
		}
		row := []string{iop.Name, cmdutil.OrNone(iop.Status.Namespace), fmt.Sprint(iop.Spec.Default), cmdutil.OrNone(iop.Status.Version),
			cmdutil.OrNone(iop.Status.Leader), heartbeat, operatorReady(iop, now)}
		if withCount {
			n := "?"
			if counts != nil {
				n = fmt.Sprint(counts[iop.Name])
			}
			row = append(row, n)
		}
		t.Add(row...)
	}
	return t
}

// operatorReady is the Ready condition's status of a live registration, Pending before its first
// renewal, or Stale.
func operatorReady(iop *camelv1alpha1.IntegrationOperator, now time.Time) string {
	switch {
	case iop.Status.HeartbeatTime == nil:
		return readyPending
	case !ownership.FromOperator(iop).Live(now):
		return readyStale
	}
	return cmdutil.ConditionStatus(iop.Status.Conditions, camelv1.ConditionReady)
}
