// Package operand is the worker that talks to each Monocle's operands: it reads what
// Elasticsearch reports of itself (cluster health, disk use, read-only indices, crawler
// progress and errors, workspace indices) and asks the Monocle API for its /health, and it
// carries out the Elasticsearch work a sync plans (clearing a flood-stage block, deleting
// the index of a removed workspace, keeping the replicas of Monocle's indices, taking,
// listing and expiring snapshots, restoring one). Before any of that, for a cluster of
// elasticsearchRef or external, it claims the cluster's Monocle indices for the Monocle
// (claims.go).
//
// No read runs in a sync: a sync hands a Monocle's Inputs to Worker.Observe, which starts a
// read in the background when Elasticsearch has a ready pod and the last read is older than
// the interval (or the plan changed), and returns the last Result. A read whose result
// differs from the last one enqueues its Monocle, and every read enqueues it again after the
// interval, for the next read. A slow or unreachable Elasticsearch costs a goroutine for at
// most the timeout, never a sync.
package operand

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Options sets how the worker reads the Monocles' Elasticsearch.
type Options struct {
	// Interval is the time between two reads of one Monocle's Elasticsearch; 0 turns
	// reading off.
	Interval time.Duration
	// Timeout bounds one read (its requests together), and apart from it the backup and
	// restore work of the read.
	Timeout time.Duration
	// Transport carries the requests; nil is elastic.NewTransport(), which connects to no
	// loopback, link-local or unspecified address (elastic.CheckAddress), whatever the
	// Monocle names: its bundled node's Service, an ECK cluster's, an external URL, and the
	// API's Service. For a target with a CA of its own the worker uses a copy of it trusting
	// that CA (elastic.TrustCA) when it is an *http.Transport, and it as is otherwise.
	Transport http.RoundTripper
	// DialAddress, when set, is the host:port every connection to an operand goes to instead
	// of its Service (a port-forward, or a test's fake Elasticsearch), with Transport nil:
	// the administrator's address is not checked, the host of each request still is
	// (elastic.NewTransportVia).
	DialAddress string
	// MaxReads bounds the reads under way at once, over all Monocles; 0 means 16.
	MaxReads int
}

// Worker reads each Monocle's operands in the background and carries out the plans syncs
// hand it. It is safe for concurrent use.
type Worker interface {
	// Observe returns the last Result for m, and starts a new read when Elasticsearch has a
	// ready pod (in.ElasticReady) and the last read is older than the interval, there is
	// none, in.Plan differs from the last read's plan, or the API has a ready pod
	// (in.APIReady) that no read has asked yet. Result.Pending is true while the first read
	// since Elasticsearch became ready is under way, Result.APIPending while the first read
	// that asks the API is: the end of either enqueues m.
	// reading is false when the worker does not read at all (Off): the Result is then empty
	// and says nothing.
	Observe(ctx context.Context, m *monoclev1alpha1.Monocle, in Inputs) (last Result, reading bool)
	// LastBackup returns what the last read with backup or restore work did for m, or nil.
	LastBackup(m *monoclev1alpha1.Monocle) *BackupOutcome
	// Claim returns the last Claim of m's cluster of elasticsearchRef or external, and
	// starts a claim when one is due (see claims.go). reading is false when the worker does
	// not read at all (Off): the Claim is then empty and says nothing.
	Claim(ctx context.Context, m *monoclev1alpha1.Monocle, req ClaimRequest) (last Claim, reading bool)
	// Forget drops the results and the metrics of a Monocle that is gone.
	Forget(key cache.ObjectName)
}

// Off returns the Worker of an operator that does not read its operands: it starts no read
// and has no result.
func Off() Worker { return off{} }

// off is the Worker of Off.
type off struct{}

func (off) Observe(context.Context, *monoclev1alpha1.Monocle, Inputs) (Result, bool) {
	return Result{}, false
}
func (off) LastBackup(*monoclev1alpha1.Monocle) *BackupOutcome { return nil }
func (off) Claim(context.Context, *monoclev1alpha1.Monocle, ClaimRequest) (Claim, bool) {
	return Claim{}, false
}
func (off) Forget(cache.ObjectName) {}

