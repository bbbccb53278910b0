package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/elastic/go-elasticsearch/v7/esapi"
)

// CrawlerProgress is how far one crawler of a workspace has crawled, from the crawler
// metadata documents Monocle keeps in the workspace's index: one per crawled entity (project,
// organization, task data, user), {"crawler_metadata": {"crawler_name", "crawler_type",
// "crawler_type_value", "last_commit_at"}} (Monocle 1.11.2, src/Monocle/Backend/Documents.hs,
// ECrawlerMetadataObject). The crawler commits an entity's last_commit_at once it has
// indexed the entity's changes up to the time its pass started
// (src/Macroscope/Worker.hs, commitTimestamp). Monocle never deletes a document (only
// ensureCrawlerMetadata in src/Monocle/Backend/Index.hs writes new ones), so Entities also
// holds the entities of earlier configs of the crawler, whose dates may no longer move.
type CrawlerProgress struct {
	// Crawler is the crawler's name in config.yaml.
	Crawler string
	// Entities are the crawler's documents, in the composite aggregation's order: by type,
	// then value.
	Entities []CrawlerEntity
}

// CrawlerEntity is the entity of one crawler metadata document and its date.
type CrawlerEntity struct {
	// Type is crawler_type: organization, project, taskdata or user (entityTypeName in
	// src/Monocle/Entity.hs); Value is crawler_type_value, the entity's name.
	Type, Value string
	// LastCommitAt is last_commit_at, in UTC.
	LastCommitAt time.Time
}

// crawlerEntitiesQuery lists the crawler metadata documents of an index by (crawler name,
// type, value), with the last_commit_at of each: a composite aggregation of three terms
// sources, read page by page with its after_key, and a max sub-aggregation, which gives a date
// as epoch milliseconds with value_as_string
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/search-aggregations-bucket-composite-aggregation.html,
// "Pagination" and "Sub-aggregations";
// https://www.elastic.co/guide/en/elasticsearch/reference/7.17/search-aggregations-metrics-max-aggregation.html).
// Its %d is the page size, its %s `"after":<after_key>,` from the second page on.
const crawlerEntitiesQuery = `{"size":0,"query":{"exists":{"field":"crawler_metadata.crawler_name"}},` +
	`"aggs":{"entities":{"composite":{"size":%d,%s"sources":[{"crawler":{"terms":{"field":"crawler_metadata.crawler_name"}}},` +
	`{"type":{"terms":{"field":"crawler_metadata.crawler_type"}}},{"value":{"terms":{"field":"crawler_metadata.crawler_type_value"}}}]},` +
	`"aggs":{"last_commit_at":{"max":{"field":"crawler_metadata.last_commit_at"}}}}}}`

// crawlerPageSize is the number of documents one search of CrawlersProgress reads (the
// reference advises 100 or 1000 for pagination).
var crawlerPageSize = 1000

// CrawlersProgress reports the entities of every crawler with metadata in index (a
// workspace's, WorkspaceIndexPrefix + name), sorted by crawler name, from searches with a
// composite aggregation (POST <index>/_search), one per crawlerPageSize documents. A missing
// index is ErrNotFound.
func (c *client) CrawlersProgress(ctx context.Context, index string) ([]CrawlerProgress, error) {
	if err := checkName("index", index); err != nil {
		return nil, fmt.Errorf("crawler progress: %w", err)
	}
	var out []CrawlerProgress
	byName := map[string]int{}
	var after json.RawMessage
	for {
		var resp struct {
			Aggregations *struct {
				Entities struct {
					// AfterKey is absent once no bucket is left (elastic/elasticsearch,
					// CompositeAggregation.toXContentFragment).
					AfterKey json.RawMessage `json:"after_key"`
					Buckets  []struct {
						Key struct {
							Crawler string `json:"crawler"`
							Type    string `json:"type"`
							Value   string `json:"value"`
						} `json:"key"`
						LastCommitAt struct {
							Value *float64 `json:"value"`
						} `json:"last_commit_at"`
					} `json:"buckets"`
				} `json:"entities"`
			} `json:"aggregations"`
		}
		var from string
		if after != nil {
			from = `"after":` + string(after) + ","
		}
		query := fmt.Sprintf(crawlerEntitiesQuery, crawlerPageSize, from)
		req := esapi.SearchRequest{Index: []string{index}, Body: strings.NewReader(query)}
		if err := c.callJSON(ctx, "POST "+index+"/_search", searchWhat, req, &resp); err != nil {
			return nil, err
		}
		if resp.Aggregations == nil {
			return nil, fmt.Errorf("decoding %s: no aggregations", searchWhat)
		}
		page := resp.Aggregations.Entities
		for _, b := range page.Buckets {
			if b.Key.Crawler == "" || b.LastCommitAt.Value == nil {
				return nil, fmt.Errorf("decoding %s: crawler entity %+v without a crawler name or a date", searchWhat, b.Key)
			}
			i, ok := byName[b.Key.Crawler]
			if !ok {
				i = len(out)
				byName[b.Key.Crawler] = i
				out = append(out, CrawlerProgress{Crawler: b.Key.Crawler})
			}
			out[i].Entities = append(out[i].Entities, CrawlerEntity{Type: b.Key.Type, Value: b.Key.Value,
				LastCommitAt: time.UnixMilli(int64(*b.LastCommitAt.Value)).UTC()})
		}
		if len(page.Buckets) < crawlerPageSize || page.AfterKey == nil || bytes.Equal(page.AfterKey, after) {
			break
		}
		after = page.AfterKey
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Crawler < out[j].Crawler })
	if out == nil {
		out = []CrawlerProgress{}
	}
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
