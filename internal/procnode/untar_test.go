package procnode

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAnUnpackedFileKeepsItsLayersTime(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	when := time.Unix(0, 0)
	if err := tw.WriteHeader(&tar.Header{Name: "deployments/a.jar", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1, ModTime: when}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte("a"))
	tw.Close()
	root := t.TempDir()
	if err := untar(tar.NewReader(&buf), root); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(root, "deployments/a.jar"))
	if err != nil {
		t.Fatal(err)
	}
	if !st.ModTime().Equal(when) {
		t.Errorf("the file is dated %s, its layer says %s: a kit's archive would not match its jars", st.ModTime(), when)
	}
}
