package day2

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// Stuck crawlers. Monocle 1.11.2's crawler answers /health with 200 whatever it
// does (src/Macroscope/Main.hs), and can hang on one request for hours
// (change-metrics/monocle#1154, fixed after 1.11.2). The operator reads how far each crawler
// has crawled (WithProgress); a running crawler whose crawledUntil has not moved for
// spec.crawler.stuckAfter gets its pod restarted, at most spec.crawler.maxRestarts times in a
// row without progress in between, after which the CrawlersProgressing condition says that
// restarts do not help. The restart is the time of status.crawlerRestarts.lastTime on the
// crawler's pod template: a status written first, then the pod template, so that an operator
// killed in between restarts the pod once.

// Defaults of spec.crawler.
const (
	DefaultCrawlerStuckAfter  = 6 * time.Hour
	DefaultCrawlerMaxRestarts = 3
)

// CrawlerStall is what the crawlers' progress asks of a sync.
type CrawlerStall struct {
	// Crawlers are status.crawlers with lastProgressTime.
	Crawlers []monoclev1alpha1.CrawlerStatus
	// Restarts is status.crawlerRestarts.
	Restarts *monoclev1alpha1.CrawlerRestarts
	// Condition is CrawlersProgressing; nil while the progress is not read.
	Condition *metav1.Condition
	// Restarted is set when this sync asks for a new restart.
	Restarted bool
}

// CrawlerRestartedAt is the value of the crawler's restart annotation for m: the time of its
// last restart in the status, "" without one.
func CrawlerRestartedAt(m *monoclev1alpha1.Monocle) string {
	if r := m.Status.CrawlerRestarts; r != nil && r.LastTime != nil {
		return r.LastTime.UTC().Format(time.RFC3339)
	}
	return ""
}

// CheckCrawlers returns the crawlers' progress at now: crawlers are those of the config in
// force with their progress (WithProgress; read says whether a read found it), crawler the
// crawler Deployment. A crawler stopped on purpose (for maintenance, a restore or an upgrade)
// starts its window again; one whose pod is not ready is not counted stuck meanwhile.
func CheckCrawlers(m *monoclev1alpha1.Monocle, crawlers []monoclev1alpha1.CrawlerStatus, crawler *appsv1.Deployment, read bool, now time.Time) CrawlerStall {
	out := CrawlerStall{Crawlers: make([]monoclev1alpha1.CrawlerStatus, len(crawlers)), Restarts: m.Status.CrawlerRestarts.DeepCopy()}
	stuckAfter := DefaultCrawlerStuckAfter
	if d := m.Spec.Crawler.StuckAfter; d != nil {
		stuckAfter = d.Duration
	}
	maxRestarts := ptr.Deref(m.Spec.Crawler.MaxRestarts, DefaultCrawlerMaxRestarts)
	// A crawler stopped on purpose starts its window again when it runs; one restarting
	// (its pod replaced) keeps it.
	stopped := crawler == nil || ptr.Deref(crawler.Spec.Replicas, 1) == 0
	running := !stopped && crawler.Status.ReadyReplicas > 0 && DeploymentRolledOut(crawler)
	earlier := map[string]monoclev1alpha1.CrawlerStatus{}
	for _, c := range m.Status.Crawlers {
		earlier[contract.CrawlerKey(c.Workspace, c.Name)] = c
	}
	var stuck []string
	progressed := false
	for i, c := range crawlers {
		was, seen := earlier[contract.CrawlerKey(c.Workspace, c.Name)]
		moved := seen && was.CrawledUntil != nil && c.CrawledUntil != nil && !was.CrawledUntil.Equal(c.CrawledUntil)
		progressed = progressed || moved
		switch {
		case c.CrawledUntil == nil:
			c.LastProgressTime = nil
		case stopped || moved || !seen || was.CrawledUntil == nil || was.LastProgressTime == nil:
			c.LastProgressTime = StatusTime(now)
		default:
			c.LastProgressTime = was.LastProgressTime
			if running && stuckAfter > 0 && now.Sub(c.LastProgressTime.Time) > stuckAfter {
				stuck = append(stuck, c.Workspace+"/"+c.Name)
			}
		}
		out.Crawlers[i] = c
	}
	if !read {
		return out
	}
	cond := &metav1.Condition{Type: monoclev1alpha1.ConditionCrawlersProgressing, Status: metav1.ConditionTrue, Reason: reasons.CrawlersProgressing,
		Message: "Every running crawler made progress within " + stuckAfter.String()}
	out.Condition = cond
	if stuckAfter <= 0 {
		cond.Reason, cond.Message = reasons.StuckCheckOff, "spec.crawler.stuckAfter is 0s: the crawlers' progress is not watched"
		return out
	}
	// Only progress, not a crawler pod that is not ready yet (as after a restart), starts the
	// count of restarts in a row over.
	if out.Restarts != nil && (progressed || stopped) {
		out.Restarts.SinceProgress = 0
	}
	if len(stuck) == 0 {
		if r := out.Restarts; r != nil && r.SinceProgress > 0 && r.LastTime != nil {
			cond.Status, cond.Reason = metav1.ConditionFalse, reasons.CrawlerRestarted
			cond.Message = Truncate(fmt.Sprintf("%s; the crawler pod was restarted at %s, waiting for progress", r.Reason, r.LastTime.UTC().Format(time.RFC3339)))
		}
		return out
	}
	if out.Restarts == nil {
		out.Restarts = &monoclev1alpha1.CrawlerRestarts{}
	}
	r := out.Restarts
	what := fmt.Sprintf("crawler %s made no progress for %s", strings.Join(stuck, ", "), stuckAfter)
	cond.Status = metav1.ConditionFalse
	switch {
	case r.SinceProgress >= maxRestarts:
		cond.Reason = reasons.CrawlerStuck
		cond.Message = Truncate(fmt.Sprintf("%s; %d restarts in a row did not help (spec.crawler.maxRestarts): see the crawler's logs (kubectl logs deploy/%s-crawler) and status.crawlers",
			what, r.SinceProgress, m.Name))
	case r.LastTime == nil || now.Sub(r.LastTime.Time) > stuckAfter:
		r.Total++
		r.SinceProgress++
		r.LastTime, r.Reason = StatusTime(now), Truncate(what)
		out.Restarted = true
		cond.Reason = reasons.CrawlerRestarted
		cond.Message = Truncate(fmt.Sprintf("%s: restarting the crawler pod (restart %d of %d)", what, r.SinceProgress, maxRestarts))
	default:
		cond.Reason = reasons.CrawlerRestarted
		cond.Message = Truncate(fmt.Sprintf("%s; the crawler pod was restarted at %s, waiting for progress", what, r.LastTime.UTC().Format(time.RFC3339)))
	}
	return out
}
