package observecmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/cli/clitest"
	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

func TestDumpArchivesAnOperatorsShareRedacted(t *testing.T) {
	ns := clitest.Cluster(t).Namespace(t)
	a1 := clitest.AssignedIntegration(ns, "a1", "op-dump")
	a1.Spec.Traits = camelv1.Traits{
		"camel":       camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(`{"properties":["db.password=hunter2","greeting=hi"]}`)}},
		"environment": camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(`{"vars":["TOKEN=abc123"]}`)}},
	}
	pipe := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p1",
		Annotations: map[string]string{camelv1.OperatorIDAnnotation: "op-dump"}}}
	pipe.Spec.Source = camelv1.Endpoint{URI: ptr.To("timer:x")}
	pipe.Spec.Sink = camelv1.Endpoint{URI: ptr.To("http:example"),
		Properties: &camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(`{"authPassword":"s3cret","period":"1000"}`)}}}
	clitest.Create(t, a1, clitest.AssignedIntegration(ns, "b1", "op-other"), pipe, clitest.RegisteredOperator("op-dump", time.Now()))
	pods, err := kubernetes.NewForConfig(clitest.Cluster(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dump.tar.gz")
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	o := &DumpOptions{OperatorID: "op-dump", File: file, Cluster: cmdutil.Cluster{Namespace: ns, Client: clitest.Cluster(t).Client, Pods: pods}, now: time.Now, IOStreams: streams}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	files := clitest.ReadArchive(t, file)
	for _, name := range []string{"index.txt", "cluster/integrationoperators.yaml", "namespaces/" + ns + "/integrations.yaml",
		"namespaces/" + ns + "/pipes.yaml"} {
		if _, ok := files[name]; !ok {
			t.Errorf("the archive lacks %s: it holds %s", name, files["index.txt"])
		}
	}
	if files["operator/NO-PODS.txt"] == "" && files["operator/NOT-RUNNING.txt"] == "" {
		t.Errorf("the archive does not say that op-dump runs no pod: %s", files["index.txt"])
	}
	its := files["namespaces/"+ns+"/integrations.yaml"]
	for _, want := range []string{"name: a1", "db.password=<redacted>", "greeting=<redacted>", "TOKEN=<redacted>"} {
		if !strings.Contains(its, want) {
			t.Errorf("integrations.yaml lacks %q:\n%s", want, its)
		}
	}
	all := strings.Join(mapValues(files), "\n")
	for _, leak := range []string{"hunter2", "abc123", "s3cret", "name: b1", "managedFields"} {
		if strings.Contains(all, leak) {
			t.Errorf("the archive holds %q", leak)
		}
	}
	if !strings.Contains(files["namespaces/"+ns+"/pipes.yaml"], "period: \"1000\"") {
		t.Errorf("an endpoint property that is no credential was redacted:\n%s", files["namespaces/"+ns+"/pipes.yaml"])
	}
	if err := o.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "file exists") {
		t.Errorf("a second dump over the first: %v", err)
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
