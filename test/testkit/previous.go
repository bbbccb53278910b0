package testkit

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"

	operatorversion "github.com/change-metrics/monocle-operator/pkg/version"
)

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

// BuildPreviousRelease exports the previous release's commit from root's git history into
// dir (git archive), builds its operator and writes its release manifests. Its error is
// ErrNoHistory when the commit is not in the clone.
func BuildPreviousRelease(ctx context.Context, root, dir string) (PreviousRelease, error) {
	version, commit, err := operatorversion.PreviousRelease(root)
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
