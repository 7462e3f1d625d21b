// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package controller

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long the API server's answers about a caller are kept, as Kubernetes' delegating
// authentication and authorization keep them.
const (
	tokenTTL   = time.Minute
	allowTTL   = 5 * time.Minute
	denyTTL    = 30 * time.Second
	reviewWait = 10 * time.Second
	// reviewCacheSize bounds each cache: past it, expired answers are dropped, then all.
	reviewCacheSize = 4096
)

// reviewBackoff retries a review the API server failed to answer.
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// reviewer asks the API server who a token is and what a user may do.
type reviewer interface {
	ReviewToken(ctx context.Context, token string) (authnv1.TokenReviewStatus, error)
	ReviewAccess(ctx context.Context, spec authzv1.SubjectAccessReviewSpec) (authzv1.SubjectAccessReviewStatus, error)
}

// MetricsAuth is the metrics server's filter: a caller must bring a bearer token that the API
// server authenticates (TokenReview), for a user it lets get the path (SubjectAccessReview).
// It does with client-go what controller-runtime's filters package does with k8s.io/apiserver,
// which would add a third to the operator's binary. A nil httpClient is one made from cfg.
func MetricsAuth(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("the metrics server's client: %w", err)
		}
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("the metrics server's client: %w", err)
	}
	guard := newAccessGuard(clientReviewer{cs}, clock.RealClock{})
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			code, msg, err := guard.check(req)
			switch {
			case err != nil:
				log.Error(err, "checking a metrics caller", "path", req.URL.Path)
				http.Error(w, msg, code)
			case code != http.StatusOK:
				log.V(4).Info("refused a metrics caller", "path", req.URL.Path, "reason", msg)
				http.Error(w, msg, code)
			default:
				next.ServeHTTP(w, req)
			}
		}), nil
	}, nil
}

// clientReviewer is a reviewer on client-go's typed clients.
type clientReviewer struct{ cs kubernetes.Interface }

func (c clientReviewer) ReviewToken(ctx context.Context, token string) (authnv1.TokenReviewStatus, error) {
	r, err := c.cs.AuthenticationV1().TokenReviews().Create(ctx,
		&authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return authnv1.TokenReviewStatus{}, err
	}
	return r.Status, nil
}

func (c clientReviewer) ReviewAccess(ctx context.Context, spec authzv1.SubjectAccessReviewSpec) (authzv1.SubjectAccessReviewStatus, error) {
	r, err := c.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return authzv1.SubjectAccessReviewStatus{}, err
	}
	return r.Status, nil
}

// accessGuard decides on callers, keeping the API server's answers for a while.
type accessGuard struct {
	reviews reviewer
	clock   clock.PassiveClock
	users   ttlCache[authnv1.TokenReviewStatus]
	access  ttlCache[bool]
}

func newAccessGuard(r reviewer, clk clock.PassiveClock) *accessGuard {
	return &accessGuard{reviews: r, clock: clk,
		users:  ttlCache[authnv1.TokenReviewStatus]{entries: map[string]ttlEntry[authnv1.TokenReviewStatus]{}},
		access: ttlCache[bool]{entries: map[string]ttlEntry[bool]{}}}
}

// check returns the HTTP status for req: 200 to serve it, 401 without a valid token, 403 for
// a user who may not get the path, 500 with an error when the API server could not say.
func (g *accessGuard) check(req *http.Request) (int, string, error) {
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if token = strings.TrimSpace(token); !ok || token == "" {
		return http.StatusUnauthorized, "Unauthorized", nil
	}
	user, err := g.user(req.Context(), token)
	if err != nil {
		return http.StatusInternalServerError, "Authentication failed", err
	}
	if !user.Authenticated {
		return http.StatusUnauthorized, "Unauthorized", nil
	}
	allowed, err := g.allowed(req.Context(), user.User, strings.ToLower(req.Method), req.URL.Path)
	if err != nil {
		return http.StatusInternalServerError, "Authorization for user " + user.User.Username + " failed", err
	}
	if !allowed {
		return http.StatusForbidden, "Authorization denied for user " + user.User.Username, nil
	}
	return http.StatusOK, "", nil
}

// user is the API server's review of token, kept tokenTTL.
func (g *accessGuard) user(ctx context.Context, token string) (authnv1.TokenReviewStatus, error) {
	st, err := reviewOnce(ctx, g.clock, &g.users, token, func(authnv1.TokenReviewStatus) time.Duration { return tokenTTL },
		func(ctx context.Context) (authnv1.TokenReviewStatus, error) { return g.reviews.ReviewToken(ctx, token) })
	if err != nil {
		return st, fmt.Errorf("reviewing a token: %w", err)
	}
	return st, nil
}

// allowed tells whether user may do verb on the non-resource path, kept allowTTL or denyTTL.
func (g *accessGuard) allowed(ctx context.Context, user authnv1.UserInfo, verb, path string) (bool, error) {
	spec := authzv1.SubjectAccessReviewSpec{User: user.Username, UID: user.UID, Groups: user.Groups,
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: path, Verb: verb}}
	if len(user.Extra) > 0 {
		spec.Extra = map[string]authzv1.ExtraValue{}
		for k, v := range user.Extra {
			spec.Extra[k] = authzv1.ExtraValue(v)
		}
	}
	key := fmt.Sprintf("%q %q %q %q %q %v", user.Username, user.UID, user.Groups, verb, path, user.Extra)
	ttl := func(ok bool) time.Duration {
		if ok {
			return allowTTL
		}
		return denyTTL
	}
	ok, err := reviewOnce(ctx, g.clock, &g.access, key, ttl, func(ctx context.Context) (bool, error) {
		st, err := g.reviews.ReviewAccess(ctx, spec)
		return st.Allowed, err
	})
	if err != nil {
		return false, fmt.Errorf("reviewing the access of %s to %s: %w", user.Username, path, err)
	}
	return ok, nil
}

// reviewOnce returns the answer c keeps for key, else asks review, retried, and keeps its answer
// for ttl of it.
func reviewOnce[V any](ctx context.Context, clk clock.PassiveClock, c *ttlCache[V], key string,
	ttl func(V) time.Duration, review func(context.Context) (V, error)) (V, error) {
	if v, ok := c.get(key, clk.Now()); ok {
		return v, nil
	}
	var v V
	err := retryReview(ctx, func(ctx context.Context) (err error) {
		v, err = review(ctx)
		return err
	})
	if err != nil {
		return v, err
	}
	c.put(key, v, clk.Now(), ttl(v))
	return v, nil
}

// retryReview calls review, each call bounded by reviewWait, until it answers or reviewBackoff
// runs out.
func retryReview(ctx context.Context, review func(context.Context) error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, reviewBackoff, func(ctx context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, reviewWait)
		defer cancel()
		last = review(ctx)
		return last == nil, nil
	})
	if last != nil {
		return last
	}
	return err
}

// ttlCache keeps values until they expire, at most reviewCacheSize of them.
type ttlCache[V any] struct {
	mu      sync.Mutex
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func (c *ttlCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *ttlCache[V]) put(key string, v V, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= reviewCacheSize {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= reviewCacheSize {
			clear(c.entries)
		}
	}
	c.entries[key] = ttlEntry[V]{value: v, expires: now.Add(ttl)}
}
