package controller

import (
	"errors"
	"net"
	"net/http"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
)

// staleCacheError wraps errors that only say the cache was behind the API server (a 409
// Conflict, an AlreadyExists). Such a key is retried with a backoff of its own (see
// Controller.staleCacheBackoff), not with the queue's, which grows to a minute: after an API
// server restart the informers can lag for two minutes, and every conflict met meanwhile
// would push the queue's next retry further away.
type staleCacheError struct{ err error }

func (e *staleCacheError) Error() string { return e.err.Error() }
func (e *staleCacheError) Unwrap() error { return e.err }

// The retry delays of a key whose sync met a stale cache: exponential per key, doubling from
// staleCacheBaseDelay up to staleCacheMaxDelay. A lagging cache usually catches up within
// the first delay; while an informer waits to relist after an API server restart, each
// Monocle whose cached copy is stale then costs at most a conflicting write per
// staleCacheMaxDelay, and the relist's event syncs it at once.
const (
	staleCacheBaseDelay = time.Second
	staleCacheMaxDelay  = 10 * time.Second
)

// unavailableError wraps the error that ended a sync because the API server could not serve
// it. Such a key is retried with its own short backoff (see Controller.unavailableBackoff),
// and no status or event is written for it: they would fail too.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return "API server unavailable: " + e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// The retry delays of a key whose sync found the API server unavailable: exponential per
// key, doubling from unavailableBaseDelay up to unavailableMaxDelay. A sync that finds the
// server unavailable stops at its first failed request, so during an outage each Monocle
// costs the API server at most one request per unavailableMaxDelay.
const (
	unavailableBaseDelay = 100 * time.Millisecond
	unavailableMaxDelay  = 10 * time.Second
)

// serverUnavailable reports whether err says the API server could not serve a request: it
// was unreachable (a transport error, such as a refused connection or an EOF while it
// restarts), overloaded (429 Too Many Requests) or failing (a 5xx, as when etcd is down).
func serverUnavailable(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == http.StatusTooManyRequests || code >= http.StatusInternalServerError
	}
	var netErr net.Error
	return errors.As(err, &netErr) || utilnet.IsProbableEOF(err)
}

// namespaceTerminating reports whether err is the API server refusing to create an object in
// a namespace that is being deleted.
func namespaceTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

// problems sorts the errors of one sync.
type problems struct {
	// conflicts names the objects ("Deployment x-api") whose name is taken by an object the
	// Monocle does not control.
	conflicts []string
	// failures are errors the user or an admin must look at (API errors other than races).
	failures []error
	// races counts write races with the API server (a stale resourceVersion, an object
	// created since the cache last saw it), which a retry resolves.
	races int
}

func classify(errs []error) problems {
	var p problems
	for _, err := range errs {
		var conflict *owned.ConflictError
		switch {
		case errors.As(err, &conflict):
			p.conflicts = append(p.conflicts, conflict.Kind+" "+conflict.Name)
		case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
			p.races++
		default:
			p.failures = append(p.failures, err)
		}
	}
	sort.Strings(p.conflicts)
	return p
}

// transientOnly reports whether the sync met only write races.
func (p problems) transientOnly() bool {
	return p.races > 0 && len(p.conflicts) == 0 && len(p.failures) == 0
}
