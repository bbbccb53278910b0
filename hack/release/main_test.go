package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoCopy copies the files the release stamps from the repository into a new directory.
func repoCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := []string{"CHANGELOG.md"}
	for _, p := range places {
		files = append(files, p.file)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Right after a release the unreleased section is empty, and a release refuses that: the
	// copy gets a change to release.
	changelog := filepath.Join(dir, "CHANGELOG.md")
	data, err := os.ReadFile(changelog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "## [Unreleased]\n\n## [") {
		return dir
	}
	data = []byte(strings.Replace(string(data), "## [Unreleased]\n", "## [Unreleased]\n\n### Fixed\n\n- A change to release.\n", 1))
	if err := os.WriteFile(changelog, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStampEveryPlace: on a copy of the repository (which must itself state one version in
// every place, or stamp refuses), a release stamps the new version in each place, and turns
// the changelog's unreleased section into the release's under a new empty one.
func TestStampEveryPlace(t *testing.T) {
	dir := repoCopy(t)
	current, err := Current(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := stamp(dir, "v9.8.7", "2026-12-01"); err != nil {
		t.Fatalf("the repository does not state %s in every place: %v", current, err)
	}
	for _, p := range places {
		data, err := os.ReadFile(filepath.Join(dir, p.file))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), p.expand("v9.8.7")); n != p.count {
			t.Errorf("%s: %q %d times after the release, want %d", p.file, p.expand("v9.8.7"), n, p.count)
		}
		if strings.Contains(string(data), p.expand(current)) {
			t.Errorf("%s still says %q", p.file, p.expand(current))
		}
	}
	changelog, err := os.ReadFile(filepath.Join(dir, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## [Unreleased]\n\n## [9.8.7] - 2026-12-01\n",
		"[Unreleased]: https://github.com/change-metrics/monocle-operator/compare/v9.8.7...HEAD\n",
		"[9.8.7]: https://github.com/change-metrics/monocle-operator/compare/" + current + "...v9.8.7\n"} {
		if !strings.Contains(string(changelog), want) {
			t.Errorf("CHANGELOG.md lacks %q", want)
		}
	}
	// The stamped copy is a repository in step with its new version: the next release
	// refuses an empty unreleased section.
	if err := stamp(dir, "v9.8.8", "2026-12-02"); err == nil || !strings.Contains(err.Error(), "unreleased section is empty") {
		t.Errorf("a release without changes: %v", err)
	}
}

// TestStampRefuses: a version that is no release tag, the current one, or a place that does
// not hold the current version is an error, and nothing is written.
func TestStampRefuses(t *testing.T) {
	dir := repoCopy(t)
	current, err := Current(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"0.2.0", "v0.2", "v01.2.3", current} {
		if err := stamp(dir, v, "2026-12-01"); err == nil {
			t.Errorf("version %q accepted", v)
		}
	}
	readme := filepath.Join(dir, "README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(readme, []byte(strings.ReplaceAll(string(data), "release's tag ("+current+" here)", "release's tag")), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err := stamp(dir, "v9.8.7", "2026-12-01"); err == nil || !strings.Contains(err.Error(), "README.md") {
		t.Errorf("a README without the version: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "Makefile")); string(after) != string(before) {
		t.Error("a refused release wrote the Makefile")
	}
}