// New returns the Worker of o, which enqueues Monocles with enqueue (at once, or after a
// delay); ctx ends the reads under way. With o.Interval 0 it is Off().
func New(ctx context.Context, o Options, enqueue func(key cache.ObjectName, after time.Duration)) Worker {
	if o.Interval <= 0 {
		return Off()
	}
	transport := o.Transport
	base, _ := transport.(*http.Transport)
	if transport == nil {
		t := elastic.NewTransport()
		if o.DialAddress != "" {
			t = elastic.NewTransportVia(o.DialAddress)
		}
		transport, base = t, t
	}
	slots := o.MaxReads
	if slots <= 0 {
		slots = 16
	}
	return &worker{
		ctx:       ctx,
		http:      &http.Client{Transport: transport},
		interval:  o.Interval,
		timeout:   o.Timeout,
		slots:     make(chan struct{}, slots),
		transport: transport,
		base:      base,
		enqueue:   enqueue,
		last:      map[cache.ObjectName]*state{},
		claims:    map[cache.ObjectName]*claimState{},
	}
}

// worker runs the background reads and keeps their last results by Monocle.
type worker struct {
	// ctx ends the reads under way when the operator stops.
	ctx               context.Context
	interval, timeout time.Duration
	// slots bounds the reads under way at once.
	slots chan struct{}
	// transport carries the requests to Elasticsearch of a target without a CA of its own;
	// base, when not nil, is the transport a target's CA is added to (a copy of it).
	transport http.RoundTripper
	base      *http.Transport
	// http reads the Monocle API's /health.
	http    *http.Client
	enqueue func(key cache.ObjectName, after time.Duration)

	mu   sync.Mutex
	last map[cache.ObjectName]*state
	// claims are the claims of the Monocles' clusters (claims.go).
	claims map[cache.ObjectName]*claimState
}

// state is the last read of one Monocle's operands.
type state struct {
	// uid is the Monocle's: a Monocle deleted and created again starts afresh.
	uid types.UID
	// running is true while a read is under way; readsAPI while that read asks the API.
	running, readsAPI bool
	// plan is the plan of the read under way or of the last one.
	plan   Plan
	result Result
	// conn is the client of the last read's target; nil before the first read.
	conn *conn
}

// conn is a client of one Elasticsearch target, or why none could be built.
type conn struct {
	// target holds a password: never log it.
	target resources.ElasticsearchTarget
	client elastic.Client
	err    error
	// own is the transport built for the target's CA, nil when it uses the shared one.
	own *http.Transport
}

// close lets go of the idle connections of c's own transport; a nil c is fine.
func (c *conn) close() {
	if c != nil && c.own != nil {
		c.own.CloseIdleConnections()
	}
}

// sameTarget reports whether a and b are the same cluster reached the same way.
func sameTarget(a, b resources.ElasticsearchTarget) bool {
	return a.Kind == b.Kind && a.URL == b.URL && a.Username == b.Username && a.Password == b.Password &&
		bytes.Equal(a.CA, b.CA)
}

// connect returns the client of r for target t, the one of r's last read when t is the same,
// a new one otherwise. w.mu must be held.
func (w *worker) connect(r *state, t resources.ElasticsearchTarget) (elastic.Client, error) {
	return w.connectTo(&r.conn, t)
}

// connectTo returns the client of *cp for target t when t is the same, a new one, kept in
// *cp, otherwise. w.mu must be held.
func (w *worker) connectTo(cp **conn, t resources.ElasticsearchTarget) (elastic.Client, error) {
	if *cp != nil && sameTarget((*cp).target, t) {
		return (*cp).client, (*cp).err
	}
	(*cp).close()
	c := &conn{target: t}
	*cp = c
	transport := w.transport
	if len(t.CA) > 0 && w.base != nil {
		if c.own, c.err = elastic.TrustCA(w.base, t.CA); c.err != nil {
			return nil, c.err
		}
		transport = c.own
	}
	c.client, c.err = elastic.NewClient(elastic.Config{URL: t.URL, Username: t.Username, Password: t.Password, Transport: transport})
	return c.client, c.err
}

