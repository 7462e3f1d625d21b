// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package bench

import (
	"context"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/measure"
	"github.com/caravan-dev/caravan/internal/bench/result"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// quarkusPrefix begins the names of the runtime scenario's Camel Quarkus integrations.
const quarkusPrefix = "q-"

// quarkusFigures measures the runtime scenario's figures on the quarkus provider, in the same run
// and on the same operator as camel-main's: its kits' builds (the Maven cache warm with camel-main's
// jars, cold with Quarkus'), n integrations on the kit that exists against the same application
// started directly, and an idle integration's memory and CPU beside that floor's. Its integrations
// are deleted after, so that the moves that follow run camel-main's alone.
func quarkusFigures(ctx context.Context, e *env, cs kubernetes.Interface, op *Operator, n int) (*result.ProviderRuntime, error) {
	s := &tickStarter{e: e, cs: cs, op: op, provider: runtime.QuarkusProviderName, prefix: quarkusPrefix}
	res := &result.ProviderRuntime{Provider: runtime.QuarkusProviderName, RuntimeVersion: runtime.DefaultQuarkusVersion}
	var err error
	if res.ColdSeconds, res.WarmSeconds, res.ExistingSeconds, err = s.times(ctx, n, "none of Quarkus' jars in the Maven cache"); err != nil {
		return nil, err
	}
	fmt.Fprintln(e.progress, "runtime: the Camel Quarkus floor, the same application on the same Java, started directly")
	floor, err := prepareFloor(ctx, e, cs, quarkusPrefix+"existing-0")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(floor.dir)
	if res.FloorSeconds, err = floor.firstTicks(ctx, n); err != nil {
		return nil, err
	}
	res.Ratio = measure.Ratio(res.ExistingSeconds.P50, res.FloorSeconds.P50)
	fmt.Fprintf(e.progress, "runtime: memory and CPU after %s idle, a Camel Quarkus integration beside its floor's JVM\n", runtimeIdle)
	if res.Idle, res.FloorIdle, err = idleFigures(ctx, floor, quarkusPrefix+"existing-0"); err != nil {
		return nil, err
	}
	res.RSSRatio = measure.Ratio(res.Idle.RSSMiB, res.FloorIdle.RSSMiB)
	var its camelv1.IntegrationList
	if err := e.client.List(ctx, &its, client.InNamespace(runtimeNamespace)); err != nil {
		return nil, err
	}
	for i := range its.Items {
		if it := &its.Items[i]; strings.HasPrefix(it.Name, quarkusPrefix) {
			if err := e.client.Delete(ctx, it); client.IgnoreNotFound(err) != nil {
				return nil, err
			}
		}
	}
	return res, nil
}
