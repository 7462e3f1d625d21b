// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package debimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/caravan-dev/caravan/internal/runtime"
)

func TestParseSimulate(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []Package
		wantErr bool
	}{{
		name: "installs are read, sorted by name, and other lines ignored",
		out: "Reading package lists...\n" +
			"Inst zlib1g (1:1.2.13.dfsg-1 Debian:12.15/oldstable [amd64])\n" +
			"Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable, Debian-Security:12/oldstable-security [amd64]) []\n" +
			"Conf libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64])\n" +
			"Inst ca-certificates (20230311+deb12u1 Debian:12.15/oldstable [all])\n",
		want: []Package{
			{Name: "ca-certificates", Version: "20230311+deb12u1", Arch: "all"},
			{Name: "libc6", Version: "2.36-9+deb12u14", Arch: "amd64"},
			{Name: "zlib1g", Version: "1:1.2.13.dfsg-1", Arch: "amd64"},
		},
	}, {
		name: "a reinstall's installed version and an architecture suffix are dropped",
		out:  "Inst tar:amd64 [1.34+dfsg-1.1] (1.34+dfsg-1.2 Debian:12/stable [amd64])\n",
		want: []Package{{Name: "tar", Version: "1.34+dfsg-1.2", Arch: "amd64"}},
	}, {
		name:    "an Inst line of unknown form is an error",
		out:     "Inst libc6 2.36\n",
		wantErr: true,
	}, {
		name:    "a simulation that installs nothing is an error",
		out:     "0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n",
		wantErr: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSimulate([]byte(tt.out))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("packages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExcludedPackagesBecomeHeldStatusEntries(t *testing.T) {
	show := "Package: util-linux\nVersion: 2.38.1-5\nArchitecture: amd64\nDepends: util-linux-extra\n\n" +
		"Package: debconf\nVersion: 1.5.82\nArchitecture: all\n"
	got := string(heldStatus(parseStanzas([]byte(show))))
	want := "Package: util-linux\nStatus: hold ok installed\nArchitecture: amd64\nVersion: 2.38.1-5\n\n" +
		"Package: debconf\nStatus: hold ok installed\nArchitecture: all\nVersion: 1.5.82\n\n"
	if got != want {
		t.Errorf("status:\n%s\nwant:\n%s", got, want)
	}
}

func TestPasswdAndGroupHoldRootAndTheImageUser(t *testing.T) {
	passwd, group := passwdAndGroup()
	if want := "root:x:0:0:root:/root:/sbin/nologin\ncamel:x:1000:1000::/home/camel:/sbin/nologin\n"; string(passwd) != want {
		t.Errorf("passwd %q, want %q", passwd, want)
	}
	if want := "root:x:0:\ncamel:x:1000:\n"; string(group) != want {
		t.Errorf("group %q, want %q", group, want)
	}
}

func TestPackageListsRoundTrip(t *testing.T) {
	pkgs := []Package{{Name: "libc6", Version: "2.36-9", Arch: "amd64"}, {Name: "zlib1g", Version: "1:1.2.13", Arch: "amd64"}}
	got, err := parsePackageList(packageList(pkgs))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pkgs, got); diff != "" {
		t.Errorf("packages (-want +got):\n%s", diff)
	}
	if f := pkgs[1].debFile(); f != "zlib1g_1%3a1.2.13_amd64.deb" {
		t.Errorf("deb file %q, want apt-get download's name", f)
	}
}

func TestTreeLayersDependOnlyOnContent(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "usr/lib/b.so"), "b")
	mustWrite(t, filepath.Join(root, "usr/lib/a.so"), "a")
	mustWrite(t, filepath.Join(root, "etc/x.conf"), "x")
	if err := os.Link(filepath.Join(root, "usr/lib/a.so"), filepath.Join(root, "usr/lib/c.so")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/x.conf", filepath.Join(root, "usr/lib/x.conf")); err != nil {
		t.Fatal(err)
	}
	layer := func() (string, []string) {
		l, err := writeLayerFile(filepath.Join(t.TempDir(), "l.tar.gz"), func(tw *tar.Writer) error { return writeTree(tw, root) })
		if err != nil {
			t.Fatal(err)
		}
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String(), layerNames(t, l.Compressed)
	}
	first, names := layer()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "usr/lib/b.so"), later, later); err != nil {
		t.Fatal(err)
	}
	if second, _ := layer(); second != first {
		t.Errorf("a changed modification time changed the layer: %s, then %s", first, second)
	}
	want := []string{"etc/", "etc/x.conf", "usr/", "usr/lib/", "usr/lib/a.so", "usr/lib/b.so", "usr/lib/c.so -> usr/lib/a.so", "usr/lib/x.conf"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestGeneratedFilesComeSortedAfterTheirDirectories(t *testing.T) {
	files := []file{
		{path: "/tmp", mode: fs.ModeDir | fs.ModeSticky | 0o777},
		{path: "/usr/bin/java", mode: fs.ModeSymlink | 0o777, target: "/usr/lib/jvm/bin/java"},
		{path: "/etc/passwd", mode: 0o644, data: []byte("root\n")},
	}
	l, err := writeLayerFile(filepath.Join(t.TempDir(), "f.tar.gz"), func(tw *tar.Writer) error { return writeFiles(tw, files) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"etc/", "etc/passwd", "tmp/ 1777", "usr/", "usr/bin/", "usr/bin/java"}
	if diff := cmp.Diff(want, layerNames(t, l.Compressed)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestJavaTrustStoreIsReproducibleAndHoldsEveryCertificate(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"mozilla/B_CA.crt", "mozilla/A_CA.crt"} {
		mustWrite(t, filepath.Join(root, caDir, name), string(selfSigned(t, name)))
	}
	certs, err := readCertificates(root)
	if err != nil {
		t.Fatal(err)
	}
	if certs[0].name != "A_CA" || certs[1].name != "B_CA" {
		t.Errorf("certificates %s, %s; want them sorted by path", certs[0].name, certs[1].name)
	}
	first, err := javaTrustStore(certs)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := javaTrustStore(certs)
	if !bytes.Equal(first, second) {
		t.Error("two trust stores of the same certificates differ")
	}
	got, err := pkcs12.DecodeTrustStore(first, "")
	if err != nil {
		t.Fatalf("decoding the trust store: %v", err)
	}
	if len(got) != 2 {
		t.Errorf("the trust store holds %d certificates, want 2", len(got))
	}
	if n := bytes.Count(pemBundle(certs), []byte("BEGIN CERTIFICATE")); n != 2 {
		t.Errorf("the PEM bundle holds %d certificates, want 2", n)
	}
}

func TestResolvedListsAreReusedWhileYoungAndForTheSameRequest(t *testing.T) {
	cache := t.TempDir()
	now := time.Now()
	s := &session{Options: Options{CacheDir: cache, Now: func() time.Time { return now }}}
	path := filepath.Join(cache, "resolved", "base.txt")
	req := pinRequest(runtime.BaseImage, nil)
	mustWrite(t, path, "request "+req+"\nlibc6:amd64=2.36-9\n")
	if _, ok := s.readPinned(path, req); !ok {
		t.Error("a fresh list for the same request was not reused")
	}
	if _, ok := s.readPinned(path, pinRequest(runtime.BuilderImage, nil)); ok {
		t.Error("a list for another request was reused")
	}
	now = now.Add(DefaultMaxAge + time.Minute)
	if _, ok := s.readPinned(path, req); ok {
		t.Error("a list older than the maximum age was reused")
	}
}

func TestBuildWithoutAptSaysWhatToDo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Build(context.Background(), runtime.BaseImage, t.TempDir(), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "point the platform's baseImage at an image in a registry") {
		t.Errorf("error %v, want one that says to use an image from a registry", err)
	}
}

// layerNames lists a layer's entries: directories end in "/", hard links show their target
// and modes other than 0644 and 0755 follow the name.
func layerNames(t *testing.T, open func() (io.ReadCloser, error)) []string {
	t.Helper()
	rc, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		if !hdr.ModTime.Equal(layerTime) || hdr.Uname != "" {
			t.Errorf("entry %s dated %s, owned by %q", hdr.Name, hdr.ModTime, hdr.Uname)
		}
		name := hdr.Name
		if hdr.Typeflag == tar.TypeLink {
			name += " -> " + hdr.Linkname
		}
		if m := hdr.Mode; m != 0o644 && m != 0o755 && hdr.Typeflag != tar.TypeSymlink {
			name += " " + strings.TrimPrefix(big.NewInt(m).Text(8), "0")
		}
		names = append(names, name)
	}
}

// mustWrite writes content to p, creating its directories.
func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// selfSigned returns a PEM certificate of a new CA named cn.
func selfSigned(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestExtraCACertificatesAreAddedOnceAfterDebians(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "a proxy's CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	debian := []certificate{{name: "debian-ca", pem: block, cert: cert}}
	other, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2),
		Subject: pkix.Name{CommonName: "another"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0)}, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	extra := append(append([]byte{}, block...), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other})...)
	got, err := withExtra(debian, extra)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].name != "debian-ca" || !strings.HasPrefix(got[1].name, "extra-") {
		t.Fatalf("got %d certificates: %v, %v", len(got), got[0].name, got[len(got)-1].name)
	}
	if _, err := withExtra(debian, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")); err == nil {
		t.Fatal("a broken extra certificate was taken")
	}
}

func TestTheLabelOfPackagesReadsBack(t *testing.T) {
	pkgs := []Package{{Name: "libc6", Version: "2.36-9+deb12u13", Arch: "amd64"}, {Name: "tzdata", Version: "1:2025b-0+deb12u2", Arch: "all"}}
	got, err := ParsePackages(strings.ReplaceAll(string(packageList(pkgs)), "\n", " "))
	if err != nil || !reflect.DeepEqual(got, pkgs) {
		t.Fatalf("ParsePackages = %v, %v; want %v", got, err, pkgs)
	}
	for _, bad := range []string{"", "libc6=2.36", "libc6:amd64", ":amd64=1"} {
		if _, err := ParsePackages(bad); err == nil {
			t.Errorf("ParsePackages(%q) took it", bad)
		}
	}
}