// Observe implements Worker: see Worker.Observe.
func (w *worker) Observe(ctx context.Context, m *monoclev1alpha1.Monocle, in Inputs) (Result, bool) {
	key := cache.MetaObjectToName(m)
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.last[key]
	if r == nil || r.uid != m.UID {
		if r != nil {
			r.conn.close()
		}
		r = &state{uid: m.UID}
		w.last[key] = r
	}
	if !in.ElasticReady {
		return r.result, true
	}
	target := in.Target
	switch due := w.interval - time.Since(r.result.Done); {
	case r.running:
	case r.result.Done.IsZero() || due <= 0 || in.Plan != r.plan || (r.conn != nil && !sameTarget(r.conn.target, target)) ||
		(in.APIReady && !r.result.APIRead):
		select {
		case w.slots <- struct{}{}:
			r.running, r.readsAPI, r.plan = true, in.APIReady, in.Plan
			apiURL := ""
			if in.APIReady {
				apiURL = apiHealthURL(m)
			}
			client, err := w.connect(r, target)
			go w.read(klog.FromContext(ctx), key, m.UID, client, err, apiURL, in.Plan, in.Workspaces)
		default:
			// Every slot is taken: try again shortly.
			w.enqueue(key, time.Second)
		}
	default:
		// The queue keeps one delay per key, the shortest: the one the last read asked for
		// may have been replaced by a shorter one, so every sync asks again.
		w.enqueue(key, due)
	}
	last := r.result
	last.Pending = r.running && r.result.Done.IsZero()
	last.APIPending = r.running && r.readsAPI && !r.result.APIRead
	return last, true
}

// LastBackup implements Worker.
func (w *worker) LastBackup(m *monoclev1alpha1.Monocle) *BackupOutcome {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.last[cache.MetaObjectToName(m)]; r != nil && r.uid == m.UID {
		return r.result.Backup
	}
	return nil
}

// Forget implements Worker.
func (w *worker) Forget(key cache.ObjectName) {
	w.mu.Lock()
	if r := w.last[key]; r != nil {
		r.conn.close()
	}
	delete(w.last, key)
	if c := w.claims[key]; c != nil {
		c.conn.close()
	}
	delete(w.claims, key)
	w.mu.Unlock()
	forgetElasticsearch(key)
}

