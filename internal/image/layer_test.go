// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/caravan-dev/caravan/internal/kit"
)

type entry struct {
	Name    string
	Type    byte
	Mode    int64
	Content string
}

func readTar(t *testing.T, data []byte) []entry {
	t.Helper()
	var out []entry
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		if !hdr.ModTime.Equal(time.Unix(0, 0)) || hdr.Uid != 0 || hdr.Gid != 0 || hdr.Uname != "" || hdr.Gname != "" {
			t.Fatalf("entry %s is not normalised: %+v", hdr.Name, hdr)
		}
		b, _ := io.ReadAll(tr)
		out = append(out, entry{Name: hdr.Name, Type: hdr.Typeflag, Mode: hdr.Mode, Content: string(b)})
	}
}

func TestTarFiles(t *testing.T) {
	cases := []struct {
		name    string
		files   []kit.File
		want    []entry
		wantErr string
	}{
		{name: "files come sorted after their parent directories, owned by root at the epoch",
			files: []kit.File{
				{Path: "/etc/camel/kit/kit.properties", Mode: 0o644, Content: []byte("a=1\n")},
				{Path: "/etc/camel/kit/dependencies.txt", Mode: 0o600, Content: []byte("camel:http\n")},
				{Path: "/opt/x", Content: []byte("x")},
			},
			want: []entry{
				{Name: "etc/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "etc/camel/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "etc/camel/kit/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "etc/camel/kit/dependencies.txt", Type: tar.TypeReg, Mode: 0o600, Content: "camel:http\n"},
				{Name: "etc/camel/kit/kit.properties", Type: tar.TypeReg, Mode: 0o644, Content: "a=1\n"},
				{Name: "opt/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "opt/x", Type: tar.TypeReg, Mode: 0o644, Content: "x"},
			}},
		{name: "no file gives an empty tar", files: nil, want: nil},
		{name: "a relative path is refused", files: []kit.File{{Path: "etc/x"}}, wantErr: "not an absolute, clean file path"},
		{name: "a path with dot-dot is refused", files: []kit.File{{Path: "/etc/../x"}}, wantErr: "not an absolute, clean file path"},
		{name: "the root is refused", files: []kit.File{{Path: "/"}}, wantErr: "not an absolute, clean file path"},
		{name: "a file given twice is refused", files: []kit.File{{Path: "/x"}, {Path: "/x"}}, wantErr: "given twice"},
		{name: "a file that is also a directory is refused", files: []kit.File{{Path: "/x"}, {Path: "/x/y"}}, wantErr: "parent directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			data, err := tarFiles(tc.files)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(readTar(t, data)).To(Equal(tc.want))
		})
	}
}

func TestKitLayerDigestDependsOnlyOnTheFiles(t *testing.T) {
	g := NewWithT(t)
	files := []kit.File{{Path: "/etc/camel/kit/b", Content: []byte("b")}, {Path: "/etc/camel/kit/a", Content: []byte("a")}}
	reversed := []kit.File{files[1], files[0]}
	digest := func(fs []kit.File) string {
		data, err := tarFiles(fs)
		g.Expect(err).NotTo(HaveOccurred())
		l, err := newLayer(data, types.DockerLayer)
		g.Expect(err).NotTo(HaveOccurred())
		d, err := l.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		return d.String()
	}
	g.Expect(digest(reversed)).To(Equal(digest(files)))
	g.Expect(digest(files[:1])).NotTo(Equal(digest(files)))
}

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		reg     Registry
		ref     string
		want    string
		owned   bool
		wantErr string
	}{
		{name: "a name without a host is looked up in the registry", reg: Registry{Address: "127.0.0.1:5000"},
			ref: "camel/base:1", want: "127.0.0.1:5000/camel/base:1", owned: true},
		{name: "a one-part name is not given a library namespace", reg: Registry{Address: "127.0.0.1:5000"},
			ref: "base:1", want: "127.0.0.1:5000/base:1", owned: true},
		{name: "a scheme in the registry address is ignored", reg: Registry{Address: "http://127.0.0.1:5000/"},
			ref: "camel/base:1", want: "127.0.0.1:5000/camel/base:1", owned: true},
		{name: "a name with a host keeps it", reg: Registry{Address: "127.0.0.1:5000"},
			ref: "mirror.test:5000/camel/base:1", want: "mirror.test:5000/camel/base:1"},
		{name: "a name by digest is kept", reg: Registry{Address: "127.0.0.1:5000"},
			ref: "camel/base@sha256:" + sha, want: "127.0.0.1:5000/camel/base@sha256:" + sha, owned: true},
		{name: "no registry address is an error", reg: Registry{}, ref: "camel/base:1", wantErr: "spec.build.registry.address"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ref, err := tc.reg.parse(tc.ref)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ref.Name()).To(Equal(tc.want))
			g.Expect(tc.reg.owns(ref)).To(Equal(tc.owned))
		})
	}
}

func TestRepoPutsTheOrganizationFirst(t *testing.T) {
	g := NewWithT(t)
	repo, err := Registry{Address: "127.0.0.1:5000", Organization: "my.org"}.repo("kit-abc")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(repo.Name()).To(Equal("127.0.0.1:5000/my.org/kit-abc"))
	_, err = Registry{Address: "127.0.0.1:5000"}.repo(" ")
	g.Expect(err).To(MatchError(ContainSubstring("no kit image repository")))
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestReadFileFindsAFileInTheTopmostLayerThatHoldsIt(t *testing.T) {
	g := NewWithT(t)
	layer := func(files ...kit.File) v1.Layer {
		data, err := tarFiles(files)
		g.Expect(err).NotTo(HaveOccurred())
		l, err := newLayer(data, types.OCILayer)
		g.Expect(err).NotTo(HaveOccurred())
		return l
	}
	img, err := mutate.AppendLayers(empty.Image,
		layer(kit.File{Path: "/deployments/dependencies/a.jar", Content: []byte("base a")}, kit.File{Path: "/deployments/dependencies/b.jar", Content: []byte("b")}),
		layer(kit.File{Path: "/deployments/dependencies/a.jar", Content: []byte("top a")}))
	g.Expect(err).NotTo(HaveOccurred())
	for name, want := range map[string]string{"/deployments/dependencies/a.jar": "top a", "/deployments/dependencies/b.jar": "b"} {
		content, ok, err := ReadFile(img, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ok).To(BeTrue(), name)
		g.Expect(string(content)).To(Equal(want))
	}
	_, ok, err := ReadFile(img, "/deployments/dependencies/none.jar")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeFalse())
}
