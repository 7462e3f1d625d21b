package operatorcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/caravan-dev/caravan/internal/builderpod"
	"github.com/caravan-dev/caravan/internal/command"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/maven"
	"github.com/caravan-dev/caravan/internal/publish"
	"github.com/caravan-dev/caravan/internal/runtime"
)

// NewBuilderCmd builds `caravan builder`, what builder pods run; it reports to errOut.
func NewBuilderCmd(errOut io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:    "builder",
		Short:  "Run a step of a kit build, in a builder pod",
		Hidden: true,
		Args:   cobra.NoArgs,
	}
	cmd.AddCommand(newPublishCmd(errOut), newLayoutCmd(errOut))
	return cmd
}

// LayoutOptions are the options of `caravan builder layout`.
type LayoutOptions struct {
	List, Root, Training, Provider string
	// App is the directory of the application Maven built, for a provider that builds one.
	App string
	// ErrOut receives what was laid out.
	ErrOut io.Writer
}

func newLayoutCmd(errOut io.Writer) *cobra.Command {
	o := &LayoutOptions{ErrOut: errOut}
	cmd := &cobra.Command{
		Use:   "layout --list FILE",
		Short: "Lay the jars Maven listed, or the application it built, out as the kit image will hold them, for the training start",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return command.Run(cmd.Context(), o) },
	}
	cmd.Flags().StringVar(&o.List, "list", builderpod.ListFile, "Maven's list of the resolved jars")
	cmd.Flags().StringVar(&o.Root, "root", "/", "the directory the image's paths are laid out under")
	cmd.Flags().StringVar(&o.Training, "training", builderpod.TrainingDir, "where the training's arguments go, and its archive will")
	cmd.Flags().StringVar(&o.Provider, "runtime-provider", "", "the kit's runtime provider (default camel-main)")
	cmd.Flags().StringVar(&o.App, "app", "", "the directory of the application Maven built, laid out in place of the list's jars")
	return cmd
}

// Complete does nothing: the flags are all there is.
func (o *LayoutOptions) Complete() error { return nil }

// Validate checks the provider.
func (o *LayoutOptions) Validate() error {
	_, err := runtime.ProviderNamed(o.Provider)
	return err
}

// Run lays the jars, or the application, out.
func (o *LayoutOptions) Run(context.Context) error {
	arts, what, err := o.files()
	if err != nil {
		return err
	}
	p, err := runtime.ProviderNamed(o.Provider)
	if err != nil {
		return err
	}
	if err := publish.Layout(arts, o.Root, o.Training, p); err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "laid out %d %s under %s for the training start\n", len(arts), what, runtime.DependenciesDir)
	return nil
}

// files are the files to lay out, the application's or the jars of Maven's list, and what they are.
func (o *LayoutOptions) files() ([]maven.Artifact, string, error) {
	if o.App != "" {
		arts, err := publish.ApplicationArtifacts(o.App)
		return arts, "files of the application", err
	}
	arts, err := maven.ReadList(o.List)
	return arts, "jars", err
}

// PublishOptions are the options of `caravan builder publish`.
type PublishOptions struct {
	List string
	// App is the directory of the application Maven built, for a provider that builds one.
	App            string
	Training       string
	MavenLog       string
	TaskJSON       string
	TerminationLog string
	// RegistryAuth is a Docker config file with the registry's credentials; empty, anonymous.
	RegistryAuth string
	// RegistryCA is a directory of *.crt files, PEM certificates trusted for the registry.
	RegistryCA string

	// Set by Complete.
	task publish.Request

	// ErrOut receives what was pushed.
	ErrOut io.Writer
}

