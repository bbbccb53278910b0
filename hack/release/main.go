// Command release stamps a new release's version everywhere the repository states it, from
// the one place it is kept, the Makefile's "VERSION ?= v<semver>":
//
//	go run ./hack/release -version v0.2.0 [-date 2026-12-01] [-root .]
//
// (make release NEW_VERSION=v0.2.0 runs it, then make generate, which writes the OLM bundle
// from the Makefile's VERSION). It rewrites each place listed in places from the current
// version to the new one, and CHANGELOG.md's "## [Unreleased]" section into the release's,
// under a new empty one. Each place must hold the current version exactly where expected:
// anything else is an error and nothing is written, so that a moved line is noticed rather
// than left behind.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// place is one statement of the version in a file: pattern, with {v} standing for the
// version ("v0.1.0") and {semver} for it without the v ("0.1.0"), occurs count times.
type place struct {
	file, pattern string
	count         int
}

// places are where the version is stated, besides CHANGELOG.md.
var places = []place{
	{"Makefile", "VERSION ?= {v}\n", 1},
	{"deploy/03-operator.yaml", "image: quay.io/change-metrics/monocle-operator:{v}\n", 1},
	{"deploy/helm/monocle-operator/Chart.yaml", "\nversion: {semver}\n", 1},
	{"deploy/helm/monocle-operator/Chart.yaml", "\nappVersion: {v}\n", 1},
	{"kustomization.yaml", "newTag: {v}\n", 1},
	{"pkg/version/version.go", `DevVersion = "{v}-dev"`, 1},
	{"README.md", "release's tag ({v} here)", 1},
	{"README.md", "releases/download/{v}/monocle-operator.yaml", 1},
	{"docs/kubectl-plugin.md", "kubectl-monocle-{v}-linux-amd64.tar.gz", 2},
	{"docs/kubectl-plugin.md", "releases/download/{v}/", 1},
	{"docs/installation.md", "Install a release, {v} here,", 1},
	{"docs/installation.md", "releases/download/{v}/monocle-operator.yaml", 1},
	{"docs/installation.md", "monocle-operator:{v}`: `deploy/` names", 1},
	{"docs/installation.md", "go run -C hack/image . -version {v}`", 1},
}

// semverTag is a release tag: v, then major.minor.patch without leading zeros.
var semverTag = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

func main() {
	version := flag.String("version", "", "The new release, such as v0.2.0 (required).")
	date := flag.String("date", time.Now().UTC().Format(time.DateOnly), "The release's date in CHANGELOG.md.")
	root := flag.String("root", ".", "The repository's root.")
	flag.Parse()
	if err := stamp(*root, *version, *date); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// Current returns the version the Makefile under root states ("v0.1.0").
func Current(root string) (string, error) {
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^VERSION \?= (v\S+)$`).FindSubmatch(makefile)
	if m == nil {
		return "", errors.New("the Makefile has no VERSION ?= v<semver>")
	}
	return string(m[1]), nil
}

// stamp rewrites every place under root from the current version to version, and
// CHANGELOG.md's unreleased section into version's of date; it writes nothing unless every
// place holds the current version as expected.
func stamp(root, version, date string) error {
	if !semverTag.MatchString(version) {
		return fmt.Errorf("-version %q is not a release tag such as v0.2.0", version)
	}
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return fmt.Errorf("-date %q: %w", date, err)
	}
	current, err := Current(root)
	if err != nil {
		return err
	}
	if current == version {
		return fmt.Errorf("the Makefile says %s already", version)
	}
	files := map[string]string{}
	read := func(file string) (string, error) {
		if s, ok := files[file]; ok {
			return s, nil
		}
		data, err := os.ReadFile(filepath.Join(root, file))
		return string(data), err
	}
	for _, p := range places {
		s, err := read(p.file)
		if err != nil {
			return err
		}
		from, to := p.expand(current), p.expand(version)
		if n := strings.Count(s, from); n != p.count {
			return fmt.Errorf("%s: %q occurs %d times, want %d", p.file, from, n, p.count)
		}
		files[p.file] = strings.ReplaceAll(s, from, to)
	}
	changelog, err := read("CHANGELOG.md")
	if err != nil {
		return err
	}
	if files["CHANGELOG.md"], err = release(changelog, current, version, date); err != nil {
		return err
	}
	for file, s := range files {
		if err := os.WriteFile(filepath.Join(root, file), []byte(s), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// expand is p's pattern for version.
func (p place) expand(version string) string {
	return strings.NewReplacer("{v}", version, "{semver}", strings.TrimPrefix(version, "v")).Replace(p.pattern)
}

// release turns changelog's "## [Unreleased]" section into version's of date, under a new
// empty "## [Unreleased]", and updates the comparison links at the end (Keep a Changelog
// 1.1.0). The section must not be empty.
func release(changelog, current, version, date string) (string, error) {
	const unreleased = "## [Unreleased]\n"
	i := strings.Index(changelog, unreleased)
	if i < 0 {
		return "", errors.New(`CHANGELOG.md has no "## [Unreleased]" section`)
	}
	body := changelog[i+len(unreleased):]
	if next := strings.Index(body, "\n## ["); next >= 0 {
		body = body[:next]
	}
	if strings.TrimSpace(body) == "" {
		return "", errors.New("CHANGELOG.md's unreleased section is empty: say what the release changes")
	}
	semver := strings.TrimPrefix(version, "v")
	out := changelog[:i] + unreleased + "\n## [" + semver + "] - " + date + "\n" + changelog[i+len(unreleased):]
	const repo = "https://github.com/change-metrics/monocle-operator"
	oldLink := "[Unreleased]: " + repo + "/compare/" + current + "...HEAD\n"
	if !strings.Contains(out, oldLink) {
		return "", fmt.Errorf("CHANGELOG.md has no link %q", strings.TrimSpace(oldLink))
	}
	out = strings.Replace(out, oldLink, "[Unreleased]: "+repo+"/compare/"+version+"...HEAD\n["+semver+"]: "+repo+"/compare/"+current+"..."+version+"\n", 1)
	return out, nil
}
