package install

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func operatorDeployment(t *testing.T, c Config) *appsv1.Deployment {
	t.Helper()
	objs, err := Manifests(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			return d
		}
	}
	t.Fatal("the manifests hold no Deployment")
	return nil
}

func TestTheOperatorContainerIsWhatPodSecurityRestrictedAdmits(t *testing.T) {
	g := NewWithT(t)
	d := operatorDeployment(t, Config{ID: "tenant-a", Namespace: "ops", Image: "img"})
	pod := d.Spec.Template.Spec
	g.Expect(pod.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
	g.Expect(pod.SecurityContext.RunAsUser).To(Equal(ptr.To[int64](OperatorUID)))
	g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
	c := pod.Containers[0]
	g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(Equal(ptr.To(true)))
	g.Expect(c.SecurityContext.AllowPrivilegeEscalation).To(Equal(ptr.To(false)))
	g.Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
	g.Expect(c.VolumeMounts).To(ContainElement(HaveField("MountPath", "/tmp")), "no writable /tmp")
	g.Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/healthz"))
	g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
	g.Expect(c.Resources).To(Equal(DefaultResources()))
}

func TestTheIdDefaultAndWatchNamespacesReachTheContainer(t *testing.T) {
	g := NewWithT(t)
	d := operatorDeployment(t, Config{ID: "tenant-a", Namespace: "ops", Image: "img", Default: true,
		WatchNamespaces: []string{"b", "a"}})
	c := d.Spec.Template.Spec.Containers[0]
	g.Expect(c.Args).To(ContainElements("--default", "--watch-namespaces=a,b"))
	g.Expect(c.Env).To(ContainElements(
		corev1.EnvVar{Name: "OPERATOR_ID", Value: "tenant-a"},
		corev1.EnvVar{Name: "KAMEL_OPERATOR_ID", Value: "tenant-a"},
		HaveField("Name", "POD_NAMESPACE")))
	for _, e := range c.Env {
		if e.Name == "POD_NAMESPACE" {
			g.Expect(e.ValueFrom.FieldRef.FieldPath).To(Equal("metadata.namespace"))
		}
	}

	d = operatorDeployment(t, Config{ID: "tenant-b", Namespace: "ops", Image: "img"})
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		g.Expect(a).NotTo(HavePrefix("--watch-namespaces"), "an operator of every namespace is limited")
		g.Expect(a).NotTo(Equal("--default"))
	}
}

func TestTheInstallCarriesReplicasSchedulingAndPullSecrets(t *testing.T) {
	g := NewWithT(t)
	tol := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ops", Effect: corev1.TaintEffectNoSchedule}
	d := operatorDeployment(t, Config{ID: "tenant-a", Namespace: "ops", Image: "img", Replicas: ptr.To[int32](2),
		NodeSelector: map[string]string{"pool": "ops"}, Tolerations: []corev1.Toleration{tol},
		ImagePullSecrets: []string{"regcred"}})
	g.Expect(*d.Spec.Replicas).To(Equal(int32(2)))
	pod := d.Spec.Template.Spec
	g.Expect(pod.NodeSelector).To(Equal(map[string]string{"pool": "ops"}))
	g.Expect(pod.Tolerations).To(Equal([]corev1.Toleration{tol}))
	g.Expect(pod.ImagePullSecrets).To(Equal([]corev1.LocalObjectReference{{Name: "regcred"}}))
}

func TestTheMetricsServiceSelectsTheOperatorPods(t *testing.T) {
	g := NewWithT(t)
	objs, err := Manifests(Config{ID: "tenant-a", Namespace: "ops", Image: "img"})
	g.Expect(err).NotTo(HaveOccurred())
	d := operatorDeployment(t, Config{ID: "tenant-a", Namespace: "ops", Image: "img"})
	var svc *corev1.Service
	for _, o := range objs {
		if s, ok := o.(*corev1.Service); ok {
			svc = s
		}
	}
	g.Expect(svc).NotTo(BeNil(), "no metrics Service")
	g.Expect(svc.Name).To(Equal("tenant-a-operator-metrics"))
	g.Expect(svc.Spec.Selector).To(Equal(d.Spec.Template.Labels))
	g.Expect(svc.Spec.Ports[0].TargetPort.StrVal).To(Equal("metrics"))
}

