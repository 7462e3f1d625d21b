package runcmd

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

func promote(t *testing.T, ns, name, to string, force bool) (string, error) {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &PromoteOptions{Name: name, To: to, Force: force, Cluster: cmdutil.Cluster{Namespace: ns, Client: clitest.Cluster(t).Client}, now: time.Now, IOStreams: streams}
	if err := o.Validate(); err != nil {
		return "", err
	}
	err := o.Run(context.Background())
	return out.String(), err
}

func TestPromoteCopiesARunningIntegrationOntoAKitOfItsImage(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	dev, prod := clitest.Cluster(t).Namespace(t), clitest.Cluster(t).Namespace(t)
	const image = "registry.local/caravan/kit@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	k := &camelv1.IntegrationKit{ObjectMeta: metav1.ObjectMeta{Namespace: dev, Name: "kit-abc",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "op-dev"}},
		Spec: camelv1.IntegrationKitSpec{Dependencies: []string{"camel:http", "mvn:org.example:lib:1.0"}}}
	src := clitest.Running(dev, "orders", "op-dev", image, "kit-abc")
	src.Labels["team"] = "orders"
	clitest.Create(t, k, src)

	out, err := promote(t, dev, "orders", prod, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(`^integrationkit "promoted-[0-9a-f]{16}" created in namespace ` + prod +
		"\nintegration \"orders\" created in namespace " + prod + "\n$"))
	copied := &camelv1.Integration{}
	g.Expect(clitest.Cluster(t).Client.Get(ctx, client.ObjectKey{Namespace: prod, Name: "orders"}, copied)).To(Succeed())
	g.Expect(copied.OperatorID()).To(Equal("op-dev"))
	g.Expect(copied.Labels).To(HaveKeyWithValue("team", "orders"))
	g.Expect(copied.Annotations).To(HaveKeyWithValue(PromotedFromAnnotation, dev+"/orders@"+image))
	g.Expect(copied.Spec.IntegrationKit).NotTo(BeNil())
	pinned := &camelv1.IntegrationKit{}
	g.Expect(clitest.Cluster(t).Client.Get(ctx, client.ObjectKey{Namespace: prod, Name: copied.Spec.IntegrationKit.Name}, pinned)).To(Succeed())
	g.Expect(pinned.Spec.Image).To(Equal(image), "the copy runs the source's image: nothing is built again")
	g.Expect(pinned.Spec.Dependencies).To(Equal([]string{"camel:http", "mvn:org.example:lib:1.0"}))
	g.Expect(pinned.Labels).To(HaveKeyWithValue(camelv1.IntegrationKitTypeLabel, camelv1.IntegrationKitTypeExternal))

	t.Log("again: unchanged, and the same kit")
	out, err = promote(t, dev, "orders", prod, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(out, "unchanged")).To(Equal(2), out)
}

func TestPromoteCopiesAPipeOntoTheImageItsIntegrationRuns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	dev, prod := clitest.Cluster(t).Namespace(t), clitest.Cluster(t).Namespace(t)
	p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: dev, Name: "ticks",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "op-dev"}},
		Spec: camelv1.PipeSpec{
			Source: camelv1.Endpoint{Ref: &corev1.ObjectReference{Kind: "Kamelet", Name: "timer-source", Namespace: dev}},
			Sink:   camelv1.Endpoint{URI: ptr.To("log:info")},
		}}
	clitest.Create(t, p)
	it := clitest.ControlledByPipe(clitest.Running(dev, "ticks", "op-dev", "example/ticks:1", ""), "ticks")
	it.OwnerReferences[0].UID = p.UID
	clitest.Create(t, it)

	_, err := promote(t, dev, "ticks", prod, true)
	g.Expect(err).NotTo(HaveOccurred())
	copied := &camelv1.Pipe{}
	g.Expect(clitest.Cluster(t).Client.Get(ctx, client.ObjectKey{Namespace: prod, Name: "ticks"}, copied)).To(Succeed())
	g.Expect(copied.Spec.Source.Ref.Namespace).To(Equal(prod))
	g.Expect(string(copied.Spec.Traits["container"].Raw)).To(Equal(`{"image":"example/ticks:1"}`))
	g.Expect(apierrors.IsNotFound(clitest.Cluster(t).Client.Get(ctx, client.ObjectKey{Namespace: prod, Name: "ticks"}, &camelv1.Integration{}))).
		To(BeTrue(), "the Pipe's operator makes its Integration")
}

func TestPromoteRefusesWhatDoesNotRunAndAnOperatorThatCannotRunTheCopy(t *testing.T) {
	g := NewWithT(t)
	dev, prod := clitest.Cluster(t).Namespace(t), clitest.Cluster(t).Namespace(t)
	building := clitest.Running(dev, "building", "op-dev", "", "")
	building.Status.Phase = camelv1.IntegrationPhaseBuildingKit
	clitest.Create(t, building, clitest.Running(dev, "orders", "nobody-runs-this", "example/orders:1", ""))

	_, err := promote(t, dev, "building", prod, true)
	g.Expect(err).To(MatchError(ContainSubstring(`integration "building" is in phase "Building Kit": only a Running integration is promoted`)))
	_, err = promote(t, dev, "orders", prod, false)
	g.Expect(err).To(MatchError(ContainSubstring(`operator id "nobody-runs-this" is not registered`)))
	_, err = promote(t, dev, "orders", dev, true)
	g.Expect(err).To(MatchError(ContainSubstring("is the namespace of the source")))
	g.Expect(clitest.RemainingIntegrations(t, prod)).To(BeEmpty(), "a refused promotion made something")
}
