package repo

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRoot finds the repository from this package's directory, two modules down, and fails
// outside the repository.
func TestRoot(t *testing.T) {
	root, err := Root(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "monocle-operator")); err != nil {
		t.Errorf("Root gave %s, which has no cmd/monocle-operator: %v", root, err)
	}
	wd, _ := os.Getwd()
	if want, _ := filepath.Abs(filepath.Join(wd, "..", "..", "..", "..")); root != want {
		t.Errorf("Root gave %s, want %s", root, want)
	}
	if got, err := Root(t.TempDir()); err == nil {
		t.Errorf("Root outside the repository gave %s, want an error", got)
	}
}
