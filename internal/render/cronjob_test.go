// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/yaml"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/trait"
)

func TestAScheduledIntegrationRunsAsACronJobWhosePodsFireOnceAtOnce(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{"cron":{"timeZone":"Europe/Rome"},"container":{"limitMemory":"1Gi"}}`)
	uri := "cron:tab?schedule=0+*/1+*+*+*+?"
	in.Integration.Spec.Sources = nil
	in.Integration.Spec.Flows = []camelv1.RawObject{raw(`{"from":{"uri":"` + uri + `","steps":[{"log":"Magicstring!"}]}}`)}
	in.Traits = in.Traits.WithConsumers([]trait.Consumer{{URI: uri}})

	cj, err := CronJob(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cj.Name).To(Equal("hello"))
	g.Expect(cj.Spec.Schedule).To(Equal("*/1 * * * *"))
	g.Expect(*cj.Spec.TimeZone).To(Equal("Europe/Rome"))
	g.Expect(cj.Spec.ConcurrencyPolicy).To(Equal(batchv1.ForbidConcurrent))
	g.Expect(*cj.Spec.JobTemplate.Spec.ActiveDeadlineSeconds).To(Equal(int64(60)))
	g.Expect(*cj.Spec.JobTemplate.Spec.BackoffLimit).To(Equal(int32(2)))
	pod := cj.Spec.JobTemplate.Spec.Template
	g.Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	g.Expect(pod.Labels).To(HaveKeyWithValue(camelv1.IntegrationLabel, "hello"))
	g.Expect(pod.Spec.Containers[0].Args).To(ContainElement("-Xmx537M"), "the pod is the Deployment's, heap sized")
	g.Expect(cj.Labels).To(HaveKey(AppliedHashLabel))

	cm, err := ConfigMap(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Data[FlowsKey]).To(ContainSubstring(trait.OneShotURI))
	g.Expect(cm.Data[FlowsKey]).NotTo(ContainSubstring("cron:tab"), "the cron consumer would wait for its schedule")
	g.Expect(cm.Data[PropertiesKey]).To(ContainSubstring("camel.main.durationMaxMessages=1\n"))

	in.Traits = in.Traits.WithConsumers([]trait.Consumer{{URI: uri}, {URI: "platform-http:/x"}})
	cj, err = CronJob(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cj).To(BeNil(), "an integration with a consumer that serves runs as a Deployment")
	cm, err = ConfigMap(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Data[PropertiesKey]).NotTo(ContainSubstring("durationMaxMessages"))
	g.Expect(cm.Data[FlowsKey]).To(ContainSubstring("cron:tab"))
}

// TestAScheduleGivenAsAParameterGoesWithTheConsumer: as Camel K's cron-quartz case writes it, a
// quartz consumer of a YAML source with its cron as a parameter runs as a CronJob whose pods fire at
// once: the from becomes the one-shot timer, without the parameters, and the rest stays as written.
func TestAScheduleGivenAsAParameterGoesWithTheConsumer(t *testing.T) {
	g := NewWithT(t)
	in := input(t, `{}`)
	in.Integration.Spec.Sources = []camelv1.SourceSpec{{Name: "cron.yaml", Content: `# runs each minute
- route:
    id: "yaml"
    from:
      uri: "quartz:trigger"
      parameters:
        cron: "0 */1 * * * ?"
      steps:
        - setBody:
            simple: "Magic"
        - to:
            uri: "log:info"
            parameters:
              show-all: "false"
`}}
	in.Integration.Spec.Flows = nil
	in.Traits = in.Traits.WithConsumers([]trait.Consumer{{URI: "quartz:trigger", Parameters: map[string]string{"cron": "0 */1 * * * ?"}}})
	cj, err := CronJob(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cj.Spec.Schedule).To(Equal("*/1 * * * *"))
	cm, err := ConfigMap(in)
	g.Expect(err).NotTo(HaveOccurred())
	var got, want any
	g.Expect(yaml.Unmarshal([]byte(cm.Data["cron.yaml"]), &got)).To(Succeed())
	g.Expect(yaml.Unmarshal([]byte(`[{"route":{"id":"yaml","from":{"uri":"`+trait.OneShotURI+`","steps":[{"setBody":{"simple":"Magic"}},`+
		`{"to":{"uri":"log:info","parameters":{"show-all":"false"}}}]}}}]`), &want)).To(Succeed())
	g.Expect(got).To(Equal(want))
	g.Expect(cm.Data["cron.yaml"]).To(HavePrefix("# runs each minute\n- route:\n    id: \"yaml\"\n"), "the source's comments and quotes are lost")
}
