package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

const githubConfig = "workspaces:\n  - name: demo\n    crawlers:\n      - name: gh\n        update_since: \"2024-01-01\"\n        provider:\n          github_organization: change-metrics\n          github_token: MY_GITHUB_TOKEN\n"

func newUserSecret(rv string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens", Namespace: metav1.NamespaceDefault, ResourceVersion: rv}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func withTokens(m *monoclev1alpha1.Monocle) *monoclev1alpha1.Monocle {
	m.Spec.Config = githubConfig
	m.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
	return m
}

// resync runs the fixture again on the given state and returns the writes.
func resync(t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object, userSecrets ...*corev1.Secret) (*fixture, []core.Action, *monoclev1alpha1.Monocle) {
	t.Helper()
	return resyncWith(t, m, objects, func(f *fixture) { f.userSecrets = userSecrets })
}

// resyncWith is resync with the objects setup seeds into the fixture besides m and objects.
func resyncWith(t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object, setup func(*fixture)) (*fixture, []core.Action, *monoclev1alpha1.Monocle) {
	t.Helper()
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	setup(f)
	kubeWrites, status := f.runStatus()
	return f, kubeWrites, status
}

func condition(t *testing.T, m *monoclev1alpha1.Monocle, typ string) metav1.Condition {
	t.Helper()
	c := apimeta.FindStatusCondition(m.Status.Conditions, typ)
	if c == nil {
		t.Fatalf("no %s condition in %+v", typ, m.Status.Conditions)
	}
	return *c
}

func TestUserSecretChangeRollsAPIAndCrawlerOnly(t *testing.T) {
	secret := newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"})
	m, objects := converged(t, withTokens(newMonocle("demo")), secret)
	if c := condition(t, m, monoclev1alpha1.ConditionSecretsReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("SecretsReady = %+v", c)
	}

	// Same data at a new resourceVersion (a label change): nothing rolls.
	_, writes, _ := resync(t, m, objects, newUserSecret("2", map[string]string{"MY_GITHUB_TOKEN": "a"}))
	expectActions(t, writes)

	// New data: the API and the crawler roll, Elasticsearch does not.
	_, writes, _ = resync(t, m, objects, newUserSecret("3", map[string]string{"MY_GITHUB_TOKEN": "b"}))
	expectActions(t, writes, "update deployments demo-api", "update deployments demo-crawler")
	for _, a := range writes {
		d := a.(core.UpdateAction).GetObject().(*appsv1.Deployment)
		old := find[*appsv1.Deployment](objects, d.Name)
		if d.Spec.Template.Annotations[resources.SecretHashAnnotation] == old.Spec.Template.Annotations[resources.SecretHashAnnotation] {
			t.Errorf("%s: the secret hash annotation did not change", d.Name)
		}
	}
}

func TestUserSecretIsReadOncePerResourceVersion(t *testing.T) {
	secret := newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"})
	m, objects := converged(t, withTokens(newMonocle("demo")), secret)
	// The first sync of this process reads the Secret's data once.
	for i, actions := range syncTwice(t, m, objects, func(f *fixture) { f.userSecrets = []*corev1.Secret{secret} }) {
		if want := 1 - i; len(actions) != want {
			t.Errorf("sync %d made %d API calls (%v), want %d", i, len(actions), describe(actions), want)
		}
	}
}

// syncTwice syncs m twice with one controller over objects and what setup seeds, and
// returns the kube client's actions of each sync.
func syncTwice(t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object, setup func(*fixture)) [2][]core.Action {
	t.Helper()
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	setup(f)
	c := f.newController()
	_, ctx := ktesting.NewTestContext(t)
	var out [2][]core.Action
	for i := range out {
		f.kubeclient.ClearActions()
		if err := c.syncHandler(ctx, cache.ObjectName{Namespace: m.Namespace, Name: m.Name}); err != nil {
			t.Fatal(err)
		}
		out[i] = f.kubeclient.Actions()
	}
	return out
}

