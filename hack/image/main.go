// Command image builds the operator's OCI image from scratch, without Docker or any other
// daemon, and reproducibly: two runs on the same source give the same digests.
//
// For each platform (linux/amd64 and linux/arm64 by default) it builds the static operator
// binary (go build with CGO_ENABLED=0 and -trimpath) or takes a given one, and makes an image
// of one layer holding /monocle-operator (mode 0755), /etc/passwd and /etc/group lines for the
// user nonroot (65532:65532) and its home /home/nonroot, and /tmp. The image runs as
// 65532:65532 with the entrypoint /monocle-operator and carries the OCI labels source,
// version, revision, created, title and description (and licenses when -license is given).
// The CA roots are compiled into the binary (golang.org/x/crypto/x509roots/fallback, imported
// by cmd/monocle-operator), so the image needs no certificate file.
//
// Every time in the image (tar headers, config, history) is the source date: the
// SOURCE_DATE_EPOCH environment variable when set, else the time of the last commit
// (git log -1 --format=%ct), else the Unix epoch. Tar entries are sorted and owned by root
// (the home directory by its user), so the layer depends only on the binary.
//
// It writes into -out:
//
//	layout/                       an OCI image layout: index.json points at an image index
//	                              of every platform, annotated with
//	                              org.opencontainers.image.ref.name=<version>
//	monocle-operator-<version>-linux-amd64.tar
//	                              the linux/amd64 image as a `docker load` tarball tagged
//	                              <repo>:<version> (only when linux/amd64 is built)
//
// and prints the digest of the index and of each platform's image.
//
// It is a module of its own (hack/image, with hack/image/push), so that the operator's go.mod
// does not carry go-containerregistry's dependencies. It works in the repository root, found
// from the working directory up (the directory whose go.mod is the operator's module): the
// operator is built there, with the operator's go.mod, and relative -out and -binary paths are
// taken from there. Usage (make image runs it so):
//
//	go run -C hack/image . -version v0.1.0 -revision "$(git rev-parse HEAD)" -ldflags "-s -w"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/change-metrics/monocle-operator/hack/image/internal/repo"
)

// multiFlag is a flag that may be given several times.
type multiFlag []string

// String implements flag.Value.
func (m *multiFlag) String() string { return strings.Join(*m, ",") }

// Set implements flag.Value.
func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}

func main() {
	var o options
	var platforms string
	var binaries multiFlag
	flag.StringVar(&o.out, "out", "_output/image", "Directory written: layout/ and the docker load tarball (relative to the repository root).")
	flag.StringVar(&o.repo, "repo", defaultRepo, "Image repository, without tag.")
	flag.StringVar(&o.version, "version", "", "Image version: the tag and the org.opencontainers.image.version label (required).")
	flag.StringVar(&o.revision, "revision", "", "Source revision for the org.opencontainers.image.revision label. Empty means git rev-parse HEAD (no label outside a git checkout).")
	flag.StringVar(&o.source, "source", defaultSource, "Source URL for the org.opencontainers.image.source label.")
	flag.StringVar(&o.license, "license", "", "SPDX license expression for the org.opencontainers.image.licenses label. Empty means no label.")
	flag.StringVar(&o.ldflags, "ldflags", "-s -w", "-ldflags given to go build.")
	flag.StringVar(&o.pkg, "pkg", defaultPkg, "Package of the operator's main, given to go build.")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "Comma-separated platforms (os/arch) of the image index.")
	flag.Var(&binaries, "binary", "os/arch=path: use this binary for the platform instead of building it (may be repeated).")
	flag.Parse()
	if flag.NArg() != 0 {
		fail(fmt.Errorf("unexpected arguments: %q", flag.Args()))
	}
	if err := repo.Chdir(); err != nil {
		fail(err)
	}

	var err error
	if o.platforms, err = parsePlatforms(platforms); err != nil {
		fail(err)
	}
	o.binaries = map[string]string{}
	for _, b := range binaries {
		p, path, ok := strings.Cut(b, "=")
		if !ok || path == "" {
			fail(fmt.Errorf("-binary %q: want os/arch=path", b))
		}
		o.binaries[p] = path
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	if o.revision == "" {
		o.revision = gitOutput(ctx, "rev-parse", "HEAD")
	}
	if o.created, err = sourceDate(ctx); err != nil {
		fail(err)
	}

	res, err := build(ctx, o)
	if err != nil {
		fail(err)
	}
	fmt.Printf("image %s:%s (created %s)\n", o.repo, o.version, o.created.UTC().Format("2006-01-02T15:04:05Z"))
	fmt.Printf("  index        %s  %s\n", res.index, res.layout)
	for _, p := range res.images {
		fmt.Printf("  %-12s %s\n", p.platform, p.digest)
	}
	if res.tarball != "" {
		fmt.Printf("  docker load  %s\n", res.tarball)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}
