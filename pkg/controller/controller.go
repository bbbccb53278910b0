// Package controller reconciles Monocle custom resources: for each Monocle it creates the
// objects built by package resources, repairs them when they drift, and reports their state in
// the Monocle's status. It follows kubernetes/sample-controller: informers feed a rate-limited
// workqueue of Monocle keys, and syncHandler compares desired objects against lister caches.
package controller

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	policyinformers "k8s.io/client-go/informers/policy/v1"
	typedappsv1 "k8s.io/client-go/kubernetes/typed/apps/v1"
	typedbatchv1 "k8s.io/client-go/kubernetes/typed/batch/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	typednetworkingv1 "k8s.io/client-go/kubernetes/typed/networking/v1"
	typedpolicyv1 "k8s.io/client-go/kubernetes/typed/policy/v1"
	typedstoragev1 "k8s.io/client-go/kubernetes/typed/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/rollout"
	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	monoclescheme "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned/scheme"
	monocleinformers "github.com/change-metrics/monocle-operator/pkg/generated/informers/externalversions/monocle/v1alpha1"
	listers "github.com/change-metrics/monocle-operator/pkg/generated/listers/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// ControllerName is the event source and field manager of the operator.
const ControllerName = "monocle-operator"

// KubeClient is the part of the Kubernetes clientset (k8s.io/client-go/kubernetes.Interface)
// the controller reads and writes through: the clients of the API groups it uses and no
// others, so that a binary can build just these (an all-groups clientset links the typed
// client of every API group). *kubernetes.Clientset and the fake clientset satisfy it.
type KubeClient interface {
	CoreV1() typedcorev1.CoreV1Interface
	AppsV1() typedappsv1.AppsV1Interface
	BatchV1() typedbatchv1.BatchV1Interface
	PolicyV1() typedpolicyv1.PolicyV1Interface
	NetworkingV1() typednetworkingv1.NetworkingV1Interface
	StorageV1() typedstoragev1.StorageV1Interface
}

