package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// autoPilotOff is Monocle "demo" with AutoPilotOffAnnotation set to value.
func autoPilotOff(value string) *monoclev1alpha1.Monocle {
	m := newMonocle("demo")
	m.Annotations = map[string]string{monoclev1alpha1.AutoPilotOffAnnotation: value}
	return m
}

// TestAutoPilotMessageInPaused: the Paused condition carries what day2.AutoPilotMessage says
// of the annotation.
func TestAutoPilotMessageInPaused(t *testing.T) {
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{autoPilotOff("upgrade-phases")}
	_, monocleWrites := f.run()
	status := monocleWrites[0].(interface{ GetObject() runtime.Object }).GetObject().(*monoclev1alpha1.Monocle)
	if c := condition(t, status, monoclev1alpha1.ConditionPaused); !strings.HasSuffix(c.Message, "; auto-pilot off: upgrade-phases") {
		t.Errorf("Paused = %+v", c)
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
	if job == nil || !strings.Contains(strings.Join(job.Spec.Template.Spec.Containers[0].Command, " "), "janitor update-idents --elastic http://127.0.0.1:9200 --config /etc/monocle/config.yaml") {
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

func TestRunningJobNotYetCachedIsNotReportedDeleted(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	running := changedWithStatus(m, m)
	job := resources.NewUpdateIdentsJob(running, running.Status.ConfigHash, bundledAccess(running, objects))

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

// replaced returns objects with each object of the same kind and name as one of with replaced.
func replaced(objects []runtime.Object, with ...runtime.Object) []runtime.Object {
	out := append([]runtime.Object(nil), objects...)
	for _, w := range with {
		for i, o := range out {
			if resourceOf(o) == resourceOf(w) && o.(owned.Object).GetName() == w.(owned.Object).GetName() {
				out[i] = w
			}
		}
	}
	return out
}

// TestWipeCrawlerDataStopsTheCrawler: a WipeCrawlerData request scales the crawler to zero,
// waits until it has stopped, runs one Job with the janitor command, and once the Job
// succeeded reports it, records an event and starts the crawler again.
func TestWipeCrawlerDataStopsTheCrawler(t *testing.T) {
	m, objects := converged(t, withTokens(newMonocle("demo")), newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"}))
	tokens := newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"})
	m.Spec.Maintenance = []monoclev1alpha1.MaintenanceRequest{{Name: "recrawl", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "demo", Crawler: "gh"}}

	// 1. The crawler is asked to stop; no Job while it runs.
	_, writes, status := resync(t, m, objects, tokens)
	expectActions(t, writes, "update deployments demo-crawler")
	crawler := written[*appsv1.Deployment](writes, "demo-crawler")
	if r := ptr.Deref(crawler.Spec.Replicas, 1); r != 0 {
		t.Fatalf("crawler replicas = %d, want 0", r)
	}
	st := status.Status.Maintenance
	if len(st) != 1 || st[0].Phase != monoclev1alpha1.JobPending || st[0].Message != "Waiting for the crawler to stop" {
		t.Fatalf("status.maintenance = %+v", st)
	}

	// 2. Stopped: the Job runs the janitor.
	stopped := crawler.DeepCopy()
	stopped.Status = appsv1.DeploymentStatus{ObservedGeneration: stopped.Generation}
	objects = replaced(objects, stopped)
	_, writes, status = resync(t, status, objects, tokens)
	job := written[*batchv1.Job](writes, "demo-maintenance-recrawl")
	if job == nil {
		t.Fatalf("no maintenance Job: %v", describe(writes))
	}
	checkObject(t, "maintenance Job", resources.NewMaintenanceJob(m, m.Spec.Maintenance[0], status.Status.ConfigHash, bundledAccess(m, objects)), job)
	if got := strings.Join(job.Spec.Template.Spec.Containers[0].Command, " "); got != "monocle janitor wipe-crawler-data --elastic http://127.0.0.1:9200 --config /etc/monocle/config.yaml --workspace demo --crawler-name gh" {
		t.Errorf("command = %s", got)
	}
	if st := status.Status.Maintenance; st[0].Phase != monoclev1alpha1.JobRunning {
		t.Errorf("status.maintenance = %+v", st)
	}

	// 3. Done: reported, an event, the crawler runs again.
	done := job.DeepCopy()
	done.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	f, writes, status := resync(t, status, append(objects, done), tokens)
	if st := status.Status.Maintenance; st[0].Phase != monoclev1alpha1.JobSucceeded {
		t.Errorf("status.maintenance = %+v", st)
	}
	if c := written[*appsv1.Deployment](writes, "demo-crawler"); c == nil || ptr.Deref(c.Spec.Replicas, 1) != 1 {
		t.Errorf("the crawler was not started again: %v", describe(writes))
	}
	if !hasEvent(f, corev1.EventTypeNormal, reasons.MaintenanceSucceeded) {
		t.Error("no MaintenanceSucceeded event")
	}

	// 4. The same request never runs twice.
	_, writes, _ = resync(t, status, replaced(append(objects, done), written[*appsv1.Deployment](writes, "demo-crawler")), tokens)
	for _, d := range describe(writes) {
		if strings.HasPrefix(d, "create jobs") {
			t.Errorf("ran a finished request again: %s", d)
		}
	}
}

// TestMaintenanceRequestRefused: a request naming an unknown workspace or crawler, or a date
// Monocle does not read, fails at once with the reason and a Warning event, and stops nothing.
func TestMaintenanceRequestRefused(t *testing.T) {
	tokens := newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"})
	m, objects := converged(t, withTokens(newMonocle("demo")), tokens)
	for _, c := range []struct {
		r    monoclev1alpha1.MaintenanceRequest
		want string
	}{
		{monoclev1alpha1.MaintenanceRequest{Name: "a", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "nope", Crawler: "gh"}, "config.yaml has no workspace nope (it has: [demo])"},
		{monoclev1alpha1.MaintenanceRequest{Name: "b", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "demo", Crawler: "gl"}, "workspace demo has no crawler gl (it has: [gh])"},
		{monoclev1alpha1.MaintenanceRequest{Name: "c", Operation: monoclev1alpha1.SetCrawlerCommitDate, Workspace: "demo", Crawler: "gh", CommitDate: "2023-01-01T00:00:00.5Z"}, "it is not a date Monocle reads"},
	} {
		req := m.DeepCopy()
		req.Spec.Maintenance = []monoclev1alpha1.MaintenanceRequest{c.r}
		f, writes, status := resync(t, req, objects, tokens)
		expectActions(t, writes)
		st := status.Status.Maintenance
		if len(st) != 1 || st[0].Phase != monoclev1alpha1.JobFailed || !strings.Contains(st[0].Message, c.want) {
			t.Errorf("%s: status.maintenance = %+v, want Failed saying %q", c.r.Name, st, c.want)
		}
		if !hasEvent(f, corev1.EventTypeWarning, reasons.MaintenanceFailed) {
			t.Errorf("%s: no MaintenanceFailed event", c.r.Name)
		}
	}
}

// TestUpdateSinceMovedEarlier: a crawler's update_since moved earlier than the one it last
// started with makes an automatic SetCrawlerCommitDate request, run with the crawler stopped;
// one moved later makes none.
func TestUpdateSinceMovedEarlier(t *testing.T) {
	tokens := newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"})
	m, objects := converged(t, withTokens(newMonocle("demo")), tokens)
	if got := m.Status.Crawlers; len(got) != 1 || got[0] != (monoclev1alpha1.CrawlerStatus{Workspace: "demo", Name: "gh", UpdateSince: "2024-01-01"}) {
		t.Fatalf("status.crawlers = %+v", got)
	}

	later := m.DeepCopy()
	later.Spec.Config = strings.Replace(githubConfig, "2024-01-01", "2025-01-01", 1)
	_, writes, status := resync(t, later, objects, tokens)
	if len(status.Status.Maintenance) != 0 || status.Status.Crawlers[0].UpdateSince != "2025-01-01" {
		t.Errorf("moved later: status.maintenance %+v, crawlers %+v", status.Status.Maintenance, status.Status.Crawlers)
	}
	if c := written[*appsv1.Deployment](writes, "demo-crawler"); c != nil && ptr.Deref(c.Spec.Replicas, 1) == 0 {
		t.Error("moved later: the crawler was stopped")
	}

	earlier := m.DeepCopy()
	earlier.Spec.Config = strings.Replace(githubConfig, "2024-01-01", "2023-03-01", 1)
	f, writes, status := resync(t, earlier, objects, tokens)
	st := status.Status.Maintenance
	if len(st) != 1 || st[0].Automatic == nil || st[0].Automatic.Operation != monoclev1alpha1.SetCrawlerCommitDate ||
		st[0].Automatic.CommitDate != "2023-03-01" || st[0].Automatic.Crawler != "gh" || st[0].Phase != monoclev1alpha1.JobPending {
		t.Fatalf("status.maintenance = %+v", st)
	}
	if c := written[*appsv1.Deployment](writes, "demo-crawler"); c == nil || ptr.Deref(c.Spec.Replicas, 1) != 0 {
		t.Errorf("the crawler was not stopped: %v", describe(writes))
	}
	if !hasEvent(f, corev1.EventTypeNormal, reasons.UpdateSinceMovedEarlier) {
		t.Error("no UpdateSinceMovedEarlier event")
	}
	// The request is kept from the status on the next syncs and runs once the crawler stopped.
	stopped := written[*appsv1.Deployment](writes, "demo-crawler").DeepCopy()
	stopped.Status = appsv1.DeploymentStatus{ObservedGeneration: stopped.Generation}
	_, writes, status = resync(t, status, replaced(objects, stopped, written[*corev1.ConfigMap](writes, "demo-api")), tokens)
	job := written[*batchv1.Job](writes, resources.MaintenanceJobName(m, st[0].Request))
	if job == nil || !strings.Contains(strings.Join(job.Spec.Template.Spec.Containers[0].Command, " "), "set-crawler-commit-date") ||
		!strings.Contains(strings.Join(job.Spec.Template.Spec.Containers[0].Command, " "), "--commit-date 2023-03-01") {
		t.Fatalf("no set-crawler-commit-date Job: %v", describe(writes))
	}
	if len(status.Status.Maintenance) != 1 || status.Status.Maintenance[0].Phase != monoclev1alpha1.JobRunning {
		t.Errorf("status.maintenance = %+v", status.Status.Maintenance)
	}
}
