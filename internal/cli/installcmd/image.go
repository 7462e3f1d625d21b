package installcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/caravan-dev/caravan/internal/cli/cmdutil"
	"github.com/caravan-dev/caravan/internal/debimage"
	"github.com/caravan-dev/caravan/internal/image"
	"github.com/caravan-dev/caravan/internal/localcluster"
	"github.com/caravan-dev/caravan/internal/operatorimage"
	"github.com/caravan-dev/caravan/internal/runtime"
	"github.com/caravan-dev/caravan/internal/version"
)

// NewCmdImage builds `caravan image`, which pushes the operator image.
func NewCmdImage(_ *cmdutil.KubeFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build and push the operator image",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCmdImagePush(streams))
	return cmd
}

// ImagePushOptions are the options of `caravan image push`.
type ImagePushOptions struct {
	Target    string
	Tag       string
	Version   string
	Platforms []string
	Insecure  bool
	SourceDir string
	CABundle  string
	// Images are the images to push: operator, base, builder.
	Images []string

	// Set by Complete.
	options  operatorimage.Options
	registry image.Registry
	cacheDir string

	genericiooptions.IOStreams
}

func newCmdImagePush(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ImagePushOptions{Platforms: operatorimage.PlatformNames(operatorimage.Platforms), SourceDir: ".", IOStreams: streams,
		Images: []string{imageOperator}}
	cmd := &cobra.Command{
		Use:   "push REGISTRY[/REPOSITORY]",
		Short: "Build the operator image from this source tree and push it by digest",
		Long: `Build the operator image from Caravan's source tree and push it: a static
caravan binary per platform (CGO disabled, cross-compiled with the go command)
on a minimal root filesystem (CA certificates, the non-root user 65532, /tmp),
as an OCI index for linux/amd64 and linux/arm64. The repository defaults to
caravan/operator and the tag to the version. Credentials come from the docker
configuration (~/.docker/config.json), as for docker push.

It prints the image by digest, for caravan install --image.

With --images base,builder it also pushes the images that kits build on:
the Java runtime and the builder pods' image (the same with Maven), made
from Debian's packages with apt for this machine's architecture, as
REGISTRY[/REPOSITORY]/caravan/base:java17 and caravan/builder:java17, the
names a platform defaults to when its registry is REGISTRY[/REPOSITORY].`,
		Example: `  # Push to a registry, then install an operator running that image
  caravan image push registry.example:5000
  caravan install -n operators -x tenant-a --image registry.example:5000/caravan/operator@sha256:...

  # The operator, and the images that kits build on
  caravan image push registry.example:5000 --images operator,base,builder

  # Another repository and version, one platform
  caravan image push registry.example:5000/platform/caravan --version v1.2.0 --platform linux/amd64`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Target = args[0]
			return cmdutil.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Tag, "tag", "", "tag of the pushed index (default the version)")
	f.StringVar(&o.Version, "version", version.Get(), "version stamped into the binary and the image labels")
	f.StringSliceVar(&o.Platforms, "platform", o.Platforms, "platforms of the index, os/arch[/variant]")
	f.BoolVar(&o.Insecure, "insecure", false, "reach the registry over plain HTTP or with an unverified certificate")
	f.StringVar(&o.SourceDir, "source", o.SourceDir, "a directory inside Caravan's source tree")
	f.StringVar(&o.CABundle, "ca-certificates", operatorimage.HostCACertificates, "the CA bundle the image carries")
	f.StringSliceVar(&o.Images, "images", o.Images, "the images to push: operator, base (the Java runtime of kits), builder (the builder pods')")
	return cmd
}

// Complete finds the source tree and the registry's credentials.
func (o *ImagePushOptions) Complete() error {
	reg, repo, err := image.PushTarget(o.Target, o.Insecure)
	if err != nil {
		return err
	}
	platforms, err := operatorimage.ParsePlatforms(o.Platforms)
	if err != nil {
		return err
	}
	src, err := operatorimage.FindSource(context.Background(), o.SourceDir)
	if err != nil {
		return err
	}
	src.Version = o.Version
	cacheDir, err := localcluster.DefaultCacheDir()
	if err != nil {
		return err
	}
	o.cacheDir = cacheDir
	o.registry = reg
	o.options = operatorimage.Options{Source: src, Platforms: platforms,
		Registry:   o.registry,
		Repository: repo, Tag: o.Tag, BinDir: operatorimage.DefaultBinDir(cacheDir),
		CABundle: o.CABundle, Progress: o.ErrOut}
	return nil
}

// Validate checks the target and the platforms.
func (o *ImagePushOptions) Validate() error {
	if o.Target == "" || strings.HasPrefix(o.Target, "/") {
		return errors.New("give the registry to push to, as REGISTRY[/REPOSITORY]")
	}
	if len(o.options.Platforms) == 0 {
		return errors.New("--platform: give at least one platform")
	}
	if _, err := os.Stat(o.options.CABundle); err != nil {
		return fmt.Errorf("--ca-certificates: %w", err)
	}
	if len(o.Images) == 0 {
		return errors.New("--images: give at least one of operator, base, builder")
	}
	for _, name := range o.Images {
		if name != imageOperator && runtime.ImageNamed(name) == nil {
			return fmt.Errorf("--images: %q is not an image Caravan pushes: give operator, base or builder", name)
		}
	}
	return nil
}

// imageOperator names the operator image in --images.
const imageOperator = "operator"

// pushDebianImage builds img unless cached, pushes it under its repository
// in the target registry and prints it by digest.
func (o *ImagePushOptions) pushDebianImage(ctx context.Context, img runtime.Image) error {
	ref, digest, err := debimage.Push(ctx, o.cacheDir, img, o.registry, o.Target, o.ErrOut)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "pushed %s\n", ref)
	// The repositories carry a tag: the last colon starts it.
	fmt.Fprintln(o.Out, ref[:strings.LastIndex(ref, ":")]+"@"+digest.String())
	return nil
}

// Run builds and pushes each image, then prints it by digest.
func (o *ImagePushOptions) Run(ctx context.Context) error {
	for _, name := range o.Images {
		if name == imageOperator {
			if err := o.pushOperator(ctx); err != nil {
				return err
			}
		} else if err := o.pushDebianImage(ctx, *runtime.ImageNamed(name)); err != nil {
			return err
		}
	}
	return nil
}

// pushOperator builds and pushes the operator image, then prints it by digest.
func (o *ImagePushOptions) pushOperator(ctx context.Context) error {
	res, err := operatorimage.BuildAndPush(ctx, o.options)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(res.CompressedSize))
	for p := range res.CompressedSize {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		fmt.Fprintf(o.ErrOut, "%s: %.1f MiB compressed\n", p, float64(res.CompressedSize[p])/(1<<20))
	}
	fmt.Fprintf(o.ErrOut, "pushed %s\n", res.Tagged)
	fmt.Fprintln(o.Out, res.Reference)
	return nil
}