// Controller reconciles Monocles. Create it with NewController and start it with Run.
type Controller struct {
	kubeclientset    KubeClient
	monocleclientset clientset.Interface

	monoclesLister listers.MonocleLister
	monoclesSynced cache.InformerSynced
	// secretMetadataLister holds the metadata of every Secret: enough to notice a change of
	// a user Secret named by spec.secretRef without caching any Secret's data.
	secretMetadataLister cache.GenericLister
	secretMetadataSynced cache.InformerSynced
	// monocleIndexer finds the Monocles that reference a Secret (secretRefIndex).
	monocleIndexer cache.Indexer
	// userSecrets remembers the data hash and keys of each referenced Secret at a
	// resourceVersion, so an unchanged Secret is not read again.
	userSecrets *readCache[userSecret]
	// targetSecrets remembers, at a resourceVersion, the values the Elasticsearch target
	// reads of a Secret (targetSecretKeys): credentials and CAs.
	targetSecrets *readCache[map[string][]byte]
	// configMapMetadataLister holds the metadata of every ConfigMap, to notice a change of
	// the CA bundle spec.trustedCA names; trustedCAs remembers, at a resourceVersion, the
	// hash of each key of such a ConfigMap (keepTrustedCA).
	configMapMetadataLister cache.GenericLister
	configMapMetadataSynced cache.InformerSynced
	trustedCAs              *readCache[map[string]string]

	// kinds registers every owned kind's informer (HasSynced waits for them).
	kinds      *owned.Registry
	secrets    owned.Kind[*corev1.Secret]
	configMaps owned.Kind[*corev1.ConfigMap]
	// userConfigMaps is configMaps for the ConfigMap that belongs to the user while
	// spec.config is unset: it never writes the data.
	userConfigMaps owned.Kind[*corev1.ConfigMap]
	services       owned.Kind[*corev1.Service]
	deployments    owned.Kind[*appsv1.Deployment]
	statefulSets   owned.Kind[*appsv1.StatefulSet]
	pdbs           owned.Kind[*policyv1.PodDisruptionBudget]
	ingresses      owned.Kind[*networkingv1.Ingress]
	netpols        owned.Kind[*networkingv1.NetworkPolicy]
	// jobs and pvcs are read from their caches; their writes go through kubeclientset.
	jobs owned.Kind[*batchv1.Job]
	pvcs owned.Kind[*corev1.PersistentVolumeClaim]
	// optional holds the owned kinds of optional APIs (HTTPRoutes, Routes), served or not,
	// and ECK's Elasticsearch and the Gateway API's ReferenceGrant, which are only read.
	optional *owned.Optional

	// queue holds the keys of Monocles to sync. A key is in it at most once, and is never
	// processed by two workers at once.
	queue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// unavailableBackoff spaces the retries of a key whose sync found the API server
	// unavailable: exponential from unavailableBaseDelay, capped at unavailableMaxDelay,
	// apart from the queue's own backoff (failureRateLimiter) so that an outage of any
	// length delays convergence by at most unavailableMaxDelay once the server is back.
	unavailableBackoff workqueue.TypedRateLimiter[cache.ObjectName]
	// staleCacheBackoff spaces the retries of a key whose sync met a stale cache:
	// exponential from staleCacheBaseDelay, capped at staleCacheMaxDelay.
	staleCacheBackoff workqueue.TypedRateLimiter[cache.ObjectName]
	// recorder writes events on Monocles.
	recorder record.EventRecorder
	// created holds the objects of new Monocles whose API waits for Elasticsearch, for one
	// Created event.
	created *createdHold
	// progress spaces the status writes of workload progress (progressInterval).
	progress *statusWrites
	// random is the source of generated keys: crypto/rand.Reader outside tests.
	random io.Reader
	// realmMatches spares syncs the bcrypt checks of the bundled Elasticsearch's realm
	// hashes they have already seen match (elasticusers.go).
	realmMatches *realmMatches
	// operand reads each Monocle's operands in the background and carries out what syncs
	// plan (Options.Operands); operand.Off() when reading is off.
	operand operand.Worker
	// refuseCrossNamespace refuses every elasticsearchRef to another namespace, granted or
	// not (Options.RefuseCrossNamespaceReferences, refgrant.go).
	refuseCrossNamespace bool
	// operatorNamespace is the namespace of the operator's pods, which each NetworkPolicy
	// then admits to Elasticsearch; "" when reading is off or the operator runs outside the
	// cluster.
	operatorNamespace string
	// watchNamespace is the namespace whose Monocles this controller watches; "" for all.
	watchNamespace string
	// fleet rolls the operator's own changes out across the Monocles in waves
	// (Options.Fleet, fleet.go).
	fleet *Fleet
}

// podMetadata is the record the builders keep on a pod template of the labels and
// annotations they set from a Monocle's podLabels and podAnnotations
// (resources.PodMetadataAnnotation), as the drift rule reads it.
var podMetadata = owned.PodMetadataRecord{Annotation: resources.PodMetadataAnnotation, Keys: resources.RecordedPodMetadata}

// OptionalAPIs is what the controller needs to own the kinds of APIs a cluster may or may not
// serve; see owned.OptionalAPIs.
type OptionalAPIs = owned.OptionalAPIs

// Informers are the informers a Controller reads. The informers of owned kinds should be
// filtered on resources.ManagedByLabel so their caches hold only what the operator created.
type Informers struct {
	Monocles               monocleinformers.MonocleInformer
	Secrets                coreinformers.SecretInformer
	ConfigMaps             coreinformers.ConfigMapInformer
	Services               coreinformers.ServiceInformer
	Deployments            appsinformers.DeploymentInformer
	StatefulSets           appsinformers.StatefulSetInformer
	Jobs                   batchinformers.JobInformer
	PodDisruptionBudgets   policyinformers.PodDisruptionBudgetInformer
	PersistentVolumeClaims coreinformers.PersistentVolumeClaimInformer
	Ingresses              networkinginformers.IngressInformer
	NetworkPolicies        networkinginformers.NetworkPolicyInformer
	// Optional serves the owned kinds of optional APIs (Gateway API HTTPRoutes, OpenShift
	// Routes); with a nil Dynamic client, those APIs count as not served.
	Optional OptionalAPIs
	// SecretMetadata is a metadata-only informer of Secrets (all of them, not only the
	// operator's), from k8s.io/client-go/metadata/metadatainformer.
	SecretMetadata informers.GenericInformer
	// ConfigMapMetadata is a metadata-only informer of ConfigMaps (all of them), from
	// k8s.io/client-go/metadata/metadatainformer.
	ConfigMapMetadata informers.GenericInformer
}

