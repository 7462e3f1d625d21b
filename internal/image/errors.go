// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Reasons of an *Error; each is meant to become a condition reason as it is.
const (
	// ReasonRegistryUnreachable: the registry did not answer, or answered 502/503/504.
	ReasonRegistryUnreachable = "RegistryUnreachable"
	// ReasonUnauthorized: the registry refused the credentials, or asked for some (401, 403).
	ReasonUnauthorized = "Unauthorized"
	// ReasonBaseImageNotFound: the registry has no such base image (404, MANIFEST_UNKNOWN).
	ReasonBaseImageNotFound = "BaseImageNotFound"
	// ReasonImageNotFound: the registry has no such image (Pull only).
	ReasonImageNotFound = "ImageNotFound"
	// ReasonPullFailed: reading an image failed in another way (a bad manifest, ...).
	ReasonPullFailed = "PullFailed"
	// ReasonPushFailed: the registry was reached but did not take the image.
	ReasonPushFailed = "PushFailed"
	// ReasonCanceled: the context was canceled or its deadline passed.
	ReasonCanceled = "Canceled"
	// ReasonInvalidInput: a reference, repository, tag or kit file is malformed.
	ReasonInvalidInput = "InvalidInput"
)

// The platform's fields that name a registry.
const (
	settingRegistry  = "spec.build.registry.address"
	settingBaseImage = "spec.build.baseImage"
)

// Error is a registry operation that failed, classified by Reason.
type Error struct {
	// Reason is one of the Reason constants.
	Reason string
	// Registry is the host[:port] of the registry involved.
	Registry string
	// Image is the image reference involved, when there is one.
	Image string
	// Err is the cause.
	Err error

	// anonymous is set when no credentials were sent.
	anonymous bool
	// setting is the platform's field that names Registry: its registry
	// address, or the base image when that is in another registry.
	setting string
}

