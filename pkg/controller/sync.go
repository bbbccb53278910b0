package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// observed is what one sync saw or made of the Monocle's objects, for the status.
type observed struct {
	elastic *appsv1.StatefulSet
	api     *appsv1.Deployment
	crawler *appsv1.Deployment
	// configHash is the hash of the config.yaml in the ConfigMap.
	configHash string
	// configSource is where config.yaml came from.
	configSource monoclev1alpha1.ConfigSource
	// updateIdents is the last update-idents Job.
	updateIdents *monoclev1alpha1.MaintenanceJobStatus
	// maintenance are the statuses of spec.maintenance's requests and of automatic ones.
	maintenance []monoclev1alpha1.MaintenanceJobStatus
	// crawlers are the crawlers of the config in force.
	crawlers []monoclev1alpha1.CrawlerStatus
	// assignedURL is https://<host> of a Route whose host the OpenShift router assigned.
	assignedURL string
	// conditions are the per-concern conditions (ConfigValid, SecretsReady, StorageReady,
	// IdentsUpdated, Exposed, Paused, Adopted, ElasticsearchHealthy, DiskPressure).
	conditions []metav1.Condition
	// elasticsearchHealth is what the last read of Elasticsearch found (nil: none since the
	// operator started, and the status keeps what it had).
	elasticsearchHealth *monoclev1alpha1.ElasticsearchHealth
	// holdStatus leaves the status write to a later sync: a first read of Elasticsearch is
	// under way, and its end enqueues the Monocle (see healthReads.observe).
	holdStatus bool
	// backup and restore are status.backup and status.restore with their conditions
	// (backup.go, restore.go); a nil condition leaves the status's as it is.
	backup  backupResult
	restore restoreResult
	// upgrade is status.upgrade (upgrade.go).
	upgrade *monoclev1alpha1.UpgradeStatus
	// noOIDC is set when the config in force has no OIDC auth_provider: the status then has
	// no OIDCReady condition.
	noOIDC bool
	// crawlerRestarts is status.crawlerRestarts (stuck.go); crawlerRestarted is set when
	// this sync asks for a restart.
	crawlerRestarts  *monoclev1alpha1.CrawlerRestarts
	crawlerRestarted bool
	// unusedIndices and indexDeletion are status.unusedIndices and status.indexDeletion
	// (indices.go).
	unusedIndices []monoclev1alpha1.UnusedIndex
	indexDeletion *monoclev1alpha1.IndexDeletion
	// apiWaits is set when the API Deployment was neither created nor rolled because
	// Elasticsearch has no ready pod (elasticfirst.go).
	apiWaits bool
	// storageGrowth and apiRestart are status.storageGrowth and status.apiRestart, and
	// growthEvent the event of this sync's growth decision (diskfull.go).
	storageGrowth *monoclev1alpha1.StorageGrowthStatus
	apiRestart    *monoclev1alpha1.APIRestart
	growthEvent   *growthEvent
}

