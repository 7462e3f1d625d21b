// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// postgresBin is where Debian's postgresql-15 package installs the server's programs.
const postgresBin = "/usr/lib/postgresql/15/bin"

// PostgreSQLImage is Debian's PostgreSQL 15 server alone, for the tests' databases: its client,
// its cluster-management scripts (Perl) and the JIT's LLVM (jit is off) are left out.
var PostgreSQLImage = runtime.Image{
	Name:       "postgresql",
	Repository: "caravan/postgresql:15",
	// initdb runs the server through popen, which runs /bin/sh.
	Packages: []string{"postgresql-15", "libc-bin", "ca-certificates", "dash"},
	Exclude: []string{"libllvm14", "locales", "locales-all", "postgresql-client-15", "postgresql-common",
		"ssl-cert", "debconf", "dpkg", "util-linux"},
	Env: []string{"PATH=" + postgresBin + ":/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"},
}

// PostgreSQL is a database server the tests started on the local cluster.
type PostgreSQL struct {
	// Address is its Service's address and port.
	Address string
	// User and Database are what integrations connect as and to; any password is taken.
	User, Database string
}

// JDBCURL is the server's JDBC URL.
func (p PostgreSQL) JDBCURL() string {
	return fmt.Sprintf("jdbc:postgresql://%s/%s", p.Address, p.Database)
}

// StartPostgreSQL runs a PostgreSQL server in namespace ns, from PostgreSQLImage pushed to the
// local registry (built once into the cache), and returns once it takes connections. Its data
// is an emptyDir: it lives as long as the test's namespace.
func (e *Env) StartPostgreSQL(t *testing.T, ns string) PostgreSQL {
	t.Helper()
	ctx := context.Background()
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	ref, _, err := debimage.Push(ctx, cacheDir, PostgreSQLImage, image.Registry{Address: e.Cluster.RegistryAddress, Insecure: true},
		e.Cluster.RegistryAddress, os.Stderr)
	if err != nil {
		t.Fatalf("the PostgreSQL image: %v", err)
	}
	db := PostgreSQL{User: "caravan", Database: "postgres"}
	labels := map[string]string{"app.kubernetes.io/name": "postgresql"}
	data := corev1.VolumeMount{Name: "data", MountPath: "/var/lib/postgresql"}
	container := func(name string, args ...string) corev1.Container {
		return corev1.Container{Name: name, Image: ref, Command: []string{args[0]}, Args: args[1:],
			Env: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}}},
			VolumeMounts: []corev1.VolumeMount{data}, SecurityContext: install.Restricted(),
			// A namespace's quota may demand both of every container.
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}
	}
	// Clients connect from their pods' addresses, or from the node's through kube-proxy's
	// masquerade: the test database trusts them all.
	hba := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "postgresql-hba"},
		Data: map[string]string{"pg_hba.conf": "local all all trust\nhost all all all trust\n"}}
	server := container("postgres", postgresBin+"/postgres", "-D", "/var/lib/postgresql/data", "-k", "/tmp",
		"-c", "listen_addresses=$(POD_IP)", "-c", "jit=off", "-p", "5432", "-c", "hba_file=/etc/postgresql-hba/pg_hba.conf")
	// The root filesystem is read-only; the server's socket and lock go to a volume.
	server.VolumeMounts = append(server.VolumeMounts, corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"},
		corev1.VolumeMount{Name: "hba", MountPath: "/etc/postgresql-hba", ReadOnly: true})
	server.Ports = []corev1.ContainerPort{{Name: "postgresql", ContainerPort: 5432}}
	server.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(5432)}},
		PeriodSeconds: 1}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "postgresql"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(1000)),
						RunAsGroup: ptr.To(int64(1000)), FSGroup: ptr.To(int64(1000)),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					InitContainers: []corev1.Container{container("initdb", postgresBin+"/initdb", "-D", "/var/lib/postgresql/data",
						"-U", db.User, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")},
					Containers: []corev1.Container{server},
					Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "hba", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: hba.Name}}}}},
				},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "postgresql"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "postgresql", Port: 5432,
			TargetPort: intstr.FromString("postgresql")}}},
	}
	for _, obj := range []client.Object{hba, deploy, svc} {
		if err := e.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating the PostgreSQL %T: %v", obj, err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(deploy), &d); err != nil {
			return false, err
		}
		return d.Status.ReadyReplicas == 1, nil
	})
	if err != nil {
		t.Fatalf("PostgreSQL did not become ready: %v", err)
	}
	if err := e.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	db.Address = net.JoinHostPort(svc.Spec.ClusterIP, "5432")
	return db
}
