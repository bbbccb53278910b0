// Command push (make image-push) pushes the operator's image, as make image wrote it (an OCI
// image layout whose index.json points at a multi-platform image index annotated with
// org.opencontainers.image.ref.name=<version>), to a registry as <repo>:<version>, with every
// platform's image, by digest: what is pushed is exactly what was built and tested. It uses
// go-containerregistry's remote package and the Docker config's credentials
// (authn.DefaultKeychain: ~/.docker/config.json, as written by `docker login` or `crane auth
// login`). Like hack/image, whose module it is in, it takes a relative -layout from the
// repository root. Usage (make image-push runs it so):
//
//	go run -C hack/image ./push -layout _output/image/layout -repo quay.io/change-metrics/monocle-operator
//
// It prints the pushed reference with its digest, for signing (cosign sign <ref>@<digest>).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/change-metrics/monocle-operator/hack/image/internal/repo"
)

// refName is the OCI annotation naming an index entry of a layout (image-spec annotations.md).
const refName = "org.opencontainers.image.ref.name"

func main() {
	dir := flag.String("layout", "_output/image/layout", "The OCI image layout make image wrote (relative to the repository root).")
	repository := flag.String("repo", "", "The repository to push to, without tag (e.g. quay.io/change-metrics/monocle-operator).")
	flag.Parse()
	var ref string
	err := repo.Chdir()
	if err == nil {
		ref, err = push(context.Background(), *dir, *repository, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image-push:", err)
		os.Exit(1)
	}
	fmt.Println(ref)
}

// push pushes the image index of the layout at dir, tagged with its ref.name annotation, to
// repo, and returns "<repo>:<tag>@<digest>".
func push(ctx context.Context, dir, repo string, opts ...remote.Option) (string, error) {
	if repo == "" {
		return "", fmt.Errorf("-repo is required")
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		return "", fmt.Errorf("reading the layout %s: %w", dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return "", err
	}
	manifest, err := top.IndexManifest()
	if err != nil {
		return "", err
	}
	if len(manifest.Manifests) != 1 {
		return "", fmt.Errorf("the layout %s holds %d entries, want the one image index make image writes", dir, len(manifest.Manifests))
	}
	desc := manifest.Manifests[0]
	tag := desc.Annotations[refName]
	if tag == "" {
		return "", fmt.Errorf("the layout's index has no %s annotation", refName)
	}
	index, err := top.ImageIndex(desc.Digest)
	if err != nil {
		return "", err
	}
	dst, err := name.NewTag(repo + ":" + tag)
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(dst, index, append(opts, remote.WithContext(ctx))...); err != nil {
		return "", fmt.Errorf("pushing %s: %w", dst, err)
	}
	return dst.String() + "@" + desc.Digest.String(), nil
}
