package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// Crawler progress: with each read of a Monocle's Elasticsearch, the operator
// reads how far each crawler of the config in force has crawled, from the crawler metadata
// Monocle keeps in the workspace indices (elastic.CrawlersProgress), into
// status.crawlers[].crawledUntil and the metric
// monocle_operator_crawler_crawled_until_timestamp_seconds, which the alert
// MonocleCrawlerNotProgressing watches.

// crawlerKey identifies a crawler of a workspace.
func crawlerKey(workspace, crawler string) string { return workspace + "/" + crawler }

// crawlerWorkspaces are the workspaces of crawlers, sorted, each once.
func crawlerWorkspaces(crawlers []monoclev1alpha1.CrawlerStatus) []string {
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

// readCrawlers reads the crawler progress and errors of the indices of workspaces with
// client, by crawlerKey. A workspace whose index does not exist yet (the API
// creates it when it starts) has neither; a read that fails otherwise gives nil, and the
// status keeps what an earlier read found.
func readCrawlers(ctx context.Context, logger klog.Logger, client elastic.Client, workspaces []string) (map[string]elastic.CrawlerProgress, map[string]elastic.CrawlerErrors) {
	progress, errs := map[string]elastic.CrawlerProgress{}, map[string]elastic.CrawlerErrors{}
	for _, ws := range workspaces {
		index := elastic.WorkspaceIndexPrefix + ws
		ps, err := client.CrawlersProgress(ctx, index)
		if elastic.IsNotFound(err) {
			continue
		}
		var es []elastic.CrawlerErrors
		if err == nil {
			es, err = client.CrawlersErrors(ctx, index)
		}
		if err != nil {
			logger.V(4).Info("Reading crawler progress failed", "workspace", ws, "err", err)
			return nil, nil
		}
		for _, p := range ps {
			progress[crawlerKey(ws, p.Crawler)] = p
		}
		for _, e := range es {
			errs[crawlerKey(ws, e.Crawler)] = e
		}
	}
	return progress, errs
}

// sameErrors reports whether a and b sum up the same errors.
func sameErrors(a, b elastic.CrawlerErrors) bool {
	return a.Crawler == b.Crawler && a.Total == b.Total && a.LastDay == b.LastDay && a.LastTime.Equal(b.LastTime) &&
		a.LastMessage == b.LastMessage && a.LastEntity == b.LastEntity
}

// maxErrorMessage bounds the error message status.crawlers[].errors keeps.
const maxErrorMessage = 256

// errorsStatus is the status summary of e.
func errorsStatus(e elastic.CrawlerErrors) *monoclev1alpha1.CrawlerErrorsStatus {
	msg := e.LastMessage
	if len(msg) > maxErrorMessage {
		msg = strings.ToValidUTF8(msg[:maxErrorMessage], "") + "…"
	}
	return &monoclev1alpha1.CrawlerErrorsStatus{LastDay: int32(e.LastDay), Total: int32(e.Total), LastTime: statusTime(e.LastTime),
		LastEntity: e.LastEntity, LastMessage: msg}
}

// crawlersHealthyCondition is the CrawlersHealthy condition of crawlers (with their errors).
func crawlersHealthyCondition(crawlers []monoclev1alpha1.CrawlerStatus) metav1.Condition {
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
		cond.Message = truncate(strings.Join(failing, "; "))
	}
	return cond
}

// sameProgress reports whether a and b are the same progress (equality.Semantic cannot
// compare time.Time, whose fields are unexported, and panics).
func sameProgress(a, b elastic.CrawlerProgress) bool {
	return a.Crawler == b.Crawler && a.Entities == b.Entities && a.Oldest.Equal(b.Oldest) && a.Newest.Equal(b.Newest)
}

// withProgress returns crawlers with the progress and errors the last read found (read nil:
// no read yet, and each crawler keeps what m's status says of it).
func withProgress(m *monoclev1alpha1.Monocle, crawlers []monoclev1alpha1.CrawlerStatus, read map[string]elastic.CrawlerProgress, errs map[string]elastic.CrawlerErrors) []monoclev1alpha1.CrawlerStatus {
	earlier := map[string]monoclev1alpha1.CrawlerStatus{}
	for _, c := range m.Status.Crawlers {
		earlier[crawlerKey(c.Workspace, c.Name)] = c
	}
	out := make([]monoclev1alpha1.CrawlerStatus, len(crawlers))
	for i, c := range crawlers {
		key := crawlerKey(c.Workspace, c.Name)
		c.Errors = nil
		if e, ok := errs[key]; ok {
			c.Errors = errorsStatus(e)
		}
		switch p, ok := read[key]; {
		case read == nil:
			c.CrawledUntil, c.Entities, c.Errors = earlier[key].CrawledUntil, earlier[key].Entities, earlier[key].Errors
		case ok:
			c.CrawledUntil, c.Entities = statusTime(p.Oldest), int32(p.Entities)
		default:
			c.CrawledUntil, c.Entities = nil, 0
		}
		out[i] = c
	}
	return out
}
