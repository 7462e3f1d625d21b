package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The users of the audit logs below: the bench's installed operators are
// the ServiceAccounts of its operator namespace; the bare operator has a
// user of its own.
const (
	operatorUsers = "system:serviceaccount:bench-system:"
	bareUser      = "caravan:bare:bench-bare"
)

func TestIntegrationOfNamesTheOwningIntegration(t *testing.T) {
	cases := map[[2]string]string{
		{"integrations", "mover-0001"}:            "mover-0001",
		{"deployments", "mover-0001"}:             "mover-0001",
		{"configmaps", "mover-0001-camel"}:        "mover-0001",
		{"events", "mover-0001.18a2b3c4d5e6f7a8"}: "mover-0001",
		{"events", "mover.0001.18a2b3c4d5e6f7a8"}: "mover.0001",
	}
	for in, want := range cases {
		if got := integrationOf(in[0], in[1]); got != want {
			t.Errorf("integrationOf(%s, %s) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

// auditLine is one write of an audit log, in namespace ns.
func auditLine(user, verb, resource, sub, name string, at time.Time, code int) string {
	return fmt.Sprintf(`{"stage":"ResponseComplete","verb":%q,"user":{"username":%q},`+
		`"objectRef":{"resource":%q,"subresource":%q,"namespace":"ns","name":%q},`+
		`"responseStatus":{"code":%d},"stageTimestamp":%q}`,
		verb, user, resource, sub, name, code, at.Format(time.RFC3339Nano))
}

// writeAudit writes lines as an audit log and returns its path.
func writeAudit(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWritesByKindCountsTheOperatorsWritesOfOneRun(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a := operatorUsers + "a-operator"
	path := writeAudit(t,
		auditLine(a, "patch", "integrations", "status", "it", start.Add(-time.Minute), 200), // an earlier run
		auditLine(a, "patch", "integrations", "status", "it", start.Add(time.Second), 200),
		auditLine(a, "patch", "integrations", "status", "it", start.Add(2*time.Second), 200),
		auditLine(a, "patch", "integrations", "status", "it", start.Add(2*time.Second), 409), // refused
		auditLine(a, "patch", "deployments", "", "it", start.Add(time.Second), 200),
		auditLine("admin", "create", "integrations", "", "it", start, 201), // not an operator
		auditLine(bareUser, "create", "deployments", "", "it", start.Add(time.Second), 201),
		auditLine(bareUser, "patch", "integrations", "status", "it", start.Add(2*time.Second), 200),
	)
	got, err := WritesByKind(path, "ns", operatorUsers, start)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"patch integrations/status": 2, "patch deployments": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Caravan's operators' writes = %v, want %v", got, want)
	}
	got, err = WritesByKind(path, "ns", bareUser, start)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]int{"patch integrations/status": 1, "create deployments": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the bare operator's writes = %v, want %v", got, want)
	}
}

func TestWritesAfterSeparatesTheReleaseFromLaterWrites(t *testing.T) {
	patched := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a, b := "caravan:operator:a", "caravan:operator:b"
	after := patched.Add(time.Second)
	path := writeAudit(t,
		auditLine(a, "patch", "deployments", "", "it", patched.Add(-time.Second), 200), // before the move
		auditLine(a, "patch", "integrations", "status", "it", after, 200),              // release
		auditLine(a, "patch", "integrations", "", "it", after, 200),                    // label handover
		auditLine(a, "patch", "integrations", "", "it", after, 409),                    // refused
		auditLine(b, "patch", "deployments", "", "it", after, 200),                     // the new owner
		auditLine(a, "patch", "deployments", "", "it", after, 200),                     // after the release
		auditLine(a, "create", "events", "", "it.abc123", after, 201),                  // after the release
		auditLine(a, "patch", "deployments", "", "other", after, 200),                  // not moved
	)
	got, err := WritesAfter(path, a, "ns", map[string]time.Time{"it": patched})
	if err != nil {
		t.Fatal(err)
	}
	if got.Release != 2 {
		t.Errorf("release writes = %d, want 2", got.Release)
	}
	want := map[string]int{"patch deployments": 1, "create events": 1}
	if fmt.Sprint(got.Beyond) != fmt.Sprint(want) {
		t.Errorf("writes after the release = %v, want %v", got.Beyond, want)
	}
}
