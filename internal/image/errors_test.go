// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

func httpError(status int, codes ...transport.ErrorCode) error {
	te := &transport.Error{StatusCode: status}
	for _, c := range codes {
		te.Errors = append(te.Errors, transport.Diagnostic{Code: c, Message: string(c)})
	}
	return fmt.Errorf("GET manifest: %w", te)
}

func TestClassify(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/v2/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	cases := []struct {
		name      string
		op        operation
		err       error
		reason    string
		retryable bool
	}{
		{name: "a 401 is Unauthorized", op: opBase, err: httpError(http.StatusUnauthorized, transport.UnauthorizedErrorCode), reason: ReasonUnauthorized},
		{name: "a 403 is Unauthorized", op: opPush, err: httpError(http.StatusForbidden, transport.DeniedErrorCode), reason: ReasonUnauthorized},
		{name: "a 404 on the base image is BaseImageNotFound", op: opBase, err: httpError(http.StatusNotFound, transport.ManifestUnknownErrorCode),
			reason: ReasonBaseImageNotFound, retryable: true},
		{name: "an unknown repository on the base image is BaseImageNotFound", op: opBase, err: httpError(http.StatusNotFound, transport.NameUnknownErrorCode),
			reason: ReasonBaseImageNotFound, retryable: true},
		{name: "a 404 on a pull is ImageNotFound", op: opPull, err: httpError(http.StatusNotFound), reason: ReasonImageNotFound, retryable: true},
		{name: "a 404 on a push is PushFailed", op: opPush, err: httpError(http.StatusNotFound, transport.BlobUnknownErrorCode),
			reason: ReasonPushFailed, retryable: true},
		{name: "a 503 is RegistryUnreachable", op: opPush, err: httpError(http.StatusServiceUnavailable), reason: ReasonRegistryUnreachable, retryable: true},
		{name: "a 502 is RegistryUnreachable", op: opBase, err: httpError(http.StatusBadGateway), reason: ReasonRegistryUnreachable, retryable: true},
		{name: "a refused connection is RegistryUnreachable", op: opBase, err: refused, reason: ReasonRegistryUnreachable, retryable: true},
		{name: "an unknown host is RegistryUnreachable", op: opBase, err: &net.DNSError{Err: "no such host", Name: "registry.invalid"},
			reason: ReasonRegistryUnreachable, retryable: true},
		{name: "a connection cut mid-push is RegistryUnreachable", op: opPush, err: fmt.Errorf("upload: %w", io.ErrUnexpectedEOF),
			reason: ReasonRegistryUnreachable, retryable: true},
		{name: "a manifest the registry refuses is PushFailed", op: opPush, err: httpError(http.StatusBadRequest, transport.ManifestInvalidErrorCode),
			reason: ReasonPushFailed, retryable: true},
		{name: "a bad base manifest is PullFailed", op: opBase, err: errors.New("unexpected media type"), reason: ReasonPullFailed, retryable: true},
		{name: "a canceled context is Canceled and not retryable", op: opBase, err: fmt.Errorf("get: %w", context.Canceled), reason: ReasonCanceled},
		{name: "a passed deadline is Canceled and retryable", op: opPush, err: fmt.Errorf("put: %w", context.DeadlineExceeded),
			reason: ReasonCanceled, retryable: true},
	}
	reg := Registry{Address: "127.0.0.1:5000", Auth: &authn.Basic{Username: "u", Password: "p"}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			e := reg.classify(context.Background(), tc.op, "127.0.0.1:5000/camel/base:1", tc.err)
			g.Expect(e.Reason).To(Equal(tc.reason))
			g.Expect(e.Registry).To(Equal("127.0.0.1:5000"))
			g.Expect(e).To(MatchError(tc.err), "the cause is wrapped")
			g.Expect(e.Error()).To(ContainSubstring("127.0.0.1:5000"))
			g.Expect(IsRetryable(e)).To(Equal(tc.retryable))
			g.Expect(IsRetryable(fmt.Errorf("building: %w", e))).To(Equal(tc.retryable), "wrapping keeps the decision")
		})
	}
}

