package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestCLIReadShowsOwnershipOrphansAndOperators drives the read commands
// of the CLI against installed operators: an integration for
// each of two live operators, one unassigned, one for an id nobody
// registered and one whose operator stopped and went stale. get's filters
// return exactly the right sets; operators, version and describe show the
// registrations, versions, conditions, children and Events.
func TestCLIReadShowsOwnershipOrphansAndOperators(t *testing.T) {
	nsA, nsB, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	a := env.InstallOperator(t, "read-a", nsA, harness.OperatorOptions{})
	b := env.InstallOperator(t, "read-b", nsB, harness.OperatorOptions{})
	gone := env.InstallOperator(t, "read-gone", nsA, harness.OperatorOptions{})
	waitReady(t, a, b, gone)
	admin := env.Kubeconfig(t, "admin", "system:masters")
	cli := func(args ...string) (string, string, error) {
		return caravan(append([]string{"--kubeconfig", admin}, args...)...)
	}
	clientVersion := strings.TrimPrefix(strings.TrimSpace(mustCaravan(t, cli, "version")), "Client: ")

	for _, it := range []*camelv1.Integration{
		newIntegration(apps, "for-a", "read-a", 1),
		newIntegration(apps, "for-b", "read-b", 1),
		newIntegration(apps, "unassigned", "", 1),
		newIntegration(apps, "for-nobody", "read-nobody", 1),
		newIntegration(apps, "left-behind", "read-gone", 1),
	} {
		create(t, it)
	}
	waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: "for-a"}, "read-a")
	waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: "for-b"}, "read-b")
	waitRunningUnder(t, client.ObjectKey{Namespace: apps, Name: "left-behind"}, "read-gone")
	t.Log("the operator of left-behind stops; its registration goes stale after 6s")
	gone.Stop(t)

	t.Run("get filters by operator, unassigned and orphaned", func(t *testing.T) {
		g := NewWithT(t)
		all := mustCaravan(t, cli, "get", "-n", apps)
		g.Expect(tableColumn(t, all, "NAME")).To(Equal([]string{"for-a", "for-b", "for-nobody", "left-behind", "unassigned"}))
		g.Expect(mustCaravan(t, cli, "get", "integrations", "-n", apps, "-x", "read-a")).To(
			WithTransform(tableNames(t), Equal([]string{"for-a"})))
		g.Expect(mustCaravan(t, cli, "get", "it", "-n", apps, "--operator-id", "read-b")).To(
			WithTransform(tableNames(t), Equal([]string{"for-b"})))
		out, errOut, err := cli("get", "it", "-n", apps, "--operator", "read-b")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(tableNames(t)(out)).To(Equal([]string{"for-b"}), "the old --operator still works")
		g.Expect(errOut).To(ContainSubstring("use -x/--operator-id"))
		g.Expect(mustCaravan(t, cli, "get", "it", "-n", apps, "-l", "camel.apache.org/operator.id in (read-a,read-b)",
			"-o", "jsonpath={.items[*].metadata.name}")).To(Equal("for-a for-b"))
		g.Expect(mustCaravan(t, cli, "get", "it", "-n", apps, "--unassigned")).To(
			WithTransform(tableNames(t), Equal([]string{"unassigned"})))
		var orphaned string
		g.Eventually(func() []string {
			orphaned = mustCaravan(t, cli, "get", "it", "-n", apps, "--orphaned")
			return tableColumn(t, orphaned, "NAME")
		}, timeout, poll).Should(Equal([]string{"for-nobody", "left-behind"}))
		g.Expect(tableColumn(t, orphaned, "REASON")).To(Equal([]string{"NotRegistered", "HeartbeatStale"}))
		g.Expect(tableColumn(t, orphaned, "OPERATOR")).To(Equal([]string{"read-nobody", "read-gone"}))

		out, errOut, err = cli("get", "it", "-n", apps, "-x", "read-nobody")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).To(BeEmpty())
		g.Expect(errOut).To(Equal(fmt.Sprintf("No resources found in %s namespace.\n", apps)))
		_, errOut, err = cli("get", "it", "-n", apps, "--unassigned", "--orphaned")
		g.Expect(err).To(HaveOccurred())
		g.Expect(errOut).To(ContainSubstring("exclude each other"))
	})

	t.Run("get prints wide tables, names and YAML", func(t *testing.T) {
		g := NewWithT(t)
		wide := mustCaravan(t, cli, "get", "it", "for-a", "-n", apps, "-o", "wide")
		g.Expect(tableColumn(t, wide, "OWNER")).To(Equal([]string{"read-a"}))
		g.Expect(tableColumn(t, wide, "READY")).To(Equal([]string{"True"}))
		g.Expect(tableColumn(t, wide, "PHASE")).To(Equal([]string{"Running"}))
		g.Expect(mustCaravan(t, cli, "get", "it", "-n", apps, "-x", "read-a", "-o", "name")).To(
			Equal("integration.camel.apache.org/for-a\n"))
		g.Expect(mustCaravan(t, cli, "get", "it", "for-a", "-n", apps, "-o", "yaml")).To(
			And(ContainSubstring("kind: Integration\n"), ContainSubstring("phase: Running"), Not(ContainSubstring("managedFields"))))
		_, errOut, err := cli("get", "it", "missing", "-n", apps)
		g.Expect(err).To(HaveOccurred())
		g.Expect(errOut).To(ContainSubstring(`"missing" not found`))
	})

	t.Run("operators lists the registrations with their namespace, version, readiness and share", func(t *testing.T) {
		g := NewWithT(t)
		g.Eventually(func() map[string]string {
			return tableRows(t, mustCaravan(t, cli, "operators"), "ID")
		}, timeout, poll).Should(And(
			HaveKeyWithValue("read-a", fmt.Sprintf("read-a %s false %s", nsA, clientVersion)+" * * True 1"),
			HaveKeyWithValue("read-b", fmt.Sprintf("read-b %s false %s", nsB, clientVersion)+" * * True 1"),
			HaveKeyWithValue("read-gone", fmt.Sprintf("read-gone %s false %s", nsA, clientVersion)+" * * Stale 1"),
		))
		out := mustCaravan(t, cli, "operators", "-o", "yaml")
		g.Expect(out).To(And(ContainSubstring("kind: List"), ContainSubstring("name: read-a"), ContainSubstring("namespace: "+nsA)))

		t.Log("a user who may read registrations but not integrations sees ? instead of a count")
		viewer := env.Kubeconfig(t, "read-viewer")
		out, errOut, err := caravan("--kubeconfig", viewer, "operators")
		g.Expect(err).NotTo(HaveOccurred(), errOut)
		g.Expect(errOut).To(BeEmpty())
		g.Expect(tableRows(t, out, "ID")).To(HaveKeyWithValue("read-a", fmt.Sprintf("read-a %s false %s * * True ?", nsA, clientVersion)))
	})

	t.Run("version reads one operator's registration", func(t *testing.T) {
		g := NewWithT(t)
		out, errOut, err := cli("version", "-x", "read-a")
		g.Expect(err).NotTo(HaveOccurred(), errOut)
		g.Expect(errOut).To(BeEmpty())
		g.Expect(out).To(Equal(fmt.Sprintf("Client: %s\nOperator read-a: %s (namespace %s)\n", clientVersion, clientVersion, nsA)))
		out, _, err = cli("version", "--all")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).To(ContainSubstring(fmt.Sprintf("Operator read-b: %s (namespace %s)\n", clientVersion, nsB)))
		_, errOut, err = cli("version", "-x", "nope")
		g.Expect(err).To(HaveOccurred())
		g.Expect(errOut).To(ContainSubstring(`operator "nope" is not registered`))
	})

	t.Run("describe shows conditions, children and Events", func(t *testing.T) {
		g := NewWithT(t)
		var out string
		g.Eventually(func() string {
			out = mustCaravan(t, cli, "describe", "integration", "for-a", "-n", apps)
			return out
		}, timeout, poll).Should(MatchRegexp(`(?m)^  Normal\s+IntegrationPhaseUpdated\s+\S.*\s+Integration for-a in phase "Running"`))
		g.Expect(out).To(MatchRegexp(`(?m)^Operator:\s+read-a$`))
		g.Expect(out).To(MatchRegexp(`(?m)^Owner:\s+read-a \(epoch 1\)$`))
		g.Expect(out).To(MatchRegexp(`(?m)^Phase:\s+Running$`))
		g.Expect(out).To(MatchRegexp(`(?m)^  Ready\s+True\s+DeploymentReady\s`))
		g.Expect(out).To(MatchRegexp(`(?m)^  Deployment\s+for-a\s+1/1 ready\s`))
		g.Expect(out).To(MatchRegexp(`(?m)^  ConfigMap\s+for-a-camel\s`))

		out = mustCaravan(t, cli, "describe", "operator", "read-gone")
		g.Expect(out).To(MatchRegexp(`(?m)^Namespace:\s+%s$`, nsA))
		g.Expect(out).To(MatchRegexp(`(?m)^Live:\s+no: `))
		g.Expect(out).To(MatchRegexp(`(?m)^Integrations:\s+1$`))
	})
}