func TestMissingUserSecretHoldsTheRollout(t *testing.T) {
	m, objects := converged(t, withTokens(newMonocle("demo")), newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"}))
	_, writes, status := resync(t, m, objects)
	expectActions(t, writes)
	c := condition(t, status, monoclev1alpha1.ConditionSecretsReady)
	if c.Status != metav1.ConditionFalse || c.Reason != reasons.SecretNotFound || !strings.Contains(c.Message, "tokens") {
		t.Errorf("SecretsReady = %+v, want False/SecretNotFound naming the Secret", c)
	}
	if d := condition(t, status, monoclev1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != reasons.SecretNotFound {
		t.Errorf("Degraded = %+v", d)
	}

	// A new Monocle whose Secret is missing gets no API or crawler at all.
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{withTokens(newMonocle("fresh"))}
	writes, _ = f.run()
	for _, d := range describe(writes) {
		if strings.Contains(d, "deployments") {
			t.Errorf("created a workload without its Secret: %s", d)
		}
	}
}

func TestTokenNamedByConfigButMissing(t *testing.T) {
	m, objects := converged(t, withTokens(newMonocle("demo")), newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"}))
	// The token is gone: the crawler is held back, the API (which reads the Secret too) rolls
	// and keeps serving what is indexed.
	_, writes, status := resync(t, m, objects, newUserSecret("2", map[string]string{"OTHER": "a"}))
	expectActions(t, writes, "update deployments demo-api")
	c := condition(t, status, monoclev1alpha1.ConditionSecretsReady)
	if c.Status != metav1.ConditionFalse || c.Reason != reasons.TokenMissing || !strings.Contains(c.Message, "MY_GITHUB_TOKEN") ||
		!strings.Contains(c.Message, "the crawler is not started or rolled") {
		t.Errorf("SecretsReady = %+v, want False/TokenMissing naming MY_GITHUB_TOKEN and the crawler", c)
	}
	// An empty value is no token.
	_, writes, status = resync(t, m, objects, newUserSecret("3", map[string]string{"MY_GITHUB_TOKEN": ""}))
	expectActions(t, writes, "update deployments demo-api")
	if c := condition(t, status, monoclev1alpha1.ConditionSecretsReady); c.Reason != reasons.TokenMissing {
		t.Errorf("with an empty token: SecretsReady = %+v", c)
	}

	// A workspace reading the crawlers' key from its own variable needs the Secret to have it.
	own := m.DeepCopy()
	own.Spec.Config = strings.Replace(githubConfig, "  - name: demo\n", "  - name: demo\n    crawlers_api_key: DEMO_CRAWLERS_KEY\n", 1)
	_, _, status = resync(t, own, objects, newUserSecret("2", map[string]string{"MY_GITHUB_TOKEN": "a"}))
	if c := condition(t, status, monoclev1alpha1.ConditionSecretsReady); c.Reason != reasons.TokenMissing || !strings.Contains(c.Message, "DEMO_CRAWLERS_KEY") {
		t.Errorf("with crawlers_api_key: SecretsReady = %+v", c)
	}

	noRef := newMonocle("noref")
	noRef.Spec.Config = githubConfig
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{noRef}
	_, monocleWrites := f.run()
	got := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	if c := condition(t, got, monoclev1alpha1.ConditionSecretsReady); c.Reason != reasons.TokenMissing || !strings.Contains(c.Message, "secretRef") {
		t.Errorf("without secretRef: SecretsReady = %+v", c)
	}
}

func TestConfigChangeRunsOneUpdateIdentsJob(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	if m.Status.UpdateIdents != nil {
		t.Fatalf("a new Monocle ran update-idents: %+v", m.Status.UpdateIdents)
	}
	changed := m.DeepCopy()
	changed.Spec.Config = "workspaces:\n  - name: demo\n    crawlers: []\n    idents:\n      - ident: Jane\n        aliases: [github.com/jane]\n"
	_, writes, status := resync(t, changed, objects)
	hash := resources.ConfigHash(changed.Spec.Config)
	jobName := resources.UpdateIdentsJobName(changed, hash)
	expectActions(t, writes, "update configmaps demo-api", "update deployments demo-api", "update deployments demo-crawler", "create jobs "+jobName)
	var job *batchv1.Job
	for _, a := range writes {
		if j, ok := a.(core.CreateAction).GetObject().(*batchv1.Job); ok {
			job = j
		}
	}
	if job == nil || !strings.Contains(strings.Join(job.Spec.Template.Spec.Containers[0].Command, " "), "janitor update-idents --elastic http://demo-elastic:9200 --config /etc/monocle/config.yaml") {
		t.Fatalf("update-idents Job: %+v", job)
	}
	if status.Status.UpdateIdents == nil || status.Status.UpdateIdents.Name != jobName || status.Status.UpdateIdents.Phase != monoclev1alpha1.JobRunning {
		t.Errorf("status.updateIdents = %+v", status.Status.UpdateIdents)
	}
	if status.Status.ConfigHash != hash {
		t.Errorf("status.configHash = %q, want %q", status.Status.ConfigHash, hash)
	}

	// With the Job known to the cache and running, a second config change waits for it.
	again := status.DeepCopy()
	again.Spec.Config = "workspaces:\n  - name: demo\n    crawlers: []\n    projects: []\n"
	_, writes, status = resync(t, again, append(objects, job))
	for _, d := range describe(writes) {
		if strings.HasPrefix(d, "create jobs") {
			t.Errorf("started a second update-idents Job while one runs: %s", d)
		}
	}
	if status.Status.UpdateIdents.Phase != monoclev1alpha1.JobPending || !strings.Contains(status.Status.UpdateIdents.Message, jobName) {
		t.Errorf("status.updateIdents while another Job runs = %+v", status.Status.UpdateIdents)
	}

	// The same config never runs twice: the finished Job's outcome is kept, none is created.
	done := job.DeepCopy()
	done.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}
	_, writes, status = resync(t, changedWithStatus(changed, status), append(objects, done))
	for _, d := range describe(writes) {
		if strings.HasPrefix(d, "create jobs") {
			t.Errorf("re-ran update-idents: %s", d)
		}
	}
	if c := condition(t, status, monoclev1alpha1.ConditionIdentsUpdated); c.Status != metav1.ConditionFalse || c.Reason != reasons.UpdateIdentsFailed {
		t.Errorf("IdentsUpdated = %+v, want False/UpdateIdentsFailed", c)
	}
}

// TestUpdateIdentsWaitsForTheAPI: after a config change the update-idents Job starts only
// once the API runs the new config with a ready pod (the API creates a new workspace's index
// at start, and the janitor needs it).
func TestUpdateIdentsWaitsForTheAPI(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	changed := m.DeepCopy()
	changed.Spec.Config = "workspaces:\n  - name: demo\n    crawlers: []\n  - name: other\n    crawlers: []\n"
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{changed}
	f.kubeobjects = objects
	f.bumpGenerations = true
	writes, monocleWrites := f.run()
	expectActions(t, writes, "update configmaps demo-api", "update deployments demo-api", "update deployments demo-crawler")
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	if u := status.Status.UpdateIdents; u == nil || u.Phase != monoclev1alpha1.JobPending || !strings.Contains(u.Message, "Waiting for the API to run the new config") {
		t.Fatalf("status.updateIdents while the API rolls = %+v", u)
	}

	// The API rolled out the new config: the Job starts.
	api := written[*appsv1.Deployment](writes, "demo-api").DeepCopy()
	api.Status = appsv1.DeploymentStatus{ObservedGeneration: api.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	var rolled []runtime.Object
	for _, o := range objects {
		switch o := o.(type) {
		case *appsv1.Deployment:
			if o.Name == "demo-api" {
				rolled = append(rolled, api)
				continue
			}
			rolled = append(rolled, written[*appsv1.Deployment](writes, o.Name))
			continue
		case *corev1.ConfigMap:
			rolled = append(rolled, written[*corev1.ConfigMap](writes, o.Name))
			continue
		}
		rolled = append(rolled, o)
	}
	next := changed.DeepCopy()
	next.Status = status.Status
	_, writes, status = resync(t, next, rolled)
	jobName := resources.UpdateIdentsJobName(changed, resources.ConfigHash(changed.Spec.Config))
	if written[*batchv1.Job](writes, jobName) == nil {
		t.Errorf("no update-idents Job once the API runs the config: %v (status %+v)", describe(writes), status.Status.UpdateIdents)
	}
}

// changedWithStatus is m's spec with the status of s, where s recorded a Running Job.
func changedWithStatus(m, s *monoclev1alpha1.Monocle) *monoclev1alpha1.Monocle {
	out := m.DeepCopy()
	out.Status = *s.Status.DeepCopy()
	out.Status.ConfigHash = resources.ConfigHash(resources.Config(m))
	out.Status.UpdateIdents = &monoclev1alpha1.MaintenanceJobStatus{
		Name: resources.UpdateIdentsJobName(m, out.Status.ConfigHash), ConfigHash: out.Status.ConfigHash, Phase: monoclev1alpha1.JobRunning,
	}
	return out
}

func TestInvalidConfigKeepsTheLastValidOne(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	bad := m.DeepCopy()
	bad.Spec.Config = "workspaces: [ {name: demo, crawlers: []}, {name: demo, crawlers: []} ]"
	_, writes, status := resync(t, bad, objects)
	expectActions(t, writes)
	c := condition(t, status, monoclev1alpha1.ConditionConfigValid)
	if c.Status != metav1.ConditionFalse || c.Reason != reasons.InvalidConfig || !strings.Contains(c.Message, "demo") {
		t.Errorf("ConfigValid = %+v", c)
	}
	if status.Status.ConfigHash != m.Status.ConfigHash {
		t.Errorf("config hash moved to an invalid config")
	}
	if r := condition(t, status, monoclev1alpha1.ConditionReady); r.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v: the last valid config still serves", r)
	}
}

func TestConfigChangeDoesNotRestartReloadingImages(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.Image = "quay.io/change-metrics/monocle:1.12.0"
	m, objects := converged(t, m)
	changed := m.DeepCopy()
	changed.Spec.Config = "workspaces:\n  - name: other\n    crawlers: []\n"
	_, writes, _ := resync(t, changed, objects)
	for _, d := range describe(writes) {
		if strings.Contains(d, "deployments") {
			t.Errorf("restarted a Monocle that reloads its config: %s", d)
		}
	}
}

func TestAPIDisruptionBudgetFollowsReplicas(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.API.Replicas = ptr.To[int32](3)
	m, objects := converged(t, m)
	pdb := find[runtime.Object](objects, "demo-api")
	if find[*appsv1.Deployment](objects, "demo-api") == nil || pdb == nil {
		t.Fatal("no API Deployment or PodDisruptionBudget")
	}
	one := m.DeepCopy()
	one.Spec.API.Replicas = ptr.To[int32](1)
	_, writes, _ := resync(t, one, objects)
	expectActions(t, writes, "update deployments demo-api", "delete poddisruptionbudgets demo-api")
}

func TestPausedMonocleIsLeftAlone(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	find[*appsv1.Deployment](objects, "demo-api").Spec.Replicas = ptr.To[int32](0)
	paused := m.DeepCopy()
	paused.Annotations = map[string]string{monoclev1alpha1.PausedAnnotation: "true"}
	_, writes, status := resync(t, paused, objects)
	expectActions(t, writes)
	if c := condition(t, status, monoclev1alpha1.ConditionPaused); c.Status != metav1.ConditionTrue {
		t.Errorf("Paused = %+v", c)
	}
	// Resuming repairs the drift.
	resumed := status.DeepCopy()
	delete(resumed.Annotations, monoclev1alpha1.PausedAnnotation)
	_, writes, status = resync(t, resumed, objects)
	expectActions(t, writes, "update deployments demo-api")
	if c := condition(t, status, monoclev1alpha1.ConditionPaused); c.Status != metav1.ConditionFalse {
		t.Errorf("Paused after resuming = %+v", c)
	}
}

func TestStorage(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	pvc := func(size string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data-demo-elastic-0", Namespace: m.Namespace, Labels: resources.Labels(m, resources.ComponentElastic)},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("standard"),
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		}
	}
	class := func(expand bool) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, AllowVolumeExpansion: ptr.To(expand)}
	}
	grow := m.DeepCopy()
	grow.Spec.StorageSize = ptr.To(resource.MustParse("5Gi"))

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{grow}
	f.kubeobjects = append(append([]runtime.Object(nil), objects...), pvc("1Gi"))
	f.uncached = []runtime.Object{class(true)}
	writes, monocleWrites := f.run()
	var expanded *corev1.PersistentVolumeClaim
	for _, a := range writes {
		if p, ok := a.(core.UpdateAction).GetObject().(*corev1.PersistentVolumeClaim); ok {
			expanded = p
		}
	}
	if expanded == nil || expanded.Spec.Resources.Requests.Storage().String() != "5Gi" {
		t.Fatalf("PVC not expanded: %v", describe(writes))
	}
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	if c := condition(t, status, monoclev1alpha1.ConditionStorageReady); c.Reason != reasons.Resizing {
		t.Errorf("StorageReady = %+v, want Resizing", c)
	}

	for name, tc := range map[string]struct {
		pvc   *corev1.PersistentVolumeClaim
		class *storagev1.StorageClass
		want  string
	}{
		"class forbids expansion": {pvc("1Gi"), class(false), "does not allow volume expansion"},
		"shrink":                  {pvc("10Gi"), class(true), "cannot shrink"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.monocles = []*monoclev1alpha1.Monocle{grow}
			f.kubeobjects = append(append([]runtime.Object(nil), objects...), tc.pvc)
			f.uncached = []runtime.Object{tc.class}
			writes, monocleWrites := f.run()
			for _, d := range describe(writes) {
				if strings.Contains(d, "persistentvolumeclaims") || strings.HasPrefix(d, "delete") {
					t.Errorf("changed storage: %s", d)
				}
			}
			status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
			c := condition(t, status, monoclev1alpha1.ConditionStorageReady)
			if c.Status != metav1.ConditionFalse || c.Reason != reasons.StorageChangeRefused || !strings.Contains(c.Message, tc.want) {
				t.Errorf("StorageReady = %+v, want refused with %q", c, tc.want)
			}
		})
	}
}

