package localcluster

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// listenerArg makes the test binary, started as a child, a stand-in for a
// component: it listens on a port, holds a large heap, and waits to be killed.
const listenerArg = "caravan-test-listener"

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == listenerArg {
		listenUntilKilled(os.Args[2])
	}
	os.Exit(m.Run())
}

// listenUntilKilled listens on addr with a 256 MiB heap, whose unmapping on
// exit is what makes a dying process slow to close its sockets.
func listenUntilKilled(addr string) {
	heap := make([]byte, 256<<20)
	for i := range heap {
		heap[i] = byte(i)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("listening on", addr, len(heap))
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(3)
		}
		_ = c.Close()
	}
}

// TestAKilledProcessHasFreedItsPort: once Kill's wait returns, the port the process
// listened on can be bound again at once, as a Restart of etcd or the kube-apiserver
// needs.
func TestAKilledProcessHasFreedItsPort(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for round := range 5 {
		port, err := FreeServerPort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		p, err := startProcess(dir, "listener", self, []string{listenerArg, addr}, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		waitListening(t, p, addr)
		if err := p.stop(0); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("round %d: the killed process's port is still taken: %v", round, err)
		}
		_ = l.Close()
	}
}

// TestTheLogOfARestartShowsOnlyItsOwnRun: a process started again on the same log
// reports, on failure, what it printed itself, not the output of the run before it.
func TestTheLogOfARestartShowsOnlyItsOwnRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, err := startProcess(dir, "listener", self, []string{listenerArg, "127.0.0.1:99999"}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if !first.waitReleased(30 * time.Second) {
		t.Fatal("the first run did not exit")
	}
	if got := first.lastLines(20); !strings.Contains(got, "invalid port") {
		t.Fatalf("the first run's log does not show its error: %q", got)
	}
	port, err := FreeServerPort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	second, err := startProcess(dir, "listener", self, []string{listenerArg, addr}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = second.stop(0) }()
	waitListening(t, second, addr)
	got := second.lastLines(20)
	if strings.Contains(got, "invalid port") || !strings.Contains(got, "listening on "+addr) {
		t.Fatalf("the second run's log shows %q, want only its own output", got)
	}
}

// waitListening waits until addr accepts connections, failing if p exits.
func waitListening(t *testing.T, p *Process, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return
		}
		if !p.Alive() {
			t.Fatalf("the listener exited: %s", p.lastLines(20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s after 30s", addr)
}
