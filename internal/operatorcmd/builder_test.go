package operatorcmd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/image/imagetest"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/publish"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// TestPublishPushesWithTheRegistrysCredentials runs `builder publish` as a builder pod does,
// against a registry that requires credentials: refused without --registry-auth, pushed with the
// Docker config of the platform's registry Secret.
func TestPublishPushesWithTheRegistrysCredentials(t *testing.T) {
	srv := imagetest.StartRegistry(t, imagetest.WithAuth("builder", "s3cret"))
	reg := srv.Config()
	publish := publisher(t, reg)
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("builder:s3cret"))
	config := filepath.Join(dir, "config.json")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`{"auths":{"%s":{"auth":"%s"}}}`, reg.Address, auth)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := publish(); err == nil || !strings.Contains(err.Error(), "requires credentials") {
		t.Fatalf("without credentials: got %v, want the registry's refusal", err)
	}
	out, err := publish("--registry-auth=" + config)
	checkPushed(t, reg, out, err)
	if _, err := publish("--registry-auth=" + filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "--registry-auth") {
		t.Fatalf("a missing credentials file: got %v", err)
	}
}

// TestPublishTrustsTheRegistrysCA: against a registry whose certificate a private CA signed,
// publish fails on the certificate without --registry-ca, and pushes with the CA's *.crt files.
func TestPublishTrustsTheRegistrysCA(t *testing.T) {
	srv := imagetest.StartRegistry(t, imagetest.WithTLS())
	reg := srv.Config()
	publish := publisher(t, reg)
	if _, err := publish(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA: got %v, want a refused certificate", err)
	}
	dir := t.TempDir()
	if _, err := publish("--registry-ca=" + dir); err == nil || !strings.Contains(err.Error(), "no *.crt file") {
		t.Fatalf("a directory without certificates: got %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca-0.crt"), srv.CA.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := publish("--registry-ca=" + dir)
	checkPushed(t, reg, out, err)
}

// publisher pushes a base image to reg and returns a function that runs `builder publish`
// of one jar onto it with extra flags, as a builder pod does, and returns its termination log.
func publisher(t *testing.T, reg image.Registry) func(extra ...string) (string, error) {
	t.Helper()
	ctx := context.Background()
	base, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := image.Push(ctx, reg, reg.Address+"/base:1", base); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jar := filepath.Join(dir, "core-1.0.jar")
	list, mavenLog := filepath.Join(dir, "dependencies.txt"), filepath.Join(dir, "maven.log")
	for name, data := range map[string]string{jar: "core 1.0", mavenLog: "[INFO] BUILD SUCCESS\n",
		list: "The following files have been resolved:\n   org.example:core:jar:1.0:compile:" + jar + "\n"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task, err := json.Marshal(publish.Request{Project: maven.Project{BOMs: runtime.Main.BOMs("4.18.0")}, BaseImage: "base:1",
		RegistryAddress: reg.Address, Insecure: reg.Insecure, Repository: "kit-a"})
	if err != nil {
		t.Fatal(err)
	}
	return func(extra ...string) (string, error) {
		termination := filepath.Join(t.TempDir(), "termination-log")
		var errOut bytes.Buffer
		cmd := newPublishCmd(&errOut)
		cmd.SetArgs(append([]string{"--list=" + list, "--maven-log=" + mavenLog, "--termination-log=" + termination,
			"--task=" + string(task)}, extra...))
		if err := cmd.ExecuteContext(ctx); err != nil {
			return "", err
		}
		data, err := os.ReadFile(termination)
		return string(data), err
	}
}

// checkPushed checks that publish wrote the result of a kit it pushed to reg.
func checkPushed(t *testing.T, reg image.Registry, out string, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var res publish.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || !strings.HasPrefix(res.Image, reg.Address+"/kit-a@sha256:") || res.Added != 1 {
		t.Fatalf("got %+v (%v) from %s", res, err, out)
	}
	if _, err := image.Pull(context.Background(), reg, res.Image); err != nil {
		t.Fatalf("the kit is not in the registry: %v", err)
	}
}