func TestRunningJobNotYetCachedIsNotReportedDeleted(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	running := changedWithStatus(m, m)
	job := resources.NewUpdateIdentsJob(running, running.Status.ConfigHash, resources.ElasticAccess{})

	// The API server has the Job the previous sync created; the cache has not seen it yet.
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{running}
	f.kubeobjects = objects
	f.uncached = []runtime.Object{job}
	writes, monocleWrites := f.run()
	expectActions(t, writes)
	cached := running
	if len(monocleWrites) == 1 {
		cached = monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	}
	if got := cached.Status.UpdateIdents; got == nil || got.Phase != monoclev1alpha1.JobRunning {
		t.Errorf("status.updateIdents = %+v, want Running", got)
	}

	// Gone from the API server too: then it was deleted, and that is reported.
	_, writes, status := resync(t, running, objects)
	expectActions(t, writes)
	if got := status.Status.UpdateIdents; got == nil || got.Phase != monoclev1alpha1.JobFailed {
		t.Errorf("status.updateIdents after a deletion = %+v, want Failed", got)
	}
}

// oidcConfig configures an OIDC auth provider, whose client secret the API reads from
// MONOCLE_OIDC_KEYCLOAK_CLIENT_SECRET.
const oidcConfig = "auth:\n  enforce_auth: true\n  auth_provider:\n    oidc_provider_name: keycloak\n    oidc_issuer_url: https://sso.example.com/realms/x\n    oidc_client_id: monocle\nworkspaces:\n  - name: demo\n    crawlers: []\n"

