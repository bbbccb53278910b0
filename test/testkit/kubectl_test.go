package testkit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeKubectl puts on $PATH a kubectl that prints its $KUBECONFIG, working directory,
// arguments and standard input, appends its arguments to calls.log, and fails when its
// first argument is "fail" or equals $FAKE_KUBECTL_FAIL.
func fakeKubectl(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	script := `#!/bin/sh
echo "$*" >> "` + dir + `/calls.log"
echo "kubeconfig=$KUBECONFIG"
echo "pwd=$(pwd)"
echo "args=$*"
if [ "$1" = fail ] || [ "$1" = "$FAKE_KUBECTL_FAIL" ]; then echo "error: $1 failed" >&2; exit 1; fi
if [ ! -t 0 ]; then echo "stdin=$(cat)"; fi
`
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

func TestKubectl(t *testing.T) {
	fakeKubectl(t)
	work := t.TempDir()
	k := Kubectl{Kubeconfig: "/tmp/test.kubeconfig", Dir: work}
	ctx := context.Background()

	out, err := k.Run(ctx, "get", "pods", "-A")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	for _, want := range []string{"kubeconfig=/tmp/test.kubeconfig\n", "pwd=" + work + "\n", "args=get pods -A\n", "stdin=\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("Run output lacks %q:\n%s", want, out)
		}
	}
	out, err = k.RunStdin(ctx, "kind: Monocle", "apply", "-f", "-")
	if err != nil || !strings.Contains(out, "stdin=kind: Monocle\n") {
		t.Errorf("RunStdin = %v:\n%s", err, out)
	}
	out, err = k.Run(ctx, "fail")
	if err == nil || !strings.Contains(out, "error: fail failed") {
		t.Errorf("a failing kubectl: err %v, output %q; want the error and its stderr", err, out)
	}
	if got := k.Must(t, "version"); !strings.Contains(got, "args=version") {
		t.Errorf("Must = %q", got)
	}
}

func TestTenant(t *testing.T) {
	fakeKubectl(t)
	admin := Kubectl{Kubeconfig: "/tmp/test.kubeconfig"}
	tenant, err := Tenant(context.Background(), admin, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if tenant.As != "tenant-team-a" || admin.As != "" {
		t.Fatalf("Tenant = %+v (admin %+v); want the admin's kubectl acting as tenant-team-a", tenant, admin)
	}
	out := tenant.Must(t, "get", "monocles")
	if !strings.Contains(out, "args=--as=tenant-team-a get monocles\n") {
		t.Errorf("a tenant's kubectl does not impersonate the tenant:\n%s", out)
	}
}

func TestInstallCRD(t *testing.T) {
	dir := fakeKubectl(t)
	k := Kubectl{Kubeconfig: "/tmp/test.kubeconfig"}
	if err := k.InstallCRD(context.Background(), "/repo"); err != nil {
		t.Fatal(err)
	}
	calls, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := "apply -f /repo/deploy/01-crd.yaml\nwait --for=condition=Established --timeout=60s crd/" + CRDName + "\n"
	if string(calls) != want {
		t.Errorf("kubectl calls:\n%s\nwant:\n%s", calls, want)
	}
	t.Setenv("FAKE_KUBECTL_FAIL", "wait")
	err = k.InstallCRD(context.Background(), "/repo")
	if err == nil || !strings.HasPrefix(err.Error(), "waiting for the CRD "+CRDName+": ") || !strings.Contains(err.Error(), "error: wait failed") {
		t.Errorf("a failing wait: %v", err)
	}
}

// TestInstallCRDRetriesEarlyWait: a kubectl wait that read the CRD before its first status
// (kubectl's "accessor error") is run again until it succeeds.
func TestInstallCRDRetriesEarlyWait(t *testing.T) {
	dir := t.TempDir()
	script := `#!/bin/sh
echo "$1" >> "` + dir + `/calls.log"
if [ "$1" = wait ] && [ ! -f "` + dir + `/status" ]; then
  touch "` + dir + `/status"
  echo "error: .status.conditions accessor error: <nil> is of the type <nil>, expected []interface{}" >&2
  exit 1
fi
`
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := (Kubectl{}).InstallCRD(context.Background(), "/repo"); err != nil {
		t.Fatal(err)
	}
	if calls, _ := os.ReadFile(filepath.Join(dir, "calls.log")); string(calls) != "apply\nwait\nwait\n" {
		t.Errorf("kubectl calls %q, want apply and two waits", calls)
	}
}
