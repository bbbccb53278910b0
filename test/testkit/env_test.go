package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testKubeconfig is a kubeconfig that client-go reads without contacting its server.
const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
users:
- name: u
  user:
    token: t
contexts:
- name: c
  context:
    cluster: c
    user: u
current-context: c
`

func TestStartEnvNeedsSuite(t *testing.T) {
	if _, err := StartEnv(t.Context(), EnvOptions{}); err == nil || !strings.Contains(err.Error(), "Suite is required") {
		t.Fatalf("StartEnv without a suite = %v, want an error naming Suite", err)
	}
}

func TestMakeWorkDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir, err := makeWorkDir(EnvOptions{Suite: "faults"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "monocle-faults-") {
		t.Errorf("work directory %s, want monocle-faults-* in %s", dir, tmp)
	}

	given := filepath.Join(tmp, "bench", "main")
	if dir, err = makeWorkDir(EnvOptions{Suite: "bench", WorkDir: given}); err != nil || dir != given {
		t.Fatalf("makeWorkDir with WorkDir %s = %s, %v", given, dir, err)
	}
	if st, err := os.Stat(given); err != nil || !st.IsDir() {
		t.Errorf("WorkDir %s not created: %v", given, err)
	}
}

func TestEnvConnect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &Env{Root: "repo-root", opts: EnvOptions{Suite: "faults", QPS: 100, Burst: 200, UserAgent: "monocle-faults"}}
	if err := e.connect(path); err != nil {
		t.Fatal(err)
	}
	if e.Config.QPS != 100 || e.Config.Burst != 200 || e.Config.UserAgent != "monocle-faults" {
		t.Errorf("Config QPS %v, Burst %d, UserAgent %q; want the options' 100, 200, monocle-faults", e.Config.QPS, e.Config.Burst, e.Config.UserAgent)
	}
	if e.Kube == nil || e.Monocles == nil || e.Meta == nil {
		t.Errorf("clients Kube %v, Monocles %v, Meta %v: want all three", e.Kube, e.Monocles, e.Meta)
	}
	if e.Kubeconfig != path || e.Kubectl != (Kubectl{Kubeconfig: path, Dir: "repo-root"}) {
		t.Errorf("Kubeconfig %q, Kubectl %+v; want %s, run in the repository root", e.Kubeconfig, e.Kubectl, path)
	}

	// Zero options keep client-go's defaults.
	d := &Env{opts: EnvOptions{Suite: "e2e"}}
	if err := d.connect(path); err != nil {
		t.Fatal(err)
	}
	if d.Config.QPS != 0 || d.Config.Burst != 0 || d.Config.UserAgent != "" {
		t.Errorf("Config QPS %v, Burst %d, UserAgent %q; want them unset", d.Config.QPS, d.Config.Burst, d.Config.UserAgent)
	}
}

func TestEnvClose(t *testing.T) {
	for name, tc := range map[string]struct {
		failed, keep, wantKept bool
	}{
		"passed":       {},
		"failed":       {failed: true, wantKept: true},
		"passed, kept": {keep: true, wantKept: true},
		"failed, kept": {failed: true, keep: true, wantKept: true},
	} {
		t.Run(name, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			if err := os.MkdirAll(filepath.Join(work, "operators"), 0o755); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			e := &Env{WorkDir: work, out: &out, opts: EnvOptions{Suite: "faults", OperatorLogs: "operators", Keep: tc.keep}}
			if err := e.Close(tc.failed); err != nil {
				t.Fatalf("Close: %v", err)
			}
			_, statErr := os.Stat(work)
			if kept := statErr == nil; kept != tc.wantKept {
				t.Fatalf("work directory kept: %v, want %v (%v)", kept, tc.wantKept, statErr)
			}
			want := ""
			if tc.wantKept {
				want = "faults: work directory " + work + " kept: operator logs " + filepath.Join(work, "operators") +
					", cluster logs " + filepath.Join(work, "cluster", "logs") + ", audit log " + filepath.Join(work, "cluster", "audit.log") + "\n"
			}
			if out.String() != want {
				t.Errorf("Close printed %q, want %q", out.String(), want)
			}
		})
	}
}
