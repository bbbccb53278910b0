package controller

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Operand health: the operator reads what Elasticsearch reports of itself, its
// cluster health and disk use, and puts it in the status (status.elasticsearchHealth, the
// ElasticsearchHealthy and DiskPressure conditions). A read never runs in a sync: a sync
// starts one in the background when Elasticsearch has a ready pod and the last read is older
// than the interval, and reports the last result; a read whose result differs from the last
// one enqueues its Monocle, and every read enqueues it again after the interval, for the
// next read. A slow or unreachable Elasticsearch costs a goroutine for at most the timeout,
// never a worker.

// OperandOptions sets how the controller reads its Monocles' Elasticsearch; see
// Controller.ReadOperands.
type OperandOptions struct {
	// Interval is the time between two reads of one Monocle's Elasticsearch; 0 turns
	// reading off.
	Interval time.Duration
	// Timeout bounds one read (its two requests together).
	Timeout time.Duration
	// Transport carries the requests; nil is elastic.NewTransport().
	Transport http.RoundTripper
	// DialAddress, when set, is the host:port every connection to an operand goes to instead
	// of its Service (a port-forward, or a test's fake Elasticsearch).
	DialAddress string
	// MaxReads bounds the reads under way at once, over all Monocles; 0 means 16.
	MaxReads int
	// OperatorNamespace is the namespace the operator's pods run in, whose pods each
	// Monocle's NetworkPolicy then admits to Elasticsearch; "" outside the cluster.
	OperatorNamespace string
}

// ReadOperands turns on the background reads of every Monocle's Elasticsearch with o; ctx
// ends the reads under way. Call it before Run; without it, the status has no Elasticsearch
// health and no ElasticsearchHealthy or DiskPressure condition.
func (c *Controller) ReadOperands(ctx context.Context, o OperandOptions) {
	if o.Interval > 0 {
		c.health = newHealthReads(ctx, o, c.queue.AddAfter)
		c.operatorNamespace = o.OperatorNamespace
	}
}

// newHealthReads returns the reads of o, which enqueue Monocles with enqueue.
func newHealthReads(ctx context.Context, o OperandOptions, enqueue func(key cache.ObjectName, after time.Duration)) *healthReads {
	transport := o.Transport
	if transport == nil {
		t := elastic.NewTransport()
		if o.DialAddress != "" {
			t.Proxy = nil
			dialer := &net.Dialer{Timeout: 5 * time.Second}
			t.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, o.DialAddress)
			}
		}
		transport = t
	}
	slots := o.MaxReads
	if slots <= 0 {
		slots = 16
	}
	return &healthReads{
		ctx:      ctx,
		http:     &http.Client{Transport: transport},
		interval: o.Interval,
		timeout:  o.Timeout,
		slots:    make(chan struct{}, slots),
		newClient: func(url string) (elastic.Client, error) {
			return elastic.New(url, transport)
		},
		enqueue: enqueue,
		last:    map[cache.ObjectName]*healthRead{},
	}
}

// healthReads runs the background reads and keeps their last results by Monocle.
type healthReads struct {
	// ctx ends the reads under way when the operator stops.
	ctx               context.Context
	interval, timeout time.Duration
	// slots bounds the reads under way at once.
	slots     chan struct{}
	newClient func(url string) (elastic.Client, error)
	// http reads the Monocle API's /health.
	http    *http.Client
	enqueue func(key cache.ObjectName, after time.Duration)

	mu   sync.Mutex
	last map[cache.ObjectName]*healthRead
}

// healthRead is the last read of one Monocle's Elasticsearch.
type healthRead struct {
	// uid is the Monocle's: a Monocle deleted and created again starts afresh.
	uid types.UID
	// done is when the last read ended; zero before the first.
	done time.Time
	// running is true while a read is under way.
	running bool
	// health is what the last read found; err why it failed ("" when it did not).
	health *monoclev1alpha1.ElasticsearchHealth
	err    string
	// healthTime is when the read that found health started: what it found is no older.
	healthTime time.Time
	// plan is the backup work of the read under way or of the last one; backup is what the
	// last read with backup work did of it (nil before one).
	plan   backupPlan
	backup *backupOutcome
	// crawlers is the crawler progress the last read found, by crawlerKey, and
	// crawlerErrors their errors; nil before a read that had workspaces to read.
	crawlers      map[string]elastic.CrawlerProgress
	crawlerErrors map[string]elastic.CrawlerErrors
	// apiRead is set once a read has asked the Monocle API for its /health; apiErr says why
	// that failed ("" when it answered 200).
	apiRead bool
	apiErr  string
	// indices are the workspace indices the last read listed (nil before one, or when the
	// listing failed); deleted the index of a removed workspace it deleted.
	indices []elastic.Index
	deleted string
}

