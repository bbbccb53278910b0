package testkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CRDName is the name of the Monocle CustomResourceDefinition that deploy/01-crd.yaml
// installs.
const CRDName = "monocles.monocle.monocle.change-metrics.io"

// Kubectl runs the kubectl on $PATH against one cluster.
type Kubectl struct {
	// Kubeconfig is the path kubectl gets as $KUBECONFIG.
	Kubeconfig string
	// Dir is kubectl's working directory, against which relative paths in its arguments
	// resolve; empty means the test's.
	Dir string
	// As is the user kubectl impersonates (--as), such as a tenant's (Tenant); empty means
	// the kubeconfig's own user.
	As string
}

// Run runs kubectl with args and returns its stdout and stderr, interleaved as written. Its
// error is an *exec.ExitError for a non-zero exit, or the failure to start kubectl; ctx
// kills kubectl when it ends.
func (k Kubectl) Run(ctx context.Context, args ...string) (string, error) {
	return k.run(ctx, nil, args)
}

// RunStdin runs kubectl as Run does, with stdin as its standard input.
func (k Kubectl) RunStdin(ctx context.Context, stdin string, args ...string) (string, error) {
	return k.run(ctx, strings.NewReader(stdin), args)
}

func (k Kubectl) run(ctx context.Context, stdin io.Reader, args []string) (string, error) {
	if k.As != "" {
		args = append([]string{"--as=" + k.As}, args...)
	}
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.Kubeconfig)
	cmd.Dir = k.Dir
	cmd.Stdin = stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// Must runs kubectl as Run does, without a deadline, and on error fails the test with the
// arguments and the output.
func (k Kubectl) Must(t testing.TB, args ...string) string {
	t.Helper()
	out, err := k.Run(context.Background(), args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// InstallCRD applies deploy/01-crd.yaml of the repository at repoRoot and waits up to 60 s
// for the CRD to be Established. Its errors say which step failed and include kubectl's
// output.
func (k Kubectl) InstallCRD(ctx context.Context, repoRoot string) error {
	if out, err := k.Run(ctx, "apply", "-f", filepath.Join(repoRoot, "deploy", "01-crd.yaml")); err != nil {
		return fmt.Errorf("applying the CRD: %v: %s", err, out)
	}
	return k.WaitEstablished(ctx, CRDName)
}

// WaitEstablished waits up to 60 s for the CustomResourceDefinition crd (its name,
// "monocles.monocle.monocle.change-metrics.io") to be Established. kubectl wait fails at once
// ("status.conditions accessor error") when it reads the CRD before the API server wrote its
// first status, as a loaded API server can: it is run again then, within the same 60 s. Its
// error includes kubectl's output.
func (k Kubectl) WaitEstablished(ctx context.Context, crd string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := k.Run(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+crd)
		if err == nil {
			return nil
		}
		if !strings.Contains(out, "status.conditions accessor error") || time.Now().After(deadline) {
			return fmt.Errorf("waiting for the CRD %s: %v: %s", crd, err, out)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the CRD %s: %w: %s", crd, ctx.Err(), out)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// MustWaitEstablished is WaitEstablished in a test, which it fails on an error.
func (k Kubectl) MustWaitEstablished(t testing.TB, crd string) {
	t.Helper()
	if err := k.WaitEstablished(context.Background(), crd); err != nil {
		t.Fatal(err)
	}
}