// read reads the operands of key, with client (nil when it could not be built, for the
// reason err) and, when apiURL is set, the Monocle API's /health there, carries out plan in between, records the result for key,
// enqueues key at once when the result changed, and again after the interval. It frees a
// slot when it ends.
//
// The steps, in the order of their requests: read the cluster health, disk use, disk
// watermarks and read-only indices; clear a block that outlived the full disk (unless plan.KeepBlocks);
// read the crawler progress and errors of workspaces; ask the API; delete
// plan.DeleteIndex; list the workspace indices, so that the listing reflects the deletion;
// read and keep the replicas of Monocle's indices (plan.Replicas); then, with a timeout of its own, the backup and restore work of plan, after which key is
// always enqueued. Elasticsearch's steps run only once its health was read.
func (w *worker) read(logger klog.Logger, key cache.ObjectName, uid types.UID, client elastic.Client, err error, apiURL string, plan Plan, workspaces []string) {
	defer func() { <-w.slots }()
	started := time.Now()
	ctx, cancel := context.WithTimeout(w.ctx, w.timeout)
	defer cancel()
	w.mu.Lock()
	var blocks bool
	if r := w.last[key]; r != nil && r.result.Health != nil {
		blocks = len(r.result.Health.ReadOnlyIndices) > 0
	}
	w.mu.Unlock()
	monocle := logger.WithValues("monocle", key)
	var health *monoclev1alpha1.ElasticsearchHealth
	var dataNodes int
	if err == nil {
		var disk elastic.Disk
		var wm *elastic.Watermarks
		health, disk, wm, dataNodes, err = readHealth(ctx, monocle, client, blocks)
		if err == nil && !plan.KeepBlocks {
			health.ReadOnlyIndices = clearBlocks(ctx, monocle, client, disk, wm, health.ReadOnlyIndices)
		}
	}
	var errText string
	if err != nil {
		errText = err.Error()
		logger.V(4).Info("Reading Elasticsearch failed", "monocle", key, "err", err)
	}
	var crawlers map[string]elastic.CrawlerProgress
	var crawlerErrors map[string]elastic.CrawlerErrors
	if err == nil && len(workspaces) > 0 {
		crawlers, crawlerErrors = readCrawlers(ctx, logger, client, workspaces)
	}
	apiErr := ""
	if apiURL != "" {
		apiErr = readAPI(ctx, w.http, apiURL)
	}
	var indices []elastic.Index
	deleted := ""
	var replicas map[string]int
	replicasErr := ""
	if err == nil {
		indices, deleted = deleteThenList(ctx, monocle, client, plan.DeleteIndex)
		replicas, replicasErr = keepReplicas(ctx, monocle, client, plan.Replicas, dataNodes)
	}
	var backup *BackupOutcome
	switch {
	case plan.BackupRepository() == "" && plan.Restore.Phase == "":
	case client == nil:
		backup = &BackupOutcome{Plan: plan, RepoErr: err.Error(), Restore: RestoreOutcome{Err: err.Error()}}
	default:
		backup = w.backUp(logger, key, client, plan)
	}

	w.mu.Lock()
	r := w.last[key]
	if r == nil || r.uid != uid {
		w.mu.Unlock()
		return
	}
	recordElasticsearch(key, health)
	was := &r.result
	changed := was.Done.IsZero() || was.Err != errText || !equality.Semantic.DeepEqual(was.Health, health) || backup != nil ||
		(crawlers != nil && (!maps.EqualFunc(was.Crawlers, crawlers, sameProgress) || !maps.EqualFunc(was.CrawlerErrors, crawlerErrors, sameErrors))) ||
		was.APIRead != (apiURL != "") || was.APIErr != apiErr
	r.running, was.Done, was.Err = false, time.Now(), errText
	was.AddressRefused = errors.Is(err, elastic.ErrAddressRefused)
	if err == nil {
		changed = changed || was.DataNodes != dataNodes || !maps.Equal(was.Replicas, replicas) || was.ReplicasErr != replicasErr
		was.Health, was.HealthTime, was.DataNodes = health, started, dataNodes
		was.Replicas, was.ReplicasErr = replicas, replicasErr
	}
	if crawlers != nil {
		was.Crawlers, was.CrawlerErrors = crawlers, crawlerErrors
	}
	was.APIRead, was.APIErr = apiURL != "", apiErr
	if indices != nil {
		changed = changed || !slices.EqualFunc(was.Indices, indices, func(a, b elastic.Index) bool { return a == b })
		was.Indices = indices
	}
	if deleted != "" {
		was.Deleted, changed = deleted, true
	}
	if backup != nil {
		was.Backup = backup
	}
	w.mu.Unlock()
	if changed {
		w.enqueue(key, 0)
	}
	w.enqueue(key, w.interval)
}

// backUp does the backup and restore work of plan with client, with a timeout of its own,
// and returns what it did.
func (w *worker) backUp(logger klog.Logger, key cache.ObjectName, client elastic.Client, plan Plan) *BackupOutcome {
	ctx, cancel := context.WithTimeout(w.ctx, w.timeout)
	defer cancel()
	ctx = klog.NewContext(ctx, logger.WithValues("monocle", key))
	w.mu.Lock()
	var sizes map[string]int64
	if r := w.last[key]; r != nil && r.result.Backup != nil {
		sizes = r.result.Backup.Sizes
	}
	w.mu.Unlock()
	out := runSnapshots(ctx, client, plan, sizes)
	if plan.Restore.Phase != "" {
		out.Restore = runRestore(ctx, client, plan.Restore)
	}
	return &out
}
