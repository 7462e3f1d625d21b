package cli

import (
	"slices"
	"testing"
)

func TestGlobalFalseServesTheNamespaceInstalledIn(t *testing.T) {
	for _, tc := range []struct {
		global bool
		watch  []string
		want   []string
	}{
		{global: true, want: nil},
		{global: false, want: []string{"team-a"}},
		{global: false, watch: []string{"x", "y"}, want: []string{"x", "y"}},
	} {
		o := &InstallOptions{ID: "a", Global: tc.global, WatchNamespaces: tc.watch, namespace: "team-a"}
		if got := o.installConfig().WatchNamespaces; !slices.Equal(got, tc.want) {
			t.Errorf("--global=%v --watch-namespaces=%v: serves %v, want %v", tc.global, tc.watch, got, tc.want)
		}
	}
}