// readInputs is what a sync asks of the next read of a Monocle, besides Elasticsearch's
// health and disk use.
type readInputs struct {
	// elasticReady says whether Elasticsearch has a ready pod: no read runs until it has.
	elasticReady bool
	// apiReady says whether the API has a ready pod, whose /health the read then asks for
	// through the API Service.
	apiReady bool
	// plan is the backup work due (backup.go).
	plan backupPlan
	// workspaces are the workspaces with crawlers of the config in force, whose crawler
	// progress the read reads (crawlers.go).
	workspaces []string
}

// elasticHealthURL is the URL the operator reads a Monocle's Elasticsearch at: its Service,
// by a name that resolves from any namespace.
func elasticHealthURL(m *monoclev1alpha1.Monocle) string {
	return fmt.Sprintf("http://%s.%s.svc:%d", resources.ElasticName(m), m.Namespace, resources.ElasticPort)
}

// observe returns the last read of m's Elasticsearch, and starts a new one when Elasticsearch
// has a ready pod and the last read is older than the interval (or there is none). pending is
// true while the first read since Elasticsearch became ready is under way: the sync then
// leaves the status for the read's end, which enqueues m, so that a starting Monocle's status
// goes from Starting to Ready in one write that carries the health.
//
// A read that carries a backup plan other than the last one's starts at once, whatever the
// interval.
func (h *healthReads) observe(ctx context.Context, m *monoclev1alpha1.Monocle, in readInputs) (last healthRead, pending bool) {
	key := cache.MetaObjectToName(m)
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.last[key]
	if r == nil || r.uid != m.UID {
		r = &healthRead{uid: m.UID}
		h.last[key] = r
	}
	if !in.elasticReady {
		return *r, false
	}
	switch due := h.interval - time.Since(r.done); {
	case r.running:
	case r.done.IsZero() || due <= 0 || in.plan != r.plan:
		select {
		case h.slots <- struct{}{}:
			r.running, r.plan = true, in.plan
			apiURL := ""
			if in.apiReady {
				apiURL = apiHealthURL(m)
			}
			go h.read(klog.FromContext(ctx), key, m.UID, elasticHealthURL(m), apiURL, in.plan, in.workspaces)
		default:
			// Every slot is taken: try again shortly.
			h.enqueue(key, time.Second)
		}
	default:
		// The queue keeps one delay per key, the shortest: the one the last read asked for
		// may have been replaced by a shorter one, so every sync asks again.
		h.enqueue(key, due)
	}
	return *r, r.running && r.done.IsZero()
}

// lastBackup returns what the last read with backup work did for m, or nil.
func (h *healthReads) lastBackup(m *monoclev1alpha1.Monocle) *backupOutcome {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.last[cache.MetaObjectToName(m)]; r != nil && r.uid == m.UID {
		return r.backup
	}
	return nil
}

// forget drops the reads of a Monocle that is gone.
func (h *healthReads) forget(key cache.ObjectName) {
	h.mu.Lock()
	delete(h.last, key)
	h.mu.Unlock()
	forgetElasticsearch(key)
}

