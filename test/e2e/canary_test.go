package e2e

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestACanaryMovesInWavesAndRollsBackAFailedOne: reassign --waves moves what -l selects
// from A to B wave by wave, each wave waiting until its integrations run under B; a
// move to an operator that cannot run them (it serves other namespaces) fails its first
// wave, which --rollback-on-failure moves back, and the later waves never move.
func TestACanaryMovesInWavesAndRollsBackAFailedOne(t *testing.T) {
	g := NewWithT(t)
	opNS, apps, elsewhere := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	a := env.InstallOperator(t, "wave-a", opNS, harness.OperatorOptions{})
	b := env.InstallOperator(t, "wave-b", opNS, harness.OperatorOptions{})
	broken := env.InstallOperator(t, "wave-broken", opNS, harness.OperatorOptions{WatchNamespaces: []string{elsewhere}})
	waitReady(t, a, b, broken)
	waitRegistered(t, a, b, broken)
	cli := adminCLI(t, apps)
	team, other := twoTeams(t, apps, "wave-a")

	t.Log("waves of 2, 4 and the rest move team a alone, each wave once the one before runs")
	out, errOut, err := cli("reassign", "--from", "wave-a", "--to", "wave-b", "-l", "team=a", "--waves", "2,4", "--wave-timeout", "2m")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	g.Expect(out).To(ContainSubstring("wave 1/3: moving 2 to wave-b (2 of 6)"))
	g.Expect(out).To(ContainSubstring("wave 2/3: moving 2 to wave-b (4 of 6)"))
	g.Expect(out).To(ContainSubstring("wave 3/3: 2 running under wave-b"))
	g.Expect(out).To(ContainSubstring("moved 6 from wave-a to wave-b in 3 waves"))
	for _, name := range team {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, "wave-b")
	}
	stayed, err := getIntegration(client.ObjectKeyFromObject(other))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stayed.OperatorID()).To(Equal("wave-a"), "-l team=a moved team b's integration")

	t.Log("a canary to an operator that cannot run them rolls its first wave back and stops")
	out, errOut, err = cli("reassign", "--from", "wave-b", "--to", "wave-broken", "--waves", "34%,100%",
		"--wave-timeout", "15s", "--rollback-on-failure")
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("wave 1/2: moving 3 to wave-broken (3 of 6)"))
	g.Expect(out).To(ContainSubstring("wave 1/2 failed; moving its 3 back to wave-b"))
	g.Expect(errOut).To(ContainSubstring("wave 1/2 failed: timed out after 15s"))
	g.Expect(errOut).To(ContainSubstring("3 not moved"))
	g.Expect(errOut).To(ContainSubstring("the 3 of this wave are back on wave-b"))
	g.Expect(out).NotTo(ContainSubstring("wave 2/2: moving"))
	for _, name := range team {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, "wave-b")
	}

	t.Log("bad waves are refused before anything moves")
	_, errOut, err = cli("reassign", "--from", "wave-b", "--to", "wave-a", "--waves", "10%,50%")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring("the last wave of percentages is 100%"))
	_, errOut, err = cli("reassign", "team-0", "--to", "wave-a", "--waves", "100%")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring("--waves moves what --from has"))
	for _, name := range team {
		it, err := getIntegration(client.ObjectKey{Namespace: apps, Name: name})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(it.OperatorID()).To(Equal("wave-b"), "a refused reassign moved %s", name)
	}
}

// twoTeams creates, in namespace apps for operator id, six integrations
// labelled team=a and one labelled team=b, and waits until all run. It
// returns the names of team a's integrations and team b's integration.
func twoTeams(t *testing.T, apps, id string) ([]string, *camelv1.Integration) {
	t.Helper()
	var team []string
	for i := range 6 {
		it := newIntegration(apps, fmt.Sprintf("team-%d", i), id, 1)
		it.Labels = map[string]string{"team": "a"}
		create(t, it)
		team = append(team, it.Name)
	}
	other := newIntegration(apps, "other-team", id, 1)
	other.Labels = map[string]string{"team": "b"}
	create(t, other)
	for _, name := range append(team, other.Name) {
		waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: name}, id)
	}
	return team, other
}
