package installcmd

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
)

func TestInstallRefusesAWatchedNamespaceNoNamespaceCanHave(t *testing.T) {
	o := &InstallOptions{ID: "a", WatchNamespaces: []string{"team-a", "Bad_NS"}}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `--watch-namespaces: watched namespace "Bad_NS"`) {
		t.Fatalf("got %v", err)
	}
}

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
		o := &InstallOptions{ID: "a", Global: tc.global, WatchNamespaces: tc.watch, Cluster: cmdutil.Cluster{Namespace: "team-a"}}
		if got := o.installConfig().WatchNamespaces; !slices.Equal(got, tc.want) {
			t.Errorf("--global=%v --watch-namespaces=%v: serves %v, want %v", tc.global, tc.watch, got, tc.want)
		}
	}
}

func TestInstallAndUninstallRefuseOperatorFlagsWithFleet(t *testing.T) {
	cmd := NewCmdInstall(cmdutil.NewKubeFlags(), genericiooptions.NewTestIOStreamsDiscard())
	if err := cmd.ParseFlags([]string{"--fleet", "--replicas", "2"}); err != nil {
		t.Fatal(err)
	}
	o := &InstallOptions{ID: "camel-k", Fleet: true, Global: true, flags: cmd.Flags()}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--replicas is a setting of one operator") {
		t.Errorf("install --fleet --replicas: %v", err)
	}
	u := &UninstallOptions{ID: "camel-k", Fleet: true, idSet: true}
	if err := u.Validate(); err == nil || !strings.Contains(err.Error(), "--fleet removes the fleet controller alone") {
		t.Errorf("uninstall --fleet -x: %v", err)
	}
}

func TestTheRegistrySecretReachesThePlatformOrIsRefused(t *testing.T) {
	o := &InstallOptions{ID: "a", Global: true, Image: "img", imageSet: true, CRDs: "include", LogFormat: "text", RegistrySecret: "Kits_Push"}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `--registry-secret "Kits_Push"`) {
		t.Fatalf("a Secret name no Secret can have: got %v", err)
	}
	o.RegistrySecret = "kits-push"
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := o.installConfig().RegistrySecret; got != "kits-push" {
		t.Errorf("the install's registry Secret is %q, want kits-push", got)
	}
}
