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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
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
// Fence returns the Guard of a Lease and the client configuration it guards; the Guard goes
// to leaderelection.LeaderElectionConfig.Lock.
type Guard struct {
	// Interface is the lock the Guard writes through (a resourcelock.LeaseLock).
	resourcelock.Interface
	renewDeadline time.Duration
	clock         clock.PassiveClock

	mu sync.Mutex
	// renewed is when the last successful write holding the Lease started; zero before the
	// first one and once released.
	renewed time.Time
}

// Lease is the leader election Lease a replica competes for.
type Lease struct {
	// Namespace and Name name the Lease.
	Namespace, Name string
	// Identity names this replica in the Lease's holderIdentity.
	Identity string
	// RenewDeadline is the elector's RenewDeadline: how long after the start of a renewal
	// this replica may write.
	RenewDeadline time.Duration
}

// Fence returns the Guard of lease, which reads and writes the Lease through a client of its
// own built from cfg, and a copy of cfg whose clients write only while the Guard says this
// replica leads (Wrap): every client but the Lease's is to be built from that copy. The
// Lease's client then never waits behind the others' requests in the client-side rate
// limiter, so that renewals are not delayed by the work they guard. cfg is not changed. The
// error is that of building the Lease's client.
func Fence(cfg *rest.Config, lease Lease) (*Guard, *rest.Config, error) {
	client, err := coordinationv1.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, nil, fmt.Errorf("building the leader election client: %w", err)
	}
	g := NewGuard(&resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: lease.Name, Namespace: lease.Namespace},
		Client:     client,
		LockConfig: resourcelock.ResourceLockConfig{Identity: lease.Identity},
	}, lease.RenewDeadline, clock.RealClock{})
	guarded := rest.CopyConfig(cfg)
	guarded.Wrap(g.Wrap)
	return g, guarded, nil
}

// NewGuard returns a Guard of lock that allows writes for renewDeadline (the elector's
// RenewDeadline) after each successful write of lock naming this replica, timed by clk.
func NewGuard(lock resourcelock.Interface, renewDeadline time.Duration, clk clock.PassiveClock) *Guard {
	return &Guard{Interface: lock, renewDeadline: renewDeadline, clock: clk}
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