// syncHandler converges the objects of the Monocle named by key and writes its status. A
// Monocle that is gone or being deleted needs nothing: owner references let the garbage
// collector remove what it owned, and the Elasticsearch PVC, which has no owner, stays. The
// steps are independent where they can be, so one failing object does not hold back the
// others; their errors are returned together and the key is retried. Two errors end the
// sync at once instead, since every later request would meet them too: the API server being
// unavailable (the sync returns an *unavailableError) and the namespace being deleted (the
// sync returns nil: the namespace's deletion removes the Monocle).
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) error {
	logger := klog.FromContext(ctx)
	cached, err := c.monoclesLister.Monocles(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Monocle is gone")
		monocleReady.DeleteLabelValues(key.Namespace, key.Name)
		forgetBackup(key)
		forgetCrawlers(key)
		if c.health != nil {
			c.health.forget(key)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Monocle from the cache: %w", err)
	}
	if cached.DeletionTimestamp != nil {
		return nil
	}
	m := cached.DeepCopy()
	if m.Annotations[monoclev1alpha1.PausedAnnotation] == "true" {
		return c.syncPaused(ctx, m)
	}

	// stop cancels the context of the remaining steps: their requests then fail in the
	// client, before they are sent.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var errsMu sync.Mutex
	var errs []error
	keep := func(err error) {
		if err == nil {
			return
		}
		errsMu.Lock()
		errs = append(errs, err)
		errsMu.Unlock()
		if serverUnavailable(err) || namespaceTerminating(err) {
			stop(err)
		}
	}
	var obs observed
	ctx, created := owned.WithCreatedLog(ctx)
	defer created.Record(c.recorder, m)

	// An earlier operator's objects are adopted before ensureAPISecret labels the Secret that
	// tells them apart (see adopt.go).
	// The sync goes no further when that fails, so the Secret stays unlabelled and the
	// next sync adopts again.
	var adopted adoption
	adopting := c.earlierSecretPresent(m)
	if adopting {
		var err error
		if adopted, err = c.adoptEarlierObjects(ctx, m); err != nil {
			if serverUnavailable(err) {
				return &unavailableError{err}
			}
			c.recorder.Event(m, corev1.EventTypeWarning, reasons.SyncFailed, err.Error())
			return err
		}
	}

	// The keys' backup Secret comes first, alone: it is a new Monocle's first request, so
	// when the API server cannot serve, the sync stops having sent one request (see stop).
	// The objects that need nothing of each other follow at once, the Secret "<name>-api"
	// among them: a new Monocle's creates then take about one request's time rather than the
	// sum of them. The workloads that need the Secret and the config come last.
	keys, err := c.ensureKeys(ctx, m, adopting)
	keep(err)
	var (
		secret                   *corev1.Secret
		cfg                      configState
		versionCond, storageCond metav1.Condition
		adoptedCond              *metav1.Condition
		exposed                  exposure
		monitored                metav1.Condition
	)
	volume := c.elasticVolume(m, adopted)
	// The StatefulSet as the previous sync left it, from the cache.
	cachedElastic, _ := c.statefulSets.Get(m.Namespace, resources.ElasticName(m))
	c.steps(
		func() {
			if keys.keys != nil {
				var err error
				secret, err = c.ensureAPISecret(ctx, m, keys, adopting)
				keep(err)
			}
		},
		func() {
			var err error
			cfg, err = c.ensureConfig(ctx, m)
			keep(err)
		},
		func() {
			// A Service is switched from the earlier operator's selector once its component
			// serves from pods with the instance's labels (serviceClient); the workloads are
			// read from the cache, as the previous sync left them.
			_, err := c.serviceClient(statefulSetServes(m, cachedElastic)).Ensure(ctx, c.recorder, m, resources.NewElasticService(m))
			keep(err)
		},
		func() {
			var liveElastic *appsv1.StatefulSet
			if cachedElastic != nil && owned.IsControlledBy(cachedElastic, m) {
				liveElastic = cachedElastic
			}
			versionCond = elasticSpecCondition(m, liveElastic)
			if versionCond.Status == metav1.ConditionTrue {
				var err error
				obs.elastic, err = c.statefulSets.Ensure(ctx, c.recorder, m, resources.NewElasticStatefulSet(m, volume))
				keep(err)
			} else {
				obs.elastic = liveElastic
			}
			adoptedCond = adoptedCondition(m, volume)
			var err error
			storageCond, err = c.ensureStorage(ctx, m, volume)
			keep(err)
		},
		func() {
			cachedAPI, _ := c.observeDeployments(m)
			_, err := c.serviceClient(deploymentServes(m, cachedAPI, resources.ComponentAPI)).Ensure(ctx, c.recorder, m, resources.NewAPIService(m))
			keep(err)
		},
		func() { keep(c.ensureAPIDisruptionBudget(ctx, m)) },
		func() {
			_, err := c.netpols.Ensure(ctx, c.recorder, m, resources.NewNetworkPolicy(m, c.operatorNamespace))
			keep(err)
		},
		func() {
			var errs []error
			exposed, errs = c.ensureExposure(ctx, m)
			for _, err := range errs {
				keep(err)
			}
		},
		func() {
			var err error
			monitored, err = c.ensureMonitoring(ctx, m)
			keep(err)
		},
		func() { keep(c.ensureBackupClaim(ctx, m)) },
	)
	obs.conditions = append(obs.conditions, cfg.condition)
	obs.configSource = cfg.source
	configReady := cfg.config != ""
	if configReady {
		obs.configHash = resources.ConfigHash(cfg.config)
	}

	secrets, err := c.checkSecrets(ctx, m, cfg.parsed, secret)
	keep(err)
	obs.conditions = append(obs.conditions, secrets.condition, versionCond)
	if oidc := oidcCondition(m, cfg.parsed); oidc != nil {
		obs.conditions = append(obs.conditions, *oidc)
	} else {
		obs.noOIDC = cfg.parsed != nil
	}
	if adoptedCond != nil {
		obs.conditions = append(obs.conditions, *adoptedCond)
	}
	obs.conditions = append(obs.conditions, storageCond)

	// The API and the crawler need the generated keys, a config and the variables each reads
	// from the Secrets: until they are there, a component is neither created nor rolled and
	// keeps running what it runs.
	obs.api, obs.crawler = c.observeDeployments(m)
	maintenance := c.planMaintenance(m, cfg.parsed)
	// A restore keeps the API and the crawler at zero replicas and runs no Job until it has
	// succeeded (restore.go): the sync that records its success starts them.
	now := time.Now()
	var lastBackup *backupOutcome
	if c.health != nil {
		lastBackup = c.health.lastBackup(m)
	}
	obs.restore = restoreStatusAfter(m, lastBackup, now)
	restoring := obs.restore.status != nil && obs.restore.status.Phase != monoclev1alpha1.RestoreSucceeded
	// An image change of the API is an upgrade, in phases (upgrade.go).
	upgrade := planUpgrade(m, obs.api, obs.crawler, lastBackup, restoring, now)
	obs.upgrade = upgrade.status
	if secret != nil && configReady {
		in := resources.Inputs{ConfigHash: obs.configHash, SecretHash: resources.SecretHash(secret.Data, secrets.hash),
			CrawlerStopped: maintenance.stopCrawler || upgrade.stopCrawler, Restoring: restoring,
			APIImage: upgrade.apiImage, CrawlerImage: upgrade.crawlerImage, APIRecreate: upgrade.apiRecreate,
			CrawlerRestartedAt: crawlerRestartedAt(m), APIRestartedAt: apiRestartedAt(m)}
		c.steps(
			func() {
				if !secrets.api {
					return
				}
				desired := resources.NewAPIDeployment(m, in)
				if obs.apiWaits = c.apiWaits(m, obs.elastic, obs.api, desired); obs.apiWaits {
					return
				}
				var err error
				obs.api, err = c.deployments.Ensure(ctx, c.recorder, m, desired)
				keep(err)
			},
			func() {
				if secrets.crawler {
					var err error
					obs.crawler, err = c.deployments.Ensure(ctx, c.recorder, m, resources.NewCrawlerDeployment(m, in))
					keep(err)
				}
			},
		)
	}
	obs.conditions = append(obs.conditions, exposed.condition, monitored)
	obs.assignedURL = exposed.assignedURL

	obs.updateIdents = m.Status.UpdateIdents
	if cfg.valid && configReady && !restoring {
		obs.updateIdents, err = c.ensureUpdateIdents(ctx, m, obs.configHash, obs.api)
		keep(err)
	}
	identsRunning := obs.updateIdents != nil && obs.updateIdents.Phase == monoclev1alpha1.JobRunning
	obs.maintenance = m.Status.Maintenance
	if !restoring {
		obs.maintenance, err = c.ensureMaintenance(ctx, m, maintenance, obs.configHash, obs.crawler, identsRunning)
		keep(err)
	}
	obs.crawlers = maintenance.crawlers
	obs.conditions = append(obs.conditions, identsCondition(obs.updateIdents), metav1.Condition{
		Type: monoclev1alpha1.ConditionPaused, Status: metav1.ConditionFalse, Reason: reasons.NotPaused,
		Message: "The operator reconciles this Monocle" + autoPilotMessage(m),
	})

	obs.crawlerRestarts = m.Status.CrawlerRestarts
	obs.storageGrowth, obs.apiRestart = m.Status.StorageGrowth, m.Status.APIRestart
	obs.unusedIndices, obs.indexDeletion = m.Status.UnusedIndices, m.Status.IndexDeletion
	if c.health != nil {
		elasticReady := elasticServing(obs.elastic)
		plan := planBackup(m, now)
		if upgrade.snapshot != "" && plan.repo.Type != "" {
			plan.take = upgrade.snapshot
		}
		deletion := planIndexDeletion(m, cfg.parsed)
		plan.deleteIndex = deletion.index
		plan.keepBlocks = autoPilotIsOff(m, monoclev1alpha1.AutoPilotBlockClearing)
		plan.restore = planRestore(m, workloadsStopped(obs.api, obs.crawler), elasticReady)
		apiReady := obs.api != nil && obs.api.Status.ReadyReplicas > 0
		last, pending := c.health.observe(ctx, m, readInputs{elasticReady: elasticReady, apiReady: apiReady, plan: plan,
			workspaces: crawlerWorkspaces(obs.crawlers)})
		// Only a Monocle whose health no read has reported yet waits for the first.
		obs.elasticsearchHealth, obs.holdStatus = last.health, pending && earlierHealth(m) == nil
		pvc := c.elasticPVC(m, volume)
		obs.storageGrowth, obs.growthEvent = planStorageGrowth(m, pvc, last, func() (bool, error) {
			return c.storageClassExpands(ctx, pvc)
		}, now)
		obs.apiRestart = planAPIRestart(m, last, obs.api, now)
		obs.conditions = append(obs.conditions, withGrowth(healthConditions(m, last, elasticReady), obs.storageGrowth)...)
		obs.conditions = append(obs.conditions, apiCondition(m, last, apiReady))
		lastBackup = last.backup
		obs.unusedIndices = unusedIndices(m, cfg.parsed, last.indices)
		obs.indexDeletion = deletionStatus(m, deletion, last.deleted, now)
		obs.crawlers = withProgress(m, obs.crawlers, last.crawlers, last.crawlerErrors)
		if last.crawlers != nil {
			obs.conditions = append(obs.conditions, crawlersHealthyCondition(obs.crawlers))
		}
		stall := checkCrawlers(m, obs.crawlers, obs.crawler, last.crawlers != nil || m.Status.CrawlerRestarts != nil, now)
		obs.crawlers, obs.crawlerRestarts, obs.crawlerRestarted = stall.crawlers, stall.restarts, stall.restarted
		if stall.condition != nil {
			obs.conditions = append(obs.conditions, *stall.condition)
		}
	}
	obs.conditions = append(obs.conditions, upgrade.condition)
	obs.backup = backupStatus(m, lastBackup, now)

	if cause := context.Cause(ctx); cause != nil {
		if namespaceTerminating(cause) {
			logger.V(2).Info("Namespace is being deleted, stopping", "err", cause)
			return nil
		}
		return &unavailableError{cause}
	}
	return c.finishSync(ctx, m, obs, errs)
}

// finishSync writes the status for a sync's observations and errors, and returns the errors.
func (c *Controller) finishSync(ctx context.Context, m *monoclev1alpha1.Monocle, obs observed, errs []error) error {
	p := classify(errs)
	if obs.holdStatus && len(errs) == 0 {
		return nil
	}
	if p.transientOnly() {
		// The cache was behind the API server; the retry will see the current state, so a
		// status written now would only flap.
		return &staleCacheError{utilerrors.NewAggregate(errs)}
	}
	for _, err := range p.failures {
		c.recorder.Event(m, corev1.EventTypeWarning, reasons.SyncFailed, err.Error())
	}
	c.recordJobTransition(m, m.Status.UpdateIdents, obs.updateIdents)
	c.recordBackupTransition(m, m.Status.Backup, obs.backup.status)
	c.recordRestoreTransition(m, m.Status.Restore, obs.restore.status)
	c.recordUpgradeTransition(m, m.Status.Upgrade, obs.upgrade)
	c.recordIndexDeletion(m, m.Status.IndexDeletion, obs.indexDeletion)
	if e := obs.growthEvent; e != nil {
		typ := corev1.EventTypeNormal
		if e.warning {
			typ = corev1.EventTypeWarning
		}
		c.recorder.Event(m, typ, e.reason, e.message)
	}
	if r := obs.apiRestart; r != nil && (m.Status.APIRestart == nil || !r.Time.Equal(&m.Status.APIRestart.Time)) {
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.APIRestarted, "Restarting the API pods: %s", r.Reason)
	}
	if obs.crawlerRestarted {
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.CrawlerRestarted, "Restarting the crawler pod: %s", obs.crawlerRestarts.Reason)
	}
	if err := c.updateMonocleStatus(ctx, m, obs, p); err != nil {
		if apierrors.IsConflict(err) && len(errs) == 0 {
			return &staleCacheError{err}
		}
		if serverUnavailable(err) {
			return &unavailableError{err}
		}
		errs = append(errs, err)
	}
	return utilerrors.NewAggregate(errs)
}

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

