// Package leader fences the writes of a leader-elected process: its Guard is the leader
// election lock, and lets the process's other clients write only while the lock says this
// replica leads.
package leader

import (
	"context"
	"fmt"
	"io"
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
// notices the loss only at its next renewal, which races with the workers. A write under way
// when the process froze is cancelled when it resumes (see Wrap), unless its bytes had
// already left.
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
func (g *Guard) Leads() bool { return g.left() > 0 }

// left is how much longer this replica may write; 0 or less when it may not.
func (g *Guard) left() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.renewed.IsZero() {
		return 0
	}
	return g.renewDeadline - g.clock.Since(g.renewed)
}

// Wrap makes rt refuse every request but GET, HEAD and OPTIONS while this replica does not
// lead; the refusal is an error of the request, as a network failure would be. A write it
// lets through gets a context that ends when this replica's right to write does: a process
// frozen between the check and the sending (a paused VM, SIGSTOP) finds the request
// cancelled when it resumes, instead of sending it after its successor took over. (A request
// already handed to the kernel when the process froze still reaches the server.)
func (g *Guard) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return rt.RoundTrip(req)
		}
		left := g.left()
		if left <= 0 {
			return nil, fmt.Errorf("not sending %s %s: this replica does not hold the leader election lease", req.Method, req.URL.Path)
		}
		ctx, cancel := context.WithTimeout(req.Context(), left)
		resp, err := rt.RoundTrip(req.WithContext(ctx))
		if err != nil {
			cancel()
			return nil, err
		}
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	})
}

// cancelOnClose ends a request's context once its response body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
