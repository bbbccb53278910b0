// Package repo finds the operator's repository from the image tools' module (hack/image),
// which is a module of its own: the operator is built, and the tools' relative paths are
// taken, from the repository root.
package repo

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// Module is the operator's Go module, declared by the go.mod at the repository root.
const Module = "github.com/change-metrics/monocle-operator"

// modulePattern matches the module line of the operator's go.mod.
var modulePattern = regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(Module) + `\s*$`)

// Root returns the repository root: the nearest directory, from dir up, whose go.mod declares
// Module. It fails outside the repository.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modulePattern.Match(b) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not in the repository of %s (no go.mod of that module above it)", dir, Module)
		}
	}
}

// Chdir makes the repository root, found from the working directory, the working directory.
func Chdir() error {
	root, err := Root(".")
	if err != nil {
		return err
	}
	return os.Chdir(root)
}
