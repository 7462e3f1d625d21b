package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errNotLive refuses a write of an operator whose registration may have
// expired: another operator may have taken its resources over.
var errNotLive = errors.New("the operator's registration is not live")

// writeFence holds the operator's writes to the time its registration is surely live. A fenced
// client refuses a write after that time, and gives every write it lets through that time as its
// deadline. Without the fence, an operator cut off from the API server for longer than its
// registration lasts would, once the connection is back, write from a cache that still shows as its
// own what another operator has taken over.
type writeFence struct {
	// deadline is the registrar's WriteDeadline, set before the manager
	// starts (the manager's client is made before the registrar).
	deadline func() (time.Time, error)
}

// allow returns ctx bounded by the fence's deadline, or errNotLive.
func (f *writeFence) allow(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if f.deadline == nil {
		return nil, nil, fmt.Errorf("%w: it has not registered yet", errNotLive)
	}
	until, err := f.deadline()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, until)
	return ctx, cancel, nil
}

// fenced is c, with every write (of the object or of a subresource) held
// to f.
func (f *writeFence) fenced(c client.Client) client.Client { return &fencedClient{Client: c, fence: f} }

// fencedClient is a client whose writes go through a writeFence; its
// reads are the wrapped client's.
type fencedClient struct {
	client.Client
	fence *writeFence
}

// write runs do with the fence's context, or refuses it.
func (f *writeFence) write(ctx context.Context, do func(context.Context) error) error {
	ctx, cancel, err := f.allow(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	return do(ctx)
}

// Create creates obj within the fence.
func (c *fencedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.fence.write(ctx, func(ctx context.Context) error { return c.Client.Create(ctx, obj, opts...) })
}

// Update updates obj within the fence.
func (c *fencedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.fence.write(ctx, func(ctx context.Context) error { return c.Client.Update(ctx, obj, opts...) })
}

// Patch patches obj within the fence.
func (c *fencedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.fence.write(ctx, func(ctx context.Context) error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

// Apply applies obj within the fence.
func (c *fencedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return c.fence.write(ctx, func(ctx context.Context) error { return c.Client.Apply(ctx, obj, opts...) })
}

// Delete deletes obj within the fence.
func (c *fencedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.fence.write(ctx, func(ctx context.Context) error { return c.Client.Delete(ctx, obj, opts...) })
}

// DeleteAllOf deletes the objects of obj's kind within the fence.
func (c *fencedClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	return c.fence.write(ctx, func(ctx context.Context) error { return c.Client.DeleteAllOf(ctx, obj, opts...) })
}

// Status is the status writer, within the fence.
func (c *fencedClient) Status() client.SubResourceWriter {
	return &fencedSubResource{SubResourceClient: c.Client.SubResource("status"), fence: c.fence}
}

// SubResource is a client of subResource, whose writes go through the
// fence.
func (c *fencedClient) SubResource(subResource string) client.SubResourceClient {
	return &fencedSubResource{SubResourceClient: c.Client.SubResource(subResource), fence: c.fence}
}

// fencedSubResource is a subresource client whose writes go through a
// writeFence.
type fencedSubResource struct {
	client.SubResourceClient
	fence *writeFence
}

// Create creates the subresource within the fence.
func (s *fencedSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return s.fence.write(ctx, func(ctx context.Context) error { return s.SubResourceClient.Create(ctx, obj, sub, opts...) })
}

// Update updates the subresource within the fence.
func (s *fencedSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.fence.write(ctx, func(ctx context.Context) error { return s.SubResourceClient.Update(ctx, obj, opts...) })
}

// Patch patches the subresource within the fence.
func (s *fencedSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.fence.write(ctx, func(ctx context.Context) error { return s.SubResourceClient.Patch(ctx, obj, patch, opts...) })
}

// Apply applies the subresource within the fence.
func (s *fencedSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	return s.fence.write(ctx, func(ctx context.Context) error { return s.SubResourceClient.Apply(ctx, obj, opts...) })
}