// Error names the registry and says what went wrong in words a user can act on.
func (e *Error) Error() string {
	switch e.Reason {
	case ReasonUnauthorized:
		if e.anonymous {
			return fmt.Sprintf("registry %s requires credentials (%s): name a secret holding them in the platform's spec.build.registry.secret",
				e.Registry, statusText(e.Err))
		}
		return fmt.Sprintf("registry %s refused the credentials (%s): check the secret named in the platform's spec.build.registry.secret",
			e.Registry, statusText(e.Err))
	case ReasonRegistryUnreachable:
		return fmt.Sprintf("registry %s is unreachable: %v: check the platform's %s and that the registry is running",
			e.Registry, e.Err, cmp.Or(e.setting, settingRegistry))
	case ReasonBaseImageNotFound:
		return fmt.Sprintf("base image %s was not found in registry %s (%s): push it there or change the platform's spec.build.baseImage",
			e.Image, e.Registry, statusText(e.Err))
	case ReasonImageNotFound:
		return fmt.Sprintf("image %s was not found in registry %s (%s)", e.Image, e.Registry, statusText(e.Err))
	case ReasonPullFailed:
		return fmt.Sprintf("reading image %s from registry %s failed: %v", e.Image, e.Registry, e.Err)
	case ReasonPushFailed:
		return fmt.Sprintf("registry %s did not accept image %s: %v", e.Registry, e.Image, e.Err)
	case ReasonCanceled:
		if errors.Is(e.Err, context.DeadlineExceeded) {
			return fmt.Sprintf("the work with registry %s timed out: %v: check that the registry, and the network to it, answer in time", e.Registry, e.Err)
		}
		return fmt.Sprintf("the work with registry %s was canceled: %v", e.Registry, e.Err)
	case ReasonInvalidInput:
		if e.Registry == "" {
			return fmt.Sprintf("invalid image input: %v", e.Err)
		}
		return fmt.Sprintf("invalid image input for registry %s: %v", e.Registry, e.Err)
	}
	return fmt.Sprintf("registry %s: %s: %v", e.Registry, e.Reason, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// IsRetryable tells whether trying again later, unchanged, may succeed:
//   - RegistryUnreachable, PushFailed, PullFailed: yes, the registry may recover.
//   - BaseImageNotFound, ImageNotFound: yes. A base image is often pushed to the platform
//     registry by a separate step that may race with the first build; the bounded retries
//     end in Error with the same clear message if it never comes.
//   - Canceled: only for a deadline (a build timeout); a canceled context means the
//     caller gave up (shutdown, the kit moved to another operator).
//   - Unauthorized, InvalidInput: no, a user must change a secret or a setting; retry
//     when that input changes, not on a timer.
//
// An error that is not an *Error is retryable; nil is not.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var e *Error
	if !errors.As(err, &e) {
		return true
	}
	switch e.Reason {
	case ReasonUnauthorized, ReasonInvalidInput:
		return false
	case ReasonCanceled:
		return errors.Is(e.Err, context.DeadlineExceeded)
	}
	return true
}

// ReasonOf returns the Reason of err when it is an *Error, or "".
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// operation says what was being done, to classify "not found" and generic failures.
type operation int

const (
	opBase operation = iota // reading the base image
	opPull                  // reading any image
	opPush                  // writing the kit image
)

// classify turns err, met while doing op on image in r, into an *Error.
func (r Registry) classify(ctx context.Context, op operation, image string, err error) *Error {
	e := &Error{Registry: r.host(), Image: image, Err: err, anonymous: r.Auth == nil, setting: settingRegistry}
	if ref, perr := r.parse(image); perr == nil && ref.Context().RegistryStr() != r.host() {
		// The image is in another registry (a base image elsewhere):
		// that registry is the one involved.
		e.Registry = ref.Context().RegistryStr()
		if op == opBase {
			e.setting = settingBaseImage
		}
	}
	switch {
	case ctx.Err() != nil:
		e.Reason = ReasonCanceled
		if !errors.Is(err, ctx.Err()) {
			e.Err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		e.Reason = ReasonCanceled
	case hasStatus(err, http.StatusUnauthorized, http.StatusForbidden) ||
		hasCode(err, transport.UnauthorizedErrorCode, transport.DeniedErrorCode):
		e.Reason = ReasonUnauthorized
	case op != opPush && (hasStatus(err, http.StatusNotFound) ||
		hasCode(err, transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode)):
		e.Reason = ReasonImageNotFound
		if op == opBase {
			e.Reason = ReasonBaseImageNotFound
		}
	case unreachable(err):
		e.Reason = ReasonRegistryUnreachable
	case op == opPush:
		e.Reason = ReasonPushFailed
	default:
		e.Reason = ReasonPullFailed
	}
	return e
}

// invalid returns an InvalidInput *Error for err.
func (r Registry) invalid(image string, err error) *Error {
	return &Error{Reason: ReasonInvalidInput, Registry: r.host(), Image: image, Err: err, anonymous: r.Auth == nil}
}

// unreachable tells whether err means the registry could not be talked to.
func unreachable(err error) bool {
	var te *transport.Error
	if errors.As(err, &te) {
		return hasStatus(err, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout) ||
			hasCode(err, transport.UnavailableErrorCode)
	}
	var (
		netErr net.Error
		opErr  *net.OpError
		dnsErr *net.DNSError
		urlErr *url.Error
	)
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) || errors.As(err, &urlErr) || errors.As(err, &netErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func hasStatus(err error, codes ...int) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	for _, c := range codes {
		if te.StatusCode == c {
			return true
		}
	}
	return false
}

func hasCode(err error, codes ...transport.ErrorCode) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	for _, d := range te.Errors {
		for _, c := range codes {
			if d.Code == c {
				return true
			}
		}
	}
	return false
}

// statusText returns "401 Unauthorized" for a transport error, or the error's text.
func statusText(err error) string {
	var te *transport.Error
	if errors.As(err, &te) && te.StatusCode != 0 {
		return fmt.Sprintf("%d %s", te.StatusCode, http.StatusText(te.StatusCode))
	}
	if err == nil {
		return "no cause given"
	}
	return err.Error()
}
