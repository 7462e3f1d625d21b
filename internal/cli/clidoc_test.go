package cli

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// cliDoc is the CLI's guide; below referenceMarker it holds the reference generated from the
// command tree.
const (
	cliDoc          = "../../docs/cli.md"
	referenceMarker = "<!-- The reference below is generated from the commands: go test ./internal/cli -run TestTheCLIReferenceIsCurrent -update -->\n"
)

// TestTheCLIReferenceIsCurrent fails when docs/cli.md's reference differs from the commands'
// help; -update rewrites it.
func TestTheCLIReferenceIsCurrent(t *testing.T) {
	// Flag defaults that name the user's home are written as a home of /home/user.
	t.Setenv("HOME", "/home/user")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("KUBECONFIG", "")
	root := NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
	root.DisableAutoGenTag = true
	var ref bytes.Buffer
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if !cmd.IsAvailableCommand() && cmd != root || cmd.Name() == "help" {
			return
		}
		cmd.DisableAutoGenTag = true
		if err := doc.GenMarkdownCustom(cmd, &ref, func(file string) string {
			return "#" + strings.ReplaceAll(strings.TrimSuffix(file, ".md"), "_", "-")
		}); err != nil {
			t.Fatal(err)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if twice := regexp.MustCompile(`.*\(default[^)]*\) \(default.*`).FindAllString(ref.String(), -1); len(twice) > 0 {
		t.Errorf("flags that say their default twice:\n%s", strings.Join(twice, "\n"))
	}
	data, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	guide, _, ok := strings.Cut(string(data), referenceMarker)
	if !ok {
		t.Fatalf("%s lacks the line %q", cliDoc, referenceMarker)
	}
	want := guide + referenceMarker + "\n" + ref.String()
	if flag.Lookup("update").Value.String() == "true" {
		if err := os.WriteFile(cliDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(data) != want {
		t.Errorf("%s is stale: run go test ./internal/cli -run TestTheCLIReferenceIsCurrent -update", cliDoc)
	}
}
