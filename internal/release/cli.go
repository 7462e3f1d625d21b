package release

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// CLICommand is the package of the CLI's binary.
const CLICommand = "./cmd/caravan"

// ChecksumsFile lists the SHA-256 of each CLI archive, as sha256sum prints them.
const ChecksumsFile = "SHA256SUMS"

// ArchiveName is the name of the CLI's archive for platform p: a zip for Windows, a gzipped tar
// for the others.
func ArchiveName(version string, p v1.Platform) string {
	ext := "tar.gz"
	if p.OS == "windows" {
		ext = "zip"
	}
	return fmt.Sprintf("caravan-%s-%s-%s.%s", version, p.OS, p.Architecture, ext)
}

// buildCLI builds the CLI for each platform, which installs the image operator by default, into an
// archive of its binary, the LICENSE and the README, with the binary's bill of materials beside it,
// and writes the archives' checksums. It returns the files written.
func buildCLI(ctx context.Context, o Options, operator string) ([]string, error) {
	binDir := filepath.Join(o.OutDir, ".build")
	defer os.RemoveAll(binDir)
	src := o.Source
	src.Version, src.OperatorImage = o.Version, operator
	var files []string
	var sums strings.Builder
	for _, p := range o.cliPlatforms() {
		bin, err := src.BuildCommand(ctx, CLICommand, p, binDir, o.Progress)
		if err != nil {
			return nil, err
		}
		name := ArchiveName(o.Version, p)
		sum, err := archive(filepath.Join(o.OutDir, name), bin, o.Source.Dir, p.OS == "windows")
		if err != nil {
			return nil, fmt.Errorf("archiving the CLI for %s: %w", p.String(), err)
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, name)
		files = append(files, name)
		bom, err := writeSBOM(o.OutDir, bin, CLIProgram, o.Version, p, o.Now)
		if err != nil {
			return nil, fmt.Errorf("the CLI's bill of materials for %s: %w", p.String(), err)
		}
		files = append(files, bom)
	}
	if err := os.WriteFile(filepath.Join(o.OutDir, ChecksumsFile), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	return append(files, ChecksumsFile), nil
}

// archive writes an archive of the binary bin and the LICENSE and README.md of the source tree srcDir
// to dst, a zip holding caravan.exe for Windows, else a gzipped tar holding caravan, and returns the
// archive's SHA-256 in hex.
func archive(dst, bin, srcDir string, windows bool) (string, error) {
	f, err := os.Create(dst)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	w := io.MultiWriter(f, h)
	files := [][2]string{{"caravan", bin}, {"LICENSE", filepath.Join(srcDir, "LICENSE")}, {"README.md", filepath.Join(srcDir, "README.md")}}
	if windows {
		files[0][0] = "caravan.exe"
		err = writeZip(w, files)
	} else {
		err = writeTarGz(w, files)
	}
	if err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeTarGz writes a gzipped tar of files (name and path pairs) to w; the first is executable.
func writeTarGz(w io.Writer, files [][2]string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for i, file := range files {
		data, err := os.ReadFile(file[1])
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if i == 0 {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: file[0], Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// writeZip writes a zip of files (name and path pairs) to w.
func writeZip(w io.Writer, files [][2]string) error {
	zw := zip.NewWriter(w)
	for _, file := range files {
		data, err := os.ReadFile(file[1])
		if err != nil {
			return err
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: file[0], Method: zip.Deflate})
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}
