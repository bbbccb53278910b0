// Package leader fences the writes of a leader-elected process: its Guard is the leader
// election lock, and lets the process's other clients write only while the lock says this
// replica leads.
package leader

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// Guard is the leader election lock, and lets the other clients write only while this
// replica holds the lock by its own clock: for renewDeadline after the start of its last
// successful write of the Lease naming it. Another replica takes the Lease over only a full
// lease duration after it saw that write, so the two never write at the same time, even when
// this process was paused (a frozen VM, SIGSTOP) and resumes believing it leads: client-go
// notices the loss only at its next renewal, which races with the workers.
//
// Set Interface, the lock it guards (a resourcelock.LeaseLock), before the elector starts;
// give the Guard to leaderelection.LeaderElectionConfig.Lock and Wrap to rest.Config.Wrap of
// every other client.
type Guard struct {
	resourcelock.Interface
	renewDeadline time.Duration
	clock         clock.PassiveClock

	mu sync.Mutex
	// renewed is when the last successful write holding the Lease started; zero before the
	// first one and once released.
	renewed time.Time
}

// NewGuard returns a Guard that allows writes for renewDeadline (the elector's RenewDeadline)
// after each successful write of the lock naming this replica, timed by clk
// (clock.RealClock{} outside tests).
func NewGuard(renewDeadline time.Duration, clk clock.PassiveClock) *Guard {
	return &Guard{renewDeadline: renewDeadline, clock: clk}
}

// Create implements resourcelock.Interface.
func (g *Guard) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return g.write(r, func() error { return g.Interface.Create(ctx, r) })
}

// Update implements resourcelock.Interface.
func (g *Guard) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return g.write(r, func() error { return g.Interface.Update(ctx, r) })
}

func (g *Guard) write(r resourcelock.LeaderElectionRecord, fn func() error) error {
	start := g.clock.Now()
	if err := fn(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.HolderIdentity == g.Identity() {
		g.renewed = start
	} else {
		g.renewed = time.Time{}
	}
	return nil
}

// Leads reports whether this replica may write now.
func (g *Guard) Leads() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.renewed.IsZero() && g.clock.Since(g.renewed) < g.renewDeadline
}

// Wrap makes rt refuse every request but GET, HEAD and OPTIONS while this replica does not
// lead; the refusal is an error of the request, as a network failure would be.
func (g *Guard) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if !g.Leads() {
				return nil, fmt.Errorf("not sending %s %s: this replica does not hold the leader election lease", req.Method, req.URL.Path)
			}
		}
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
