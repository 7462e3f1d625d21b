package release

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"

	"github.com/blang/semver/v4"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/packaging"
)

// publishChart packages the chart of the source tree at version v, its operator image the one by
// digest, into the release's directory, and pushes it to <prefix>/charts/caravan. It returns the
// package's file name and the chart's reference by digest.
func publishChart(o Options, v semver.Version, operator string) (string, string, error) {
	ch, err := packaging.LoadChart(o.Source.Dir)
	if err != nil {
		return "", "", err
	}
	ch.Metadata.Version = v.String()
	ch.Metadata.AppVersion = o.Version
	if err := pinImage(ch, operator); err != nil {
		return "", "", err
	}
	file, err := chartutil.Save(ch, o.OutDir)
	if err != nil {
		return "", "", fmt.Errorf("packaging the chart: %w", err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", "", err
	}
	client, err := ChartClient(o.Registry)
	if err != nil {
		return "", "", err
	}
	repo := path.Join(o.Registry.Address, o.Prefix, ChartRepository, ch.Metadata.Name)
	pushed, err := client.Push(data, repo+":"+ch.Metadata.Version)
	if err != nil {
		return "", "", fmt.Errorf("pushing the chart to %s: %w", repo, err)
	}
	return filepath.Base(file), repo + "@" + pushed.Manifest.Digest, nil
}

// pinImage makes operator the default image of ch, in its values and in the values.yaml it is
// packaged with, comments included. It writes values.yaml anew, so it refuses a chart whose
// values.yaml this build would not have written.
func pinImage(ch *chart.Chart, operator string) error {
	data, err := packaging.ReleaseValues(operator)
	if err != nil {
		return err
	}
	values, err := chartutil.ReadValues(data)
	if err != nil {
		return fmt.Errorf("the chart's values: %w", err)
	}
	for _, f := range ch.Raw {
		if f.Name == chartutil.ValuesfileName {
			if !bytes.Equal(f.Data, packaging.ValuesYAML()) {
				return fmt.Errorf("the chart's %s is not the one this build writes: run make generate, or release from the same tree", chartutil.ValuesfileName)
			}
			f.Data = data
			ch.Values = values
			return nil
		}
	}
	return fmt.Errorf("the chart has no %s", chartutil.ValuesfileName)
}

// ChartClient is Helm's registry client for reg: its credentials, plain HTTP when insecure, and its
// CA certificates.
func ChartClient(reg image.Registry) (*registry.Client, error) {
	opts := []registry.ClientOption{registry.ClientOptEnableCache(false)}
	if reg.Auth != nil {
		cfg, err := reg.Auth.Authorization()
		if err != nil {
			return nil, fmt.Errorf("the credentials of %s: %w", reg.Address, err)
		}
		if cfg.Username != "" {
			opts = append(opts, registry.ClientOptBasicAuth(cfg.Username, cfg.Password))
		}
	}
	switch {
	case reg.Insecure:
		opts = append(opts, registry.ClientOptPlainHTTP())
	case len(reg.CACertificates) > 0:
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(reg.CACertificates) {
			return nil, fmt.Errorf("the CA certificates of %s hold no PEM certificate", reg.Address)
		}
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		opts = append(opts, registry.ClientOptHTTPClient(&http.Client{Transport: transport}))
	}
	return registry.NewClient(opts...)
}
