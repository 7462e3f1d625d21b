package harness

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards TCP connections to a target, as the network between a
// client and a server does, with faults a test turns on. A cut is a
// partition: every connection it carries is closed, every new one too,
// until it heals. A delay is held before each chunk of the server's
// answers (a slow server, or a slow network).
type Proxy struct {
	listener net.Listener
	target   string
	delay    atomic.Int64 // nanoseconds

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

// StartProxy listens on host (an address of this machine), on a free
// port, and forwards to target until the test ends.
func StartProxy(t testing.TB, host, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{listener: l, target: target, conns: map[net.Conn]bool{}}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go p.forward(in)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		p.Cut(true)
	})
	return p
}

// Address is where clients reach the target through the proxy.
func (p *Proxy) Address() string { return p.listener.Addr().String() }

// Port is the port of Address.
func (p *Proxy) Port() int { return p.listener.Addr().(*net.TCPAddr).Port }

// SetDelay holds each chunk of the target's answers for d from now on.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// Cut cuts the proxy, closing every connection it carries, or heals it.
func (p *Proxy) Cut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

// track records a pair of connections, unless the proxy is cut.
func (p *Proxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[in], p.conns[out] = true, true
	return true
}

func (p *Proxy) untrack(in, out net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, in)
	delete(p.conns, out)
}

func (p *Proxy) forward(in net.Conn) {
	defer in.Close()
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer out.Close()
	if !p.track(in, out) {
		return
	}
	defer p.untrack(in, out)
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				if _, werr := out.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		_ = out.Close()
	}()
	buf := make([]byte, 16<<10)
	for {
		n, err := out.Read(buf)
		if n > 0 {
			time.Sleep(time.Duration(p.delay.Load()))
			if _, werr := in.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
