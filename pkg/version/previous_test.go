package version

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreviousRelease reads the repository's own file, and refuses files of other shapes.
func TestPreviousRelease(t *testing.T) {
	release, commit, err := PreviousRelease("../..")
	if err != nil || !strings.HasPrefix(release, "v") || len(commit) != 40 {
		t.Errorf("the repository's %s: %q %q %v, want a version and a full commit", PreviousReleaseFile, release, commit, err)
	}
	for _, bad := range []string{"# only a comment\n", "0.1.0 abc\n", "v0.1.0\n", "v0.1.0 abc extra\n"} {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "hack"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, PreviousReleaseFile), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if r, c, err := PreviousRelease(root); err == nil {
			t.Errorf("%q read as %q %q", bad, r, c)
		}
	}
}
