package elastic

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/elastic/go-elasticsearch/v7/esapi"
)

// CrawlerProgress is how far one crawler of a workspace has crawled, from the crawler
// metadata documents Monocle keeps in the workspace's index: one per crawled entity (project,
// organization, task data), {"crawler_metadata": {"crawler_name", "crawler_type",
// "crawler_type_value", "last_commit_at"}} (Monocle 1.11.2, src/Monocle/Backend/Documents.hs,
// ECrawlerMetadataObject). The crawler commits an entity's last_commit_at once it has
// indexed the entity's changes up to the time its pass started
// (src/Macroscope/Worker.hs, commitTimestamp): the oldest date of a crawler's entities is the
// point up to which everything it crawls is indexed, and it stops moving when the crawler
// hangs or fails on an entity.
type CrawlerProgress struct {
	// Crawler is the crawler's name in config.yaml.
	Crawler string
	// Entities is the number of entities the crawler has metadata for.
	Entities int
	// Oldest and Newest are the oldest and newest last_commit_at of its entities, in UTC.
	Oldest, Newest time.Time
}

// crawlerProgressQuery aggregates the crawler metadata documents of an index by crawler name,
// with the oldest and newest last_commit_at of each (Elasticsearch 7.17 reference, terms,
// min and max aggregations).
const crawlerProgressQuery = `{"size":0,"query":{"exists":{"field":"crawler_metadata.crawler_name"}},` +
	`"aggs":{"crawlers":{"terms":{"field":"crawler_metadata.crawler_name","size":1000},` +
	`"aggs":{"oldest":{"min":{"field":"crawler_metadata.last_commit_at"}},"newest":{"max":{"field":"crawler_metadata.last_commit_at"}}}}}}`

// CrawlersProgress reports the progress of every crawler with metadata in index (a
// workspace's, WorkspaceIndexPrefix + name), sorted by crawler name, from one search with
// aggregations (POST <index>/_search). A missing index is ErrNotFound.
func (c *client) CrawlersProgress(ctx context.Context, index string) ([]CrawlerProgress, error) {
	const what = "<index>/_search"
	if err := checkName("index", index); err != nil {
		return nil, fmt.Errorf("crawler progress: %w", err)
	}
	var resp struct {
		Aggregations *struct {
			Crawlers struct {
				Buckets []struct {
					Key      string `json:"key"`
					DocCount int    `json:"doc_count"`
					Oldest   struct {
						Value *float64 `json:"value"`
					} `json:"oldest"`
					Newest struct {
						Value *float64 `json:"value"`
					} `json:"newest"`
				} `json:"buckets"`
			} `json:"crawlers"`
		} `json:"aggregations"`
	}
	req := esapi.SearchRequest{Index: []string{index}, Body: bytes.NewReader([]byte(crawlerProgressQuery))}
	if err := c.callJSON(ctx, "POST "+index+"/_search", what, req, &resp); err != nil {
		return nil, err
	}
	if resp.Aggregations == nil {
		return nil, fmt.Errorf("decoding %s: no aggregations", what)
	}
	out := make([]CrawlerProgress, 0, len(resp.Aggregations.Crawlers.Buckets))
	for _, b := range resp.Aggregations.Crawlers.Buckets {
		if b.Key == "" || b.Oldest.Value == nil || b.Newest.Value == nil {
			return nil, fmt.Errorf("decoding %s: crawler bucket %q without a name or dates", what, b.Key)
		}
		out = append(out, CrawlerProgress{Crawler: b.Key, Entities: b.DocCount,
			Oldest: time.UnixMilli(int64(*b.Oldest.Value)).UTC(), Newest: time.UnixMilli(int64(*b.Newest.Value)).UTC()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Crawler < out[j].Crawler })
	return out, nil
}
