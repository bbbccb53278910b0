// Command localcluster starts and stops a local Kubernetes control plane
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a kwok
// fake node) in the background, for trying the operator by hand:
//
//	go run ./hack/localcluster up --dir /tmp/lc     # builds binaries if needed
//	export KUBECONFIG=/tmp/lc/kubeconfig
//	go run ./hack/localcluster status --dir /tmp/lc
//	go run ./hack/localcluster down --dir /tmp/lc [--clean]
//
// Pods are scheduled and reported Running/Ready by kwok, but no container
// ever runs. See test/localcluster for details.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/change-metrics/monocle-operator/test/localcluster"
)

func usage() {
	fmt.Fprintf(os.Stderr, `usage: localcluster <command> [flags]

commands:
  up      build the control plane if needed and start it in the background
  down    stop a cluster started by "up" (by its pid files)
  status  show which components of a cluster are running

run "localcluster <command> -h" for the flags of a command
`)
}

func main() {
	// Behind a pipe whose reader is gone (`make local | tee log` after Ctrl-C), a write to
	// stdout or stderr must fail rather than kill the process (SIGPIPE) in the middle of
	// starting or stopping the components.
	signal.Ignore(syscall.SIGPIPE)
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "up":
		err = up(os.Args[2:])
	case "down":
		err = down(os.Args[2:])
	case "status":
		err = status(os.Args[2:])
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "localcluster: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func defaultDir() string {
	return filepath.Join(os.TempDir(), "monocle-localcluster")
}

func up(args []string) error {
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	dir := fs.String("dir", defaultDir(), "work directory (kubeconfig, logs, pid files, etcd data)")
	noAudit := fs.Bool("no-audit", false, "disable the API server audit log (<dir>/audit.log)")
	timeout := fs.Duration("timeout", 60*time.Second, "time limit of each start-up wait")
	repo := fs.String("repo", "", "repository root holding hack/build-control-plane.sh (default: found from the current directory)")
	_ = fs.Parse(args)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	binDir, stagesDir, err := localcluster.EnsureBinaries(ctx, *repo)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{
		BinDir:       binDir,
		StagesDir:    stagesDir,
		WorkDir:      *dir,
		DisableAudit: *noAudit,
		Detach:       true,
		Timeout:      *timeout,
		Log:          os.Stderr,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "cluster up in %s at %s (logs in %s)\n", time.Since(start).Round(time.Millisecond), c.APIServerURL(), filepath.Join(c.WorkDir(), "logs"))
	if p := c.AuditLogPath(); p != "" {
		fmt.Fprintf(os.Stderr, "audit log: %s\n", p)
	}
	fmt.Fprintf(os.Stderr, "stop it with: go run ./hack/localcluster down --dir %s\n", c.WorkDir())
	fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig())
	return nil
}

func down(args []string) error {
	fs := flag.NewFlagSet("down", flag.ExitOnError)
	dir := fs.String("dir", defaultDir(), "work directory given to up")
	clean := fs.Bool("clean", false, "also remove the work directory")
	_ = fs.Parse(args)

	if err := localcluster.StopFromDir(*dir); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "cluster in %s stopped\n", *dir)
	if *clean {
		if err := os.RemoveAll(*dir); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "removed %s\n", *dir)
	}
	return nil
}

func status(args []string) error {
	fs := flag.NewFlagSet("status", flag.ExitOnError)
	dir := fs.String("dir", defaultDir(), "work directory given to up")
	_ = fs.Parse(args)

	running := 0
	for _, name := range localcluster.Components {
		state := "not started"
		pid, ok, err := localcluster.PIDFromDir(*dir, name)
		switch {
		case ok:
			state = fmt.Sprintf("pid %d running", pid)
			running++
		case err == nil:
			state = fmt.Sprintf("pid %d stopped", pid)
		case !errors.Is(err, os.ErrNotExist):
			state = err.Error()
		}
		fmt.Printf("%-24s %s\n", name, state)
	}
	if running > 0 {
		fmt.Printf("export KUBECONFIG=%s\n", filepath.Join(*dir, "kubeconfig"))
	}
	return nil
}
