package buildcontroller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/build"
	"github.com/caravan-dev/caravan/internal/builderpod"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/kit"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/internal/platform"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/trait"
)

// reconcileAttempt reads what the runner says of the current attempt: when it has it, there is nothing to submit.
func (r *Reconciler) reconcileAttempt(_ context.Context, s *scope) (reconcile.Result, error) {
	st, ok := r.Runner.Status(client.ObjectKeyFromObject(s.b))
	if !ok || st.Attempt != attempts(s.b)+1 {
		return reconcile.Result{}, nil
	}
	s.job, s.Done = &st, true
	return r.retryAfter(st), nil
}

// reconcileBackoff waits out the backoff after a failed attempt.
func (r *Reconciler) reconcileBackoff(_ context.Context, s *scope) (reconcile.Result, error) {
	// The phase is an input, as in finished: only the status records a failed attempt.
	if s.b.Status.Phase != camelv1.BuildPhaseFailed {
		return reconcile.Result{}, nil
	}
	wait := s.b.Status.Failure.Recovery.AttemptTime.Add(build.Backoff(r.BackoffBase, attempts(s.b))).Sub(r.Clock.Now())
	if wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	return reconcile.Result{}, nil
}

// reconcileSpec reads the kit spec to build from the build's task: a build
// without one, or with one that no kit layer can hold, is bad input.
func (r *Reconciler) reconcileSpec(_ context.Context, s *scope) (reconcile.Result, error) {
	spec, err := build.SpecOf(s.b)
	if err == nil {
		// A spec its layer cannot hold fails every attempt alike.
		_, err = kit.Layer(spec)
	}
	if err != nil {
		s.Failure = controller.Because(ReasonInvalidBuild, err.Error())
		return reconcile.Result{}, nil
	}
	s.spec = spec
	return reconcile.Result{}, nil
}

// reconcilePlatform reads the operator's platform settings, and waits for
// the platform while it is missing.
func (r *Reconciler) reconcilePlatform(ctx context.Context, s *scope) (reconcile.Result, error) {
	itp := &camelv1.IntegrationPlatform{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.OperatorID}, itp); err != nil {
		s.Waiting = controller.Because(ReasonPlatformNotReady, "waiting for the operator's platform")
		return reconcile.Result{RequeueAfter: platformRetry}, client.IgnoreNotFound(err)
	}
	s.settings = platform.Resolve(itp.Spec)
	config, maven, err := platform.BuildSettingsOf(s.settings.Build)
	if err != nil {
		s.Waiting = controller.Because(ReasonInvalidBuildConfiguration, fmt.Sprintf("the IntegrationPlatform %s/%s: %v", r.Namespace, r.OperatorID, err))
		return reconcile.Result{RequeueAfter: registryRetry}, nil
	}
	s.config, s.maven = config, maven
	return reconcile.Result{}, nil
}

// reconcileRegistry builds the registry settings, and waits while they
// cannot work as they are: that is configuration the user must fix, not
// an attempt.
func (r *Reconciler) reconcileRegistry(ctx context.Context, s *scope) (reconcile.Result, error) {
	access, waiting, err := controller.ReadRegistry(ctx, r.APIReader, r.Namespace, r.OperatorID, s.settings.Build.Registry)
	if err != nil || waiting != nil {
		s.Waiting = waiting
		return reconcile.Result{RequeueAfter: registryRetry}, err
	}
	s.registry, s.registrySecret, s.registryCA = access.Registry, access.Secret, access.CA
	return reconcile.Result{}, nil
}