func mustCaravan(t *testing.T, cli func(...string) (string, string, error), args ...string) string {
	t.Helper()
	out, errOut, err := cli(args...)
	if err != nil {
		t.Fatalf("caravan %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// tableColumn reads one column of a table printed by the CLI, by its header;
// cells hold no spaces, except PHASE's "Building Kit" which the tests avoid.
func tableColumn(t *testing.T, table, header string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	// Cells are read by the header's positions: a cell may be empty, as kubectl prints a missing value.
	start := -1
	for i := 0; i < len(lines[0]); i++ {
		if (i == 0 || lines[0][i-1] == ' ') && strings.HasPrefix(lines[0][i:], header) &&
			(i+len(header) == len(lines[0]) || lines[0][i+len(header)] == ' ') {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("no %s column in:\n%s", header, table)
	}
	end := -1 // the last column runs to the end of each line
	if next := strings.IndexFunc(lines[0][start+len(header):], func(r rune) bool { return r != ' ' }); next >= 0 {
		end = start + len(header) + next
	}
	var cells []string
	for _, l := range lines[1:] {
		cell := ""
		switch {
		case start >= len(l):
		case end < 0:
			cell = strings.TrimSpace(l[start:])
		default:
			cell = strings.TrimSpace(l[start:min(end, len(l))])
		}
		cells = append(cells, cell)
	}
	return cells
}

// tableNames is column NAME as a transform for Gomega.
func tableNames(t *testing.T) func(string) []string {
	return func(table string) []string { return tableColumn(t, table, "NAME") }
}

// tableRows maps each row of a table, by the cell of the key column, to its
// cells joined by one space; HEARTBEAT and LEADER, which change, read *.
func tableRows(t *testing.T, table, key string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	headers := strings.Fields(lines[0])
	pos := slices.Index(headers, key)
	out := map[string]string{}
	for _, l := range lines[1:] {
		cells := strings.Fields(l)
		for i, h := range headers {
			if (h == "HEARTBEAT" || h == "LEADER") && i < len(cells) {
				cells[i] = "*"
			}
		}
		out[cells[pos]] = strings.Join(cells, " ")
	}
	return out
}
