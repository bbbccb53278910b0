package day2

import (
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Crawler progress: with each read of a Monocle's Elasticsearch, the operand worker reads
// the crawler metadata Monocle keeps in the workspace indices (elastic.CrawlersProgress), and
// the errors the crawlers stored; WithProgress keeps, of each crawler of the config in force,
// the documents that config makes it commit, and puts how far it has crawled into
// status.crawlers (crawledUntil, entities, errors), from which
// the metric monocle_operator_crawler_crawled_until_timestamp_seconds is set, which the
// alert MonocleCrawlerNotProgressing watches.

// CrawlerWorkspaces are the workspaces of crawlers, sorted, each once.
func CrawlerWorkspaces(crawlers []monoclev1alpha1.CrawlerStatus) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range crawlers {
		if !seen[c.Workspace] {
			seen[c.Workspace] = true
			out = append(out, c.Workspace)
		}
	}
	sort.Strings(out)
	return out
}

// MaxErrorMessage bounds the error message status.crawlers[].errors keeps.
const MaxErrorMessage = 256

// errorsStatus is the status summary of e.
func errorsStatus(e elastic.CrawlerErrors) *monoclev1alpha1.CrawlerErrorsStatus {
	msg := e.LastMessage
	if len(msg) > MaxErrorMessage {
		msg = strings.ToValidUTF8(msg[:MaxErrorMessage], "") + "…"
	}
	return &monoclev1alpha1.CrawlerErrorsStatus{LastDay: int32(e.LastDay), Total: int32(e.Total), LastTime: StatusTime(e.LastTime),
		LastEntity: e.LastEntity, LastMessage: msg}
}

// CrawlersHealthyCondition is the CrawlersHealthy condition of crawlers (with their errors).
func CrawlersHealthyCondition(crawlers []monoclev1alpha1.CrawlerStatus) metav1.Condition {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionCrawlersHealthy, Status: metav1.ConditionTrue, Reason: reasons.NoCrawlerErrors,
		Message: "No crawler stored an error in the last 24 hours"}
	var failing []string
	for _, c := range crawlers {
		if e := c.Errors; e != nil && e.LastDay > 0 {
			failing = append(failing, fmt.Sprintf("%s/%s: %d errors in the last 24h, the last at %s on %s: %s",
				c.Workspace, c.Name, e.LastDay, e.LastTime.UTC().Format(time.RFC3339), e.LastEntity, e.LastMessage))
		}
	}
	if len(failing) > 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.CrawlerErrors
		cond.Message = Truncate(strings.Join(failing, "; "))
	}
	return cond
}

// CrawlerConfig returns cfg, the config in force (of hash configHash), when crawler, the
// crawler Deployment, runs it: its pod template carries configHash (or no config hash: an
// image that reloads its config by itself) and is rolled out; nil otherwise, while pods of an
// earlier config may still crawl. The operator has only the config in force parsed, so the
// progress of a crawler still on an earlier one is not judged.
func CrawlerConfig(crawler *appsv1.Deployment, cfg *monocleconfig.Config, configHash string) *monocleconfig.Config {
	if crawler == nil {
		return cfg
	}
	hash, ok := crawler.Spec.Template.Annotations[resources.ConfigHashAnnotation]
	if (ok && hash != configHash) || !DeploymentRolledOut(crawler) {
		return nil
	}
	return cfg
}

// WithProgress returns crawlers with the progress and errors the last read found (read nil:
// no read yet, and each crawler keeps what m's status says of it). cfg is the config the
// crawler runs (CrawlerConfig): a crawler's progress counts only the metadata documents of the
// entities cfg makes it commit (monocleconfig.Crawler.EntityFilter), since Monocle keeps
// those of entities an earlier config named, whose dates no longer move. Without cfg, or a
// crawler it does not have, the crawler keeps the progress m's status says of it.
func WithProgress(m *monoclev1alpha1.Monocle, crawlers []monoclev1alpha1.CrawlerStatus, read map[string]elastic.CrawlerProgress,
	errs map[string]elastic.CrawlerErrors, cfg *monocleconfig.Config) []monoclev1alpha1.CrawlerStatus {
	earlier := map[string]monoclev1alpha1.CrawlerStatus{}
	for _, c := range m.Status.Crawlers {
		earlier[contract.CrawlerKey(c.Workspace, c.Name)] = c
	}
	out := make([]monoclev1alpha1.CrawlerStatus, len(crawlers))
	for i, c := range crawlers {
		key := contract.CrawlerKey(c.Workspace, c.Name)
		c.Errors = nil
		if e, ok := errs[key]; ok {
			c.Errors = errorsStatus(e)
		}
		filter, known := crawlerFilter(cfg, c.Workspace, c.Name)
		switch {
		case read == nil:
			c.CrawledUntil, c.Entities, c.Errors = earlier[key].CrawledUntil, earlier[key].Entities, earlier[key].Errors
		case !known:
			c.CrawledUntil, c.Entities = earlier[key].CrawledUntil, earlier[key].Entities
		default:
			c.CrawledUntil, c.Entities = nil, 0
			for _, e := range read[key].Entities {
				if filter.Has(e.Type, e.Value) {
					c.Entities++
					if c.CrawledUntil == nil || e.LastCommitAt.Before(c.CrawledUntil.Time) {
						c.CrawledUntil = StatusTime(e.LastCommitAt)
					}
				}
			}
		}
		out[i] = c
	}
	return out
}

// crawlerFilter returns the EntityFilter of crawler name of workspace in cfg, and whether cfg
// has it.
func crawlerFilter(cfg *monocleconfig.Config, workspace, name string) (monocleconfig.EntityFilter, bool) {
	if cfg == nil {
		return monocleconfig.EntityFilter{}, false
	}
	for _, w := range cfg.Workspaces {
		for _, cr := range w.Crawlers {
			if w.Name == workspace && cr.Name == name {
				return cr.EntityFilter(), true
			}
		}
	}
	return monocleconfig.EntityFilter{}, false
}
