package controller

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/pkg/version"
)

// TestCreatesAllObjects: the first sync of a new Monocle creates every object as its builder
// makes it, whole, but the API Deployment, which waits for a ready Elasticsearch pod
// (TestAPIWaitsForElasticsearch), and writes the whole status.
func TestCreatesAllObjects(t *testing.T) {
	f := newFixture(t)
	m := newMonocle("demo")
	f.monocles = []*monoclev1alpha1.Monocle{m}
	kubeWrites, monocleWrites := f.run()

	var objects []runtime.Object
	for _, a := range kubeWrites {
		if c, ok := a.(core.CreateAction); ok {
			objects = append(objects, c.GetObject())
		}
	}
	// The generated keys are random: valid and distinct is all a test can ask of them.
	keys := map[string][]byte{}
	if secret := find[*corev1.Secret](objects, "demo-api"); secret != nil {
		keys = secret.Data
	}
	for _, k := range resources.GeneratedKeys {
		if !resources.ValidKey(k, keys[k]) {
			t.Errorf("generated %s = %q is not a valid key", k, keys[k])
		}
	}
	if string(keys[resources.CrawlersAPIKeyKey]) == string(keys[resources.JWKGenKeyKey]) {
		t.Error("the two generated keys are equal")
	}
	in := builtInputs(m, objects, resources.DefaultConfig)
	// The node's users are generated too: their Secret is checked by TestElasticUsers.
	users := find[*corev1.Secret](objects, resources.ElasticUsersSecretName(m))
	if users == nil {
		t.Fatal("no Secret of the node's users")
	}
	proxy, err := resources.NewProxySecret(m, in.Elastic.Target)
	if err != nil {
		t.Fatal(err)
	}
	checkActions(t, kubeWrites,
		expectCreate(users),
		expectCreate(proxy),
		expectCreate(resources.NewKeysBackupSecret(m, keys)),
		expectCreate(resources.NewAPISecret(m, keys)),
		expectCreate(resources.NewConfigMap(m, resources.DefaultConfig)),
		expectCreate(resources.NewElasticService(m)),
		expectCreate(resources.NewElasticStatefulSet(m, resources.ElasticDataVolume, false, resources.ElasticUsersHash(users.Data))),
		expectCreate(resources.NewAPIService(m)),
		expectCreate(resources.NewNetworkPolicy(m, "")),
		expectCreate(resources.NewCrawlerDeployment(m, in)))
	// What the builders must give every object, for the garbage collector and the informers.
	for _, o := range objects {
		if !owned.IsControlledBy(o.(metav1.Object), m) {
			t.Errorf("%T %s is not controlled by the Monocle", o, o.(metav1.Object).GetName())
		}
		if o.(metav1.Object).GetLabels()[resources.ManagedByLabel] != resources.ManagedByValue {
			t.Errorf("%T %s lacks the managed-by label the informers select on", o, o.(metav1.Object).GetName())
		}
	}

	// Every condition is new: its lastTransitionTime is left zero, which checkObject reads as
	// "set by this sync".
	cond := func(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, ObservedGeneration: 1, Reason: reason, Message: message}
	}
	starting := monoclev1alpha1.ComponentStatus{Image: resources.DefaultMonocleImage, Replicas: 1}
	want := m.DeepCopy()
	want.Status = monoclev1alpha1.MonocleStatus{
		ObservedGeneration: 1,
		Conditions: []metav1.Condition{
			cond(monoclev1alpha1.ConditionReady, metav1.ConditionFalse, reasons.Starting,
				"Waiting for elasticsearch 0/1 ready, api (waits for a ready Elasticsearch pod) 0/0 ready, crawler 0/1 ready"),
			cond(monoclev1alpha1.ConditionProgressing, metav1.ConditionTrue, reasons.RollingOut,
				"Rolling out: elasticsearch, api (waits for a ready Elasticsearch pod), crawler"),
			cond(monoclev1alpha1.ConditionDegraded, metav1.ConditionFalse, reasons.AsExpected, "The operator converges every owned object"),
			cond(monoclev1alpha1.ConditionConfigValid, metav1.ConditionTrue, reasons.ConfigAccepted,
				"spec.config is unset; config.yaml of ConfigMap demo-api defines 1 workspace(s)"),
			cond(monoclev1alpha1.ConditionSecretsReady, metav1.ConditionTrue, reasons.SecretsPresent,
				"Secret demo-api holds every variable config.yaml needs"),
			cond(monoclev1alpha1.ConditionSpecAccepted, metav1.ConditionTrue, reasons.SpecAccepted, "The operator accepts every part of the spec"),
			cond(monoclev1alpha1.ConditionStorageReady, metav1.ConditionTrue, reasons.AsRequested, "No storage change is pending"),
			cond(monoclev1alpha1.ConditionExposed, metav1.ConditionFalse, reasons.NotExposed,
				"No ingress, httpRoute or route is set: run kubectl port-forward -n default service/demo-api 8090:8080 and open http://localhost:8090"),
			cond(monoclev1alpha1.ConditionMonitored, metav1.ConditionFalse, reasons.NotMonitored,
				"spec.monitoring is unset: no PodMonitor scrapes the API's and the crawler's /metrics"),
			cond(monoclev1alpha1.ConditionIdentsUpdated, metav1.ConditionTrue, reasons.UpToDate, "No config change has needed an update-idents run"),
			cond(monoclev1alpha1.ConditionPaused, metav1.ConditionFalse, reasons.NotPaused, "The operator reconciles this Monocle"),
			cond(monoclev1alpha1.ConditionUpgraded, metav1.ConditionTrue, reasons.UpToDate, "The API runs "+resources.DefaultMonocleImage),
			cond(monoclev1alpha1.ConditionBackupReady, metav1.ConditionFalse, reasons.NotBackedUp,
				"spec.backup is unset: the Elasticsearch index is not backed up"),
		},
		URL:           "http://localhost:8090",
		ConfigHash:    resources.ConfigHash(resources.DefaultConfig),
		ConfigSource:  monoclev1alpha1.ConfigFromConfigMap,
		Crawler:       starting,
		Elasticsearch: monoclev1alpha1.ComponentStatus{Image: resources.DefaultElasticsearchImage, Replicas: 1},
		ElasticsearchCluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled,
			URL: "http://demo-elastic.default.svc:9200", Authentication: monoclev1alpha1.ElasticsearchAuthenticationEnabling},
	}
	// The new Monocle's workloads are created with this release's templates; the times are
	// the sync's, the inputs an opaque hash.
	if len(monocleWrites) == 1 {
		if got := writtenObject(monocleWrites[0]).(*monoclev1alpha1.Monocle).Status.Rollout; got != nil && got.Inputs != "" {
			want.Status.Rollout = &monoclev1alpha1.RolloutStatus{Revision: version.Version, Inputs: got.Inputs, Phase: monoclev1alpha1.RolloutRolled,
				Cause: monoclev1alpha1.RolloutCauseCreated, StartTime: got.StartTime, CompletionTime: got.StartTime,
				Message: "Created with the templates of " + version.Version}
		}
	}
	checkActions(t, monocleWrites, expectStatusUpdate(want))
	// The API waits for Elasticsearch: what the sync created is held for the one Created event
	// of the sync that creates the API (TestCreatedObjectsInOneEvent).
	if events := drain(f); len(events) != 0 {
		t.Errorf("recorded events %q, want none while the API waits", events)
	}
}