func TestResourcesReplaceTheDefaultsByNameAndRefuseNonsense(t *testing.T) {
	for _, tc := range []struct {
		name            string
		requests, limit map[string]string
		wantErr         string
		wantMemLimit    string
	}{
		{name: "no flags give the defaults", wantMemLimit: "512Mi"},
		{name: "a memory limit replaces only the memory limit", limit: map[string]string{"memory": "1Gi"}, wantMemLimit: "1Gi"},
		{name: "an unparsable quantity is refused", requests: map[string]string{"cpu": "lots"}, wantErr: `--requests cpu="lots"`},
		{name: "an unknown resource is refused", limit: map[string]string{"gpu": "1"}, wantErr: `unknown resource "gpu"`},
		{name: "a limit below its request is refused", limit: map[string]string{"memory": "32Mi"}, wantErr: "the memory limit 32Mi is below its request 64Mi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			res, err := ParseResources(tc.requests, tc.limit)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Limits[corev1.ResourceMemory]).To(Equal(resource.MustParse(tc.wantMemLimit)))
		})
	}
}

func TestTolerationsAreParsedOrRefusedWithTheForm(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		want    corev1.Toleration
		wantErr string
	}{
		{spec: "dedicated=ops:NoSchedule", want: corev1.Toleration{Key: "dedicated", Value: "ops", Operator: corev1.TolerationOpEqual, Effect: corev1.TaintEffectNoSchedule}},
		{spec: "gone:NoExecute:30", want: corev1.Toleration{Key: "gone", Operator: corev1.TolerationOpEqual, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)}},
		{spec: "any:Exists", want: corev1.Toleration{Key: "any", Operator: corev1.TolerationOpExists}},
		{spec: "any:Exists:NoSchedule", want: corev1.Toleration{Key: "any", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		{spec: "dedicated", wantErr: "want key[=value]:Effect"},
		{spec: "k=v:Sometimes", wantErr: `effect "Sometimes"`},
		{spec: "k:NoSchedule:30", wantErr: "only with NoExecute"},
		{spec: "k=v:Exists", wantErr: "takes no value"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			g := NewWithT(t)
			got, err := ParseTolerations([]string{tc.spec})
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal([]corev1.Toleration{tc.want}))
		})
	}
}

func TestAnOlderClusterIsRefusedWithWhatToDo(t *testing.T) {
	g := NewWithT(t)
	g.Expect(CheckAdmissionServed("v1.37.2", true)).To(Succeed())
	g.Expect(CheckAdmissionServed("v1.30.0", true)).To(Succeed(), "1.30 serves ValidatingAdmissionPolicy v1")
	g.Expect(CheckAdmissionServed("v0.0.0-master+$Format:%H$", true)).To(Succeed(), "a source build that serves the policies")
	err := CheckAdmissionServed("v1.29.4", false)
	g.Expect(err).To(MatchError(ContainSubstring("need 1.30 or later")))
	g.Expect(err).To(MatchError(ContainSubstring("--skip-admission")))
	g.Expect(CheckAdmissionServed("v1.31.1", false)).To(MatchError(ContainSubstring("does not serve ValidatingAdmissionPolicy")))
}

func TestValidatingOnlyLeavesOutTheMutatingPoliciesAndJudgesUnassignedWork(t *testing.T) {
	g := NewWithT(t)
	kinds := func(c Config) map[string]bool {
		objs, err := Manifests(c)
		g.Expect(err).NotTo(HaveOccurred())
		names := map[string]bool{}
		for _, o := range objs {
			switch o.(type) {
			case *admissionv1.MutatingAdmissionPolicy, *admissionv1.MutatingAdmissionPolicyBinding,
				*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding:
				names[fmt.Sprintf("%T/%s", o, o.GetName())] = true
			}
		}
		return names
	}
	full := kinds(Config{ID: "tenant-a", Namespace: "ops", Image: "img"})
	only := kinds(Config{ID: "tenant-a", Namespace: "ops", Image: "img", ValidatingOnly: true})
	g.Expect(full).To(HaveKey("*v1.MutatingAdmissionPolicy/" + LabelPolicy))
	g.Expect(full).NotTo(HaveKey("*v1.ValidatingAdmissionPolicy/" + DefaultUsePolicy))
	for name := range only {
		g.Expect(name).NotTo(HavePrefix("*v1.Mutating"), "validating-only installs a mutating policy")
	}
	for _, name := range []string{AssignmentPolicy, NamespacesPolicy, ConfinementPolicy, ForeignConfinementPolicy, OrphanMarkPolicy, DefaultUsePolicy} {
		g.Expect(only).To(HaveKey("*v1.ValidatingAdmissionPolicy/"+name), "validating-only lacks %s", name)
		g.Expect(only).To(HaveKey("*v1.ValidatingAdmissionPolicyBinding/"+name), "validating-only does not bind %s", name)
	}
}

func TestTheHeartbeatVerbosityAndPprofReachTheContainerOnlyWhenSet(t *testing.T) {
	g := NewWithT(t)
	d := operatorDeployment(t, Config{ID: "tenant-a", Namespace: "ops", Image: "img",
		HeartbeatInterval: 2 * time.Second, Verbosity: 1, LogJSON: true, Pprof: true})
	g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElements("--heartbeat-interval=2s", "--verbosity=1",
		"--log-format=json", "--pprof"))
	d = operatorDeployment(t, Config{ID: "tenant-a", Namespace: "ops", Image: "img"})
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		g.Expect(a).NotTo(Or(HavePrefix("--heartbeat-interval"), HavePrefix("--verbosity"), HavePrefix("--log-format"), HavePrefix("--pprof")))
	}
}

