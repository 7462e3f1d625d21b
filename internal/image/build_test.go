// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/internal/kit"
)

// kitLayer returns the spec and kit files for deps on base.
func kitLayer(t *testing.T, base string, deps ...string) (kit.Spec, []kit.File) {
	t.Helper()
	s := kit.ForIntegration(deps, nil, camelv1.IntegrationPlatformSpec{Build: camelv1.IntegrationPlatformBuildSpec{
		BaseImage: base, RuntimeVersion: "4.14.0", RuntimeProvider: "jbang",
	}})
	s.OperatorID = "tenant-a"
	files, err := kit.Layer(s)
	if err != nil {
		t.Fatalf("kit layer: %v", err)
	}
	return s, files
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestBuildPushesTheKitImageByDigest(t *testing.T) {
	g := NewWithT(t)
	ctx := ctxFor(t)
	reg := imagetest.StartRegistry(t)
	imagetest.PushBase(t, reg, "camel/base")
	cfg := reg.Config()
	cfg.Organization = "tenant-a"
	spec, files := kitLayer(t, "camel/base:latest", "camel:http", "mvn:org.acme:lib:1.0")

	res, err := image.Build(ctx, cfg, spec.BaseImage, files, spec.Name(), "v1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Digest).To(MatchRegexp(`^sha256:[0-9a-f]{64}$`))
	g.Expect(res.Image).To(Equal(reg.Address + "/tenant-a/" + spec.Name() + "@" + res.Digest))

	base, err := image.Pull(ctx, cfg, "camel/base:latest")
	g.Expect(err).NotTo(HaveOccurred())
	baseDigest, _ := base.Digest()
	g.Expect(res.BaseImage).To(Equal(reg.Address + "/camel/base@" + baseDigest.String()))

	img, err := image.Pull(ctx, cfg, res.Image)
	g.Expect(err).NotTo(HaveOccurred())
	digest, _ := img.Digest()
	g.Expect(digest.String()).To(Equal(res.Digest))
	got, err := image.ListFiles(img)
	g.Expect(err).NotTo(HaveOccurred())
	want := map[string][]byte{}
	for _, f := range files {
		want[f.Path] = f.Content
	}
	g.Expect(got).To(Equal(want))
	g.Expect(string(got[kit.DependenciesFile])).To(Equal("camel:http\nmvn:org.acme:lib:1.0\n"))

	layers, _ := img.Layers()
	baseLayers, _ := base.Layers()
	g.Expect(layers).To(HaveLen(len(baseLayers) + 1))
	top, _ := layers[len(layers)-1].Digest()
	g.Expect(top.String()).To(Equal(res.LayerDigest))
	cf, err := img.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cf.Config.Labels).To(HaveKeyWithValue(kit.ImageHashLabel, spec.Hash()))

	tagged, err := image.Pull(ctx, cfg, "tenant-a/"+spec.Name()+":v1")
	g.Expect(err).NotTo(HaveOccurred())
	taggedDigest, _ := tagged.Digest()
	g.Expect(taggedDigest.String()).To(Equal(res.Digest), "the tag names the same image")
}

func TestBuildWithoutATagPushesByDigestOnly(t *testing.T) {
	g := NewWithT(t)
	ctx := ctxFor(t)
	reg := imagetest.StartRegistry(t)
	base := imagetest.PushBase(t, reg, "camel/base")
	spec, files := kitLayer(t, base)

	res, err := image.Build(ctx, reg.Config(), spec.BaseImage, files, spec.Name(), "")
	g.Expect(err).NotTo(HaveOccurred())
	img, err := image.Pull(ctx, reg.Config(), res.Image)
	g.Expect(err).NotTo(HaveOccurred())
	digest, _ := img.Digest()
	g.Expect(digest.String()).To(Equal(res.Digest))
	_, err = image.Pull(ctx, reg.Config(), spec.Name()+":latest")
	g.Expect(image.ReasonOf(err)).To(Equal(image.ReasonImageNotFound))
}

func TestBuildOnAnOCIBaseAddsAnOCILayer(t *testing.T) {
	g := NewWithT(t)
	ctx := ctxFor(t)
	reg := imagetest.StartRegistry(t)
	oci := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	oci, err := mutate.AppendLayers(oci, static.NewLayer([]byte("not really a tar"), types.OCILayer))
	g.Expect(err).NotTo(HaveOccurred())
	base := imagetest.PushImage(t, reg, "camel/oci-base:1", oci)
	spec, files := kitLayer(t, base)

	res, err := image.Build(ctx, reg.Config(), spec.BaseImage, files, spec.Name(), "v1")
	g.Expect(err).NotTo(HaveOccurred())
	img, err := image.Pull(ctx, reg.Config(), res.Image)
	g.Expect(err).NotTo(HaveOccurred())
	m, err := img.Manifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.MediaType).To(Equal(types.OCIManifestSchema1))
	g.Expect(m.Layers[len(m.Layers)-1].MediaType).To(Equal(types.OCILayer))
}