// TestOIDCClientSecretHoldsTheAPI: without its OIDC client secret (missing or empty) Monocle
// would serve with authentication off: the API is not created, the crawler is, and
// SecretsReady names the variable; once the Secret has it, the API is created.
func TestOIDCClientSecretHoldsTheAPI(t *testing.T) {
	for name, data := range map[string]map[string]string{"missing": {}, "empty": {"MONOCLE_OIDC_KEYCLOAK_CLIENT_SECRET": ""}} {
		m := newMonocle("demo")
		m.Spec.Config = oidcConfig
		m.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{m}
		f.userSecrets = []*corev1.Secret{newUserSecret("1", data)}
		f.kubeobjects = []runtime.Object{readyElastic(m)}
		kubeWrites, monocleWrites := f.run()
		if written[*appsv1.Deployment](kubeWrites, "demo-api") != nil || written[*appsv1.Deployment](kubeWrites, "demo-crawler") == nil {
			t.Errorf("%s: writes %v, want the crawler and no API", name, describe(kubeWrites))
		}
		status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
		c := condition(t, status, monoclev1alpha1.ConditionSecretsReady)
		if c.Status != metav1.ConditionFalse || c.Reason != reasons.TokenMissing ||
			!strings.Contains(c.Message, "MONOCLE_OIDC_KEYCLOAK_CLIENT_SECRET") || !strings.Contains(c.Message, "tokens") ||
			!strings.Contains(c.Message, "authentication disabled") {
			t.Errorf("%s: SecretsReady = %+v", name, c)
		}
	}
	m := newMonocle("demo")
	m.Spec.Config = oidcConfig
	m.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.userSecrets = []*corev1.Secret{newUserSecret("1", map[string]string{"MONOCLE_OIDC_KEYCLOAK_CLIENT_SECRET": "s3cret"})}
	f.kubeobjects = []runtime.Object{readyElastic(m)}
	kubeWrites, _ := f.run()
	if written[*appsv1.Deployment](kubeWrites, "demo-api") == nil {
		t.Errorf("with the client secret: writes %v, want the API", describe(kubeWrites))
	}
}
