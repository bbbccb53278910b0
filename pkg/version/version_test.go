package version

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestInfo(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	vcs := func(settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: runtime.Version()}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const revision = "153aff0c0ffee0123456789abcdef0123456789a"
	for name, c := range map[string]struct {
		version, commit string
		bi              *debug.BuildInfo
		wantVersion     string
		wantCommit      string
	}{
		"stamped": {
			version: "v9.9.9", commit: "abc", bi: vcs("vcs.revision", revision, "vcs.modified", "true"),
			wantVersion: "v9.9.9", wantCommit: "abc",
		},
		"not stamped, recorded revision": {
			version: DevVersion, bi: vcs("vcs", "git", "vcs.revision", revision, "vcs.modified", "false"),
			wantVersion: DevVersion, wantCommit: "153aff0c0ffe",
		},
		"not stamped, modified checkout": {
			version: DevVersion, bi: vcs("vcs.revision", revision, "vcs.modified", "true"),
			wantVersion: DevVersion, wantCommit: "153aff0c0ffe-dirty",
		},
		"not stamped, short revision kept whole": {
			version: DevVersion, bi: vcs("vcs.revision", "abc123"),
			wantVersion: DevVersion, wantCommit: "abc123",
		},
		"not stamped, nothing recorded": {
			version: DevVersion, bi: vcs("-buildvcs", "false"),
			wantVersion: DevVersion, wantCommit: "unknown",
		},
		"no build information": {
			version:     DevVersion,
			wantVersion: DevVersion, wantCommit: "unknown",
		},
		"stamped empty": {
			version: "", commit: "", bi: vcs("vcs.revision", "abc123"),
			wantVersion: DevVersion, wantCommit: "abc123",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := info(c.version, c.commit, c.bi)
			want := BuildInfo{Version: c.wantVersion, Commit: c.wantCommit, GoVersion: runtime.Version(), Platform: platform}
			if got != want {
				t.Errorf("info = %+v, want %+v", got, want)
			}
		})
	}
}

func TestString(t *testing.T) {
	b := BuildInfo{Version: "v0.1.0", Commit: "1a2b3c4", GoVersion: "go1.26.8", Platform: "linux/amd64"}
	if got, want := b.String(), "monocle-operator v0.1.0 (commit 1a2b3c4, go1.26.8 linux/amd64)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := String(), Info().String(); got != want {
		t.Errorf("String() = %q, Info().String() = %q", got, want)
	}
}

// TestDefaults checks what an unstamped binary (this test's) reports.
func TestDefaults(t *testing.T) {
	i := Info()
	if i.Version != DevVersion {
		t.Errorf("Version = %q, want %q (the test binary is not stamped)", i.Version, DevVersion)
	}
	if i.Commit == "" || i.GoVersion != runtime.Version() || i.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("Info() = %+v", i)
	}
}

// TestMinKubernetesInStep: the Helm chart's kubeVersion and the OLM bundle's minKubeVersion
// say MinKubernetes, the version the operator checks at start.
func TestMinKubernetesInStep(t *testing.T) {
	for file, want := range map[string]string{
		"deploy/helm/monocle-operator/Chart.yaml":                                 `kubeVersion: ">=` + MinKubernetes + `.0-0"`,
		"deploy/olm/bundle/manifests/monocle-operator.clusterserviceversion.yaml": "minKubeVersion: " + MinKubernetes + ".0\n",
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), want) {
			t.Errorf("%s does not say %q", file, want)
		}
	}
}
