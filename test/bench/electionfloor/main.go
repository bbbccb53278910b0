// Command electionfloor runs nothing but client-go's leader election on a Lease: the bench
// builds it as it builds the operator and prints its size beside the operator's (figure 0b),
// the part of the operator's binary that any operator using client-go's leader election
// carries. client-go's leaderelection and resourcelock packages use its typed clients, which
// register every API group of Kubernetes in their scheme.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: electionfloor <API server URL>")
		os.Exit(2)
	}
	lock, err := resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, "default", "electionfloor",
		resourcelock.ResourceLockConfig{Identity: "electionfloor"}, &rest.Config{Host: os.Args[1]}, 10*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	leaderelection.RunOrDie(context.Background(), leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	})
}
