package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/change-metrics/monocle-operator/hack/image/internal/repo"
)

// TestBuild builds the image twice into two directories, with go build as make image does,
// and checks that both give the same digests and byte-identical docker tarballs, then reads
// the first layout back: platforms, config, layer contents, and the binary of this
// machine's platform run with --version.
//
// Both linux/amd64 and linux/arm64 are built, as make image does; under -short (make
// test-unit) only this machine's platform, since compiling the operator for another architecture with an
// empty build cache takes minutes. With an empty cache the full test may need
// -timeout 20m; with a warm one (the second go build always is) it takes about a minute.
func TestBuild(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("the image's binaries run on linux/amd64 or linux/arm64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	platforms := "linux/amd64,linux/arm64"
	if testing.Short() {
		platforms = runtime.GOOS + "/" + runtime.GOARCH
	}
	ps, err := parsePlatforms(platforms)
	if err != nil {
		t.Fatal(err)
	}
	// go build builds the operator in the working directory: the repository root, as main
	// makes it (this module is not the operator's).
	root, err := repo.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	const version = "v9.8.7-test"
	const versionPkg = "github.com/change-metrics/monocle-operator/pkg/version"
	o := options{
		repo:      defaultRepo,
		version:   version,
		revision:  "0123456789abcdef",
		source:    defaultSource,
		ldflags:   "-s -w -X " + versionPkg + ".Version=" + version + " -X " + versionPkg + ".Commit=0123456",
		pkg:       defaultPkg,
		created:   time.Unix(1700000000, 0).UTC(),
		platforms: ps,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var results []*result
	for range 2 {
		o.out = t.TempDir()
		start := time.Now()
		res, err := build(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("built %s in %s: index %s", platforms, time.Since(start).Round(time.Second), res.index)
		results = append(results, res)
	}
	first, second := results[0], results[1]
	if first.index != second.index {
		t.Errorf("two builds gave the index digests %s and %s", first.index, second.index)
	}
	if len(first.images) != len(ps) || len(second.images) != len(ps) {
		t.Fatalf("images: %d and %d, want %d", len(first.images), len(second.images), len(ps))
	}
	for i := range first.images {
		if first.images[i].digest != second.images[i].digest {
			t.Errorf("%s: two builds gave the digests %s and %s", first.images[i].platform, first.images[i].digest, second.images[i].digest)
		}
	}
	if (first.tarball == "") != (runtime.GOARCH != "amd64" && testing.Short()) {
		t.Errorf("docker tarball %q, want one exactly when linux/amd64 is built", first.tarball)
	}
	if first.tarball != "" {
		if a, b := fileSum(t, first.tarball), fileSum(t, second.tarball); a != b {
			t.Errorf("the docker tarballs differ: sha256 %x and %x", a, b)
		}
	}

	// The layout: index.json names the image index by its version; the index has one image
	// per platform.
	p, err := layout.FromPath(first.layout)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topManifest.Manifests) != 1 {
		t.Fatalf("index.json has %d manifests, want 1", len(topManifest.Manifests))
	}
	desc := topManifest.Manifests[0]
	if got := desc.Annotations[refNameAnnotation]; got != version {
		t.Errorf("index.json: %s = %q, want %q", refNameAnnotation, got, version)
	}
	if desc.Digest != first.index {
		t.Errorf("index.json points at %s, want the index %s", desc.Digest, first.index)
	}
	idx, err := top.ImageIndex(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := im.Annotations["org.opencontainers.image.version"]; got != version {
		t.Errorf("index annotation version = %q, want %q", got, version)
	}
	if len(im.Manifests) != len(ps) {
		t.Fatalf("the index has %d manifests, want %d", len(im.Manifests), len(ps))
	}
	hostPlatform := runtime.GOOS + "/" + runtime.GOARCH
	var hostBinary string
	for i, d := range im.Manifests {
		want := ps[i]
		if d.Platform == nil || d.Platform.OS != want.OS || d.Platform.Architecture != want.Architecture {
			t.Errorf("manifest %d: platform %v, want %s/%s", i, d.Platform, want.OS, want.Architecture)
			continue
		}
		if d.ArtifactType != "" {
			t.Errorf("manifest %d: artifactType %q, want none (an image, not an artifact)", i, d.ArtifactType)
		}
		plat := want.OS + "/" + want.Architecture
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkConfig(t, plat, img, o)
		dir := t.TempDir()
		checkLayer(t, plat, img, dir)
		if plat == hostPlatform {
			hostBinary = filepath.Join(dir, "monocle-operator")
		}
	}

	// The docker tarball holds the linux/amd64 image of the layout, tagged <repo>:<version>.
	if first.tarball != "" {
		tag, err := name.NewTag(defaultRepo + ":" + version)
		if err != nil {
			t.Fatal(err)
		}
		tarImage, err := tarball.ImageFromPath(first.tarball, &tag)
		if err != nil {
			t.Fatal(err)
		}
		// A docker tarball has no manifest of its own (one in Docker's format is made up when
		// read): compare the config and the layers.
		var amd64 v1.Image
		for _, pi := range first.images {
			if pi.platform == "linux/amd64" {
				amd64 = pi.image
			}
		}
		for what, get := range map[string]func(v1.Image) (string, error){
			"config": func(img v1.Image) (string, error) {
				h, err := img.ConfigName()
				return h.String(), err
			},
			"layers": func(img v1.Image) (string, error) {
				ls, err := img.Layers()
				var ds []string
				for _, l := range ls {
					d, err := l.Digest()
					if err != nil {
						return "", err
					}
					ds = append(ds, d.String())
				}
				return strings.Join(ds, ","), err
			},
		} {
			got, err := get(tarImage)
			if err != nil {
				t.Fatal(err)
			}
			want, err := get(amd64)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("docker tarball: %s %s, want the layout's linux/amd64 %s", what, got, want)
			}
		}
	}

	if hostBinary == "" {
		t.Fatalf("no image for %s to run", hostPlatform)
	}
	out, err := exec.CommandContext(ctx, hostBinary, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", hostPlatform, err, out)
	}
	line := strings.TrimSpace(string(out))
	t.Logf("--version: %s", line)
	if want := "monocle-operator " + version + " (commit 0123456, "; !strings.HasPrefix(line, want) || !strings.HasSuffix(line, " "+hostPlatform+")") {
		t.Errorf("--version printed %q, want %s... %s)", line, want, hostPlatform)
	}
}

// checkConfig checks the config of plat's image.
func checkConfig(t *testing.T, plat string, img v1.Image, o options) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.OS + "/" + cf.Architecture; got != plat {
		t.Errorf("%s: config platform %s", plat, got)
	}
	if !cf.Created.Time.Equal(o.created) {
		t.Errorf("%s: created %s, want %s", plat, cf.Created.Time, o.created)
	}
	c := cf.Config
	if c.User != "65532:65532" {
		t.Errorf("%s: user %q, want 65532:65532", plat, c.User)
	}
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/monocle-operator" {
		t.Errorf("%s: entrypoint %q, want [/monocle-operator]", plat, c.Entrypoint)
	}
	if c.WorkingDir != "/" {
		t.Errorf("%s: working dir %q, want /", plat, c.WorkingDir)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   defaultSource,
		"org.opencontainers.image.version":  o.version,
		"org.opencontainers.image.revision": o.revision,
		"org.opencontainers.image.title":    "monocle-operator",
	} {
		if got := c.Labels[k]; got != want {
			t.Errorf("%s: label %s = %q, want %q", plat, k, got, want)
		}
	}
}

