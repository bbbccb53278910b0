// Command kubectl-monocle is the kubectl plugin "kubectl monocle" (installed on $PATH as
// kubectl-monocle, kubectl runs it for `kubectl monocle ...`): day-2 verbs on Monocles. The
// verbs live in pkg/kubectlmonocle; see docs/kubectl-plugin.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/change-metrics/monocle-operator/pkg/kubectlmonocle"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := kubectlmonocle.NewCommand(streams, kubectlmonocle.KubeconfigConnect).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		stop()
		os.Exit(1)
	}
}
