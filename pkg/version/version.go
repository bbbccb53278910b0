// Package version tells which build of the operator runs: its release, the git commit it was
// built from, the Go toolchain and the platform. The release and the commit are stamped at
// build time by the linker (make build does it with the Makefile's VERSION and COMMIT):
//
//	go build -ldflags "-X github.com/change-metrics/monocle-operator/pkg/version.Version=v0.1.0 \
//	  -X github.com/change-metrics/monocle-operator/pkg/version.Commit=$(git rev-parse --short HEAD)" \
//	  ./cmd/monocle-operator
//
// A build that is not stamped (go build, go run, go test) reports the development version and
// the commit the go command recorded in the binary, when it recorded one.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// MinKubernetes is the oldest Kubernetes minor version the operator supports, the oldest
// its tests run on. What the operator needs sets a floor of 1.29:
//   - the CRD's validation rules use CEL's Quantity library (isQuantity, quantity()), which
//     the API server compiles for CRDs from 1.29 on (k8s.io/apiserver v0.29.0,
//     pkg/cel/environment/base.go: DefaultCompatibilityVersion); 1.28 refuses the CRD;
//   - the proxy runs as a native sidecar (an init container with restartPolicy Always):
//     SidecarContainers is beta and on by default from 1.29.
//
// The tests build their control planes from Go modules, and 1.29's kube-apiserver cannot be
// built that way (it needs k8s.io/legacy-cloud-providers v0.29.6, which the module proxy
// does not serve), so the floor the operator claims is 1.30, which its tests run on. The
// operator refuses to start against an older API server; the Helm chart's kubeVersion and the
// OLM bundle's minKubeVersion say the same, and a test keeps them in step.
const MinKubernetes = "1.30"

// DevVersion is the version of a build whose Version was not stamped: a build from a
// checkout, after or between releases.
const DevVersion = "v0.2.0-dev"

// Version is the operator's release, such as "v0.1.0", set at build time with
// -ldflags "-X github.com/change-metrics/monocle-operator/pkg/version.Version=<release>".
// Unstamped (or stamped empty) it reads as DevVersion.
var Version = DevVersion

// Commit is the git commit the operator was built from (make build stamps `git rev-parse
// --short HEAD`), set at build time with
// -ldflags "-X github.com/change-metrics/monocle-operator/pkg/version.Commit=<commit>".
// A stamped commit is reported as it is. When it is empty, Info reads the commit the go
// command recorded in the binary instead (vcs.revision, and vcs.modified for a checkout with
// uncommitted changes).
var Commit = ""

// unknown stands for a commit that was neither stamped nor recorded: a build with
// -buildvcs=false, outside a git checkout, or by go test.
const unknown = "unknown"

// BuildInfo describes the running binary.
type BuildInfo struct {
	// Version is the release, or DevVersion for an unstamped build.
	Version string
	// Commit is the stamped commit; else the first 12 characters of the recorded
	// vcs.revision, with "-dirty" appended when the checkout had uncommitted changes; else
	// "unknown".
	Commit string
	// GoVersion is the Go toolchain that built the binary, such as "go1.26.8".
	GoVersion string
	// Platform is the binary's GOOS/GOARCH, such as "linux/amd64".
	Platform string
}

// String formats b on one line, as --version prints it:
// "monocle-operator v0.1.0 (commit 1a2b3c4, go1.26.8 linux/amd64)".
func (b BuildInfo) String() string {
	return fmt.Sprintf("monocle-operator %s (commit %s, %s %s)", b.Version, b.Commit, b.GoVersion, b.Platform)
}

// Info describes the running binary from the stamped Version and Commit and, for a commit
// that was not stamped, from the build information the go command recorded
// (runtime/debug.ReadBuildInfo).
func Info() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return info(Version, Commit, bi)
}

// String is Info().String(): the line --version prints.
func String() string {
	return Info().String()
}

// info is Info with its inputs as arguments; bi is nil when the binary carries no build
// information.
func info(version, commit string, bi *debug.BuildInfo) BuildInfo {
	if version == "" {
		version = DevVersion
	}
	if commit == "" {
		commit = recordedCommit(bi)
	}
	return BuildInfo{
		Version:   version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// recordedCommit is the commit in bi's vcs.revision setting, shortened to 12 characters and
// suffixed with "-dirty" when vcs.modified is "true"; "unknown" without a revision.
func recordedCommit(bi *debug.BuildInfo) string {
	if bi == nil {
		return unknown
	}
	var revision string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return unknown
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if modified {
		revision += "-dirty"
	}
	return revision
}