// read reads the cluster health and disk use of the Elasticsearch at url, records the result
// for key, enqueues key at once when the result changed, and again after the interval.
//
// A read with backup work (plan) then does it, with a timeout of its own, and records what
// it did; such a read always enqueues key at its end.
//
// apiURL, when set, is the Monocle API's /health, read too.
func (h *healthReads) read(logger klog.Logger, key cache.ObjectName, uid types.UID, url, apiURL string, plan backupPlan, workspaces []string) {
	defer func() { <-h.slots }()
	started := time.Now()
	ctx, cancel := context.WithTimeout(h.ctx, h.timeout)
	defer cancel()
	h.mu.Lock()
	var blocks bool
	if r := h.last[key]; r != nil && r.health != nil {
		blocks = len(r.health.ReadOnlyIndices) > 0
	}
	h.mu.Unlock()
	// One client serves every request of the read.
	client, err := h.newClient(url)
	var health *monoclev1alpha1.ElasticsearchHealth
	if err == nil {
		health, err = readElastic(ctx, logger.WithValues("monocle", key), client, blocks, !plan.keepBlocks)
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
		apiErr = h.readAPI(ctx, apiURL)
	}
	var indices []elastic.Index
	deleted := ""
	if err == nil {
		indices, deleted = readIndices(ctx, logger.WithValues("monocle", key), client, plan.deleteIndex)
	}
	var backup *backupOutcome
	switch {
	case plan.repo.Type == "" && plan.restore.phase == "":
	case client == nil:
		backup = &backupOutcome{plan: plan, repoErr: err.Error(), restore: restoreOutcome{err: err.Error()}}
	default:
		backup = h.runBackup(logger, key, client, plan)
	}

	h.mu.Lock()
	r := h.last[key]
	if r == nil || r.uid != uid {
		h.mu.Unlock()
		return
	}
	recordElasticsearch(key, health)
	changed := r.done.IsZero() || r.err != errText || !equality.Semantic.DeepEqual(r.health, health) || backup != nil ||
		(crawlers != nil && (!maps.EqualFunc(r.crawlers, crawlers, sameProgress) || !maps.EqualFunc(r.crawlerErrors, crawlerErrors, sameErrors))) ||
		r.apiRead != (apiURL != "") || r.apiErr != apiErr
	r.running, r.done, r.err = false, time.Now(), errText
	if err == nil {
		r.health, r.healthTime = health, started
	}
	if crawlers != nil {
		r.crawlers, r.crawlerErrors = crawlers, crawlerErrors
	}
	r.apiRead, r.apiErr = apiURL != "", apiErr
	if indices != nil {
		changed = changed || !slices.EqualFunc(r.indices, indices, func(a, b elastic.Index) bool { return a == b })
		r.indices = indices
	}
	if deleted != "" {
		r.deleted, changed = deleted, true
	}
	if backup != nil {
		r.backup = backup
	}
	h.mu.Unlock()
	if changed {
		h.enqueue(key, 0)
	}
	h.enqueue(key, h.interval)
}

// readAPI asks the Monocle API at url for its health (GET /health, which Monocle 1.11.2
// answers 200 once it serves: monocle-facts, components) and returns why it failed, or "".
func (h *healthReads) readAPI(ctx context.Context, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("GET %s: %s", url, resp.Status)
	}
	return ""
}

// apiHealthURL is the URL of the health endpoint of Monocle m's API, through its Service.
func apiHealthURL(m *monoclev1alpha1.Monocle) string {
	return fmt.Sprintf("http://%s.%s.svc:%d/health", resources.APIName(m), m.Namespace, resources.APIPort)
}

// apiCondition is the APIHealthy condition for the last read r; apiReady says whether the
// API has a ready pod. Until this process has asked the API, the condition m's status has
// stands, as for Elasticsearch's (healthConditions).
func apiCondition(m *monoclev1alpha1.Monocle, r healthRead, apiReady bool) metav1.Condition {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionAPIHealthy, Status: metav1.ConditionUnknown}
	switch {
	case !apiReady:
		cond.Reason, cond.Message = reasons.APINotReady, "The API has no ready pod to ask for its health"
	case !r.apiRead:
		if was := apimeta.FindStatusCondition(m.Status.Conditions, cond.Type); was != nil && was.Reason != reasons.APINotReady {
			return *was
		}
		cond.Reason, cond.Message = reasons.APINotReady, "The API's health was not read yet"
	case r.apiErr != "":
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.APIUnreachable
		cond.Message = truncate(fmt.Sprintf("The API does not answer its health check through Service %s (the NetworkPolicy %s must admit the operator's pods to port %d): %s",
			resources.APIName(m), resources.NetworkPolicyName(m), resources.APIPort, r.apiErr))
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, reasons.APIAnswers,
			fmt.Sprintf("The API answers GET /health through Service %s", resources.APIName(m))
	}
	return cond
}

