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

// jarLayer makes the layer that adds jars under runtime.DependenciesDir and removes
// the files at removed (OCI whiteouts), entries sorted by path.
func jarLayer(added []maven.Artifact, removed []string) image.NewLayer {
	return func(mt types.MediaType) (v1.Layer, error) {
		return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			pr, pw := io.Pipe()
			go func() { pw.CloseWithError(writeJarTar(pw, added, removed)) }()
			return pr, nil
		}, tarball.WithMediaType(mt))
	}
}

// writeJarTar writes the layer's tar: the directories, the jars and the whiteouts.
func writeJarTar(w io.Writer, added []maven.Artifact, removed []string) error {
	tw := tar.NewWriter(w)
	for _, dir := range []string{strings.TrimPrefix(runtime.DeploymentsDir, "/"), strings.TrimPrefix(runtime.DependenciesDir, "/")} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755,
			ModTime: layerTime, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	type entry struct {
		name string
		art  *maven.Artifact
	}
	var entries []entry
	for i := range added {
		entries = append(entries, entry{name: strings.TrimPrefix(added[i].Location, "/"), art: &added[i]})
	}
	for _, r := range removed {
		dir, file := path.Split(strings.TrimPrefix(r, "/"))
		entries = append(entries, entry{name: dir + ".wh." + file})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for _, e := range entries {
		if e.art == nil {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: 0o644,
				ModTime: layerTime, Format: tar.FormatPAX}); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(tw, e.name, e.art.File); err != nil {
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
