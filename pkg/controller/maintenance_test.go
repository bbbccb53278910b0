package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

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
	checkObject(t, "maintenance Job", resources.NewMaintenanceJob(m, m.Spec.Maintenance[0], status.Status.ConfigHash, resources.ElasticAccess{}), job)
	if got := strings.Join(job.Spec.Template.Spec.Containers[0].Command, " "); got != "monocle janitor wipe-crawler-data --elastic http://demo-elastic:9200 --config /etc/monocle/config.yaml --workspace demo --crawler-name gh" {
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
