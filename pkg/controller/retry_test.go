package controller

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
)

// statusServer is an API server that answers every request with status, and counts them.
type statusServer struct {
	*httptest.Server
	requests atomic.Int32
}

// newStatusServer starts a statusServer. It sends no Retry-After header, so the client does
// not retry 429s and 5xx itself.
func newStatusServer(t *testing.T, status metav1.Status) *statusServer {
	s := &statusServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Code))
		if err := json.NewEncoder(w).Encode(status); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// controllerAgainst returns a controller whose cache holds the new Monocle default/demo
// and nothing else, and whose clientsets are real ones writing to host (the owned kinds read
// c.kubeclientset at each request, so they write there too). Real clients are used because
// the fake ones ignore the request context, which a sync cancels to stop.
func controllerAgainst(t *testing.T, host string) *Controller {
	t.Helper()
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{newMonocle("demo")}
	c := f.newController()
	cfg := &rest.Config{Host: host, QPS: -1}
	var err error
	if c.kubeclientset, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if c.monocleclientset, err = clientset.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

// syncAgainst syncs default/demo once with controllerAgainst(host) and returns the error.
func syncAgainst(t *testing.T, host string) error {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	return controllerAgainst(t, host).syncHandler(ctx, cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "demo"})
}

func TestUnavailableServerEndsTheSyncAtItsFirstRequest(t *testing.T) {
	for _, code := range []int32{http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusGatewayTimeout, http.StatusTooManyRequests} {
		srv := newStatusServer(t, metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusFailure, Code: code, Message: "etcd is down",
		})
		err := syncAgainst(t, srv.URL)
		var unavailable *unavailableError
		if !errors.As(err, &unavailable) {
			t.Errorf("HTTP %d: sync returned %v, want an *unavailableError", code, err)
		}
		if got := srv.requests.Load(); got != 1 {
			t.Errorf("HTTP %d: the sync sent %d requests, want 1: it goes on after the server failed", code, got)
		}
	}
}

func TestUnreachableServerEndsTheSync(t *testing.T) {
	srv := newStatusServer(t, metav1.Status{Code: http.StatusOK})
	srv.Close()
	err := syncAgainst(t, srv.URL)
	var unavailable *unavailableError
	if !errors.As(err, &unavailable) {
		t.Errorf("sync returned %v, want an *unavailableError", err)
	}
}

func TestNamespaceBeingDeletedEndsTheSyncWithoutRetry(t *testing.T) {
	srv := newStatusServer(t, metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: `secrets "demo-api-keys" is forbidden: unable to create new content in namespace default because it is being terminated`,
		Details: &metav1.StatusDetails{Name: "demo-api-keys", Kind: "secrets",
			Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause, Message: "namespace default is being terminated", Field: "metadata.namespace"}}},
	})
	if err := syncAgainst(t, srv.URL); err != nil {
		t.Errorf("sync returned %v, want nil: the namespace's deletion removes the Monocle", err)
	}
	if got := srv.requests.Load(); got != 1 {
		t.Errorf("the sync sent %d requests, want 1", got)
	}
}

// syncFailing adds key and processes it n times, each sync expected to fail, and checks
// after each that the key is requeued with a delay rather than at once.
func syncFailing(ctx context.Context, t *testing.T, c *Controller, key cache.ObjectName, n int) {
	t.Helper()
	for i := range n {
		c.queue.Add(key)
		if !c.processNextWorkItem(ctx) {
			t.Fatal("queue shut down")
		}
		if got := c.queue.Len(); got != 0 {
			t.Fatalf("failed sync %d: the key is back at once (queue length %d), want it delayed", i+1, got)
		}
	}
}

func TestUnavailableKeyIsRetriedWithItsOwnBackoff(t *testing.T) {
	srv := newStatusServer(t, metav1.Status{Code: http.StatusOK})
	srv.Close()
	c := controllerAgainst(t, srv.URL)
	_, ctx := ktesting.NewTestContext(t)
	key := cache.ObjectName{Namespace: metav1.NamespaceDefault, Name: "demo"}

	// Each failure doubles the key's delay, from unavailableBaseDelay.
	syncFailing(ctx, t, c, key, 3)
	if got, want := c.unavailableBackoff.When(key), unavailableBaseDelay<<3; got != want {
		t.Errorf("after 3 failed syncs the next delay is %s, want %s", got, want)
	}
	// The queue's own backoff, for other failures, is untouched.
	if got := c.queue.NumRequeues(key); got != 0 {
		t.Errorf("the queue counts %d rate-limited requeues, want 0", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c.queue.Len() != 1 {
		t.Error("the key did not come back after its delay")
	}
	// The delay never exceeds the cap, whatever the outage's length.
	for range 20 {
		if d := c.unavailableBackoff.When(key); d > unavailableMaxDelay {
			t.Fatalf("retry delay %s exceeds %s", d, unavailableMaxDelay)
		}
	}
}

func TestStaleCacheKeyIsRetriedWithItsOwnBackoff(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	api := find[*appsv1.Deployment](objects, "demo-api")
	api.Spec.Replicas = ptr.To[int32](0)
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	c := f.newController()
	// Another writer changed the Deployment since the cache saw it.
	f.kubeclient.PrependReactor("update", "deployments", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(appsv1.Resource("deployments"), "demo-api", errors.New("the object has been modified"))
	})
	_, ctx := ktesting.NewTestContext(t)
	key := cache.ObjectName{Namespace: m.Namespace, Name: m.Name}

	syncFailing(ctx, t, c, key, 2)
	if got, want := c.staleCacheBackoff.When(key), staleCacheBaseDelay<<2; got != want {
		t.Errorf("after 2 conflicts the next delay is %s, want %s", got, want)
	}
	if got := c.queue.NumRequeues(key); got != 0 {
		t.Errorf("the queue counts %d rate-limited requeues, want 0", got)
	}
	if got := c.unavailableBackoff.When(key); got != unavailableBaseDelay {
		t.Errorf("the unavailable backoff moved to %s on conflicts, want %s", got, unavailableBaseDelay)
	}
	for range 20 {
		if d := c.staleCacheBackoff.When(key); d > staleCacheMaxDelay {
			t.Fatalf("retry delay %s exceeds %s", d, staleCacheMaxDelay)
		}
	}
}

// TestFailureBackoffIsCapped: however many times a key's sync fails, its next retry is at
// most failureMaxDelay away, and a success (Forget) starts again from failureBaseDelay.
func TestFailureBackoffIsCapped(t *testing.T) {
	rl := failureRateLimiter()
	key := cache.ObjectName{Namespace: "ns", Name: "m"}
	var last time.Duration
	for range 40 {
		last = rl.When(key)
	}
	if last != failureMaxDelay {
		t.Errorf("after 40 failures the delay is %s, want the cap %s", last, failureMaxDelay)
	}
	rl.Forget(key)
	if d := rl.When(key); d != failureBaseDelay {
		t.Errorf("after Forget the delay is %s, want %s", d, failureBaseDelay)
	}
}
