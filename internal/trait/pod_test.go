// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/caravan-dev/caravan/internal/runtime"
)

func TestTheHealthTraitProbesTheRuntimesEndpointsWithCamelKsDefaults(t *testing.T) {
	g := NewWithT(t)
	tr, err := Parse(traits(t, `{"health":{"enabled":true,"livenessProbeEnabled":true,"livenessInitialDelay":5,
		"livenessFailureThreshold":4,"readinessProbe":"/ready","readinessPort":8081}}`))
	g.Expect(err).NotTo(HaveOccurred())
	live, ready, startup := tr.Health.Probes(runtime.Main.Health(8080))
	g.Expect(live).To(Equal(&corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/observe/health/live", Port: intstr.FromInt32(9876), Scheme: corev1.URISchemeHTTP}},
		InitialDelaySeconds: 5, FailureThreshold: 4}))
	g.Expect(ready.HTTPGet.Path).To(Equal("/ready"))
	g.Expect(ready.HTTPGet.Port).To(Equal(intstr.FromInt32(8081)), "a probe's own port wins")
	g.Expect(startup).To(BeNil(), "the startup probe is off unless asked for")

	tr, err = Parse(traits(t, `{"health":{"readinessProbeEnabled":false,"startupProbeEnabled":true}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.Health.Enabled(true)).To(BeTrue(), "without enabled, the caller's default decides")
	g.Expect(tr.Health.Enabled(false)).To(BeFalse())
	live, ready, startup = tr.Health.Probes(runtime.Main.Health(8080))
	g.Expect([]*corev1.Probe{live, ready}).To(HaveEach(BeNil()))
	g.Expect(startup.HTTPGet.Path).To(Equal("/observe/health/live"))
	g.Expect(startup.FailureThreshold).To(Equal(int32(10)), "a starting JVM gets ten tries")

	tr, err = Parse(traits(t, `{"health":{"enabled":false,"livenessProbeEnabled":true}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.Health.Enabled(true)).To(BeFalse(), "enabled: false wins over the default")

	_, err = Parse(traits(t, `{"health":{"enabled":true,"livenessScheme":"TCP","readinessTimeout":0,"startupProbe":"started","startupPort":0}}`))
	g.Expect(err).To(MatchError(And(ContainSubstring("trait health.livenessScheme: must be one of HTTP, HTTPS"),
		ContainSubstring("trait health.readinessTimeout: must be an integer between 1"),
		ContainSubstring("trait health.startupProbe: must be a path starting with /"),
		ContainSubstring("trait health.startupPort: must be an integer between 1 and 65535"))))
}

func TestTheSchedulingTraitsSetAffinityAndTolerations(t *testing.T) {
	g := NewWithT(t)
	tr, err := Parse(traits(t, `{"affinity":{"enabled":true,"nodeAffinityLabels":["disktype=ssd","zone in (a,b)"],
		"podAntiAffinity":true},"toleration":{"enabled":true,"taints":["dedicated=camel:NoSchedule","spot:NoExecute:300"]}}`))
	g.Expect(err).NotTo(HaveOccurred())
	a := tr.Affinity.Pod("camel.apache.org/integration", "orders")
	g.Expect(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions).To(Equal(
		[]corev1.NodeSelectorRequirement{{Key: "disktype", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}},
			{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}))
	g.Expect(a.PodAffinity).To(BeNil())
	g.Expect(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution).To(Equal([]corev1.PodAffinityTerm{{
		TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "camel.apache.org/integration", Operator: metav1.LabelSelectorOpIn, Values: []string{"orders"}}}}}}))
	secs := int64(300)
	g.Expect(tr.Toleration.Pod()).To(Equal([]corev1.Toleration{
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "camel", Effect: corev1.TaintEffectNoSchedule},
		{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs}}))

	tr, err = Parse(traits(t, `{"affinity":{"nodeAffinityLabels":["a=b"]},"toleration":{"taints":["a:NoSchedule"]}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.Affinity.Pod("l", "x")).To(BeNil(), "off unless enabled")
	g.Expect(tr.Toleration.Pod()).To(BeNil(), "off unless enabled")

	_, err = Parse(traits(t, `{"affinity":{"enabled":true,"nodeAffinityLabels":["a=b,c=d","x>1"]},
		"toleration":{"enabled":true,"taints":["a","b:Sometimes","c:NoSchedule:30"]}}`))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`trait affinity.nodeAffinityLabels[0]: must be one label requirement`),
		ContainSubstring(`trait affinity.nodeAffinityLabels[1]: must use =, !=, in, notin, or a key alone`),
		ContainSubstring(`trait toleration.taints[0]: must be KEY[=VALUE]:EFFECT[:SECONDS]`),
		ContainSubstring(`trait toleration.taints[1]: must be KEY[=VALUE]:EFFECT[:SECONDS]`),
		ContainSubstring(`trait toleration.taints[2]: must be KEY[=VALUE]:EFFECT[:SECONDS] with EFFECT NoSchedule, PreferNoSchedule or NoExecute; SECONDS is a non-negative integer, for NoExecute only`))))
}

func TestTheOwnerTraitCopiesTheNamedLabelsAndAnnotations(t *testing.T) {
	g := NewWithT(t)
	tr, err := Parse(traits(t, `{"owner":{"targetLabels":["team","missing"],"targetAnnotations":["example.com/cost"]}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.Owner.Labels(map[string]string{"team": "orders", "other": "x"})).To(Equal(map[string]string{"team": "orders"}))
	g.Expect(tr.Owner.Annotations(map[string]string{"example.com/cost": "42"})).To(Equal(map[string]string{"example.com/cost": "42"}))
	g.Expect(tr.Owner.Labels(nil)).To(BeNil())
	_, err = Parse(traits(t, `{"owner":{"targetLabels":["camel.apache.org/operator.id"]}}`))
	g.Expect(err).To(MatchError(ContainSubstring("trait owner.targetLabels[0]: must not name a camel.apache.org/ key")))
}

func TestThePDBTraitSetsOneBudgetMaxUnavailableOneByDefault(t *testing.T) {
	g := NewWithT(t)
	for traitsJSON, want := range map[string][2]*intstr.IntOrString{
		`{"pdb":{"enabled":true}}`:                        {nil, ptr(intstr.FromInt32(1))},
		`{"pdb":{"enabled":true,"minAvailable":"2"}}`:     {ptr(intstr.FromInt32(2)), nil},
		`{"pdb":{"enabled":true,"maxUnavailable":"50%"}}`: {nil, ptr(intstr.FromString("50%"))},
		`{"pdb":{"enabled":true,"maxUnavailable":3}}`:     {nil, ptr(intstr.FromInt32(3))},
	} {
		tr, err := Parse(traits(t, traitsJSON))
		g.Expect(err).NotTo(HaveOccurred(), traitsJSON)
		on, minAvailable, maxUnavailable := tr.PDB.Budget()
		g.Expect(on).To(BeTrue())
		g.Expect([2]*intstr.IntOrString{minAvailable, maxUnavailable}).To(Equal(want), traitsJSON)
	}
	tr, err := Parse(traits(t, `{"pdb":{"minAvailable":1}}`))
	g.Expect(err).NotTo(HaveOccurred())
	on, _, _ := tr.PDB.Budget()
	g.Expect(on).To(BeFalse(), "off unless enabled")
	_, err = Parse(traits(t, `{"pdb":{"enabled":true,"minAvailable":1,"maxUnavailable":"10%"}}`))
	g.Expect(err).To(MatchError(ContainSubstring("trait pdb.minAvailable: must not be set with maxUnavailable")))
	_, err = Parse(traits(t, `{"pdb":{"enabled":true,"minAvailable":"half"}}`))
	g.Expect(err).To(MatchError(ContainSubstring(`trait pdb.minAvailable: must be a non-negative integer or a percentage`)))
}

func TestTheJVMTraitsOptionsAndDebugAgentAreJavaOptions(t *testing.T) {
	g := NewWithT(t)
	tr, err := Parse(traits(t, `{"jvm":{"options":["-Xmx512m","-Dfoo=bar"],"debug":true,"debugAddress":"*:5006"}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.JVM.Options()).To(Equal([]string{"-Xmx512m", "-Dfoo=bar", "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=*:5006"}))
	g.Expect(tr.JVM.ToolOptions()).To(Equal("-Xmx512m -Dfoo=bar -agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=*:5006"))
	g.Expect(tr.JVM.Debug()).To(BeTrue())
	tr, err = Parse(traits(t, `{"jvm":{"enabled":false,"options":["-Xmx1g"],"debug":true}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.JVM.Options()).To(BeEmpty())
	g.Expect(tr.JVM.Debug()).To(BeFalse())
	_, err = Parse(traits(t, `{"jvm":{"options":["  "]}}`))
	g.Expect(err).To(MatchError(ContainSubstring("trait jvm.options[0]: must be one JVM option")))
	tr, err = Parse(traits(t, `{"jvm":{"debug":true,"debugSuspend":true}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.JVM.Options()).To(Equal([]string{"-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=*:5005"}), "Camel K's default address")
	tr, err = Parse(traits(t, `{"jvm":{"debug":true,"debugAddress":"6006"}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.JVM.Options()).To(Equal([]string{"-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=6006"}))
	for _, bad := range []string{"*:http", "host:0", "a,b:5005", "*:70000"} {
		_, err = Parse(traits(t, `{"jvm":{"debug":true,"debugAddress":"`+bad+`"}}`))
		g.Expect(err).To(MatchError(ContainSubstring("trait jvm.debugAddress: must be [HOST:]PORT")), bad)
	}
}

func TestTheHeapIsSizedFromTheMemoryLimitByCamelKsRule(t *testing.T) {
	cases := []struct {
		name    string
		options string
		limit   string
		want    string
	}{
		{name: "half of a limit of 300M or more", limit: "1Gi", want: "-Xmx537M"},
		{name: "half of 512Mi, Camel K's default limit", limit: "512Mi", want: "-Xmx268M"},
		{name: "a quarter of a limit under 300M", limit: "256Mi", want: "-Xmx67M"},
		{name: "exactly 300M is not under it", limit: "300M", want: "-Xmx150M"},
		{name: "no limit sizes the heap for Camel K's default limit", want: "-Xmx268M"},
		{name: "an -Xmx option leaves the heap to the options", options: `["-Xmx1g"]`, limit: "1Gi"},
		{name: "a RAM percentage option leaves the heap to the options", options: `["-XX:MaxRAMPercentage=75"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			jvm := `{}`
			if tc.options != "" {
				jvm = `{"jvm":{"options":` + tc.options + `}}`
			}
			tr, err := Parse(traits(t, jvm))
			g.Expect(err).NotTo(HaveOccurred())
			var limit *resource.Quantity
			if tc.limit != "" {
				q := resource.MustParse(tc.limit)
				limit = &q
			}
			g.Expect(tr.JVM.MaxHeap(limit)).To(Equal(tc.want))
		})
	}
}

func TestTheIngressTraitRoutesAHostAndPath(t *testing.T) {
	g := NewWithT(t)
	tr, err := Parse(traits(t, `{"ingress":{"enabled":true,"host":"orders.example.com","annotations":{"a.example.com/x":"1"},
		"ingressClassName":"nginx","tlsHosts":["orders.example.com"],"tlsSecretName":"orders-tls"}}`))
	g.Expect(err).NotTo(HaveOccurred())
	host, paths, pathType := tr.Ingress.Rule()
	g.Expect(host).To(Equal("orders.example.com"))
	g.Expect(paths).To(Equal([]string{"/"}))
	g.Expect(pathType).To(Equal(networkingv1.PathTypePrefix))
	both, err := Parse(traits(t, `{"ingress":{"paths":["/api","/ui"],"path":"/legacy"}}`))
	g.Expect(err).NotTo(HaveOccurred())
	_, paths, _ = both.Ingress.Rule()
	g.Expect(paths).To(Equal([]string{"/api", "/ui", "/legacy"}), "paths, then Camel K's older path")
	g.Expect(tr.Ingress.Annotations()).To(Equal(map[string]string{"a.example.com/x": "1"}))
	hosts, secret := tr.Ingress.TLS()
	g.Expect(hosts).To(Equal([]string{"orders.example.com"}))
	g.Expect(secret).To(Equal("orders-tls"))
	_, err = Parse(traits(t, `{"ingress":{"enabled":true,"host":"Not A Host","path":"api","pathType":"Regex"}}`))
	g.Expect(err).To(MatchError(And(ContainSubstring("trait ingress.host: must be a host name"),
		ContainSubstring("trait ingress.path: must start with /"), ContainSubstring("trait ingress.pathType: must be one of Prefix"))))
}

func TestTheJVMTraitsClasspathIsSplitOnColons(t *testing.T) {
	g := NewWithT(t)
	tr, err := Parse(traits(t, `{"jvm":{"classpath":"/a.jar::/b/c.jar"}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.JVM.Classpath()).To(Equal([]string{"/a.jar", "/b/c.jar"}))
	_, err = Parse(traits(t, `{"jvm":{"classpath":"/a.jar,/b.jar"}}`))
	g.Expect(err).To(MatchError(ContainSubstring("trait jvm.classpath: must be paths separated by ':'")))
}

func TestThePrometheusTraitMakesAPodMonitorByDefaultWhenEnabled(t *testing.T) {
	g := NewWithT(t)
	tr, err := Parse(traits(t, `{"prometheus":{"enabled":true,"podMonitorLabels":["release=monitoring","team=orders"]}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.Prometheus.PodMonitor()).To(BeTrue())
	g.Expect(tr.Prometheus.PodMonitorLabels()).To(Equal(map[string]string{"release": "monitoring", "team": "orders"}))
	tr, err = Parse(traits(t, `{"prometheus":{"enabled":true,"podMonitor":false}}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.Prometheus.PodMonitor()).To(BeFalse())
	g.Expect(tr.Prometheus.Enabled()).To(BeTrue())
	for label, message := range map[string]string{
		"release":                        "must be key=value",
		"bad key!=x":                     "must be key=value with a valid label key and value",
		"camel.apache.org/integration=x": "must not name a camel.apache.org/ key",
	} {
		_, err = Parse(traits(t, `{"prometheus":{"enabled":true,"podMonitorLabels":["`+label+`"]}}`))
		g.Expect(err).To(MatchError(And(ContainSubstring("trait prometheus.podMonitorLabels[0]"), ContainSubstring(message))), label)
	}
}

func TestTheServiceAndIngressFollowTheRoutesUnlessToldOtherwise(t *testing.T) {
	cases := []struct {
		name, traits     string
		httpRoutes       bool
		port             int32
		service, ingress bool
	}{
		{name: "routes that serve HTTP get a Service on 8080 and an Ingress", traits: `{}`, httpRoutes: true,
			port: 8080, service: true, ingress: true},
		{name: "routes that serve nothing get neither", traits: `{}`},
		{name: "service.auto false leaves routes that serve HTTP without a Service", traits: `{"service":{"auto":false}}`,
			httpRoutes: true},
		{name: "service.enabled false wins over the routes", traits: `{"service":{"enabled":false}}`, httpRoutes: true},
		{name: "service.enabled true exposes routes that serve nothing found", traits: `{"service":{"enabled":true}}`,
			port: 8080, service: true, ingress: true},
		{name: "ingress.auto false keeps the Service alone", traits: `{"ingress":{"auto":false}}`, httpRoutes: true,
			port: 8080, service: true},
		{name: "ingress.enabled false keeps the Service alone", traits: `{"ingress":{"enabled":false}}`, httpRoutes: true,
			port: 8080, service: true},
		{name: "ingress.enabled true asks for an Ingress even without a Service", traits: `{"ingress":{"enabled":true}}`,
			ingress: true},
		{name: "a container port exposes a Service whatever the routes", traits: `{"container":{"port":8081}}`,
			port: 8081, service: true, ingress: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tr, err := Parse(traits(t, tc.traits))
			g.Expect(err).NotTo(HaveOccurred())
			tr = tr.WithHTTPRoutes(tc.httpRoutes)
			g.Expect(tr.ContainerPort()).To(Equal(tc.port))
			g.Expect(tr.ExposesService()).To(Equal(tc.service))
			g.Expect(tr.ExposesIngress()).To(Equal(tc.ingress))
		})
	}
}
