package version

import (
	"runtime"
	"runtime/debug"
)

// Info describes this build: its version, the commit it was built from and the Go toolchain.
type Info struct {
	Version string `json:"version"`
	// GitCommit is the commit of the source tree, when the build recorded it.
	GitCommit string `json:"gitCommit,omitempty"`
	// GitTreeState is "dirty" when the tree had uncommitted changes, else "clean".
	GitTreeState string `json:"gitTreeState,omitempty"`
	// BuildDate is the commit's time, as Go records it.
	BuildDate string `json:"buildDate,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// GetInfo returns this build's Info, read from the build information Go records.
func GetInfo() Info {
	info := Info{Version: Get(), GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.GitCommit = s.Value
		case "vcs.time":
			info.BuildDate = s.Value
		case "vcs.modified":
			info.GitTreeState = "clean"
			if s.Value == "true" {
				info.GitTreeState = "dirty"
			}
		}
	}
	return info
}
