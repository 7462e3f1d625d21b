package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSweepStaleRemovesOnlyTheDirectoriesOfGoneTestBinaries: a control plane's directory whose
// test binary exited is removed; one of a running binary, or without an owner, is kept.
func TestSweepStaleRemovesOnlyTheDirectoriesOfGoneTestBinaries(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{
		testDirPrefix + "gone":    strconv.Itoa(gone.Process.Pid),
		testDirPrefix + "running": strconv.Itoa(os.Getpid()),
		testDirPrefix + "unowned": "",
	}
	for name, pid := range owners {
		if err := os.MkdirAll(filepath.Join(tmp, name, "cluster"), 0o700); err != nil {
			t.Fatal(err)
		}
		if pid != "" {
			if err := os.WriteFile(filepath.Join(tmp, name, ownerFile), []byte(pid), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	sweepStale()
	for name := range owners {
		_, err := os.Stat(filepath.Join(tmp, name))
		if removed := os.IsNotExist(err); removed != (name == testDirPrefix+"gone") {
			t.Errorf("%s: removed %v", name, removed)
		}
	}
}
