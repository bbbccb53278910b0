package leader

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	testingclock "k8s.io/utils/clock/testing"
)

const (
	self          = "replica-a"
	renewDeadline = 10 * time.Second
)

// fakeLock is a resourcelock.Interface whose writes take took on clock and fail with err.
type fakeLock struct {
	clock *testingclock.FakeClock
	took  time.Duration
	err   error
}

func (l *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	return nil, nil, errors.New("not used")
}

func (l *fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error {
	l.clock.Step(l.took)
	return l.err
}

func (l *fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error {
	l.clock.Step(l.took)
	return l.err
}

func (l *fakeLock) RecordEvent(string) {}
func (l *fakeLock) Identity() string   { return self }
func (l *fakeLock) Describe() string   { return "fake/lease" }

// step is one thing that happens to the guard: a write of the lock, time passing, or a
// check of what the wrapped client sends.
type step struct {
	create, update bool          // write the lock
	holder         string        // the written record's holder
	took           time.Duration // how long the write takes
	fail           bool          // the write fails
	wait           time.Duration // time passing after the write, if any
	// mayWrite is whether a POST must reach the server after this step; GETs always do.
	mayWrite bool
}

func TestGuard(t *testing.T) {
	tests := map[string][]step{
		"no write of the lock yet": {
			{mayWrite: false},
		},
		"acquired by a create": {
			{create: true, holder: self, mayWrite: true},
		},
		"a renewing leader writes past one renew deadline": {
			{update: true, holder: self, wait: 6 * time.Second, mayWrite: true},
			{update: true, holder: self, wait: 6 * time.Second, mayWrite: true},
			{update: true, holder: self, wait: 9 * time.Second, mayWrite: true},
		},
		"a leader paused past its renew deadline does not write": {
			{update: true, holder: self, wait: 9 * time.Second, mayWrite: true},
			{wait: time.Second, mayWrite: false},
			{wait: time.Hour, mayWrite: false},
		},
		"a failed renewal does not extend the deadline": {
			{update: true, holder: self, wait: 6 * time.Second, mayWrite: true},
			{update: true, holder: self, fail: true, wait: 4 * time.Second, mayWrite: false},
		},
		"the deadline counts from the start of a slow renewal": {
			{update: true, holder: self, took: 4 * time.Second, wait: 5 * time.Second, mayWrite: true},
			{wait: time.Second, mayWrite: false},
		},
		"a write naming another holder (a release) stops writes at once": {
			{update: true, holder: self, mayWrite: true},
			{update: true, holder: "", mayWrite: false},
			{update: true, holder: "replica-b", mayWrite: false},
		},
		"a leader that paused, then renewed, writes again": {
			{update: true, holder: self, wait: 11 * time.Second, mayWrite: false},
			{update: true, holder: self, mayWrite: true},
		},
	}
	for name, steps := range tests {
		t.Run(name, func(t *testing.T) {
			clock := testingclock.NewFakeClock(time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC))
			lock := &fakeLock{clock: clock}
			g := NewGuard(lock, renewDeadline, clock)
			server := &countingTransport{}
			rt := g.Wrap(server)
			for i, s := range steps {
				lock.took, lock.err = s.took, nil
				if s.fail {
					lock.err = errors.New("etcdserver: request timed out")
				}
				record := resourcelock.LeaderElectionRecord{HolderIdentity: s.holder}
				var err error
				switch {
				case s.create:
					err = g.Create(context.Background(), record)
				case s.update:
					err = g.Update(context.Background(), record)
				}
				if (err != nil) != s.fail {
					t.Fatalf("step %d: writing the lock returned %v, want an error: %v", i, err, s.fail)
				}
				clock.Step(s.wait)

				if got := g.Leads(); got != s.mayWrite {
					t.Errorf("step %d: Leads() = %v, want %v", i, got, s.mayWrite)
				}
				for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
					before := server.calls
					_, err := rt.RoundTrip(request(method))
					sent := server.calls > before
					if sent != s.mayWrite || (err == nil) != s.mayWrite {
						t.Errorf("step %d: %s sent %v with error %v; want it sent: %v", i, method, sent, err, s.mayWrite)
					}
					if err != nil && !strings.Contains(err.Error(), "does not hold the leader election lease") {
						t.Errorf("step %d: %s refused with %q, which does not say why", i, method, err)
					}
				}
				for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodOptions} {
					before := server.calls
					if _, err := rt.RoundTrip(request(method)); err != nil || server.calls == before {
						t.Errorf("step %d: %s was not sent (error %v); reads never wait for the lease", i, method, err)
					}
				}
			}
		})
	}
}