func TestTheSameIdInTwoNamespacesHasTwoClusterBindings(t *testing.T) {
	g := NewWithT(t)
	names := map[string]string{}
	for _, ns := range []string{"ops-a", "ops-b"} {
		objs, err := Manifests(Config{ID: "dup", Namespace: ns, Image: "img"})
		g.Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			if b, ok := o.(*rbacv1.ClusterRoleBinding); ok && b.RoleRef.Name != ReaderRole {
				g.Expect(b.Subjects).To(ConsistOf(HaveField("Namespace", ns)))
				g.Expect(b.RoleRef.Name).To(Equal(b.Name))
				names[ns] = b.Name
			}
		}
	}
	g.Expect(names).To(HaveLen(2))
	g.Expect(names["ops-a"]).NotTo(Equal(names["ops-b"]), "one install would rebind the other's rights")
}

func TestTheDeploymentGivesBackTheSettingsInstallWroteIntoIt(t *testing.T) {
	g := NewWithT(t)
	in := Config{ID: "tenant-a", Namespace: "ops", Image: "img@sha256:1", Replicas: ptr.To[int32](2),
		Resources:        DefaultResources(),
		NodeSelector:     map[string]string{"pool": "ops"},
		Tolerations:      []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		ImagePullSecrets: []string{"pull"}, HeartbeatInterval: 3 * time.Second, Verbosity: 2, LogJSON: true, Pprof: true}
	out, err := configFromDeployment(operatorDeployment(t, in))
	g.Expect(err).NotTo(HaveOccurred())
	out.ID, out.Namespace = in.ID, in.Namespace
	g.Expect(out).To(Equal(in))
}

// TestOnlyALimitedOperatorGetsNamespacesGrants: an operator of every namespace refuses
// nothing by namespace, so it gets none of the grants by which NamespacesPolicy knows an
// operator's namespaces; one limited to namespaces gets the verb limit cluster-wide and the
// verb serve in each namespace it watches, both for its principal and on its own
// registration only, and no binding of the policy of its own (each binding is work for the
// API server on every write of an assignable resource).
func TestOnlyALimitedOperatorGetsNamespacesGrants(t *testing.T) {
	g := NewWithT(t)
	type grant struct{ Verb, Namespace string }
	grantsOf := func(c Config) []grant {
		objs, err := Manifests(c)
		g.Expect(err).NotTo(HaveOccurred())
		roles := map[string]*rbacv1.ClusterRole{}
		for _, o := range objs {
			if r, ok := o.(*rbacv1.ClusterRole); ok {
				roles[r.Name] = r
			}
			if b, ok := o.(*admissionv1.ValidatingAdmissionPolicyBinding); ok && b.Spec.PolicyName == NamespacesPolicy {
				g.Expect(b.Name).To(Equal(NamespacesPolicy), "a binding of the namespaces policy other than the shared one")
				g.Expect(b.Spec.ParamRef).To(BeNil())
			}
		}
		var out []grant
		add := func(ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespace string) {
			if len(subjects) != 1 || subjects[0].Namespace != NamespacesPrincipal {
				return
			}
			g.Expect(subjects[0]).To(Equal(rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: c.ID, Namespace: NamespacesPrincipal}))
			for _, r := range roles[ref.Name].Rules {
				g.Expect(r.Resources).To(Equal([]string{"integrationoperators"}))
				g.Expect(r.ResourceNames).To(Equal([]string{c.ID}))
				for _, v := range r.Verbs {
					out = append(out, grant{v, namespace})
				}
			}
		}
		for _, o := range objs {
			switch b := o.(type) {
			case *rbacv1.ClusterRoleBinding:
				add(b.RoleRef, b.Subjects, "")
			case *rbacv1.RoleBinding:
				add(b.RoleRef, b.Subjects, b.Namespace)
			}
		}
		return out
	}
	g.Expect(grantsOf(Config{ID: "global", Namespace: "ops", Image: "img"})).To(BeEmpty())
	g.Expect(grantsOf(Config{ID: "tenant-a", Namespace: "ops", Image: "img", WatchNamespaces: []string{"team-b", "team-a", "team-b"}})).
		To(Equal([]grant{{"limit", ""}, {"serve", "team-a"}, {"serve", "team-b"}}))
	g.Expect(grantsOf(Config{ID: "tenant-a", Namespace: "ops", Image: "img", WatchNamespaces: []string{"team-a"}, SkipAdmission: true})).
		To(BeEmpty())
}