func TestBuildIsDeterministic(t *testing.T) {
	g := NewWithT(t)
	ctx := ctxFor(t)
	reg := imagetest.StartRegistry(t)
	base := imagetest.PushBase(t, reg, "camel/base")

	spec, files := kitLayer(t, base, "camel:http", "camel:kafka")
	first, err := image.Build(ctx, reg.Config(), base, files, spec.Name(), "first")
	g.Expect(err).NotTo(HaveOccurred())
	_, again := kitLayer(t, base, "camel-kafka", "camel:http")
	second, err := image.Build(ctx, reg.Config(), base, again, spec.Name(), "second")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second.LayerDigest).To(Equal(first.LayerDigest))
	g.Expect(second.Digest).To(Equal(first.Digest))

	_, other := kitLayer(t, base, "camel:http")
	third, err := image.Build(ctx, reg.Config(), base, other, spec.Name(), "third")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(third.LayerDigest).NotTo(Equal(first.LayerDigest))
}

func TestBuildFailsClearly(t *testing.T) {
	ctx := ctxFor(t)
	reg := imagetest.StartRegistry(t)
	base := imagetest.PushBase(t, reg, "camel/base")
	_, files := kitLayer(t, base)
	cases := []struct {
		name      string
		base      string
		repo      string
		reason    string
		retryable bool
		message   []string
	}{
		{name: "a missing base image is BaseImageNotFound", base: "camel/missing:1", repo: "kit-a",
			reason: image.ReasonBaseImageNotFound, retryable: true,
			message: []string{"base image " + reg.Address + "/camel/missing:1 was not found in registry " + reg.Address, "spec.build.baseImage"}},
		{name: "a missing base tag is BaseImageNotFound", base: "camel/base:nope", repo: "kit-a",
			reason: image.ReasonBaseImageNotFound, retryable: true, message: []string{"camel/base:nope"}},
		{name: "an invalid repository is InvalidInput", base: base, repo: "Not A Repository",
			reason: image.ReasonInvalidInput, message: []string{"Not A Repository"}},
		{name: "an invalid base reference is InvalidInput", base: "camel/base:a:b:c", repo: "kit-a",
			reason: image.ReasonInvalidInput, message: []string{"camel/base:a:b:c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := image.Build(ctx, reg.Config(), tc.base, files, tc.repo, "v1")
			var e *image.Error
			g.Expect(errors.As(err, &e)).To(BeTrue(), "error %v", err)
			g.Expect(e.Reason).To(Equal(tc.reason))
			g.Expect(e.Registry).To(Equal(reg.Address))
			g.Expect(image.IsRetryable(err)).To(Equal(tc.retryable))
			for _, m := range tc.message {
				g.Expect(err.Error()).To(ContainSubstring(m))
			}
		})
	}
}

