package operand

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// Claims. A Monocle of elasticsearchRef or external owns its cluster's Monocle indices once
// the cluster records it in elastic.OwnerIndex, written with the Monocle's own credentials:
// the record, not the URL that names the cluster, decides which Monocle uses it, so that two
// spellings of one cluster's URL cannot give it two owners. Creating the index is atomic:
// of two Monocles claiming a new cluster at once, one creates it and the other reads it. A
// recorded owner that is gone (ClaimRequest.OwnerGone) is replaced; that update is not a
// compare-and-set, so the claim reads the record again after writing it, and every claim
// after the interval reads it again.

// claimState is the claim of one Monocle's cluster.
type claimState struct {
	uid     types.UID
	running bool
	// adopt is the Adopt of the claim under way or of the last one.
	adopt  bool
	result Claim
	// conn is the client of the last claim's target; nil before the first.
	conn *conn
}

// Claim returns the last Claim of m's cluster, and starts a claim in the background when there
// is none, the last is older than the interval, or req's target (its kind or URL) or Adopt
// differs from the last claim's. The end of a claim whose result differs from the last
// enqueues m at once, and every claim enqueues it again after the interval. The Claim of an
// Off worker is empty, with reading false: it claims nothing.
func (w *worker) Claim(ctx context.Context, m *monoclev1alpha1.Monocle, req ClaimRequest) (Claim, bool) {
	key := cache.MetaObjectToName(m)
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.claims[key]
	if c == nil || c.uid != m.UID {
		if c != nil {
			c.conn.close()
		}
		c = &claimState{uid: m.UID}
		w.claims[key] = c
	}
	moved := c.conn != nil && (c.conn.target.Kind != req.Target.Kind || c.conn.target.URL != req.Target.URL)
	if moved && !c.running {
		// Another cluster: what the last claim found was of the one before.
		c.result = Claim{}
	}
	switch due := w.interval - time.Since(c.result.Done); {
	case c.running:
	case c.result.Done.IsZero() || due <= 0 || moved || req.Adopt != c.adopt ||
		(c.conn != nil && !sameTarget(c.conn.target, req.Target)):
		select {
		case w.slots <- struct{}{}:
			c.running, c.adopt = true, req.Adopt
			client, err := w.connectTo(&c.conn, req.Target)
			me := elastic.Owner{UID: string(m.UID), Namespace: m.Namespace, Name: m.Name}
			go w.claim(klog.FromContext(ctx), key, m.UID, client, err, me, req)
		default:
			w.enqueue(key, time.Second)
		}
	default:
		w.enqueue(key, due)
	}
	last := c.result
	last.Pending = c.running && c.result.Done.IsZero()
	return last, true
}

// claim runs one claim of key's cluster with client (nil when it could not be built, for the
// reason err), records its result for key and enqueues key. It frees a slot when it ends.
func (w *worker) claim(logger klog.Logger, key cache.ObjectName, uid types.UID, client elastic.Client, err error,
	me elastic.Owner, req ClaimRequest) {
	defer func() { <-w.slots }()
	ctx, cancel := context.WithTimeout(w.ctx, w.timeout)
	defer cancel()
	var found Claim
	if err == nil {
		found, err = claimCluster(ctx, client, me, req)
	}
	w.mu.Lock()
	c := w.claims[key]
	if c == nil || c.uid != uid {
		w.mu.Unlock()
		return
	}
	was := c.result
	c.running = false
	if err != nil {
		logger.V(2).Info("Claiming the Elasticsearch cluster failed", "monocle", key, "err", err)
		c.result.Err = err.Error()
		c.result.AddressRefused = errors.Is(err, elastic.ErrAddressRefused)
	} else {
		if found.Owned && !was.Owned {
			logger.Info("The Monocle owns its Elasticsearch cluster's Monocle indices", "monocle", key, "record", elastic.OwnerIndex)
		}
		c.result = found
	}
	c.result.Done = time.Now()
	changed := was.Done.IsZero() || was.Owned != c.result.Owned || was.Owner != c.result.Owner ||
		was.Unrecorded != c.result.Unrecorded || was.Err != c.result.Err
	w.mu.Unlock()
	if changed {
		w.enqueue(key, 0)
	}
	w.enqueue(key, w.interval)
}

// claimCluster claims the cluster of client for me: it reads the record; with none, it
// creates it, unless the cluster holds Monocle indices and req has no Adopt; with another
// owner that req.OwnerGone says is gone, it records me instead and reads the record again.
// The error is that of a request, or of a record that stays another's after being replaced
// (a concurrent claim), which the next claim resolves.
func claimCluster(ctx context.Context, client elastic.Client, me elastic.Owner, req ClaimRequest) (Claim, error) {
	owner, err := client.Owner(ctx)
	switch {
	case elastic.IsNotFound(err):
		if !req.Adopt {
			indices, err := client.Indices(ctx, monoclePattern)
			if err != nil {
				return Claim{}, err
			}
			for _, ix := range indices {
				if elastic.IsMonocleIndex(ix.Name) {
					return Claim{Unrecorded: true}, nil
				}
			}
		}
		err = client.CreateOwner(ctx, me)
		if err == nil {
			return Claim{Owned: true}, nil
		}
		if !elastic.IsAlreadyExists(err) {
			return Claim{}, err
		}
		// Another claim created it first: its owner is the record's.
		if owner, err = client.Owner(ctx); err != nil {
			return Claim{}, err
		}
	case err != nil:
		return Claim{}, err
	}
	if owner.UID == me.UID {
		return Claim{Owned: true}, nil
	}
	if req.OwnerGone == nil || !req.OwnerGone(owner) {
		return Claim{Owner: owner}, nil
	}
	if err := client.SetOwner(ctx, me); err != nil {
		return Claim{}, fmt.Errorf("replacing the owner that is gone: %w", err)
	}
	after, err := client.Owner(ctx)
	switch {
	case err != nil:
		return Claim{}, err
	case after.UID == me.UID:
		return Claim{Owned: true}, nil
	case after.UID == owner.UID:
		return Claim{}, errors.New("the owner record still names the owner that is gone after it was replaced")
	}
	// Another claim replaced it meanwhile.
	return Claim{Owner: after}, nil
}