// TestParallelSyncMakesTheSameWrites: written in parallel, a new Monocle's objects are the
// same from one sync to another, the workloads after what they need, and no event tells them
// while the API waits for Elasticsearch.
func TestParallelSyncMakesTheSameWrites(t *testing.T) {
	writes := func() ([]string, []string) {
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{newMonocle("demo")}
		kubeWrites, _ := f.run()
		return describe(kubeWrites), drain(f)
	}
	first, _ := writes()
	got, events := writes()
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(first))) {
		t.Errorf("writes %q, want those of the first sync %q", got, first)
	}
	if len(got) < 3 || !strings.HasPrefix(got[0], "create secrets") || got[len(got)-1] != "create deployments demo-crawler" {
		t.Errorf("parallel writes %q: want the Secret first and the crawler Deployment last", got)
	}
	if len(events) != 0 {
		t.Errorf("events %q, want none while the API waits for Elasticsearch (TestCreatedObjectsInOneEvent)", events)
	}
}

func TestSecondSyncMakesNoCalls(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	kubeWrites, monocleWrites := f.run()
	expectActions(t, kubeWrites)
	expectActions(t, monocleWrites)
	if n := len(f.recorder.Events); n != 0 {
		t.Errorf("a converged sync recorded %d events", n)
	}
	// Reads come from the listers: the clients see no call at all.
	if n := len(f.kubeclient.Actions()) + len(f.client.Actions()); n != 0 {
		t.Errorf("a converged sync made %d API calls: %v %v", n, describe(f.kubeclient.Actions()), describe(f.client.Actions()))
	}
}

