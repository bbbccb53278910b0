package controller

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestStuckCrawlerRestarts follows a crawler whose crawledUntil stops moving: the pod is
// restarted after stuckAfter, again after as long if nothing moved, and after maxRestarts the
// operator stops and says so; progress resets the count. Each step starts from the status
// the previous one left.
func TestStuckCrawlerRestarts(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.Crawler.MaxRestarts = func(v int32) *int32 { return &v }(2)
	running := deploymentOf(newMonocleImage, 1)
	until := func(d int) *metav1.Time { return statusTime(time.Date(2026, 11, d, 4, 0, 0, 0, time.UTC)) }
	crawlers := func(u *metav1.Time) []monoclev1alpha1.CrawlerStatus {
		return []monoclev1alpha1.CrawlerStatus{{Workspace: "demo", Name: "gh", CrawledUntil: u}, {Workspace: "demo", Name: "new"}}
	}
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	step := func(at time.Duration, u *metav1.Time, d *appsv1.Deployment) crawlerStall {
		t.Helper()
		s := checkCrawlers(m, crawlers(u), d, true, t0.Add(at))
		m.Status.Crawlers, m.Status.CrawlerRestarts = s.crawlers, s.restarts
		return s
	}

	if s := step(0, until(20), running); s.restarted || s.condition.Status != metav1.ConditionTrue || s.crawlers[0].LastProgressTime == nil || s.crawlers[1].LastProgressTime != nil {
		t.Fatalf("first read: %+v %+v", s.condition, s.crawlers)
	}
	if s := step(5*time.Hour, until(20), running); s.restarted || s.condition.Status != metav1.ConditionTrue {
		t.Fatalf("5h without progress: %+v", s.condition)
	}
	s := step(7*time.Hour, until(20), running)
	if !s.restarted || s.restarts.Total != 1 || s.restarts.SinceProgress != 1 || s.condition.Reason != reasons.CrawlerRestarted ||
		!strings.Contains(s.restarts.Reason, "demo/gh") || strings.Contains(s.restarts.Reason, "demo/new") {
		t.Fatalf("7h without progress: restarted %v, %+v, %+v", s.restarted, s.restarts, s.condition)
	}
	if got := crawlerRestartedAt(m); got != t0.Add(7*time.Hour).Format(time.RFC3339) {
		t.Errorf("restart annotation %q", got)
	}
	// The restarted pod is not ready yet: that is no progress.
	restarting := deploymentOf(newMonocleImage, 1)
	restarting.Status.ReadyReplicas = 0
	if s := step(7*time.Hour+time.Minute, until(20), restarting); s.restarted || s.restarts.SinceProgress != 1 || s.condition.Reason != reasons.CrawlerRestarted {
		t.Fatalf("while the pod restarts: restarted %v, %+v, %+v", s.restarted, s.restarts, s.condition)
	}
	if s := step(8*time.Hour, until(20), running); s.restarted || s.condition.Reason != reasons.CrawlerRestarted {
		t.Fatalf("1h after the restart: restarted %v, %+v", s.restarted, s.condition)
	}
	if s := step(14*time.Hour, until(20), running); !s.restarted || s.restarts.SinceProgress != 2 {
		t.Fatalf("7h after the restart: restarted %v, %+v", s.restarted, s.restarts)
	}
	s = step(22*time.Hour, until(20), running)
	if s.restarted || s.condition.Reason != reasons.CrawlerStuck || !strings.Contains(s.condition.Message, "did not help") {
		t.Fatalf("after maxRestarts: restarted %v, %+v", s.restarted, s.condition)
	}
	// Progress: the count of restarts in a row starts over; the total stays.
	s = step(23*time.Hour, until(25), running)
	if s.condition.Status != metav1.ConditionTrue || s.restarts.SinceProgress != 0 || s.restarts.Total != 2 {
		t.Fatalf("progress: %+v %+v", s.condition, s.restarts)
	}
	// A stopped crawler is not stuck: its window starts again when it runs.
	stopped := deploymentOf(newMonocleImage, 0)
	step(40*time.Hour, until(25), stopped)
	if s := step(41*time.Hour, until(25), running); s.restarted || s.condition.Status != metav1.ConditionTrue {
		t.Fatalf("after a stop: %+v", s.condition)
	}
	// stuckAfter 0 turns the check off.
	m.Spec.Crawler.StuckAfter = &metav1.Duration{}
	if s := step(90*time.Hour, until(25), running); s.restarted || s.condition.Reason != reasons.StuckCheckOff {
		t.Fatalf("off: %+v", s.condition)
	}
}

func TestCrawlerRestartAnnotation(t *testing.T) {
	m := newMonocle("demo")
	plain := resources.NewCrawlerDeployment(m, resources.Inputs{})
	restarted := resources.NewCrawlerDeployment(m, resources.Inputs{CrawlerRestartedAt: "2026-11-25T07:00:00Z"})
	if _, ok := plain.Spec.Template.Annotations[resources.CrawlerRestartedAtAnnotation]; ok {
		t.Error("a crawler never restarted carries the annotation")
	}
	if got := restarted.Spec.Template.Annotations[resources.CrawlerRestartedAtAnnotation]; got != "2026-11-25T07:00:00Z" {
		t.Errorf("annotation %q", got)
	}
	if plain.Annotations[resources.SpecHashAnnotation] == restarted.Annotations[resources.SpecHashAnnotation] {
		t.Error("the spec hash does not change with the restart")
	}
}