// reconcileMavenSettings finds, for a build in a builder pod, the settings.xml the platform names,
// and waits while its ConfigMap or Secret lacks it: a pod would wait for it unseen.
func (r *Reconciler) reconcileMavenSettings(ctx context.Context, s *scope) (reconcile.Result, error) {
	ref := s.maven.Settings
	if s.config.Strategy != build.StrategyPod || ref == nil {
		return reconcile.Result{}, nil
	}
	var (
		obj  client.Object
		name string
		key  string
		has  func() bool
		vol  corev1.VolumeSource
	)
	if ref.SecretKeyRef != nil {
		secret := &corev1.Secret{}
		obj, name, key = secret, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key
		has = func() bool { _, ok := secret.Data[key]; return ok }
		vol.Secret = &corev1.SecretVolumeSource{SecretName: name, Items: []corev1.KeyToPath{{Key: key, Path: builderpod.SettingsFile}}}
	} else {
		cm := &corev1.ConfigMap{}
		obj, name, key = cm, ref.ConfigMapKeyRef.Name, ref.ConfigMapKeyRef.Key
		has = func() bool { _, ok := cm.Data[key]; return ok }
		vol.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name},
			Items: []corev1.KeyToPath{{Key: key, Path: builderpod.SettingsFile}}}
	}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err) || err == nil && !has():
		s.Waiting = controller.Because(ReasonMavenSettingsUnavailable, fmt.Sprintf(
			"the IntegrationPlatform %s/%s takes Maven's settings from %s in namespace %s, which is not there: create it, or change spec.build.maven.settings",
			r.Namespace, r.OperatorID, ref, r.Namespace))
		return reconcile.Result{RequeueAfter: registryRetry}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("reading Maven's settings from %s: %w", ref, err)
	}
	s.mavenSettings = &vol
	return reconcile.Result{}, nil
}

// reconcileMavenCA finds, for a build in a builder pod, the CA certificates the platform names
// (spec.build.maven.caSecrets), and waits while a Secret lacks one.
func (r *Reconciler) reconcileMavenCA(ctx context.Context, s *scope) (reconcile.Result, error) {
	if s.config.Strategy != build.StrategyPod || len(s.maven.CASecrets) == 0 {
		return reconcile.Result{}, nil
	}
	vol := corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}
	for i, ref := range s.maven.CASecrets {
		secret := &corev1.Secret{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: ref.Name}, secret)
		if apierrors.IsNotFound(err) || err == nil && len(secret.Data[ref.Key]) == 0 {
			s.Waiting = controller.Because(ReasonMavenCAUnavailable, fmt.Sprintf(
				"the IntegrationPlatform %s/%s has Maven trust the certificates of secret/%s key %s in namespace %s, which is not there: create it, or change spec.build.maven.caSecrets",
				r.Namespace, r.OperatorID, ref.Name, ref.Key, r.Namespace))
			return reconcile.Result{RequeueAfter: registryRetry}, nil
		}
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("reading Maven's CA certificates from secret/%s: %w", ref.Name, err)
		}
		if err := controller.PEMCertificates(secret.Data[ref.Key]); err != nil {
			s.Waiting = controller.Because(ReasonMavenCAUnavailable, fmt.Sprintf(
				"secret/%s key %s in namespace %s, named by spec.build.maven.caSecrets of the IntegrationPlatform %s/%s: %v",
				ref.Name, ref.Key, r.Namespace, r.Namespace, r.OperatorID, err))
			return reconcile.Result{RequeueAfter: registryRetry}, nil
		}
		vol.Projected.Sources = append(vol.Projected.Sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name},
			Items:                []corev1.KeyToPath{{Key: ref.Key, Path: fmt.Sprintf("ca-%d.crt", i)}}}})
	}
	s.mavenCA = &vol
	return reconcile.Result{}, nil
}

