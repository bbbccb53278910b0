package controller

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

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