func newPublishCmd(errOut io.Writer) *cobra.Command {
	o := &PublishOptions{TerminationLog: "/dev/termination-log", ErrOut: errOut}
	cmd := &cobra.Command{
		Use:   "publish --list FILE --task JSON",
		Short: "Layer the jars Maven listed onto the base image and push the kit image",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return command.Run(cmd.Context(), o) },
	}
	cmd.Flags().StringVar(&o.List, "list", builderpod.ListFile, "Maven's list of the resolved jars")
	cmd.Flags().StringVar(&o.App, "app", "", "the directory of the application Maven built, which the kit holds in place of the listed jars")
	cmd.Flags().StringVar(&o.Training, "training", builderpod.TrainingDir, "where the training start left the class-data-sharing archive")
	cmd.Flags().StringVar(&o.MavenLog, "maven-log", builderpod.MavenLog, "Maven's batch-mode log, whose downloads the result counts")
	cmd.Flags().StringVar(&o.TaskJSON, "task", "", "the build task, as JSON")
	cmd.Flags().StringVar(&o.TerminationLog, "termination-log", o.TerminationLog, "where the result is written, as JSON")
	cmd.Flags().StringVar(&o.RegistryAuth, "registry-auth", "", "a Docker config file with the registry's credentials")
	cmd.Flags().StringVar(&o.RegistryCA, "registry-ca", "", "a directory of *.crt files, PEM certificates trusted for the registry besides the system's")
	return cmd
}

// Complete reads the task, the registry's CA certificates and its credentials.
func (o *PublishOptions) Complete() error {
	if err := json.Unmarshal([]byte(o.TaskJSON), &o.task); err != nil {
		return fmt.Errorf("--task: %w", err)
	}
	if o.RegistryCA != "" {
		files, err := filepath.Glob(filepath.Join(o.RegistryCA, "*.crt"))
		if err == nil && len(files) == 0 {
			err = errors.New("holds no *.crt file")
		}
		if err != nil {
			return fmt.Errorf("--registry-ca %s: %w", o.RegistryCA, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("--registry-ca: %w", err)
			}
			o.task.CACertificates = append(append(o.task.CACertificates, data...), '\n')
		}
	}
	if o.RegistryAuth == "" {
		return nil
	}
	data, err := os.ReadFile(o.RegistryAuth)
	if err != nil {
		return fmt.Errorf("--registry-auth: %w", err)
	}
	if o.task.Auth, err = image.AuthFromDockerConfig(data, o.task.RegistryAddress); err != nil {
		return fmt.Errorf("--registry-auth %s: %w", o.RegistryAuth, err)
	}
	return nil
}

// Validate checks that the task says what to push where.
func (o *PublishOptions) Validate() error {
	if o.task.BaseImage == "" && o.task.Parent == nil || o.task.Repository == "" || o.task.RegistryAddress == "" {
		return errors.New("--task: the task names no base image, repository or registry")
	}
	return nil
}

// Run pushes the kit image and writes the result, without the artifacts,
// which the image's config lists: a termination message holds 4 kB.
func (o *PublishOptions) Run(ctx context.Context) error {
	run := func() (publish.Result, error) { return publish.Run(ctx, o.task, o.List, o.Training) }
	if o.App != "" {
		run = func() (publish.Result, error) { return publish.RunApplication(ctx, o.task, o.App, o.Training) }
	}
	res, err := run()
	if err != nil {
		return err
	}
	log, err := os.ReadFile(o.MavenLog)
	if err != nil {
		return fmt.Errorf("reading Maven's log: %w", err)
	}
	res.Downloads = maven.Downloaded(log)
	fmt.Fprintf(o.ErrOut, "pushed %s: %d files, %d of them in the new layer; Maven downloaded %d files\n",
		res.Image, len(res.Artifacts), res.Added, res.Downloads.Files)
	if res.Archive.Why != "" {
		fmt.Fprintf(o.ErrOut, "no class-data-sharing archive: %s\n", res.Archive.Why)
	} else {
		fmt.Fprintf(o.ErrOut, "with a class-data-sharing archive of %d classes (%d bytes)\n", res.Archive.Classes, res.Archive.Size)
	}
	res.Artifacts = nil
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(o.TerminationLog, data, 0o644)
}
