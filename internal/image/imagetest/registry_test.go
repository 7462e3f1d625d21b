// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package imagetest

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/caravan-dev/caravan/internal/image"
)

func get(addr string) (int, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/v2/")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestARestartedRegistryKeepsItsAddressAndImages(t *testing.T) {
	g := NewWithT(t)
	reg := StartRegistry(t)
	ref := PushBase(t, reg, "camel/base")
	g.Expect(ref).To(Equal(reg.Address + "/camel/base:latest"))

	reg.Stop()
	_, err := get(reg.Address)
	g.Expect(err).To(HaveOccurred(), "a stopped registry refuses connections")

	reg.Start()
	code, err := get(reg.Address)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK))
	_, err = image.Pull(context.Background(), reg.Config(), ref)
	g.Expect(err).NotTo(HaveOccurred(), "the image pushed before the restart is still there")
}

func TestARegistryWithAuthAsksForCredentials(t *testing.T) {
	g := NewWithT(t)
	reg := StartRegistry(t, WithAuth("caravan", "s3cret"))
	code, err := get(reg.Address)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusUnauthorized))
	g.Expect(reg.Config().Auth).NotTo(BeNil())
	PushBase(t, reg, "camel/base")
}