func TestClassifyACanceledContextWrapsItsError(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cause := errors.New("read: connection reset")
	e := Registry{Address: "127.0.0.1:5000"}.classify(ctx, opPush, "x", cause)
	g.Expect(e.Reason).To(Equal(ReasonCanceled))
	g.Expect(e).To(MatchError(context.Canceled))
	g.Expect(e).To(MatchError(cause))
}

func TestErrorMessages(t *testing.T) {
	cases := []struct {
		name string
		err  *Error
		want string
	}{
		{name: "refused credentials name the registry and the secret",
			err:  &Error{Reason: ReasonUnauthorized, Registry: "127.0.0.1:5000", Err: httpError(http.StatusUnauthorized)},
			want: "registry 127.0.0.1:5000 refused the credentials (401 Unauthorized): check the secret named in the platform's spec.build.registry.secret"},
		{name: "missing credentials say to name a secret",
			err:  &Error{Reason: ReasonUnauthorized, Registry: "127.0.0.1:5000", Err: httpError(http.StatusUnauthorized), anonymous: true},
			want: "registry 127.0.0.1:5000 requires credentials (401 Unauthorized): name a secret holding them in the platform's spec.build.registry.secret"},
		{name: "a missing base image names the image and the setting",
			err: &Error{Reason: ReasonBaseImageNotFound, Registry: "127.0.0.1:5000", Image: "127.0.0.1:5000/camel/base:1",
				Err: httpError(http.StatusNotFound)},
			want: "base image 127.0.0.1:5000/camel/base:1 was not found in registry 127.0.0.1:5000 (404 Not Found): push it there or change the platform's spec.build.baseImage"},
		{name: "an unreachable registry names the address setting",
			err:  &Error{Reason: ReasonRegistryUnreachable, Registry: "127.0.0.1:5000", Err: errors.New("connection refused")},
			want: "registry 127.0.0.1:5000 is unreachable: connection refused: check the platform's spec.build.registry.address and that the registry is running"},
		{name: "an unknown reason still names the registry",
			err:  &Error{Reason: "Other", Registry: "127.0.0.1:5000", Err: errors.New("boom")},
			want: "registry 127.0.0.1:5000: Other: boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(tc.err.Error()).To(Equal(tc.want))
		})
	}
}

func TestIsRetryableOutsideErrors(t *testing.T) {
	g := NewWithT(t)
	g.Expect(IsRetryable(nil)).To(BeFalse())
	g.Expect(IsRetryable(errors.New("something else"))).To(BeTrue())
	g.Expect(IsRetryable(&Error{Reason: ReasonInvalidInput})).To(BeFalse())
	g.Expect(ReasonOf(errors.New("x"))).To(BeEmpty())
}

func TestBuildWithoutARegistryAddressSaysWhatToSet(t *testing.T) {
	g := NewWithT(t)
	_, err := Build(context.Background(), Registry{}, "camel/base:1", nil, "kit-a", "v1")
	g.Expect(ReasonOf(err)).To(Equal(ReasonInvalidInput))
	g.Expect(err.Error()).To(Equal("invalid image input: no registry address: set the platform's spec.build.registry.address"))
	g.Expect(IsRetryable(err)).To(BeFalse())
}

func TestAnErrorOfABaseImageInAnotherRegistryNamesThatRegistry(t *testing.T) {
	g := NewWithT(t)
	reg := Registry{Address: "127.0.0.1:5000"}
	down := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	e := reg.classify(context.Background(), opBase, "10.0.0.7:5000/camel/base:1", down)
	g.Expect(e.Reason).To(Equal(ReasonRegistryUnreachable))
	g.Expect(e.Registry).To(Equal("10.0.0.7:5000"))
	g.Expect(e.Error()).To(And(ContainSubstring("registry 10.0.0.7:5000 is unreachable"), ContainSubstring("spec.build.baseImage"),
		Not(ContainSubstring("127.0.0.1:5000"))))

	t.Log("a base image without a host is in the platform's registry, which is the one to check")
	e = reg.classify(context.Background(), opBase, "camel/base:1", down)
	g.Expect(e.Registry).To(Equal("127.0.0.1:5000"))
	g.Expect(e.Error()).To(ContainSubstring("spec.build.registry.address"))
}
