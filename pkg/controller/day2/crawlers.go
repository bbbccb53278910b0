package day2

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// Crawler progress: with each read of a Monocle's Elasticsearch, the operand worker reads
// how far each crawler of the config in force has crawled, from the crawler metadata Monocle
// keeps in the workspace indices (elastic.CrawlersProgress), and the errors they stored;
// WithProgress puts them into status.crawlers (crawledUntil, entities, errors), from which
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

// WithProgress returns crawlers with the progress and errors the last read found (read nil:
// no read yet, and each crawler keeps what m's status says of it).
func WithProgress(m *monoclev1alpha1.Monocle, crawlers []monoclev1alpha1.CrawlerStatus, read map[string]elastic.CrawlerProgress, errs map[string]elastic.CrawlerErrors) []monoclev1alpha1.CrawlerStatus {
	earlier := map[string]monoclev1alpha1.CrawlerStatus{}
	for _, c := range m.Status.Crawlers {
		earlier[operand.CrawlerKey(c.Workspace, c.Name)] = c
	}
	out := make([]monoclev1alpha1.CrawlerStatus, len(crawlers))
	for i, c := range crawlers {
		key := operand.CrawlerKey(c.Workspace, c.Name)
		c.Errors = nil
		if e, ok := errs[key]; ok {
			c.Errors = errorsStatus(e)
		}
		switch p, ok := read[key]; {
		case read == nil:
			c.CrawledUntil, c.Entities, c.Errors = earlier[key].CrawledUntil, earlier[key].Entities, earlier[key].Errors
		case ok:
			c.CrawledUntil, c.Entities = StatusTime(p.Oldest), int32(p.Entities)
		default:
			c.CrawledUntil, c.Entities = nil, 0
		}
		out[i] = c
	}
	return out
}
