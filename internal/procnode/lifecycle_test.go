package procnode

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestVolumesAreMountedOnceWhatTheyHoldExists(t *testing.T) {
	var failures []string
	tries := 0
	prepare := func() (map[string]string, error) {
		tries++
		if tries < 3 {
			return nil, errors.New(`volume props: configmaps "it-application-properties" not found`)
		}
		return map[string]string{"props": "/volumes/props"}, nil
	}
	volumes, err := mountWhenReady(context.Background(), prepare, func(err error) { failures = append(failures, err.Error()) },
		time.Millisecond, 4*time.Millisecond)
	if err != nil || volumes["props"] != "/volumes/props" {
		t.Fatalf("got %v, %v; want the volumes once the ConfigMap exists", volumes, err)
	}
	if len(failures) != 2 {
		t.Fatalf("each failed try is an event: got %q", failures)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	never := func() (map[string]string, error) { return nil, errors.New("missing") }
	if _, err := mountWhenReady(ctx, never, func(error) {}, time.Millisecond, time.Millisecond); !errors.Is(err, context.Canceled) {
		t.Fatalf("a pod deleted while its volumes wait: got %v, want the context's error", err)
	}
}
