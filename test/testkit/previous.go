package testkit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// PreviousReleaseFile is the file, relative to the repository root, that names the release
// the upgrade tests start from: one line "<version> <commit>" besides # comments.
const PreviousReleaseFile = "hack/previous-release"

// ErrNoHistory is BuildPreviousRelease's error when the clone lacks the previous release's
// commit (a shallow clone): tests skip rather than fail.
var ErrNoHistory = errors.New("the previous release's commit is not in this clone's history (shallow? git fetch --unshallow)")

// PreviousRelease is the previous release built from git: its operator binary, its release
// manifests (its own hack/release-manifests, as `kubectl apply -f` installs them) and the
// exported tree.
type PreviousRelease struct {
	Version, Commit string
	// Bin is its operator binary; Manifests its release manifests; Dir its exported tree.
	Bin, Manifests, Dir string
}

// ReadPreviousRelease reads PreviousReleaseFile under root.
func ReadPreviousRelease(root string) (version, commit string, err error) {
	f, err := os.Open(filepath.Join(root, PreviousReleaseFile))
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 || !strings.HasPrefix(fields[0], "v") {
			return "", "", fmt.Errorf("%s: %q is not \"<version> <commit>\"", PreviousReleaseFile, line)
		}
		return fields[0], fields[1], nil
	}
	if err := s.Err(); err != nil {
		return "", "", err
	}
	return "", "", fmt.Errorf("%s names no release", PreviousReleaseFile)
}

// BuildPreviousRelease exports the previous release's commit from root's git history into
// dir (git archive), builds its operator and writes its release manifests. Its error is
// ErrNoHistory when the commit is not in the clone.
func BuildPreviousRelease(ctx context.Context, root, dir string) (PreviousRelease, error) {
	version, commit, err := ReadPreviousRelease(root)
	if err != nil {
		return PreviousRelease{}, err
	}
	has := exec.CommandContext(ctx, "git", "cat-file", "-e", commit+"^{commit}")
	has.Dir = root
	if err := has.Run(); err != nil {
		return PreviousRelease{}, fmt.Errorf("%s %s: %w", version, commit, ErrNoHistory)
	}
	export := exec.CommandContext(ctx, "sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", commit, dir)
	export.Dir = root
	if out, err := export.CombinedOutput(); err != nil {
		return PreviousRelease{}, fmt.Errorf("exporting %s (%s): %v: %s", version, commit, err, out)
	}
	p := PreviousRelease{Version: version, Commit: commit, Dir: dir,
		Bin: filepath.Join(dir, "monocle-operator-"+version), Manifests: filepath.Join(dir, "release.yaml")}
	if err := BuildOperator(ctx, dir, p.Bin); err != nil {
		return PreviousRelease{}, fmt.Errorf("%s: %w", version, err)
	}
	release := exec.CommandContext(ctx, "go", "run", "./hack/release-manifests", "-version", version, "-o", p.Manifests)
	release.Dir = dir
	if out, err := release.CombinedOutput(); err != nil {
		return PreviousRelease{}, fmt.Errorf("%s's release manifests: %v: %s", version, err, out)
	}
	return p, nil
}
