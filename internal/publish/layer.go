package publish

import (
	"archive/tar"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// layerTime is every entry's time, so that the same jars give the same layer.
var layerTime = time.Unix(0, 0).UTC()

// jarLayer makes the layer that adds jars under runtime.DependenciesDir, and files (by their
// path in the image, read from the file the value names), and removes the files at removed
// (OCI whiteouts), entries sorted by path.
func jarLayer(added []maven.Artifact, files map[string]string, removed []string) image.NewLayer {
	return func(mt types.MediaType) (v1.Layer, error) {
		return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			pr, pw := io.Pipe()
			go func() { pw.CloseWithError(writeJarTar(pw, added, files, removed)) }()
			return pr, nil
		}, tarball.WithMediaType(mt))
	}
}

// writeJarTar writes the layer's tar: the directories, the jars, the files and the whiteouts.
func writeJarTar(w io.Writer, added []maven.Artifact, files map[string]string, removed []string) error {
	tw := tar.NewWriter(w)
	for _, dir := range []string{strings.TrimPrefix(runtime.DeploymentsDir, "/"), strings.TrimPrefix(runtime.DependenciesDir, "/")} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755,
			ModTime: layerTime, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	type entry struct {
		name string
		src  string // "" for a whiteout
	}
	var entries []entry
	for _, a := range added {
		entries = append(entries, entry{name: strings.TrimPrefix(a.Location, "/"), src: a.File})
	}
	for name, src := range files {
		entries = append(entries, entry{name: strings.TrimPrefix(name, "/"), src: src})
	}
	for _, r := range removed {
		dir, file := path.Split(strings.TrimPrefix(r, "/"))
		entries = append(entries, entry{name: dir + ".wh." + file})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for _, e := range entries {
		if e.src == "" {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: 0o644,
				ModTime: layerTime, Format: tar.FormatPAX}); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(tw, e.name, e.src); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeFile(tw *tar.Writer, name, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: st.Size(),
		ModTime: layerTime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}
