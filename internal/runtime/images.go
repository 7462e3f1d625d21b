// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

// Image is an image of the runtime made from Debian's packages, which debimage assembles:
// the base image kits are layered onto, or the builder pods' image.
type Image struct {
	// Name names the image in the cache, in its labels and in --images (base, builder).
	Name string
	// Repository is the repository, with its tag, the image is pushed as; a platform names
	// it without a registry host, which the platform's registry completes.
	Repository string
	// Packages are the top-level packages; apt adds what they depend on.
	Packages []string
	// Exclude lists packages apt must treat as present, so neither they nor their own
	// dependencies are installed. Each must be needed only by maintainer scripts or
	// features an integration never uses.
	Exclude []string
	// Links are symlinks, path to target, that maintainer scripts would have made.
	// "${arch}" in either stands for Debian's architecture name.
	Links map[string]string
	// Env holds the image's environment, NAME=value; "${arch}" is expanded as in Links.
	Env []string
	// Parent, when set, is the image this one adds its packages onto: its layers are
	// reused as they are, and only the packages it lacks make a new layer.
	Parent *Image
}

// javaHome is where Debian's openjdk-17 packages install the JVM.
const javaHome = "/usr/lib/jvm/java-17-openjdk-${arch}"

// excludedFromJava lists packages of the JRE's closure that nothing in the images uses.
var excludedFromJava = []string{
	// The JRE's package depends on util-linux, yet no file of the JRE links or runs it;
	// it would bring PAM, systemd's and udev's libraries and a setuid su.
	"util-linux",
	// Only the desktop JRE's printing loads libcups (with dlopen); it would bring GnuTLS,
	// Kerberos, Avahi and D-Bus libraries.
	"libcups2",
	// ca-certificates runs openssl in its maintainer script to build the bundle; debimage
	// writes the bundle in Go, so openssl and libssl3 are not needed.
	"openssl",
	// debconf only answers maintainer scripts' questions, and no script runs here.
	"debconf",
	// dpkg is needed only to install packages; the image is assembled without it.
	"dpkg",
}

// BaseImage is the Java runtime image of integrations: Debian's headless OpenJDK 17. libc-bin
// holds glibc's C.UTF-8 locale, without which LANG=C.UTF-8 falls back to ASCII, and so does
// Java 17's default charset. It is a platform's base image when the platform names none.
var BaseImage = Image{
	Name:       "base",
	Repository: "caravan/base:java17",
	Packages:   []string{"openjdk-17-jre-headless", "libc-bin"},
	Exclude:    excludedFromJava,
	Links: map[string]string{
		"/usr/bin/java":    javaHome + "/bin/java",
		"/usr/bin/keytool": javaHome + "/bin/keytool",
	},
	Env: []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"JAVA_HOME=" + javaHome,
		"LANG=C.UTF-8",
	},
}

// BuilderImage is the image of builder pods: BaseImage plus Debian's Maven, with the shell and
// core utilities its mvn script runs. It is a platform's builder image when the platform names none.
var BuilderImage = Image{
	Name:       "builder",
	Repository: "caravan/builder:java17",
	Packages:   []string{"maven", "dash", "coreutils"},
	Exclude:    excludedFromJava,
	Links:      map[string]string{"/usr/bin/mvn": "/usr/share/maven/bin/mvn"},
	Parent:     &BaseImage,
}

// Images are the runtime's images that the local cluster, caravan image push and a release push.
var Images = []Image{BaseImage, BuilderImage}

// ImageNamed returns the image of Images called name (base, builder), or nil.
func ImageNamed(name string) *Image {
	for _, img := range Images {
		if img.Name == name {
			return &img
		}
	}
	return nil
}