// reconcileParent picks, for a build in a builder pod, the Ready kit of the
// build's namespace to build on: the one with the most of its dependencies.
func (r *Reconciler) reconcileParent(ctx context.Context, s *scope) (reconcile.Result, error) {
	if s.config.Strategy != build.StrategyPod {
		return reconcile.Result{}, nil
	}
	kits := &camelv1.IntegrationKitList{}
	if err := r.Client.List(ctx, kits, client.InNamespace(s.b.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the kits to build on: %w", err)
	}
	var best *camelv1.IntegrationKit
	var bestDeps int
	for i := range kits.Items {
		k := &kits.Items[i]
		spec, err := kit.FromResource(k)
		if err != nil || !usableParent(k, r.OperatorID) || !s.spec.Extends(spec) {
			continue
		}
		if best == nil || len(spec.Dependencies) > bestDeps || len(spec.Dependencies) == bestDeps && k.Name < best.Name {
			best, bestDeps = k, len(spec.Dependencies)
		}
	}
	if best != nil {
		s.parent = &build.Parent{Kit: best.Name, Image: best.Status.Image, Artifacts: best.Status.Artifacts}
	}
	return reconcile.Result{}, nil
}

// usableParent tells whether a kit can be built on: Ready, this operator's,
// and built by a builder pod, which listed its jars with their checksums.
func usableParent(k *camelv1.IntegrationKit, operatorID string) bool {
	if k.Status.Phase != camelv1.IntegrationKitPhaseReady || k.Status.Image == "" || k.Spec.Image != "" ||
		!ownership.Owns(k.Annotations, operatorID) || len(k.Status.Artifacts) == 0 {
		return false
	}
	for _, a := range k.Status.Artifacts {
		if !strings.HasPrefix(a.Checksum, "sha256:") || !strings.HasPrefix(a.Target, runtime.DependenciesDir+"/") {
			return false
		}
	}
	return true
}

// reconcileSubmission hands the attempt to the runner and reads what it says.
func (r *Reconciler) reconcileSubmission(_ context.Context, s *scope) (reconcile.Result, error) {
	limit := int(*s.settings.Build.MaxRunningBuilds)
	if s.config.Sequential() {
		limit = 1 // Camel K's orderStrategy sequential
	}
	r.Runner.SetLimit(limit)
	timeout := s.settings.Build.Timeout.Duration
	if s.b.Spec.Timeout != nil && s.b.Spec.Timeout.Duration > 0 {
		timeout = s.b.Spec.Timeout.Duration
	}
	st := r.Runner.Submit(build.Job{
		Build: client.ObjectKeyFromObject(s.b), Attempt: attempts(s.b) + 1,
		Spec: s.spec, Registry: s.registry, Timeout: timeout,
		Strategy: s.config.Strategy, BuilderImage: s.config.ToolImage, MavenCache: s.maven.CacheVolumeClaim,
		RegistrySecret: s.registrySecret, RegistryCA: s.registryCA, MavenSettings: s.mavenSettings, MavenCA: s.mavenCA, Parent: s.parent,
		MavenResources: mavenResources(s.config, s.spec), MavenArgs: mavenArgs(s.maven, s.spec),
		PodNodeSelector: s.config.NodeSelector, PodAnnotations: s.config.Annotations,
	})
	s.job = &st
	return r.retryAfter(st), nil
}

// retryAfter asks for a reconcile after the backoff when the runner's attempt failed and is to be
// retried. Otherwise the runner's notification brings the next reconcile.
func (r *Reconciler) retryAfter(st build.Status) reconcile.Result {
	if st.State == build.Done && st.Err != nil && !FinalFailure(st) {
		return reconcile.Result{RequeueAfter: build.Backoff(r.BackoffBase, st.Attempt)}
	}
	return reconcile.Result{}
}

// FinalFailure tells whether a failed attempt is the build's last: the attempts are used up, it
// was cancelled, Maven failed, or the registry refused what only a user can change (credentials, a
// malformed reference), which a retry on a timer would meet again.
func FinalFailure(st build.Status) bool {
	return st.Attempt >= build.MaxAttempts || errors.Is(st.Err, context.Canceled) || build.IsFailure(st.Err) ||
		!image.IsRetryable(st.Err)
}

// mavenResources are the builder pods' requests and limits the platform sets, with the kit's
// builder trait's over them; BuildConfigurationOf and the trait have checked them.
func mavenResources(c platform.BuildConfiguration, s kit.Spec) corev1.ResourceRequirements {
	requests, limits, _ := c.Resources()
	r := corev1.ResourceRequirements{Requests: requests, Limits: limits}
	for _, br := range trait.BuilderResources {
		q, err := resource.ParseQuantity(s.BuildResources[br.Key])
		if err != nil {
			continue // unset, or refused by the builder trait
		}
		list := &r.Requests
		if br.Limit {
			list = &r.Limits
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[br.Name] = q
	}
	return r
}

// mavenArgs are the arguments of a build's Maven: the platform's properties and options, then the
// kit's build properties, each -DKEY=VALUE, which win over the platform's of the same key.
func mavenArgs(m platform.Maven, s kit.Spec) []string {
	args := m.Args()
	for _, p := range s.BuildProperties {
		args = append(args, "-D"+p)
	}
	return args
}
