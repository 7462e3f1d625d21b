package maven

import (
	"strings"
	"testing"
)

func TestTheProxyVariablesBecomeMavensProxies(t *testing.T) {
	got, err := ProxySettings("http://user:s3cret@proxy.corp:3128", "https://secure.corp", ".svc, localhost,,10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<id>http-proxy</id>", "<protocol>http</protocol>", "<host>proxy.corp</host>", "<port>3128</port>",
		"<username>user</username>", "<password>s3cret</password>", "<nonProxyHosts>*.svc|localhost|10.0.0.1</nonProxyHosts>",
		"<id>https-proxy</id>", "<host>secure.corp</host>", "<port>443</port>"} {
		if !strings.Contains(got, want) {
			t.Errorf("the settings lack %s:\n%s", want, got)
		}
	}
	if got, err := ProxySettings("", "", ".svc"); got != "" || err != nil {
		t.Errorf("no proxy gave %q, %v", got, err)
	}
	if _, err := ProxySettings("not a url", "", ""); err == nil || !strings.Contains(err.Error(), `HTTP_PROXY "not a url" is not a proxy URL`) {
		t.Errorf("a proxy that is no URL gave %v", err)
	}
}
