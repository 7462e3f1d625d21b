package procnode

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/caravan-dev/caravan/internal/image"
)

// pulledImage is an image unpacked on the node.
type pulledImage struct {
	// Digest is the manifest digest of the platform's image.
	Digest string
	// Rootfs is the unpacked, flattened filesystem; it is never written to.
	Rootfs string
	Config v1.Config
}

// errInvalidImageName marks an image reference that cannot be parsed.
var errInvalidImageName = errors.New("invalid image name")

// imageStore pulls images and keeps them unpacked under dir, by digest.
type imageStore struct {
	dir string
	mu  sync.Mutex // serialises unpacking
}

// pull resolves ref for this machine's platform, with auth (nil: anonymous), and unpacks it once.
func (s *imageStore) pull(ctx context.Context, ref string, auth authn.Authenticator) (pulledImage, error) {
	parsed, err := name.ParseReference(ref, insecureLoopback(ref)...)
	if err != nil {
		return pulledImage{}, fmt.Errorf("%w %q: %v", errInvalidImageName, ref, err)
	}
	if auth == nil {
		auth = authn.Anonymous
	}
	img, err := remote.Image(parsed, remote.WithContext(ctx), remote.WithAuth(auth),
		remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
	if err != nil {
		return pulledImage{}, fmt.Errorf("pulling %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return pulledImage{}, fmt.Errorf("pulling %s: %w", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return pulledImage{}, fmt.Errorf("reading the config of %s: %w", ref, err)
	}
	root := filepath.Join(s.dir, digest.Hex, "rootfs")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(root); err != nil {
		if err := Unpack(img, root); err != nil {
			return pulledImage{}, fmt.Errorf("unpacking %s: %w", ref, err)
		}
	}
	return pulledImage{Digest: digest.String(), Rootfs: root, Config: cfg.Config}, nil
}

// insecureLoopback allows plain HTTP for registries on the loopback
// interface, as the local cluster's registry is.
func insecureLoopback(ref string) []name.Option {
	host, _, _ := strings.Cut(ref, "/")
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" {
		return []name.Option{name.Insecure}
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return []name.Option{name.Insecure}
	}
	return nil
}

// Unpack writes the flattened filesystem of img to root, through a
// temporary directory renamed into place.
func Unpack(img v1.Image, root string) error {
	tmp := root + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := untar(tar.NewReader(rc), tmp); err != nil {
		return err
	}
	return os.Rename(tmp, root)
}

// untar writes the entries of tr under root, refusing any that would land
// outside it. Ownership is kept when the node runs as root.
func untar(tr *tar.Reader, root string) error {
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(root, filepath.Clean("/"+h.Name))
		if !strings.HasPrefix(target, root+string(filepath.Separator)) && target != root {
			return fmt.Errorf("image entry %q leaves the root filesystem", h.Name)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(h.Mode) & os.ModePerm
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, mode); err != nil {
				return err
			}
			err = os.Chmod(target, mode|os.FileMode(h.Mode)&(os.ModeSticky))
		case tar.TypeReg:
			// A file keeps its layer's time, as a kubelet's runtime unpacks it: the JVM checks the
			// times of the jars a class-data-sharing archive was made with.
			if err = writeFile(target, tr, mode); err == nil {
				err = os.Chtimes(target, h.ModTime, h.ModTime)
			}
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, target)
		case tar.TypeLink:
			err = os.Link(filepath.Join(root, filepath.Clean("/"+h.Linkname)), target)
		default:
			continue // devices and fifos have no place in a confined container
		}
		if err != nil {
			return fmt.Errorf("unpacking %s: %w", h.Name, err)
		}
		if h.Typeflag == tar.TypeDir && h.Mode&0o1000 != 0 {
			if err := os.Chmod(target, mode|os.ModeSticky); err != nil {
				return err
			}
		}
		if os.Getuid() == 0 {
			if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
				return fmt.Errorf("unpacking %s: %w", h.Name, err)
			}
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

// pullAuth is what the pod's image pull secrets hold for ref's registry: the first Secret with
// credentials for it, as the kubelet picks them; nil (anonymous) when none has. A Secret that
// is missing or unreadable is passed over, as the kubelet does.
func pullAuth(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, ref string) authn.Authenticator {
	var secrets []*corev1.Secret
	for _, ps := range pod.Spec.ImagePullSecrets {
		if secret, err := cs.CoreV1().Secrets(pod.Namespace).Get(ctx, ps.Name, metav1.GetOptions{}); err == nil {
			secrets = append(secrets, secret)
		}
	}
	return registryAuthOf(ref, secrets)
}

// registryAuthOf is the first of the Docker configs of secrets with credentials for ref's
// registry; nil for none.
func registryAuthOf(ref string, secrets []*corev1.Secret) authn.Authenticator {
	parsed, err := name.ParseReference(ref, insecureLoopback(ref)...)
	if err != nil {
		return nil
	}
	registry := parsed.Context().RegistryStr()
	for _, secret := range secrets {
		for _, key := range []string{corev1.DockerConfigJsonKey, corev1.DockerConfigKey} {
			if data, ok := secret.Data[key]; ok {
				if auth, err := image.AuthFromDockerConfig(data, registry); err == nil {
					return auth
				}
			}
		}
	}
	return nil
}