// Options are the settings of a Controller besides its clients and informers.
type Options struct {
	// Operands turns on the background reads of every Monocle's Elasticsearch and API, and
	// the Elasticsearch work syncs plan (see package operand). Its zero value (Interval 0)
	// reads nothing: the status then has no Elasticsearch health and no
	// ElasticsearchHealthy, DiskPressure or APIHealthy condition.
	Operands operand.Options
	// OperatorNamespace is the namespace the operator's pods run in; "" outside the
	// cluster. While the controller reads the operands, each Monocle's NetworkPolicy admits
	// the operator's pods of that namespace to its bundled Elasticsearch.
	OperatorNamespace string
	// RefuseCrossNamespaceReferences refuses every elasticsearchRef to an Elasticsearch of
	// another namespace, granted or not (--cross-namespace-references=false); by default such
	// a reference is used once a ReferenceGrant there allows it (refgrant.go).
	RefuseCrossNamespaceReferences bool
	// Fleet rolls a change of the workloads' templates that this release makes of its own
	// accord out across the Monocles, in waves (NewFleet): the same Fleet for every
	// Controller of the process. nil gives the controller one of its own, with
	// rollout.DefaultPolicy.
	Fleet *Fleet
}

// NewController returns a Controller that watches the given informers, writes through the
// given clients and works as o sets. queueName names the workqueue in metrics; it must be
// unique per process. Events go to the API server through an event broadcaster stopped when
// ctx ends, and ctx ends the reads of the operands under way.
func NewController(ctx context.Context, kubeclientset KubeClient, monocleclientset clientset.Interface, inf Informers, queueName string, o Options) (*Controller, error) {
	logger := klog.FromContext(ctx)
	utilruntime.Must(monoclescheme.AddToScheme(monoclescheme.Scheme))

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartStructuredLogging(4)
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeclientset.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(monoclescheme.Scheme, corev1.EventSource{Component: ControllerName})

	c := &Controller{
		kubeclientset:           kubeclientset,
		monocleclientset:        monocleclientset,
		monoclesLister:          inf.Monocles.Lister(),
		monoclesSynced:          inf.Monocles.Informer().HasSynced,
		secretMetadataLister:    inf.SecretMetadata.Lister(),
		secretMetadataSynced:    inf.SecretMetadata.Informer().HasSynced,
		monocleIndexer:          inf.Monocles.Informer().GetIndexer(),
		userSecrets:             newReadCache[userSecret](),
		targetSecrets:           newReadCache[map[string][]byte](),
		configMapMetadataLister: inf.ConfigMapMetadata.Lister(),
		configMapMetadataSynced: inf.ConfigMapMetadata.Informer().HasSynced,
		trustedCAs:              newReadCache[map[string]string](),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			failureRateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: queueName},
		),
		unavailableBackoff:   workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](unavailableBaseDelay, unavailableMaxDelay),
		staleCacheBackoff:    workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](staleCacheBaseDelay, staleCacheMaxDelay),
		recorder:             recorder,
		created:              &createdHold{held: map[cache.ObjectName]heldObjects{}},
		progress:             &statusWrites{last: map[cache.ObjectName]time.Time{}},
		random:               rand.Reader,
		realmMatches:         newRealmMatches(),
		refuseCrossNamespace: o.RefuseCrossNamespaceReferences,
	}
	c.operand = operand.New(ctx, o.Operands, c.queue.AddAfter)
	c.fleet = o.Fleet
	if c.fleet == nil {
		var err error
		if c.fleet, err = NewFleet(rollout.DefaultPolicy, ""); err != nil {
			return nil, err
		}
	}
	c.fleet.add(c.monoclesLister, c.queue.Add, inf.Monocles.Informer().HasSynced)
	if c.readsOperands() {
		// The operator's pods reach Elasticsearch only to read it.
		c.operatorNamespace = o.OperatorNamespace
	}

	if err := inf.Monocles.Informer().AddIndexers(cache.Indexers{secretRefIndex: indexBySecretRef, identityIndex: indexByIdentity, trustedCAIndex: indexByTrustedCA,
		refNamespaceIndex: indexByRefNamespace}); err != nil {
		return nil, fmt.Errorf("adding the Monocle indexes: %w", err)
	}
	if err := inf.Monocles.Informer().SetTransform(owned.StripManagedFields); err != nil {
		return nil, fmt.Errorf("setting the managedFields transform: %w", err)
	}

	logger.V(2).Info("Setting up event handlers", "queue", queueName)
	if _, err := inf.Monocles.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueMonocle,
		UpdateFunc: c.handleMonocleUpdate,
		DeleteFunc: c.handleMonocleDelete,
	}); err != nil {
		return nil, fmt.Errorf("adding Monocle event handler: %w", err)
	}
	// Every owned kind, once. The clients are read from c.kubeclientset at each request.
	r := owned.NewRegistry(ControllerName, cache.ResourceEventHandlerFuncs{
		AddFunc:    c.handleObject,
		UpdateFunc: c.handleObjectUpdate,
		DeleteFunc: c.handleObject,
	}, podMetadata)
	c.kinds = r
	c.secrets = owned.Register(r, "Secret", inf.Secrets.Informer(), corev1.Resource("secret"),
		func(ns string) owned.Client[*corev1.Secret] { return c.kubeclientset.CoreV1().Secrets(ns) })
	c.configMaps = owned.Register(r, "ConfigMap", inf.ConfigMaps.Informer(), corev1.Resource("configmap"),
		func(ns string) owned.Client[*corev1.ConfigMap] { return c.kubeclientset.CoreV1().ConfigMaps(ns) })
	c.services = owned.Register(r, "Service", inf.Services.Informer(), corev1.Resource("service"),
		func(ns string) owned.Client[*corev1.Service] { return c.kubeclientset.CoreV1().Services(ns) })
	c.deployments = owned.Register(r, "Deployment", inf.Deployments.Informer(), appsv1.Resource("deployment"),
		func(ns string) owned.Client[*appsv1.Deployment] { return c.kubeclientset.AppsV1().Deployments(ns) })
	c.statefulSets = owned.Register(r, "StatefulSet", inf.StatefulSets.Informer(), appsv1.Resource("statefulset"),
		func(ns string) owned.Client[*appsv1.StatefulSet] { return c.kubeclientset.AppsV1().StatefulSets(ns) })
	c.jobs = owned.Register(r, "Job", inf.Jobs.Informer(), batchv1.Resource("job"),
		func(ns string) owned.Client[*batchv1.Job] { return c.kubeclientset.BatchV1().Jobs(ns) })
	c.pdbs = owned.Register(r, "PodDisruptionBudget", inf.PodDisruptionBudgets.Informer(), policyv1.Resource("poddisruptionbudget"),
		func(ns string) owned.Client[*policyv1.PodDisruptionBudget] {
			return c.kubeclientset.PolicyV1().PodDisruptionBudgets(ns)
		})
	c.pvcs = owned.Register(r, "PersistentVolumeClaim", inf.PersistentVolumeClaims.Informer(), corev1.Resource("persistentvolumeclaim"),
		func(ns string) owned.Client[*corev1.PersistentVolumeClaim] {
			return c.kubeclientset.CoreV1().PersistentVolumeClaims(ns)
		})
	c.ingresses = owned.Register(r, "Ingress", inf.Ingresses.Informer(), networkingv1.Resource("ingresses"),
		func(ns string) owned.Client[*networkingv1.Ingress] {
			return c.kubeclientset.NetworkingV1().Ingresses(ns)
		})
	c.netpols = owned.Register(r, "NetworkPolicy", inf.NetworkPolicies.Informer(), networkingv1.Resource("networkpolicies"),
		func(ns string) owned.Client[*networkingv1.NetworkPolicy] {
			return c.kubeclientset.NetworkingV1().NetworkPolicies(ns)
		})
	if err := r.Err(); err != nil {
		return nil, err
	}
	c.watchNamespace = inf.Optional.Namespace
	c.optional = r.Optional(inf.Optional, map[schema.GroupVersionResource]string{
		resources.HTTPRouteResource:  "HTTPRoute",
		resources.RouteResource:      "Route",
		resources.PodMonitorResource: "PodMonitor",
	})
	// ECK's Elasticsearch objects are only read (target.go): an event enqueues the Monocles
	// that reference one.
	c.optional.Watch(resources.ECKElasticsearchResource, "Elasticsearch", cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueIdentity,
		UpdateFunc: c.handleElasticsearchUpdate,
		DeleteFunc: c.enqueueIdentity,
	})
	// ReferenceGrants are only read (refgrant.go): an event enqueues the Monocles that
	// reference an Elasticsearch of its namespace from another.
	c.optional.Watch(resources.ReferenceGrantResource, "ReferenceGrant", cache.ResourceEventHandlerFuncs{
		AddFunc:    c.handleReferenceGrant,
		UpdateFunc: c.handleReferenceGrantUpdate,
		DeleteFunc: c.handleReferenceGrant,
	})
	// The user's ConfigMap (spec.config unset): created when missing, its data never written.
	c.userConfigMaps = c.configMaps.WithDrift(func(_, _ *corev1.ConfigMap) bool { return false },
		func(_, live *corev1.ConfigMap) *corev1.ConfigMap { return live.DeepCopy() })

	if _, err := inf.PersistentVolumeClaims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.handleVolumeClaim,
		UpdateFunc: func(_, newObj any) { c.handleVolumeClaim(newObj) },
		DeleteFunc: c.handleVolumeClaim,
	}); err != nil {
		return nil, fmt.Errorf("adding PersistentVolumeClaim event handler: %w", err)
	}
	// The metadata of the Secrets and ConfigMaps Monocles reference, which carry no label of
	// the operator (secrets.go, trustedca.go, readcache.go): stripped to what a change needs;
	// an event enqueues the Monocles that reference the object.
	for _, md := range []struct {
		kind     string
		informer cache.SharedIndexInformer
		handle   func(any)
	}{
		{"Secret", inf.SecretMetadata.Informer(), c.handleSecretMetadata},
		{"ConfigMap", inf.ConfigMapMetadata.Informer(), c.handleConfigMapMetadata},
	} {
		if err := md.informer.SetTransform(stripSecretMetadata); err != nil {
			return nil, fmt.Errorf("setting the %s metadata transform: %w", md.kind, err)
		}
		if _, err := md.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: md.handle, UpdateFunc: onChange(md.handle), DeleteFunc: md.handle,
		}); err != nil {
			return nil, fmt.Errorf("adding %s metadata event handler: %w", md.kind, err)
		}
	}
	return c, nil
}