// checkLayer checks that plat's image has one layer holding /monocle-operator (0755) and the
// user 65532 in /etc/passwd, all times being the source date, and writes the binary into dir.
func checkLayer(t *testing.T, plat string, img v1.Image, dir string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%s: %d layers, want 1", plat, len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	found := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(cf.Created.Time) {
			t.Errorf("%s: %s has the time %s, want %s", plat, h.Name, h.ModTime, cf.Created.Time)
		}
		switch h.Name {
		case "monocle-operator":
			found[h.Name] = true
			if h.Typeflag != tar.TypeReg || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 {
				t.Errorf("%s: /monocle-operator: type %c mode %o owner %d:%d, want a 0755 file of 0:0", plat, h.Typeflag, h.Mode, h.Uid, h.Gid)
			}
			f, err := os.OpenFile(filepath.Join(dir, "monocle-operator"), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		case "etc/passwd", "etc/group":
			found[h.Name] = true
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			want := "nonroot:x:65532:65532:"
			if h.Name == "etc/group" {
				want = "nonroot:x:65532:"
			}
			if !bytes.Contains(b, []byte("\n"+want)) {
				t.Errorf("%s: /%s has no line %s...:\n%s", plat, h.Name, want, b)
			}
		}
	}
	for _, n := range []string{"monocle-operator", "etc/passwd", "etc/group"} {
		if !found[n] {
			t.Errorf("%s: the layer has no %s; it has %q", plat, n, names)
		}
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("%s: the layer's entries are not sorted: %q", plat, names)
			break
		}
	}
}

// fileSum is the sha256 of the file at path.
func fileSum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestSourceDate checks the choice of the image's time.
func TestSourceDate(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	got, err := sourceDate(context.Background())
	if err != nil || !got.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("SOURCE_DATE_EPOCH=1700000000: %s, %v", got, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := sourceDate(context.Background()); err == nil {
		t.Error("SOURCE_DATE_EPOCH=yesterday: no error")
	}
}

// TestParsePlatforms checks the -platforms flag.
func TestParsePlatforms(t *testing.T) {
	ps, err := parsePlatforms("linux/amd64, linux/arm64")
	if err != nil || len(ps) != 2 || ps[1].Architecture != "arm64" {
		t.Errorf("got %v, %v", ps, err)
	}
	for _, bad := range []string{"linux/amd64,linux/amd64", "linux"} {
		if _, err := parsePlatforms(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
