package day2

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
	until := func(d int) *metav1.Time { return StatusTime(time.Date(2026, 11, d, 4, 0, 0, 0, time.UTC)) }
	crawlers := func(u *metav1.Time) []monoclev1alpha1.CrawlerStatus {
		return []monoclev1alpha1.CrawlerStatus{{Workspace: "demo", Name: "gh", CrawledUntil: u}, {Workspace: "demo", Name: "new"}}
	}
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	step := func(at time.Duration, u *metav1.Time, d *appsv1.Deployment) CrawlerStall {
		t.Helper()
		s := CheckCrawlers(m, crawlers(u), d, true, t0.Add(at))
		m.Status.Crawlers, m.Status.CrawlerRestarts = s.Crawlers, s.Restarts
		return s
	}

	if s := step(0, until(20), running); s.Restarted || s.Condition.Status != metav1.ConditionTrue || s.Crawlers[0].LastProgressTime == nil || s.Crawlers[1].LastProgressTime != nil {
		t.Fatalf("first read: %+v %+v", s.Condition, s.Crawlers)
	}
	if s := step(5*time.Hour, until(20), running); s.Restarted || s.Condition.Status != metav1.ConditionTrue {
		t.Fatalf("5h without progress: %+v", s.Condition)
	}
	s := step(7*time.Hour, until(20), running)
	if !s.Restarted || s.Restarts.Total != 1 || s.Restarts.SinceProgress != 1 || s.Condition.Reason != reasons.CrawlerRestarted ||
		!strings.Contains(s.Restarts.Reason, "demo/gh") || strings.Contains(s.Restarts.Reason, "demo/new") {
		t.Fatalf("7h without progress: restarted %v, %+v, %+v", s.Restarted, s.Restarts, s.Condition)
	}
	if got := CrawlerRestartedAt(m); got != t0.Add(7*time.Hour).Format(time.RFC3339) {
		t.Errorf("restart annotation %q", got)
	}
	// The restarted pod is not ready yet: that is no progress.
	restarting := deploymentOf(newMonocleImage, 1)
	restarting.Status.ReadyReplicas = 0
	if s := step(7*time.Hour+time.Minute, until(20), restarting); s.Restarted || s.Restarts.SinceProgress != 1 || s.Condition.Reason != reasons.CrawlerRestarted {
		t.Fatalf("while the pod restarts: restarted %v, %+v, %+v", s.Restarted, s.Restarts, s.Condition)
	}
	if s := step(8*time.Hour, until(20), running); s.Restarted || s.Condition.Reason != reasons.CrawlerRestarted {
		t.Fatalf("1h after the restart: restarted %v, %+v", s.Restarted, s.Condition)
	}
	if s := step(14*time.Hour, until(20), running); !s.Restarted || s.Restarts.SinceProgress != 2 {
		t.Fatalf("7h after the restart: restarted %v, %+v", s.Restarted, s.Restarts)
	}
	s = step(22*time.Hour, until(20), running)
	if s.Restarted || s.Condition.Reason != reasons.CrawlerStuck || !strings.Contains(s.Condition.Message, "did not help") {
		t.Fatalf("after maxRestarts: restarted %v, %+v", s.Restarted, s.Condition)
	}
	// Progress: the count of restarts in a row starts over; the total stays.
	s = step(23*time.Hour, until(25), running)
	if s.Condition.Status != metav1.ConditionTrue || s.Restarts.SinceProgress != 0 || s.Restarts.Total != 2 {
		t.Fatalf("progress: %+v %+v", s.Condition, s.Restarts)
	}
	// A stopped crawler is not stuck: its window starts again when it runs.
	stopped := deploymentOf(newMonocleImage, 0)
	step(40*time.Hour, until(25), stopped)
	if s := step(41*time.Hour, until(25), running); s.Restarted || s.Condition.Status != metav1.ConditionTrue {
		t.Fatalf("after a stop: %+v", s.Condition)
	}
	// stuckAfter 0 turns the check off.
	m.Spec.Crawler.StuckAfter = &metav1.Duration{}
	if s := step(90*time.Hour, until(25), running); s.Restarted || s.Condition.Reason != reasons.StuckCheckOff {
		t.Fatalf("off: %+v", s.Condition)
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