// Run waits for the informer caches to sync, then runs workers goroutines that process the
// queue until ctx is cancelled; it returns once they have stopped. It fails only when the
// caches cannot sync before ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)

	if c.optional.Enabled() {
		// The optional APIs served now are watched before the first sync; those that appear
		// later are picked up by the periodic discovery, which syncs every Monocle again.
		c.optional.Refresh(ctx, func() {})
		go c.optional.Run(ctx, c.enqueueAll)
	}
	logger.Info("Waiting for informer caches to sync")
	if ok := cache.WaitForCacheSync(ctx.Done(), c.HasSynced); !ok {
		return errors.New("failed to wait for caches to sync")
	}

	go c.fleet.run(ctx)
	logger.Info("Starting workers", "count", workers, "revision", c.fleet.revision)
	done := make(chan struct{})
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			wait.UntilWithContext(ctx, c.runWorker, time.Second)
		}()
	}
	<-ctx.Done()
	logger.Info("Shutting down workers")
	c.queue.ShutDown()
	for range workers {
		<-done
	}
	return nil
}

// HasSynced reports whether every informer cache the controller reads has synced; the
// readiness endpoint uses it.
func (c *Controller) HasSynced() bool {
	for _, synced := range []cache.InformerSynced{
		c.monoclesSynced, c.secretMetadataSynced, c.configMapMetadataSynced, c.kinds.HasSynced, c.optional.HasSynced,
	} {
		if !synced() {
			return false
		}
	}
	return true
}