// syncPaused only reports: a paused Monocle's objects are left as they are, for manual
// maintenance, and the Paused condition says so.
func (c *Controller) syncPaused(ctx context.Context, m *monoclev1alpha1.Monocle) error {
	obs := observed{configHash: m.Status.ConfigHash, updateIdents: m.Status.UpdateIdents, maintenance: m.Status.Maintenance,
		crawlers: m.Status.Crawlers, backup: backupResult{status: m.Status.Backup}, restore: restoreResult{status: m.Status.Restore},
		upgrade: m.Status.Upgrade, crawlerRestarts: m.Status.CrawlerRestarts, unusedIndices: m.Status.UnusedIndices,
		indexDeletion: m.Status.IndexDeletion}
	if s, err := c.statefulSets.Get(m.Namespace, resources.ElasticName(m)); err == nil && owned.IsControlledBy(s, m) {
		obs.elastic = s
	}
	obs.api, obs.crawler = c.observeDeployments(m)
	obs.conditions = []metav1.Condition{{
		Type: monoclev1alpha1.ConditionPaused, Status: metav1.ConditionTrue, Reason: reasons.Paused,
		Message: fmt.Sprintf("The annotation %s=true pauses the operator: it leaves this Monocle's objects alone; remove it to resume",
			monoclev1alpha1.PausedAnnotation),
	}}
	return c.finishSync(ctx, m, obs, nil)
}

// observeDeployments returns the API and crawler Deployments m controls, from the cache.
func (c *Controller) observeDeployments(m *monoclev1alpha1.Monocle) (api, crawler *appsv1.Deployment) {
	get := func(name string) *appsv1.Deployment {
		d, err := c.deployments.Get(m.Namespace, name)
		if err != nil || !owned.IsControlledBy(d, m) {
			return nil
		}
		return d
	}
	return get(resources.APIName(m)), get(resources.CrawlerName(m))
}

// ensureAPIDisruptionBudget keeps a PodDisruptionBudget for the API while it has more than
// one replica, and deletes it otherwise (a budget over one pod would block node drains).
func (c *Controller) ensureAPIDisruptionBudget(ctx context.Context, m *monoclev1alpha1.Monocle) error {
	if resources.NeedsAPIDisruptionBudget(m) {
		_, err := c.pdbs.Ensure(ctx, c.recorder, m, resources.NewAPIPodDisruptionBudget(m))
		return err
	}
	return c.pdbs.Delete(ctx, c.recorder, m, resources.APIName(m), "the API runs one replica")
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