func request(method string) *http.Request {
	req, err := http.NewRequest(method, "https://apiserver.test/api/v1/namespaces/ns/secrets", nil)
	if err != nil {
		panic(err)
	}
	return req
}

// countingTransport stands for the API server: it answers every request with 200 OK.
type countingTransport struct{ calls int }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.calls++
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// blockingTransport stands for a request the process froze before sending: it waits until
// release is closed, then sends the request unless its context ended meanwhile.
type blockingTransport struct {
	release chan struct{}
	sent    bool
}

func (b *blockingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	<-b.release
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	b.sent = true
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// TestWriteHeldPastTheLeaseIsCancelled: a write checked while this replica led, then held
// past the end of its right to write (the process frozen before sending it), is not sent;
// one that goes out in time is, and its response body stays readable.
func TestWriteHeldPastTheLeaseIsCancelled(t *testing.T) {
	clock := testingclock.NewFakeClock(time.Now())
	g := NewGuard(&fakeLock{clock: clock}, renewDeadline, clock)
	if err := g.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: self}); err != nil {
		t.Fatal(err)
	}
	// 20ms of real time are left to write.
	clock.Step(renewDeadline - 20*time.Millisecond)

	held := &blockingTransport{release: make(chan struct{})}
	go func() { time.Sleep(200 * time.Millisecond); close(held.release) }()
	if _, err := g.Wrap(held).RoundTrip(request(http.MethodPatch)); !errors.Is(err, context.DeadlineExceeded) || held.sent {
		t.Errorf("a write held past the lease: error %v, sent %v; want it cancelled, not sent", err, held.sent)
	}

	clock.Step(-renewDeadline / 2)
	prompt := &blockingTransport{release: make(chan struct{})}
	close(prompt.release)
	resp, err := g.Wrap(prompt).RoundTrip(request(http.MethodPatch))
	if err != nil || !prompt.sent {
		t.Fatalf("a prompt write: error %v, sent %v", err, prompt.sent)
	}
	if body, err := io.ReadAll(resp.Body); err != nil || string(body) != "{}" {
		t.Errorf("response body %q, %v", body, err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Error(err)
	}
}

// TestFence: the Guard of Fence holds the Lease named, as the identity given, and the
// configuration it returns refuses writes until the Guard has written the Lease naming this
// replica; the configuration given is left as it was.
func TestFence(t *testing.T) {
	server := &countingTransport{}
	// countingTransport answers JSON.
	cfg := &rest.Config{Host: "https://apiserver.test", Transport: server, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
	g, guarded, err := Fence(cfg, Lease{Namespace: "ops", Name: "monocle-operator", Identity: self, RenewDeadline: renewDeadline})
	if err != nil {
		t.Fatal(err)
	}
	if g.Describe() != "ops/monocle-operator" || g.Identity() != self {
		t.Errorf("the Guard holds %s as %s, want ops/monocle-operator as %s", g.Describe(), g.Identity(), self)
	}
	if cfg.WrapTransport != nil {
		t.Error("Fence changed the configuration it was given")
	}
	rt, err := rest.TransportFor(guarded)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.RoundTrip(request(http.MethodPost)); err == nil || server.calls != 0 {
		t.Errorf("a write through the guarded configuration before leading: error %v, %d sent", err, server.calls)
	}
	if _, err := rt.RoundTrip(request(http.MethodGet)); err != nil || server.calls != 1 {
		t.Errorf("a read through the guarded configuration: error %v, %d sent", err, server.calls)
	}
	// The Lease is written through a client the Guard does not guard; once it names this
	// replica, the guarded configuration writes.
	if err := g.Create(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: self}); err != nil || server.calls != 2 {
		t.Fatalf("creating the Lease: error %v, %d sent in all", err, server.calls)
	}
	if _, err := rt.RoundTrip(request(http.MethodPost)); err != nil || server.calls != 3 {
		t.Errorf("a write through the guarded configuration while leading: error %v, %d sent in all", err, server.calls)
	}
}
