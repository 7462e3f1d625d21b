// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package maven

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"strings"
)

// Proxy is one of Maven's settings.xml proxies.
type Proxy struct {
	ID            string `xml:"id"`
	Active        bool   `xml:"active"`
	Protocol      string `xml:"protocol"`
	Host          string `xml:"host"`
	Port          string `xml:"port"`
	Username      string `xml:"username,omitempty"`
	Password      string `xml:"password,omitempty"`
	NonProxyHosts string `xml:"nonProxyHosts,omitempty"`
}

// ProxySettings is a settings.xml whose proxies are those of the HTTP_PROXY, HTTPS_PROXY and NO_PROXY
// variables given (as Camel K's builder makes them), or "" when neither proxy is set. A proxy that
// is not a URL is an error.
func ProxySettings(httpProxy, httpsProxy, noProxy string) (string, error) {
	var proxies []Proxy
	for _, p := range []struct{ protocol, value, port string }{{"http", httpProxy, "80"}, {"https", httpsProxy, "443"}} {
		if p.value == "" {
			continue
		}
		u, err := url.Parse(p.value)
		if err != nil || u.Hostname() == "" {
			return "", fmt.Errorf("%s_PROXY %q is not a proxy URL, such as http://proxy:3128", strings.ToUpper(p.protocol), p.value)
		}
		proxy := Proxy{ID: p.protocol + "-proxy", Active: true, Protocol: p.protocol, Host: u.Hostname(),
			Port: u.Port(), NonProxyHosts: nonProxyHosts(noProxy)}
		if proxy.Port == "" {
			proxy.Port = p.port
		}
		if u.User != nil {
			proxy.Username = u.User.Username()
			proxy.Password, _ = u.User.Password()
		}
		proxies = append(proxies, proxy)
	}
	if len(proxies) == 0 {
		return "", nil
	}
	out, err := xml.MarshalIndent(struct {
		XMLName xml.Name `xml:"settings"`
		Proxies []Proxy  `xml:"proxies>proxy"`
	}{Proxies: proxies}, "", "  ")
	if err != nil {
		return "", err
	}
	return xml.Header + string(out) + "\n", nil
}

// nonProxyHosts is NO_PROXY as Maven writes it: hosts separated by '|', a leading dot as '*.'.
func nonProxyHosts(noProxy string) string {
	var hosts []string
	for _, h := range strings.Split(noProxy, ",") {
		h = strings.TrimSpace(h)
		switch {
		case h == "":
			continue
		case strings.HasPrefix(h, "."):
			h = "*" + h
		}
		hosts = append(hosts, h)
	}
	return strings.Join(hosts, "|")
}
