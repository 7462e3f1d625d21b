package runcmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/command"
)

// selectionCommand is what the commands that act on integrations picked by
// name or with --all (delete, rebuild) share. That is their flags,
// Complete, Validate, and the loop that acts on each and reports what went
// wrong.
type selectionCommand struct {
	cmdutil.Cluster
	integrationSelection

	// Set by Complete.

	genericiooptions.IOStreams
}

// bind adds the selection flags to cmd and runs c, whose selection o is,
// with the arguments as names; verb names the action in the flags' help.
func (o *selectionCommand) bind(cmd *cobra.Command, verb string, c command.Command) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.Names = args
		return cmdutil.Run(cmd.Context(), c)
	}
	cmd.Flags().BoolVar(&o.All, "all", false, verb+" every integration of the namespace (with -x, every one of that operator)")
	cmd.Flags().StringVarP(&o.OperatorID, "operator-id", "x", "", "only "+verb+" integrations assigned to this operator")
	return cmd
}

// Complete resolves the namespace and makes the client.
func (o *selectionCommand) Complete() error {
	return nil
}

// Preamble asks for the namespace and a client.
func (o *selectionCommand) Preamble() (*cmdutil.Cluster, cmdutil.Needs) {
	return &o.Cluster, cmdutil.NeedNamespace | cmdutil.NeedClient
}

// Validate checks the arguments and flags.
func (o *selectionCommand) Validate() error { return o.validate() }

// each calls act on every selected integration, then returns the
// problems: names not found (exit code ExitNotFound) or not assigned to -x, and act's errors.
func (o *selectionCommand) each(ctx context.Context, verb string, act func(*camelv1.Integration) error) error {
	selected, problems, err := o.resolve(ctx, o.Client, o.Namespace)
	if err != nil {
		return err
	}
	if o.All && len(selected) == 0 {
		fmt.Fprintf(o.ErrOut, "No integrations to %s in namespace %s%s.\n", verb, o.Namespace, o.forOperator())
	}
	for i := range selected {
		if err := act(&selected[i]); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		return problemsError(problems)
	}
	return nil
}

// problemsError is the problems of a selection command, on one line, which it unwraps to for
// their exit codes.
type problemsError []error

func (e problemsError) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e problemsError) Unwrap() []error { return e }

// retryOnConflict runs write, which writes it with the resourceVersion read,
// and on a conflict reads it again and runs write again. With -x, an
// integration that moved meanwhile to another operator is left alone
// (errMoved).
func (s *integrationSelection) retryOnConflict(ctx context.Context, c client.Client, it *camelv1.Integration, write func() error) error {
	first := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(it), it); err != nil {
				return err
			}
			if s.OperatorID != "" && it.OperatorID() != s.OperatorID {
				return fmt.Errorf("it was %w %q meanwhile, left alone", errMoved, it.OperatorID())
			}
		}
		first = false
		return write()
	})
}

// integrationSelection picks integrations of a namespace by name or with
// --all, optionally only those assigned to one operator. delete and
// rebuild share it.
type integrationSelection struct {
	Names      []string
	All        bool
	OperatorID string
}

func (s *integrationSelection) validate() error {
	switch {
	case s.All && len(s.Names) > 0:
		return errors.New("give integration names or --all, not both")
	case !s.All && len(s.Names) == 0:
		return errors.New("give the names of the integrations, or --all")
	}
	if s.OperatorID != "" {
		return cmdutil.ValidateOperatorIDFlag("-x/--operator-id", s.OperatorID)
	}
	return nil
}

func (s *integrationSelection) forOperator() string {
	if s.OperatorID == "" {
		return ""
	}
	return fmt.Sprintf(" assigned to operator %q", s.OperatorID)
}

// resolve reads the selected integrations. Named integrations that do not
// exist, or are assigned to another operator than -x, are problems to
// report once the others are done.
func (s *integrationSelection) resolve(ctx context.Context, c client.Reader, ns string) ([]camelv1.Integration, []error, error) {
	if s.All {
		list := &camelv1.IntegrationList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, nil, fmt.Errorf("listing integrations in namespace %s: %w", ns, err)
		}
		items := slices.DeleteFunc(list.Items, func(it camelv1.Integration) bool {
			return s.OperatorID != "" && it.OperatorID() != s.OperatorID
		})
		return items, nil, nil
	}
	var selected []camelv1.Integration
	var missing []string
	var problems []error
	for _, name := range slices.Compact(slices.Sorted(slices.Values(s.Names))) {
		it := &camelv1.Integration{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, it)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, fmt.Sprintf("%q", name))
		case err != nil:
			return nil, nil, fmt.Errorf("reading integration %q: %w", name, err)
		case s.OperatorID != "" && it.OperatorID() != s.OperatorID:
			problems = append(problems, fmt.Errorf("integration %q is assigned to operator %q, not %q: left alone", name, it.OperatorID(), s.OperatorID))
		default:
			selected = append(selected, *it)
		}
	}
	if len(missing) > 0 {
		notFound := command.WithExitCode(command.ExitNotFound,
			fmt.Errorf("integrations not found in namespace %s: %s", ns, strings.Join(missing, ", ")))
		problems = append([]error{notFound}, problems...)
	}
	return selected, problems, nil
}
