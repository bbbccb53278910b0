package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/version"
)

// versionPkg is the package whose variables the Makefile's LDFLAGS stamp.
const versionPkg = "github.com/change-metrics/monocle-operator/pkg/version"

// TestVersionFlag builds the binary with -ldflags of the shape of the Makefile's LDFLAGS and
// checks that --version prints the stamped version and commit on one line and
// exits 0 without looking for a kubeconfig; and that an unstamped build prints the
// development version.
func TestVersionFlag(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on $PATH")
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for name, c := range map[string]struct {
		ldflags string
		want    string
	}{
		"stamped": {
			ldflags: "-s -w -X " + versionPkg + ".Version=v9.9.9 -X " + versionPkg + ".Commit=abc",
			want:    "monocle-operator v9.9.9 (commit abc, " + runtime.Version() + " " + platform + ")\n",
		},
		"not stamped": {
			ldflags: "-s -w",
			want:    "monocle-operator " + version.DevVersion + " (commit unknown, " + runtime.Version() + " " + platform + ")\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bin := filepath.Join(dir, "monocle-operator")
			// The flags of go test's own build (not make build's CGO_ENABLED=0 -trimpath, which
			// would compile every dependency anew, minutes on a cold cache), so that only the
			// link is new. -buildvcs=false: the commit of an unstamped build is then "unknown"
			// wherever the test runs, in a git checkout or not.
			build := exec.Command(goTool, "build", "-buildvcs=false", "-ldflags", c.ldflags, "-o", bin, ".")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}

			// A kubeconfig that does not exist, and no in-cluster configuration: --version must
			// not need either.
			run := exec.Command(bin, "--version", "--kubeconfig", filepath.Join(dir, "missing-kubeconfig"))
			run.Env = []string{"KUBECONFIG=" + filepath.Join(dir, "missing-kubeconfig")}
			var stdout, stderr bytes.Buffer
			run.Stdout, run.Stderr = &stdout, &stderr
			if err := run.Run(); err != nil {
				t.Fatalf("monocle-operator --version: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
			}
			if got := stdout.String(); got != c.want {
				t.Errorf("monocle-operator --version printed %q, want %q", got, c.want)
			}
			if stderr.Len() > 0 {
				t.Errorf("monocle-operator --version wrote to stderr: %s", stderr.String())
			}
		})
	}
}
