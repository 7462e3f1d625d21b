// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/caravan-dev/caravan/internal/runtime"
)

// checkJava prints how many issuers the default trust manager accepts, and the default charset.
const checkJava = `import java.security.KeyStore;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

public class Check {
    public static void main(String[] args) throws Exception {
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        f.init((KeyStore) null);
        for (TrustManager m : f.getTrustManagers()) {
            if (m instanceof X509TrustManager x) {
                System.out.println("issuers " + x.getAcceptedIssuers().length);
            }
        }
        System.out.println("charset " + java.nio.charset.Charset.defaultCharset());
    }
}
`

// TestBuildBaseRunsJava builds the Base image from Debian's packages into a fresh cache,
// unpacks the image and runs its Java, with its trust store, in a chroot.
func TestBuildBaseRunsJava(t *testing.T) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("apt-get not found: the Base image is built from Debian's packages with apt")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cache := t.TempDir()
	var progress bytes.Buffer
	start := time.Now()
	img, err := Build(ctx, runtime.BaseImage, cache, &progress)
	if err != nil {
		t.Fatalf("building the base image: %v\n%s", err, progress.String())
	}
	cold := time.Since(start)
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cold build in %s:\n%s", cold.Round(time.Millisecond), progress.String())

	progress.Reset()
	start = time.Now()
	again, err := Build(ctx, runtime.BaseImage, cache, &progress)
	if err != nil {
		t.Fatalf("building the base image again: %v", err)
	}
	if d, _ := again.Digest(); d != digest {
		t.Errorf("a second build gave %s, the first %s", d, digest)
	}
	if !strings.Contains(progress.String(), "cached") || strings.Contains(progress.String(), "updating") {
		t.Errorf("a second build did not reuse the cache:\n%s", progress.String())
	}
	t.Logf("warm build in %s", time.Since(start).Round(time.Millisecond))

	checkConfig(t, img)
	root := filepath.Join(t.TempDir(), "root")
	if err := extract(img, root); err != nil {
		t.Fatalf("unpacking the image: %v", err)
	}
	runJava(t, root)
}

// checkConfig checks the image's user, working directory, environment and labels.
func checkConfig(t *testing.T, img v1.Image) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "1000:1000" || c.WorkingDir != "/deployments" {
		t.Errorf("user %q, working directory %q; want 1000:1000 and /deployments", c.User, c.WorkingDir)
	}
	env := strings.Join(c.Env, " ")
	for _, want := range []string{"JAVA_HOME=/usr/lib/jvm/java-17-openjdk-", "LANG=C.UTF-8", "PATH=/usr/local/sbin"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment %q lacks %q", env, want)
		}
	}
	if !strings.Contains(c.Labels[LabelPackages], "openjdk-17-jre-headless:") {
		t.Errorf("label %s = %q names no JRE", LabelPackages, c.Labels[LabelPackages])
	}
}

// runJava runs the image's java -version and the trust store check in a chroot of root,
// with its own /proc, as the image's user when the test runs as root.
func runJava(t *testing.T, root string) {
	t.Helper()
	chroot, err := exec.LookPath("chroot")
	if err != nil {
		t.Skip("chroot not found: the image is built, but its Java is not run")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not found: the image is built, but its Java is not run")
	}
	java := "/usr/lib/jvm/java-17-openjdk-" + hostArch(t) + "/bin/java"
	if err := os.WriteFile(filepath.Join(root, "tmp", "Check.java"), []byte(checkJava), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := chrootCommand(chroot, root, args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			var ee *exec.ExitError
			if os.Geteuid() != 0 && errors.As(err, &ee) && strings.Contains(string(out), "unshare") {
				t.Skipf("cannot enter a user namespace here (%s): the image is built, but its Java is not run", strings.TrimSpace(string(out)))
			}
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := run(java, "-version")
	if !strings.Contains(out, `version "17`) {
		t.Errorf("java -version says %q, not 17", out)
	}
	t.Logf("java -version in the image:\n%s", out)
	out = run("/usr/bin/java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "/tmp/Check.java")
	if !moreIssuers(out, 100) {
		t.Errorf("the default trust manager accepts too few issuers: %q", out)
	}
	if !strings.Contains(out, "charset UTF-8") {
		t.Errorf("Java's default charset is not UTF-8: %q", out)
	}
	t.Logf("the default trust manager and charset in the image: %s", out)
}

// chrootCommand returns a command that runs args with chroot in root, in new mount and PID
// namespaces with /proc mounted, as the image's user when run by root.
func chrootCommand(chroot, root string, args ...string) *exec.Cmd {
	ns := []string{"--fork", "--pid", "--mount", "--mount-proc=" + filepath.Join(root, "proc")}
	in := []string{chroot}
	if os.Geteuid() == 0 {
		in = append(in, "--userspec="+strconv.Itoa(userID)+":"+strconv.Itoa(userID))
	} else {
		ns = append([]string{"--map-root-user"}, ns...)
	}
	cmd := exec.Command("unshare", append(append(ns, append(in, root)...), args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + userHome, "LANG=C.UTF-8"}
	return cmd
}

// moreIssuers reports whether out says "issuers N" with N above min.
func moreIssuers(out string, min int) bool {
	for _, line := range strings.Split(out, "\n") {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "issuers "); ok {
			v, err := strconv.Atoi(n)
			return err == nil && v > min
		}
	}
	return false
}

// hostArch returns dpkg's architecture of this host.
func hostArch(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("dpkg", "--print-architecture").Output()
	if err != nil {
		t.Fatalf("dpkg --print-architecture: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// extract writes the flattened file system of img under dir.
func extract(img v1.Image, dir string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := extractEntry(tr, hdr, dir); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(dir, "proc"), 0o555)
}

// extractEntry writes one tar entry under dir.
func extractEntry(tr *tar.Reader, hdr *tar.Header, dir string) error {
	p := filepath.Join(dir, filepath.Clean("/"+hdr.Name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(hdr.Mode).Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if hdr.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
	case tar.TypeReg:
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	case tar.TypeSymlink:
		if err := os.Symlink(hdr.Linkname, p); err != nil {
			return err
		}
	case tar.TypeLink:
		if err := os.Link(filepath.Join(dir, filepath.Clean("/"+hdr.Linkname)), p); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unexpected entry type %c for %s", hdr.Typeflag, hdr.Name)
	}
	if os.Geteuid() == 0 {
		return os.Lchown(p, hdr.Uid, hdr.Gid)
	}
	return nil
}
