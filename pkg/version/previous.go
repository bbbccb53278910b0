package version

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// PreviousReleaseFile is the file, relative to the repository root, that names the release
// this one upgrades from: one line "<version> <commit>" (such as "v0.1.0 c2a4c7b…") besides
// # comments. The upgrade tests build that release from git; the OLM bundle's CSV replaces it.
const PreviousReleaseFile = "hack/previous-release"

// PreviousRelease reads PreviousReleaseFile under the repository root root. Its error names
// the file when it is missing, names no release, or holds a line of another shape.
func PreviousRelease(root string) (release, commit string, err error) {
	data, err := os.ReadFile(filepath.Join(root, PreviousReleaseFile))
	if err != nil {
		return "", "", err
	}
	for s := bufio.NewScanner(bytes.NewReader(data)); s.Scan(); {
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
	return "", "", fmt.Errorf("%s names no release", PreviousReleaseFile)
}
