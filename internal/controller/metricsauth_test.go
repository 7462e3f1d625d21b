// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package controller

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// reviews answers as an API server that knows two tokens and lets only the reader get /metrics.
type reviews struct {
	tokenCalls, accessCalls int
	down                    bool
}

func (r *reviews) ReviewToken(_ context.Context, token string) (authnv1.TokenReviewStatus, error) {
	r.tokenCalls++
	if r.down {
		return authnv1.TokenReviewStatus{}, errors.New("connection refused")
	}
	switch token {
	case "reader-token":
		return authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: "reader", Groups: []string{"g"}}}, nil
	case "stranger-token":
		return authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: "stranger"}}, nil
	}
	return authnv1.TokenReviewStatus{}, nil
}

func (r *reviews) ReviewAccess(_ context.Context, spec authzv1.SubjectAccessReviewSpec) (authzv1.SubjectAccessReviewStatus, error) {
	r.accessCalls++
	a := spec.NonResourceAttributes
	return authzv1.SubjectAccessReviewStatus{Allowed: spec.User == "reader" && a.Path == "/metrics" && a.Verb == "get"}, nil
}

func TestTheMetricsServeOnlyATokenTheAPIServerAuthenticatesForAUserItAllows(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, auth string
		want                     int
	}{
		{name: "no token is unauthorised", method: "GET", path: "/metrics", want: http.StatusUnauthorized},
		{name: "another scheme is unauthorised", method: "GET", path: "/metrics", auth: "Basic cmVhZGVy", want: http.StatusUnauthorized},
		{name: "a token the API server does not know is unauthorised", method: "GET", path: "/metrics", auth: "Bearer forged", want: http.StatusUnauthorized},
		{name: "a user without the right is forbidden", method: "GET", path: "/metrics", auth: "Bearer stranger-token", want: http.StatusForbidden},
		{name: "the reader gets the metrics", method: "GET", path: "/metrics", auth: "Bearer reader-token", want: http.StatusOK},
		{name: "the reader may get no other path", method: "GET", path: "/debug/pprof/", auth: "Bearer reader-token", want: http.StatusForbidden},
		{name: "the verb is the method's, lowercased", method: "POST", path: "/metrics", auth: "Bearer reader-token", want: http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newAccessGuard(&reviews{}, clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if code, msg, err := g.check(req); code != tc.want || err != nil {
				t.Errorf("got %d %q %v, want %d", code, msg, err, tc.want)
			}
		})
	}
}

func TestTheAPIServersAnswersAreKeptForAWhile(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	r := &reviews{}
	g := newAccessGuard(r, clk)
	get := func(token string) int {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		code, _, _ := g.check(req)
		return code
	}
	for range 3 {
		if get("reader-token") != http.StatusOK || get("stranger-token") != http.StatusForbidden {
			t.Fatal("a cached answer changed")
		}
	}
	if r.tokenCalls != 2 || r.accessCalls != 2 {
		t.Fatalf("six requests of two callers made %d token and %d access reviews, want 2 and 2", r.tokenCalls, r.accessCalls)
	}
	clk.SetTime(clk.Now().Add(denyTTL))
	get("reader-token")
	get("stranger-token")
	if r.tokenCalls != 2 || r.accessCalls != 3 {
		t.Errorf("after %s: %d token and %d access reviews, want 2 and 3 (a refusal is asked again)", denyTTL, r.tokenCalls, r.accessCalls)
	}
	clk.SetTime(clk.Now().Add(tokenTTL))
	get("reader-token")
	if r.tokenCalls != 3 {
		t.Errorf("after %s: %d token reviews, want 3", tokenTTL, r.tokenCalls)
	}
}

func TestAnAPIServerThatCannotAnswerIsAnErrorNotARefusal(t *testing.T) {
	saved := reviewBackoff
	reviewBackoff.Duration, reviewBackoff.Steps = time.Millisecond, 2
	t.Cleanup(func() { reviewBackoff = saved })
	r := &reviews{down: true}
	g := newAccessGuard(r, clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Authorization", "Bearer reader-token")
	code, _, err := g.check(req)
	if code != http.StatusInternalServerError || err == nil {
		t.Fatalf("got %d, %v; want 500 and an error", code, err)
	}
	if r.tokenCalls != 2 {
		t.Errorf("the review was tried %d times, want 2", r.tokenCalls)
	}
	r.down = false
	if code, _, err := g.check(req); code != http.StatusOK || err != nil {
		t.Errorf("once the API server answers: got %d, %v", code, err)
	}
}

func TestACacheKeepsItsSizeByDroppingExpiredAnswersFirst(t *testing.T) {
	c := ttlCache[bool]{entries: map[string]ttlEntry[bool]{}}
	now := time.Unix(0, 0)
	for i := range reviewCacheSize {
		c.put(string(rune(i)), true, now, time.Duration(1+i%2)*time.Minute)
	}
	c.put("new", true, now.Add(time.Minute), time.Minute)
	if n := len(c.entries); n != reviewCacheSize/2+1 {
		t.Errorf("%d entries, want the %d unexpired and the new one", n, reviewCacheSize/2)
	}
	if _, ok := c.get("new", now.Add(time.Minute)); !ok {
		t.Error("the new answer is not kept")
	}
}
