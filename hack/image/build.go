package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	defaultRepo   = "quay.io/change-metrics/monocle-operator"
	defaultSource = "https://github.com/change-metrics/monocle-operator"
	defaultPkg    = "github.com/change-metrics/monocle-operator/cmd/monocle-operator"

	// binaryPath is where the operator's binary is in the image, and its entrypoint.
	binaryPath = "/monocle-operator"
	// uid and gid of the user nonroot the image runs as (distroless' nonroot; the pod's
	// securityContext in deploy/03-operator.yaml names the same ids).
	nonrootID = 65532

	title       = "monocle-operator"
	description = "Kubernetes operator for Monocle, the change analytics web app"

	// refNameAnnotation names the tag of the image index in the layout's index.json.
	refNameAnnotation = "org.opencontainers.image.ref.name"
)

// options say what to build; main fills them from the flags.
type options struct {
	out       string            // output directory
	repo      string            // image repository, without tag
	version   string            // tag and version label
	revision  string            // revision label; empty means none
	source    string            // source label
	license   string            // SPDX expression of the licenses label; empty means none
	ldflags   string            // go build -ldflags
	pkg       string            // the operator's main package
	goCmd     string            // the go command; empty means "go"
	created   time.Time         // every time in the image
	binaries  map[string]string // platform ("linux/amd64") → prebuilt binary
	platforms []v1.Platform
}

// platformImage is one platform's image and its digest.
type platformImage struct {
	platform string
	digest   v1.Hash
	image    v1.Image
}

// result is what build wrote.
type result struct {
	index   v1.Hash // digest of the image index of every platform
	images  []platformImage
	layout  string // OCI layout directory
	tarball string // docker load tarball of linux/amd64; empty when not built
}

// build builds (or takes) the binary of every platform, makes the images and their index,
// and writes the layout and the linux/amd64 tarball into o.out, replacing earlier ones.
func build(ctx context.Context, o options) (*result, error) {
	if o.version == "" {
		return nil, fmt.Errorf("a version is required (-version)")
	}
	tag, err := name.NewTag(o.repo + ":" + o.version)
	if err != nil {
		return nil, fmt.Errorf("image name: %w", err)
	}
	if len(o.platforms) == 0 {
		return nil, fmt.Errorf("no platform")
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	binDir, err := os.MkdirTemp("", "monocle-operator-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(binDir)

	res := &result{layout: filepath.Join(o.out, "layout")}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range o.platforms {
		key := p.OS + "/" + p.Architecture
		bin := o.binaries[key]
		if bin == "" {
			bin = filepath.Join(binDir, p.OS+"-"+p.Architecture, "monocle-operator")
			if err := goBuild(ctx, o, p, bin); err != nil {
				return nil, err
			}
		}
		img, err := platformImageOf(o, p, bin)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		d, err := img.Digest()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		res.images = append(res.images, platformImage{platform: key, digest: d, image: img})
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        plainImage{img},
			Descriptor: v1.Descriptor{Platform: &p},
		})
	}
	idx = mutate.Annotations(idx, labels(o)).(v1.ImageIndex)
	if res.index, err = idx.Digest(); err != nil {
		return nil, err
	}

	// A fresh layout, so no blob of an earlier build stays in it.
	if err := os.RemoveAll(res.layout); err != nil {
		return nil, err
	}
	lp, err := layout.Write(res.layout, empty.Index)
	if err != nil {
		return nil, fmt.Errorf("writing the layout: %w", err)
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: o.version})); err != nil {
		return nil, fmt.Errorf("writing the layout: %w", err)
	}

	for _, pi := range res.images {
		if pi.platform != "linux/amd64" {
			continue
		}
		res.tarball = filepath.Join(o.out, "monocle-operator-"+o.version+"-linux-amd64.tar")
		if err := tarball.WriteToFile(res.tarball, tag, pi.image); err != nil {
			return nil, fmt.Errorf("writing %s: %w", res.tarball, err)
		}
	}
	return res, nil
}

// plainImage is an image whose descriptor in an index has no artifactType.
// go-containerregistry sets an image's to its config media type, which the OCI image spec
// means for artifacts; clients that do not know the field (skopeo 1.9) then rewrite the index
// when they copy it, and the pushed index no longer has the digest make image printed.
type plainImage struct{ v1.Image }