// The retry delays of a key whose sync failed for a reason other than an unavailable API
// server or a stale cache: exponential per key, doubling from failureBaseDelay up to
// failureMaxDelay. client-go's default controller rate limiter has the same base but a
// 1000 s cap (k8s.io/client-go/util/workqueue DefaultTypedControllerRateLimiter). Every
// event of a key's objects counts a failure when its sync fails, so a burst of transient
// errors (an API server that refuses Service creates while etcd restarts) could push the next
// retry minutes away, and once the objects are quiet no event would bring it back sooner: the
// Monocle would stay unconverged for up to 1000 s. With the cap, a persistently failing
// Monocle costs one sync a minute.
const (
	failureBaseDelay = 5 * time.Millisecond
	failureMaxDelay  = time.Minute
	// failureQPS and failureBurst bound the retries of all keys together, as client-go's
	// default limiter does.
	failureQPS   = 10
	failureBurst = 100
)

// failureRateLimiter returns the queue's rate limiter: per key, exponential from
// failureBaseDelay to failureMaxDelay; for all keys, a token bucket of failureQPS retries per
// second with bursts of failureBurst; the longer of the two delays applies.
func failureRateLimiter() workqueue.TypedRateLimiter[cache.ObjectName] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](failureBaseDelay, failureMaxDelay),
		&workqueue.TypedBucketRateLimiter[cache.ObjectName]{Limiter: rate.NewLimiter(rate.Limit(failureQPS), failureBurst)},
	)
}