func TestBuildWithCredentials(t *testing.T) {
	ctx := ctxFor(t)
	reg := imagetest.StartRegistry(t, imagetest.WithAuth("caravan", "s3cret"))
	base := imagetest.PushBase(t, reg, "camel/base")
	_, files := kitLayer(t, base)
	cases := []struct {
		name    string
		auth    authn.Authenticator
		reason  string
		message string
	}{
		{name: "the right credentials build the image", auth: &authn.Basic{Username: "caravan", Password: "s3cret"}},
		{name: "a wrong password is Unauthorized", auth: &authn.Basic{Username: "caravan", Password: "wrong"},
			reason: image.ReasonUnauthorized, message: "registry " + reg.Address + " refused the credentials (401 Unauthorized): " +
				"check the secret named in the platform's spec.build.registry.secret"},
		{name: "no credentials is Unauthorized", reason: image.ReasonUnauthorized,
			message: "registry " + reg.Address + " requires credentials (401 Unauthorized)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cfg := reg.Config()
			cfg.Auth = tc.auth
			res, err := image.Build(ctx, cfg, base, files, "kit-a", "v1")
			if tc.reason == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(res.Digest).NotTo(BeEmpty())
				return
			}
			g.Expect(image.ReasonOf(err)).To(Equal(tc.reason), "error %v", err)
			g.Expect(err.Error()).To(HavePrefix(tc.message))
			g.Expect(image.IsRetryable(err)).To(BeFalse())
		})
	}
}

func TestBuildWhileTheRegistryIsDownThenBack(t *testing.T) {
	g := NewWithT(t)
	ctx := ctxFor(t)
	reg := imagetest.StartRegistry(t)
	base := imagetest.PushBase(t, reg, "camel/base")
	spec, files := kitLayer(t, base)

	reg.Stop()
	_, err := image.Build(ctx, reg.Config(), base, files, spec.Name(), "v1")
	g.Expect(image.ReasonOf(err)).To(Equal(image.ReasonRegistryUnreachable), "error %v", err)
	g.Expect(err.Error()).To(HavePrefix("registry " + reg.Address + " is unreachable"))
	g.Expect(image.IsRetryable(err)).To(BeTrue())

	reg.Start()
	res, err := image.Build(ctx, reg.Config(), base, files, spec.Name(), "v1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Image).To(HavePrefix(reg.Address + "/" + spec.Name() + "@sha256:"))
}

func TestBuildWithACanceledContext(t *testing.T) {
	_, files := kitLayer(t, "camel/base:1")
	t.Run("a context canceled before the build aborts it at once", func(t *testing.T) {
		g := NewWithT(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := image.Build(ctx, image.Registry{Address: "127.0.0.1:1"}, "camel/base:1", files, "kit-a", "v1")
		g.Expect(err).To(MatchError(context.Canceled))
		g.Expect(image.ReasonOf(err)).To(Equal(image.ReasonCanceled))
		g.Expect(image.IsRetryable(err)).To(BeFalse())
	})
	t.Run("a context canceled while the registry does not answer aborts the build promptly", func(t *testing.T) {
		g := NewWithT(t)
		addr := silentServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		_, err := image.Build(ctx, image.Registry{Address: addr, Insecure: true}, "camel/base:1", files, "kit-a", "v1")
		g.Expect(time.Since(start)).To(BeNumerically("<", 3*time.Second))
		g.Expect(err).To(MatchError(context.Canceled))
		g.Expect(image.ReasonOf(err)).To(Equal(image.ReasonCanceled))
		g.Expect(err.Error()).To(ContainSubstring("registry " + addr + " was canceled"))
	})
	t.Run("a build past its deadline is Canceled and retryable", func(t *testing.T) {
		g := NewWithT(t)
		addr := silentServer(t)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := image.Build(ctx, image.Registry{Address: addr, Insecure: true}, "camel/base:1", files, "kit-a", "v1")
		g.Expect(err).To(MatchError(context.DeadlineExceeded))
		g.Expect(image.ReasonOf(err)).To(Equal(image.ReasonCanceled))
		g.Expect(err.Error()).To(ContainSubstring("timed out"))
		g.Expect(image.IsRetryable(err)).To(BeTrue())
	})
}

// silentServer accepts connections on a loopback port and never answers.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening: %v", err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return strings.TrimSpace(l.Addr().String())
}
