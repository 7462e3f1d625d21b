package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/scheme"
)

func TestAServerThatCannotBeReachedIsNamedWithWhatToCheck(t *testing.T) {
	c, err := client.New(&rest.Config{Host: "https://127.0.0.1:1"}, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	err = c.List(context.Background(), &camelv1.IntegrationList{})
	if err == nil {
		t.Fatal("listing on a server that does not listen succeeded")
	}
	f := NewKubeFlags()
	*f.APIServer = "https://127.0.0.1:1"
	explained := f.Explain(fmt.Errorf("listing integrations: %w", err))
	want := "cannot reach the Kubernetes API server https://127.0.0.1:1 (connect: connection refused): check that the cluster runs"
	if !strings.HasPrefix(explained.Error(), want) {
		t.Errorf("got %q, want it to start with %q", explained, want)
	}
	if !errors.Is(explained, err) || command.ExitCode(explained) != command.ExitFailure {
		t.Errorf("the explained error lost the original, or has exit code %d", command.ExitCode(explained))
	}
	// Another server that cannot be reached, such as a registry, is not the API server.
	other := NewKubeFlags()
	*other.APIServer = "https://127.0.0.1:2"
	if other := other.Explain(err); other.Error() != err.Error() {
		t.Errorf("an error of another server became %q", other)
	}
}

func TestAPIErrorsGetTheExitCodeOfWhatTheyTell(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	it := schema.GroupResource{Group: camelv1.GroupVersion.Group, Resource: "integrations"}
	notFound, forbidden := apierrors.NewNotFound(it, "x"), apierrors.NewForbidden(it, "x", errors.New("no right"))
	for _, tc := range []struct {
		name string
		err  error
		code int
	}{
		{"a missing resource", fmt.Errorf("reading integration x: %w", notFound), command.ExitNotFound},
		{"a missing right", fmt.Errorf("listing integrations: %w", forbidden), command.ExitForbidden},
		{"missing resources among others", errors.Join(notFound, apierrors.NewNotFound(it, "y")), command.ExitNotFound},
		{"a code the command chose", command.WithExitCode(command.ExitUsage, notFound), command.ExitUsage},
		{"any other error", errors.New("boom"), command.ExitFailure},
	} {
		if got := command.ExitCode(NewKubeFlags().Explain(tc.err)); got != tc.code {
			t.Errorf("%s: exit code %d, want %d", tc.name, got, tc.code)
		}
	}
}