// runWorker processes work items until the queue shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem syncs one Monocle key. A failed sync is requeued with rate limiting
// (failureRateLimiter: exponential backoff per key, up to failureMaxDelay); a successful one
// resets the key's backoffs.
// Two kinds of failure, which pass by themselves, have shorter backoffs of their own: a
// sync that found the API server unavailable is retried after unavailableBackoff's delay,
// and one that met a stale cache after staleCacheBackoff's.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)

	logger := klog.LoggerWithValues(klog.FromContext(ctx), "monocle", key)
	start := time.Now()
	err := c.syncHandler(klog.NewContext(ctx, logger), key)
	syncDuration.Observe(time.Since(start).Seconds())
	if err == nil {
		syncsTotal.WithLabelValues("success").Inc()
		c.queue.Forget(key)
		c.unavailableBackoff.Forget(key)
		c.staleCacheBackoff.Forget(key)
		return true
	}
	var unavailable *unavailableError
	if errors.As(err, &unavailable) {
		syncsTotal.WithLabelValues("unavailable").Inc()
		after := c.unavailableBackoff.When(key)
		logger.Info("API server unavailable, retrying", "err", unavailable.err, "after", after)
		c.queue.AddAfter(key, after)
		return true
	}
	syncsTotal.WithLabelValues("error").Inc()
	var stale *staleCacheError
	if errors.As(err, &stale) {
		after := c.staleCacheBackoff.When(key)
		logger.V(2).Info("Cache behind the API server, retrying", "err", err, "after", after)
		c.queue.Forget(key)
		c.queue.AddAfter(key, after)
		return true
	}
	logger.Error(err, "Error syncing Monocle, requeuing", "retries", c.queue.NumRequeues(key))
	c.queue.AddRateLimited(key)
	return true
}

// enqueueAll adds every Monocle in the cache to the queue.
func (c *Controller) enqueueAll() {
	for _, obj := range c.monocleIndexer.List() {
		c.enqueueMonocle(obj)
	}
}

// monocleFor returns the Monocle in namespace ns named name, or nil when the cache has none.
func (c *Controller) monocleFor(ns, name string) *monoclev1alpha1.Monocle {
	m, err := c.monoclesLister.Monocles(ns).Get(name)
	if err != nil {
		return nil
	}
	return m
}
