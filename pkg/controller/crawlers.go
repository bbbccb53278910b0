package controller

import (
	"context"
	"sort"

	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// Crawler progress (issue 13): with each read of a Monocle's Elasticsearch, the operator
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

// readCrawlers reads the crawler progress of the indices of workspaces from the
// Elasticsearch at url. A workspace whose index does not exist yet (the API creates it when
// it starts) has no crawler progress; a read that fails otherwise gives nil, and the status
// keeps what an earlier read found.
func readCrawlers(ctx context.Context, logger klog.Logger, newClient func(string) (elastic.Client, error), url string, workspaces []string) map[string]elastic.CrawlerProgress {
	client, err := newClient(url)
	if err != nil {
		return nil
	}
	out := map[string]elastic.CrawlerProgress{}
	for _, ws := range workspaces {
		progress, err := client.CrawlersProgress(ctx, elastic.WorkspaceIndexPrefix+ws)
		if elastic.IsNotFound(err) {
			continue
		}
		if err != nil {
			logger.V(4).Info("Reading crawler progress failed", "workspace", ws, "err", err)
			return nil
		}
		for _, p := range progress {
			out[crawlerKey(ws, p.Crawler)] = p
		}
	}
	return out
}

// sameProgress reports whether a and b are the same progress (equality.Semantic cannot
// compare time.Time, whose fields are unexported, and panics).
func sameProgress(a, b elastic.CrawlerProgress) bool {
	return a.Crawler == b.Crawler && a.Entities == b.Entities && a.Oldest.Equal(b.Oldest) && a.Newest.Equal(b.Newest)
}

// withProgress returns crawlers with the progress the last read found (read nil: no read
// yet, and each crawler keeps what m's status says of it).
func withProgress(m *monoclev1alpha1.Monocle, crawlers []monoclev1alpha1.CrawlerStatus, read map[string]elastic.CrawlerProgress) []monoclev1alpha1.CrawlerStatus {
	earlier := map[string]monoclev1alpha1.CrawlerStatus{}
	for _, c := range m.Status.Crawlers {
		earlier[crawlerKey(c.Workspace, c.Name)] = c
	}
	out := make([]monoclev1alpha1.CrawlerStatus, len(crawlers))
	for i, c := range crawlers {
		key := crawlerKey(c.Workspace, c.Name)
		switch p, ok := read[key]; {
		case read == nil:
			c.CrawledUntil, c.Entities = earlier[key].CrawledUntil, earlier[key].Entities
		case ok:
			c.CrawledUntil, c.Entities = statusTime(p.Oldest), int32(p.Entities)
		default:
			c.CrawledUntil, c.Entities = nil, 0
		}
		out[i] = c
	}
	return out
}
