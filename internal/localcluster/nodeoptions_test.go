package localcluster

import (
	"strings"
	"testing"
)

func TestTheKubeletNodeRefusesWhatItCannotRunOn(t *testing.T) {
	kubelet := Options{Node: NodeKubelet, Full: true, Registry: true}
	for _, c := range []struct {
		name string
		opts func(o Options) Options
		want string
	}{
		{"a directory its sockets fit under", func(o Options) Options { o.Dir = "/tmp/" + strings.Repeat("d", 53); return o }, ""},
		{"a directory too long for its sockets", func(o Options) Options { o.Dir = "/tmp/" + strings.Repeat("d", 54); return o },
			"the kubelet node needs a cluster directory of at most 58 bytes"},
		{"no registry", func(o Options) Options { o.Dir, o.Registry = "/tmp/c", false; return o }, "needs the registry"},
		{"not a full cluster", func(o Options) Options { o.Dir, o.Full = "/tmp/c", false; return o }, "needs a full cluster"},
		{"the process node, whatever its directory", func(o Options) Options {
			o.Dir, o.Node = "/tmp/"+strings.Repeat("d", 200), NodeProcess
			return o
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkNodeOptions(c.opts(kubelet))
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("checkNodeOptions = %v, want %q", err, c.want)
			}
		})
	}
}

func TestTheClusterDNSServesTheClusterAndForwardsTheRest(t *testing.T) {
	conf := coreDNSConfig("/c/coredns.kubeconfig", "10.88.0.1:8181", "/etc/resolv.conf")
	for _, want := range []string{"bind " + NodeAddress, "ready 10.88.0.1:8181", "kubernetes cluster.local in-addr.arpa ip6.arpa {",
		"kubeconfig /c/coredns.kubeconfig", "forward . /etc/resolv.conf"} {
		if !strings.Contains(conf, want) {
			t.Errorf("the Corefile lacks %q:\n%s", want, conf)
		}
	}
	if conf := coreDNSConfig("/c/k", "10.88.0.1:8181", ""); strings.Contains(conf, "forward") {
		t.Errorf("without a resolver the Corefile still forwards:\n%s", conf)
	}
}