// TestDriftIsCorrected: a live edit of a field the operator owns is repaired by an update that
// carries the whole object: the builder's fields, and the fields and metadata of others kept.
func TestDriftIsCorrected(t *testing.T) {
	// With spec.config set, the ConfigMap is the operator's: an edit there is drift.
	withConfig := newMonocle("demo")
	withConfig.Spec.Config = resources.DefaultConfig
	m, objects := converged(t, withConfig)
	api := find[*appsv1.Deployment](objects, "demo-api")
	api.Spec.Replicas = ptr.To[int32](0)
	svc := find[*corev1.Service](objects, "demo-api")
	svc.Spec.Ports[0].Port = 9999
	// The API server's field and another client's annotation, on an object being repaired.
	svc.Spec.ClusterIP = "10.96.0.10"
	svc.Annotations["example.com/owner"] = "team-x"
	cm := find[*corev1.ConfigMap](objects, "demo-api")
	cm.Data["config.yaml"] = "workspaces: []\n"
	// Someone else's label and annotation are not drift.
	crawler := find[*appsv1.Deployment](objects, "demo-crawler")
	crawler.Labels["team"] = "x"
	crawler.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = "now"

	wantAPI := resources.NewAPIDeployment(m, builtInputs(m, objects, resources.DefaultConfig))
	wantAPI.Status = api.Status
	wantSvc := resources.NewAPIService(m)
	wantSvc.Spec.ClusterIP = "10.96.0.10"
	wantSvc.Annotations["example.com/owner"] = "team-x"

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	kubeWrites, _ := f.run()
	checkActions(t, kubeWrites,
		expectUpdate(resources.NewConfigMap(m, resources.DefaultConfig)),
		expectUpdate(wantSvc),
		expectUpdate(wantAPI))
}

func TestForeignObjectIsNotOverwritten(t *testing.T) {
	m := newMonocle("demo")
	foreign := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "demo-api", Namespace: m.Namespace,
		Labels: map[string]string{resources.ManagedByLabel: resources.ManagedByValue}}}
	other := newMonocle("demo")
	other.UID = "another-uid"
	foreignCrawler := resources.NewCrawlerDeployment(other, resources.Inputs{})

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = []runtime.Object{foreign, foreignCrawler}
	// Without our label, this one is invisible to the cache: only the create fails.
	f.uncached = []runtime.Object{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "demo-api", Namespace: m.Namespace}}}
	kubeWrites, monocleWrites := f.run()
	for _, d := range describe(kubeWrites) {
		if strings.Contains(d, "deployments") || strings.Contains(d, "update services") {
			t.Errorf("wrote an object it does not control: %s", d)
		}
	}
	expectActions(t, monocleWrites, "update monocles demo/status")
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).Status
	degraded := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionDegraded)
	if degraded == nil || degraded.Status != metav1.ConditionTrue || degraded.Reason != reasons.NameConflict ||
		!strings.Contains(degraded.Message, "Deployment demo-api") || !strings.Contains(degraded.Message, "Deployment demo-crawler") ||
		!strings.Contains(degraded.Message, "Service demo-api") {
		t.Errorf("Degraded = %+v, want True/NameConflict naming both Deployments and the Service", degraded)
	}
	if ready := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionReady); ready.Status != metav1.ConditionFalse {
		t.Errorf("Ready = %+v, want False", ready)
	}
	var warnings int
	for len(f.recorder.Events) > 0 {
		if e := <-f.recorder.Events; strings.HasPrefix(e, "Warning "+reasons.NameConflict) {
			warnings++
		}
	}
	if warnings != 3 {
		t.Errorf("recorded %d NameConflict warnings, want 3", warnings)
	}
}

// TestUnionsAreWrittenWhole: a member of a union that someone else set is dropped by the
// merge, where keeping it next to the builder's member would make the update invalid (the
// crawler of an adopted earlier Monocle came with a rollingUpdate strategy).
func TestUnionsAreWrittenWhole(t *testing.T) {
	c := newFixture(t).newController()
	m := newMonocle("demo")
	crawler := resources.NewCrawlerDeployment(m, resources.Inputs{})
	live := crawler.DeepCopy()
	live.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromString("25%"))}}
	if !c.deployments.Drifted(crawler, live) {
		t.Fatal("another strategy is not drift")
	}
	if got := c.deployments.Merge(crawler, live).Spec.Strategy; got.Type != appsv1.RecreateDeploymentStrategyType || got.RollingUpdate != nil {
		t.Errorf("merged strategy %+v, want Recreate alone", got)
	}

	m.Spec.API.Replicas = ptr.To[int32](3)
	pdb := resources.NewAPIPodDisruptionBudget(m)
	livePDB := pdb.DeepCopy()
	livePDB.Spec.MaxUnavailable, livePDB.Spec.MinAvailable = nil, ptr.To(intstr.FromInt32(2))
	if !c.pdbs.Drifted(pdb, livePDB) {
		t.Fatal("minAvailable instead of maxUnavailable is not drift")
	}
	if got := c.pdbs.Merge(pdb, livePDB).Spec; got.MinAvailable != nil || got.MaxUnavailable == nil {
		t.Errorf("merged PodDisruptionBudget spec %+v, want maxUnavailable alone", got)
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
