package elastic

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
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
	type bucket struct {
		crawlerBucket
		Oldest struct {
			Value *float64 `json:"value"`
		} `json:"oldest"`
		Newest struct {
			Value *float64 `json:"value"`
		} `json:"newest"`
	}
	buckets, err := searchCrawlerBuckets[bucket](ctx, c, "crawler progress", index, crawlerProgressQuery)
	if err != nil {
		return nil, err
	}
	out := make([]CrawlerProgress, 0, len(buckets))
	for _, b := range buckets {
		if b.Key == "" || b.Oldest.Value == nil || b.Newest.Value == nil {
			return nil, fmt.Errorf("decoding %s: crawler bucket %q without a name or dates", searchWhat, b.Key)
		}
		out = append(out, CrawlerProgress{Crawler: b.Key, Entities: b.DocCount,
			Oldest: time.UnixMilli(int64(*b.Oldest.Value)).UTC(), Newest: time.UnixMilli(int64(*b.Newest.Value)).UTC()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Crawler < out[j].Crawler })
	return out, nil
}

// CrawlerErrors sums up the errors one crawler of a workspace stored in the workspace's index
// since Monocle 1.11: documents {"error_data": {"crawler_name", "created_at", "entity_type",
// "entity_value", "message", "body"}} (Monocle 1.11.2, src/Monocle/Backend/Documents.hs,
// EError), which the API's /api/2/crawler/errors lists.
type CrawlerErrors struct {
	// Crawler is the crawler's name in config.yaml.
	Crawler string
	// Total counts its errors in the index; LastDay those created in the 24 hours before the
	// search.
	Total, LastDay int
	// LastTime, LastMessage and LastEntity ("<entity_type> <entity_value>") describe its
	// newest error.
	LastTime    time.Time
	LastMessage string
	LastEntity  string
}

// crawlerErrorsQuery aggregates the error documents of an index by crawler name: the count,
// the count of the last day (a filter aggregation on a date-math range) and the newest error
// without its body (a top_hits aggregation sorted by created_at; Elasticsearch 7.17
// reference, Top hits aggregation).
const crawlerErrorsQuery = `{"size":0,"query":{"exists":{"field":"error_data.crawler_name"}},` +
	`"aggs":{"crawlers":{"terms":{"field":"error_data.crawler_name","size":1000},` +
	`"aggs":{"last_day":{"filter":{"range":{"error_data.created_at":{"gte":"now-1d"}}}},` +
	`"last":{"top_hits":{"size":1,"sort":[{"error_data.created_at":{"order":"desc"}}],` +
	`"_source":{"includes":["error_data.created_at","error_data.message","error_data.entity_type","error_data.entity_value"]}}}}}}}`

// CrawlersErrors sums up the errors of every crawler with errors in index (a workspace's),
// sorted by crawler name, from one search with aggregations (POST <index>/_search). A missing
// index is ErrNotFound.
func (c *client) CrawlersErrors(ctx context.Context, index string) ([]CrawlerErrors, error) {
	type bucket struct {
		crawlerBucket
		LastDay struct {
			DocCount int `json:"doc_count"`
		} `json:"last_day"`
		Last struct {
			Hits struct {
				Hits []struct {
					Source struct {
						ErrorData struct {
							CreatedAt   string `json:"created_at"`
							Message     string `json:"message"`
							EntityType  string `json:"entity_type"`
							EntityValue string `json:"entity_value"`
						} `json:"error_data"`
					} `json:"_source"`
				} `json:"hits"`
			} `json:"hits"`
		} `json:"last"`
	}
	buckets, err := searchCrawlerBuckets[bucket](ctx, c, "crawler errors", index, crawlerErrorsQuery)
	if err != nil {
		return nil, err
	}
	out := make([]CrawlerErrors, 0, len(buckets))
	for _, b := range buckets {
		if b.Key == "" || len(b.Last.Hits.Hits) == 0 {
			return nil, fmt.Errorf("decoding %s: crawler error bucket %q without a name or a newest error", searchWhat, b.Key)
		}
		e := b.Last.Hits.Hits[0].Source.ErrorData
		at, err := time.Parse(time.RFC3339, e.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("decoding %s: error of crawler %s: created_at %q: %w", searchWhat, b.Key, e.CreatedAt, err)
		}
		out = append(out, CrawlerErrors{Crawler: b.Key, Total: b.DocCount, LastDay: b.LastDay.DocCount, LastTime: at.UTC(),
			LastMessage: e.Message, LastEntity: strings.TrimSpace(e.EntityType + " " + e.EntityValue)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Crawler < out[j].Crawler })
	return out, nil
}

// searchWhat names the search API in decoding errors.
const searchWhat = "<index>/_search"

// crawlerBucket is what every bucket of a terms aggregation on the crawler name holds: the
// name and the number of documents.
type crawlerBucket struct {
	Key      string `json:"key"`
	DocCount int    `json:"doc_count"`
}

// searchCrawlerBuckets runs query, a search whose aggregation "crawlers" is a terms
// aggregation on the crawler name, on index (POST <index>/_search) and returns its buckets,
// decoded as B. op names the call in the error of an invalid index name; an answer without
// aggregations is an error.
func searchCrawlerBuckets[B any](ctx context.Context, c *client, op, index, query string) ([]B, error) {
	if err := checkName("index", index); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var resp struct {
		Aggregations *struct {
			Crawlers struct {
				Buckets []B `json:"buckets"`
			} `json:"crawlers"`
		} `json:"aggregations"`
	}
	req := esapi.SearchRequest{Index: []string{index}, Body: bytes.NewReader([]byte(query))}
	if err := c.callJSON(ctx, "POST "+index+"/_search", searchWhat, req, &resp); err != nil {
		return nil, err
	}
	if resp.Aggregations == nil {
		return nil, fmt.Errorf("decoding %s: no aggregations", searchWhat)
	}
	return resp.Aggregations.Crawlers.Buckets, nil
}