// runBackup does the backup and restore work of plan with client, with a timeout of its own,
// and returns what it did.
func (h *healthReads) runBackup(logger klog.Logger, key cache.ObjectName, client elastic.Client, plan backupPlan) *backupOutcome {
	ctx, cancel := context.WithTimeout(h.ctx, h.timeout)
	defer cancel()
	ctx = klog.NewContext(ctx, logger.WithValues("monocle", key))
	h.mu.Lock()
	var sizes map[string]int64
	if r := h.last[key]; r != nil && r.backup != nil {
		sizes = r.backup.sizes
	}
	h.mu.Unlock()
	out := runBackup(ctx, client, plan, sizes)
	if plan.restore.phase != "" {
		out.restore = runRestore(ctx, client, plan.restore)
	}
	return &out
}

// readElastic reads the cluster health and the disk use of the Elasticsearch client talks to.
//
// When the disk is more than DiskPressurePercent full, or blocks was set by the last read, it
// also reads the indices Elasticsearch made read-only at its flood-stage watermark (issue
// 18): Monocle ignores the failed writes and drops what it crawls. Once the disk is back
// under the high watermark a block that stayed (Elasticsearch lifts it by itself only from
// 7.4) is cleared, unless clear is false (AutoPilotBlockClearing). A failure of these
// requests is logged, never a failed read.
func readElastic(ctx context.Context, logger klog.Logger, client elastic.Client, blocks, clear bool) (*monoclev1alpha1.ElasticsearchHealth, error) {
	health, err := client.Health(ctx)
	if err != nil {
		return nil, err
	}
	disk, err := client.DiskUsage(ctx)
	if err != nil {
		return nil, err
	}
	out := &monoclev1alpha1.ElasticsearchHealth{
		Status:          string(health.Status),
		DiskUsedPercent: ptr.To(int32(disk.PercentUsed())),
		DiskSize:        mebibytes(disk.TotalBytes),
		IndicesSize:     mebibytes(disk.IndicesBytes),
	}
	if blocks || disk.PercentUsed() > monoclev1alpha1.DiskPressurePercent {
		out.ReadOnlyIndices = readOnlyIndices(ctx, logger, client, disk, clear)
	}
	return out, nil
}

// readOnlyIndices returns the indices with Elasticsearch's flood-stage block, after clearing
// it when clear is set and the disk is under the high watermark.
func readOnlyIndices(ctx context.Context, logger klog.Logger, client elastic.Client, disk elastic.Disk, clear bool) []string {
	blocked, err := client.ReadOnlyIndices(ctx)
	if err != nil || len(blocked) == 0 {
		if err != nil {
			logger.V(2).Info("Reading the read-only indices failed", "err", err)
		}
		return nil
	}
	if !clear {
		return blocked
	}
	wm, err := client.Watermarks(ctx)
	if err != nil {
		logger.V(2).Info("Reading the disk watermarks failed", "err", err)
		return blocked
	}
	if wm.High.Exceeded(disk) {
		return blocked
	}
	if err := client.ClearReadOnly(ctx, blocked...); err != nil {
		logger.V(2).Info("Clearing the read-only block failed", "indices", blocked, "err", err)
		return blocked
	}
	logger.Info("Cleared the flood-stage read-only block: the disk is under the high watermark", "indices", blocked, "high", wm.High.String())
	return nil
}

// mebibytes is n bytes as a quantity of whole MiB, rounded up, so that the status changes
// with the data by MiB, not by byte.
func mebibytes(n int64) *resource.Quantity {
	const mib = 1 << 20
	return resource.NewQuantity((n+mib-1)/mib*mib, resource.BinarySI)
}