// ArtifactType is read by go-containerregistry's partial.Descriptor: empty means none.
func (plainImage) ArtifactType() (string, error) { return "", nil }

// goBuild builds the operator's static binary for p into dst.
func goBuild(ctx context.Context, o options, p v1.Platform, dst string) error {
	goCmd := o.goCmd
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-buildvcs=false", "-ldflags="+o.ldflags, "-o", dst, o.pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if p.Variant != "" && p.Architecture == "arm" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s/%s: %w", p.OS, p.Architecture, err)
	}
	return nil
}

// platformImageOf makes p's image from scratch: one layer (see rootfsLayer) and a config
// that runs the binary as nonroot.
func platformImageOf(o options, p v1.Platform, bin string) (v1.Image, error) {
	binary, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	layerTar, err := rootfsTar(binary, o.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	created := v1.Time{Time: o.created}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   created,
			CreatedBy: "hack/image: " + binaryPath + ", /etc/passwd, /etc/group",
			Comment:   "monocle-operator " + o.version,
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config = v1.Config{
		User:         fmt.Sprintf("%d:%d", nonrootID, nonrootID),
		Entrypoint:   []string{binaryPath},
		WorkingDir:   "/",
		Env:          []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		ExposedPorts: map[string]struct{}{"8080/tcp": {}},
		Labels:       labels(o),
	}
	return mutate.ConfigFile(img, cf)
}

// labels are the OCI labels of each image's config, also the annotations of the index.
func labels(o options) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.source":      o.source,
		"org.opencontainers.image.version":     o.version,
		"org.opencontainers.image.created":     o.created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.title":       title,
		"org.opencontainers.image.description": description,
	}
	if o.revision != "" {
		l["org.opencontainers.image.revision"] = o.revision
	}
	if o.license != "" {
		l["org.opencontainers.image.licenses"] = o.license
	}
	return l
}

// rootfsTar is the uncompressed tar of the image's only layer, in this order (parents
// first, names sorted), every entry's time being created:
//
//	etc/           0755 root
//	etc/group      0644 root   root and nonroot (65532)
//	etc/passwd     0644 root   root and nonroot (65532, home /home/nonroot, no shell)
//	home/          0755 root
//	home/nonroot/  0700 nonroot
//	monocle-operator  0755 root
//	tmp/           1777 root
func rootfsTar(binary []byte, created time.Time) ([]byte, error) {
	id := strconv.Itoa(nonrootID)
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nonroot:x:" + id + ":" + id + ":nonroot:/home/nonroot:/sbin/nologin\n"
	group := "root:x:0:\n" + "nonroot:x:" + id + ":\n"
	type entry struct {
		name     string
		mode     int64
		owner    int
		contents []byte // nil for a directory
	}
	entries := []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, contents: []byte(group)},
		{name: "etc/passwd", mode: 0o644, contents: []byte(passwd)},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, owner: nonrootID},
		{name: strings.TrimPrefix(binaryPath, "/"), mode: 0o755, contents: binary},
		{name: "tmp/", mode: 0o1777},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.owner,
			Gid:     e.owner,
			ModTime: created,
			Format:  tar.FormatPAX,
		}
		if e.contents == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.contents))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.contents); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// parsePlatforms parses comma-separated os/arch[/variant] platforms.
func parsePlatforms(s string) ([]v1.Platform, error) {
	var ps []v1.Platform
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := v1.ParsePlatform(f)
		if err != nil {
			return nil, err
		}
		if p.OS == "" || p.Architecture == "" {
			return nil, fmt.Errorf("platform %q: want os/arch", f)
		}
		key := p.OS + "/" + p.Architecture
		if seen[key] {
			return nil, fmt.Errorf("platform %q given twice", key)
		}
		seen[key] = true
		ps = append(ps, *p)
	}
	return ps, nil
}

// sourceDate is the time of every entry in the image: $SOURCE_DATE_EPOCH when set, else
// the time of the last commit, else the Unix epoch.
func sourceDate(ctx context.Context) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		s = gitOutput(ctx, "log", "-1", "--format=%ct")
	}
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("source date %q: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// gitOutput is the trimmed output of git args, or "" when git fails (no git, no checkout).
func gitOutput(ctx context.Context, args ...string) string {
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
