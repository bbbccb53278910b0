package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// buildScript is the script, relative to the repository root, that builds
// the binaries into DefaultCacheDir.
const buildScript = "hack/build-control-plane.sh"

// DefaultCacheDir returns the directory hack/build-control-plane.sh builds
// into: $MONOCLE_CONTROL_PLANE_CACHE if set, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/monocle-operator/control-plane/<RunningVersion>.
// Binaries are in its bin/ and kwok Stage files in its kwok-stages/.
func DefaultCacheDir() string {
	if dir := os.Getenv("MONOCLE_CONTROL_PLANE_CACHE"); dir != "" {
		return dir
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		base = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(base, "monocle-operator", "control-plane", RunningVersion())
}

// binariesPresent reports whether every binary and required Stage file is in
// cacheDir.
func binariesPresent(cacheDir string) bool {
	for _, name := range Components {
		if st, err := os.Stat(filepath.Join(cacheDir, "bin", name)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return false
		}
	}
	for _, name := range append([]string{storageClassFile}, requiredStages...) {
		if _, err := os.Stat(filepath.Join(cacheDir, "kwok-stages", name)); err != nil {
			return false
		}
	}
	return true
}

// EnsureBinaries returns the bin and kwok-stages directories of
// DefaultCacheDir, running hack/build-control-plane.sh (found in repoRoot, or
// from the current directory upwards if repoRoot is empty) first. The script
// returns at once when the cache is up to date, and builds only what is
// missing or stale otherwise: the first build takes several minutes, with
// progress on stderr. If the script cannot be found, binaries already in the
// cache are used as they are.
func EnsureBinaries(ctx context.Context, repoRoot string) (binDir, stagesDir string, err error) {
	cacheDir := DefaultCacheDir()
	binDir = filepath.Join(cacheDir, "bin")
	stagesDir = filepath.Join(cacheDir, "kwok-stages")
	if repoRoot == "" {
		repoRoot, err = FindRepoRoot("")
	}
	script := filepath.Join(repoRoot, buildScript)
	if err == nil {
		_, err = os.Stat(script)
	}
	if err != nil {
		if binariesPresent(cacheDir) {
			return binDir, stagesDir, nil
		}
		return "", "", fmt.Errorf("localcluster: cannot build the control plane: %w", err)
	}
	cmd := exec.CommandContext(ctx, "bash", script, Build())
	cmd.Dir = repoRoot
	cmd.Stdout = io.Discard // it prints only the bin dir there
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("localcluster: %s failed: %w", buildScript, err)
	}
	if !binariesPresent(cacheDir) {
		return "", "", fmt.Errorf("localcluster: %s ran but %s is still incomplete (does MONOCLE_CONTROL_PLANE_CACHE/XDG_CACHE_HOME/HOME differ?)", buildScript, cacheDir)
	}
	return binDir, stagesDir, nil
}

// FindRepoRoot returns the first directory, from start (or the current
// directory if empty) upwards, that contains hack/build-control-plane.sh.
func FindRepoRoot(start string) (string, error) {
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		start = wd
	}
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, buildScript)); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("localcluster: no " + buildScript + " found in " + start + " or above")
		}
		dir = parent
	}
}