// healthConditions are the ElasticsearchHealthy and DiskPressure conditions for the last
// read r of m's Elasticsearch; elasticReady says whether Elasticsearch has a ready pod. Until
// this process has read it (an operator that just started, or one whose reads wait for a
// slot), the conditions an earlier read left in m's status stand: "not read yet" is no news,
// and writing it would flap every Monocle's status at each start.
func healthConditions(m *monoclev1alpha1.Monocle, r healthRead, elasticReady bool) []metav1.Condition {
	healthy := metav1.Condition{Type: monoclev1alpha1.ConditionElasticsearchHealthy, Status: metav1.ConditionUnknown}
	disk := metav1.Condition{Type: monoclev1alpha1.ConditionDiskPressure, Status: metav1.ConditionUnknown}
	if elasticReady && r.done.IsZero() {
		if was := earlierHealth(m); was != nil {
			return was
		}
	}
	switch {
	case !elasticReady:
		healthy.Reason, healthy.Message = reasons.ElasticsearchNotReady, "Elasticsearch has no ready pod to read its health from"
		disk.Reason, disk.Message = reasons.ElasticsearchNotReady, "Elasticsearch has no ready pod to read its disk use from"
		return []metav1.Condition{healthy, disk}
	case r.err != "" || r.health == nil:
		why := r.err
		if why == "" {
			why = "not read yet"
		}
		healthy.Reason = reasons.ElasticsearchUnreachable
		healthy.Message = truncate(fmt.Sprintf("Cannot read the health of Elasticsearch at %s (the NetworkPolicy %s must admit the operator's pods to port %d): %s",
			elasticHealthURL(m), resources.NetworkPolicyName(m), resources.ElasticPort, why))
		disk.Reason, disk.Message = reasons.ElasticsearchUnreachable, "Cannot read the disk use of Elasticsearch; see ElasticsearchHealthy"
		return []metav1.Condition{healthy, disk}
	}
	h := r.health
	switch elastic.HealthStatus(h.Status) {
	case elastic.HealthGreen:
		healthy.Status, healthy.Reason = metav1.ConditionTrue, reasons.Green
		healthy.Message = "Elasticsearch reports green: every shard is assigned"
	case elastic.HealthYellow:
		healthy.Status, healthy.Reason = metav1.ConditionTrue, reasons.Yellow
		healthy.Message = "Elasticsearch reports yellow: a replica shard is unassigned, as on any single node whose indices ask for replicas; every document can be read and written"
	default:
		healthy.Status, healthy.Reason = metav1.ConditionFalse, reasons.Red
		healthy.Message = "Elasticsearch reports red: a primary shard is unassigned, so some indices cannot be read or written; see its logs (kubectl logs " +
			resources.ElasticName(m) + "-0)"
	}
	used := ptr.Deref(h.DiskUsedPercent, 0)
	if len(h.ReadOnlyIndices) > 0 {
		disk.Status, disk.Reason = metav1.ConditionTrue, reasons.IndicesReadOnly
		disk.Message = truncate(fmt.Sprintf("Elasticsearch's data volume is %d%% full and Elasticsearch made %d indices read-only at its flood-stage watermark (%s): Monocle drops what it crawls until they are writable; raise spec.storageSize (the volume grows in place when its StorageClass allows expansion), and the operator clears the block once the disk is under the high watermark",
			used, len(h.ReadOnlyIndices), strings.Join(h.ReadOnlyIndices, ", ")))
		return []metav1.Condition{healthy, disk}
	}
	disk.Status, disk.Reason = metav1.ConditionFalse, reasons.VolumeHasRoom
	disk.Message = fmt.Sprintf("Elasticsearch's data volume is %d%% full (at most %d%%)", used, monoclev1alpha1.DiskPressurePercent)
	if used > monoclev1alpha1.DiskPressurePercent {
		disk.Status, disk.Reason = metav1.ConditionTrue, reasons.VolumeAlmostFull
		disk.Message = fmt.Sprintf("Elasticsearch's data volume is %d%% full (over %d%%): at its flood-stage watermark (95%% by default) Elasticsearch makes the indices read-only and Monocle drops crawled documents; raise spec.storageSize (the volume grows in place when its StorageClass allows expansion)",
			used, monoclev1alpha1.DiskPressurePercent)
	}
	return []metav1.Condition{healthy, disk}
}

// earlierHealth returns the ElasticsearchHealthy and DiskPressure conditions of m's status
// when a read made them (not while Elasticsearch had no ready pod), else nil.
func earlierHealth(m *monoclev1alpha1.Monocle) []metav1.Condition {
	var out []metav1.Condition
	for _, typ := range []string{monoclev1alpha1.ConditionElasticsearchHealthy, monoclev1alpha1.ConditionDiskPressure} {
		c := apimeta.FindStatusCondition(m.Status.Conditions, typ)
		if c == nil || c.Reason == reasons.ElasticsearchNotReady {
			return nil
		}
		out = append(out, *c)
	}
	return out
}
