package testkit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file answers, from the state of elastic_state.go, the requests package elastic sends
// for snapshots, restores and indices, in the shapes of Elasticsearch 7.17:
//
//	GET|PUT|POST   /_snapshot/<repo>
//	GET|PUT|POST|DELETE /_snapshot/<repo>/<snapshot>
//	GET            /_snapshot/<repo>/<snapshot>/_status
//	POST           /_snapshot/<repo>/<snapshot>/_restore
//	GET            /_cat/indices[/<pattern>]
//	GET            /_cat/shards/<indices>
//	POST           /<indices>/_close
//	GET            /_cluster/settings
//	GET            /<indices>/_settings/<name>
//	PUT            /<indices>/_settings
//	PUT            /<index>
//	GET|PUT        /<index>/_mapping
//
// Errors have Elasticsearch's shape, {"error":{"root_cause":[..],"type":..,"reason":..},
// "status":..}.

// Version of Elasticsearch the fake reports in snapshots.
const (
	fakeVersionID = 7172699
	fakeVersion   = "7.17.26"
)

// maxFakeBody bounds a request body the fake reads.
const maxFakeBody = 1 << 20

// esError is an Elasticsearch error answer.
type esError struct {
	status int
	typ    string
	reason string
	// extra are the fields Elasticsearch adds to some errors, e.g. "index" for
	// index_not_found_exception.
	extra map[string]string
}

func (e *esError) body() map[string]any {
	cause := map[string]any{"type": e.typ, "reason": e.reason}
	for k, v := range e.extra {
		cause[k] = v
	}
	detail := map[string]any{"root_cause": []any{cause}}
	for k, v := range cause {
		detail[k] = v
	}
	return map[string]any{"error": detail, "status": e.status}
}

func repositoryMissing(repo string) *esError {
	return &esError{http.StatusNotFound, "repository_missing_exception", "[" + repo + "] missing", nil}
}

func snapshotMissing(repo, name string) *esError {
	return &esError{http.StatusNotFound, "snapshot_missing_exception", "[" + repo + ":" + name + "] is missing", nil}
}

func indexNotFound(index string) *esError {
	return &esError{http.StatusNotFound, "index_not_found_exception", "no such index [" + index + "]", map[string]string{
		"resource.type": "index_or_alias", "resource.id": index, "index_uuid": "_na_", "index": index,
	}}
}

// badRequest is Elasticsearch's answer to a body it cannot parse.
func badRequest(err error) *esError {
	return &esError{http.StatusBadRequest, "x_content_parse_exception", err.Error(), nil}
}

// serveState answers the requests this file handles, reporting false for one it does not.
func (f *FakeElasticsearch) serveState(w http.ResponseWriter, r *http.Request) bool {
	seg := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var (
		allowed []string
		handle  func(s *esState) (int, any)
	)
	switch {
	case seg[0] == "_snapshot" && len(seg) == 2:
		allowed = []string{http.MethodGet, http.MethodPut, http.MethodPost}
		if r.Method == http.MethodGet {
			handle = func(s *esState) (int, any) { return s.getRepositories(seg[1]) }
		} else {
			body, err := readBody(r)
			handle = func(s *esState) (int, any) {
				if err != nil {
					return errAnswer(badRequest(err))
				}
				return s.putRepository(seg[1], body)
			}
		}
	case seg[0] == "_snapshot" && len(seg) == 3:
		allowed = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete}
		switch r.Method {
		case http.MethodGet:
			handle = func(s *esState) (int, any) { return s.getSnapshots(seg[1], seg[2], r.URL.Query()) }
		case http.MethodDelete:
			handle = func(s *esState) (int, any) { return s.deleteSnapshot(seg[1], seg[2]) }
		default:
			body, err := readBody(r)
			handle = func(s *esState) (int, any) {
				if err != nil {
					return errAnswer(badRequest(err))
				}
				return s.createSnapshot(seg[1], seg[2], body)
			}
		}
	case seg[0] == "_snapshot" && len(seg) == 4 && seg[3] == "_status":
		allowed = []string{http.MethodGet}
		handle = func(s *esState) (int, any) { return s.snapshotStatus(seg[1], seg[2]) }
	case seg[0] == "_snapshot" && len(seg) == 4 && seg[3] == "_restore":
		allowed = []string{http.MethodPost}
		body, err := readBody(r)
		handle = func(s *esState) (int, any) {
			if err != nil {
				return errAnswer(badRequest(err))
			}
			return s.restore(seg[1], seg[2], body)
		}
	case seg[0] == "_cat" && len(seg) <= 3 && len(seg) >= 2 && seg[1] == "indices":
		allowed = []string{http.MethodGet}
		pattern := "_all"
		if len(seg) == 3 {
			pattern = seg[2]
		}
		expand := r.URL.Query().Get("expand_wildcards")
		handle = func(s *esState) (int, any) { return s.catIndices(pattern, expand) }
	case seg[0] == "_cat" && len(seg) == 3 && seg[1] == "shards":
		allowed = []string{http.MethodGet}
		columns := names(r.URL.Query().Get("h"))
		handle = func(s *esState) (int, any) { return s.catShards(seg[2], columns) }
	case len(seg) == 1 && seg[0] != "" && !strings.HasPrefix(seg[0], "_") && r.Method == http.MethodDelete:
		allowed = []string{http.MethodDelete}
		handle = func(s *esState) (int, any) {
			if s.indices[seg[0]] == nil {
				return errAnswer(indexNotFound(seg[0]))
			}
			delete(s.indices, seg[0])
			return http.StatusOK, map[string]any{"acknowledged": true}
		}
	case len(seg) == 1 && seg[0] != "" && !strings.HasPrefix(seg[0], "_") && r.Method == http.MethodPut:
		allowed = []string{http.MethodPut}
		body, err := readBody(r)
		handle = func(s *esState) (int, any) {
			if err != nil {
				return errAnswer(badRequest(err))
			}
			return s.createIndex(seg[0], body)
		}
	case len(seg) == 2 && seg[1] == "_mapping" && !strings.HasPrefix(seg[0], "_"):
		allowed = []string{http.MethodGet, http.MethodPut}
		body, err := readBody(r)
		handle = func(s *esState) (int, any) {
			switch {
			case r.Method == http.MethodGet:
				return s.getMapping(seg[0])
			case err != nil:
				return errAnswer(badRequest(err))
			}
			return s.putMapping(seg[0], body)
		}
	case len(seg) == 2 && seg[1] == "_search" && !strings.HasPrefix(seg[0], "_"):
		allowed = []string{http.MethodGet, http.MethodPost}
		body, err := readBody(r)
		handle = func(s *esState) (int, any) {
			if err != nil {
				return errAnswer(badRequest(err))
			}
			if strings.Contains(string(body), "error_data") {
				return s.searchErrors(seg[0])
			}
			return s.searchCrawlers(seg[0], body)
		}
	case seg[0] == "_cluster" && len(seg) == 2 && seg[1] == "settings":
		allowed = []string{http.MethodGet}
		handle = func(*esState) (int, any) { return clusterSettings() }
	case len(seg) == 3 && seg[1] == "_settings":
		allowed = []string{http.MethodGet}
		expand := r.URL.Query().Get("expand_wildcards")
		handle = func(s *esState) (int, any) { return s.getSettings(seg[0], seg[2], expand) }
	case len(seg) == 2 && seg[1] == "_settings" && !strings.HasPrefix(seg[0], "_"):
		allowed = []string{http.MethodPut}
		body, err := readBody(r)
		expand := r.URL.Query().Get("expand_wildcards")
		handle = func(s *esState) (int, any) {
			if err != nil {
				return errAnswer(badRequest(err))
			}
			return s.putSettings(seg[0], expand, body)
		}
	case len(seg) == 2 && seg[1] == "_close" && !strings.HasPrefix(seg[0], "_"):
		allowed = []string{http.MethodPost}
		handle = func(s *esState) (int, any) { return s.closeIndices(seg[0]) }
	default:
		return false
	}
	status, answer := http.StatusMethodNotAllowed, any(map[string]any{
		"error": fmt.Sprintf("Incorrect HTTP method for uri [%s] and method [%s], allowed: [%s]",
			r.URL.RequestURI(), r.Method, strings.Join(allowed, ", ")),
		"status": http.StatusMethodNotAllowed,
	})
	for _, m := range allowed {
		if m == r.Method {
			f.mu.Lock()
			status, answer = handle(f.state(keyOf(r.Host)))
			f.mu.Unlock()
			break
		}
	}
	body, err := json.Marshal(answer)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"fake: encoding the answer failed","status":500}`)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return true
}

func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxFakeBody))
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	return b, nil
}

func errAnswer(e *esError) (int, any) { return e.status, e.body() }

// names splits a comma-separated list of names or patterns of a URL path.
func names(list string) []string {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// isPattern reports whether a name is "_all" or has a wildcard.
func isPattern(n string) bool { return n == "_all" || strings.Contains(n, "*") }

// matches reports whether name matches pattern n ("_all", a glob or a name).
func matches(n, name string) bool {
	if n == "_all" {
		return true
	}
	ok, err := path.Match(n, name)
	return err == nil && ok
}

// resolve returns, sorted and without duplicates, the names of all that the names or
// patterns of list match; expand, when not nil, limits what a pattern matches (Elasticsearch
// expands wildcards to open indices only in some APIs, and to hidden ones only when asked:
// see esState.expand). A concrete name that all lacks is returned as missing.
func resolve(list []string, all []string, expand func(pattern, name string) bool) (out []string, missing string) {
	have := map[string]bool{}
	for _, n := range all {
		have[n] = true
	}
	seen := map[string]bool{}
	for _, n := range list {
		if !isPattern(n) {
			if !have[n] {
				return nil, n
			}
			seen[n] = true
			continue
		}
		for _, name := range all {
			if matches(n, name) && (expand == nil || expand(n, name)) {
				seen[name] = true
			}
		}
	}
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, ""
}

// keys returns the keys of m.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// expand returns what a wildcard of an index API matches under expand_wildcards states, a
// comma-separated list of open, closed, hidden, all or none (Elasticsearch 7.17 reference,
// Multi-target syntax): an open or a closed index as its state is listed, and a hidden index
// (index.hidden) only with hidden or all, or when the pattern starts with a dot (as
// elastic/elasticsearch IndexNameExpressionResolver expands wildcards). A concrete name is
// never filtered.
func (s *esState) expand(states string) func(pattern, name string) bool {
	want := map[string]bool{}
	for _, st := range names(states) {
		if st == "all" {
			want["open"], want["closed"], want["hidden"] = true, true, true
		}
		want[st] = true
	}
	return func(pattern, name string) bool {
		ix := s.indices[name]
		if ix == nil || (ix.hidden && !want["hidden"] && !strings.HasPrefix(pattern, ".")) {
			return false
		}
		return (ix.open && want["open"]) || (!ix.open && want["closed"])
	}
}

// catIndices answers GET _cat/indices/<pattern>?format=json&bytes=b[&expand_wildcards=..].
// A wildcard matches open and closed indices, hidden ones only with expand_wildcards hidden
// or all (Elasticsearch 7.17 reference, cat indices API: expand_wildcards; RestIndicesAction
// reads it over the default IndicesOptions.strictExpand). Each index has one primary and
// fakeIndex.replicas replicas, which the fake's single node leaves unassigned: an index with
// replicas is yellow, also while its primary is restored (elastic/elasticsearch
// ClusterShardHealth.getInactivePrimaryHealth: a primary recovering from a snapshot is
// yellow, not red); one without, as Monocle creates them, is green.
// As in Elasticsearch 7.17, where a closed index keeps its shards allocated
// (replicated closed indices, 7.2), a closed index has its health and shard counts but null
// document counts and sizes.
func (s *esState) catIndices(pattern, expandWildcards string) (int, any) {
	got, missing := resolve(names(pattern), keys(s.indices), s.expand(cmp.Or(expandWildcards, "open,closed")))
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	rows := []map[string]any{}
	for _, name := range got {
		ix := s.indices[name]
		row := map[string]any{
			"health": "green", "status": "open", "index": name, "uuid": ix.uuid, "pri": "1", "rep": strconv.Itoa(ix.replicas),
			"docs.count": nil, "docs.deleted": nil, "store.size": nil, "pri.store.size": nil,
		}
		if ix.replicas > 0 {
			row["health"] = "yellow"
		}
		if !ix.open {
			row["status"] = "close"
		} else {
			size := strconv.FormatInt(fakeStoreBytesBase+fakeStoreBytesPerDoc*ix.docs, 10)
			row["docs.count"], row["docs.deleted"] = strconv.FormatInt(ix.docs, 10), "0"
			row["store.size"], row["pri.store.size"] = size, size
		}
		rows = append(rows, row)
	}
	return http.StatusOK, rows
}

// catShards answers GET _cat/shards/<indices>?format=json[&h=..] (Elasticsearch 7.17
// reference, cat shards API): per index a primary, STARTED, or INITIALIZING while its
// restore is held, and fakeIndex.replicas replicas a single node leaves UNASSIGNED, with
// the columns h names
// (all of index, shard, prirep, state, docs, store, ip and node without h), every cell a
// string or null. A missing concrete index is 404; a closed one is 400
// index_closed_exception, from the indices stats request _cat/shards makes with the default
// options of a broadcast request, which forbid closed indices (elastic/elasticsearch
// RestShardsAction; IndicesOptions.strictExpandOpenAndForbidClosed). A wildcard matches
// open, visible indices.
func (s *esState) catShards(list string, columns []string) (int, any) {
	got, missing := resolve(names(list), keys(s.indices), s.expand("open"))
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	if len(columns) == 0 {
		columns = []string{"index", "shard", "prirep", "state", "docs", "store", "ip", "node"}
	}
	rows := []map[string]any{}
	for _, name := range got {
		ix := s.indices[name]
		if !ix.open {
			return errAnswer(&esError{http.StatusBadRequest, "index_closed_exception", "closed",
				map[string]string{"index_uuid": ix.uuid, "index": name}})
		}
		state := "STARTED"
		if ix.recovering {
			state = "INITIALIZING"
		}
		size := strconv.FormatInt(fakeStoreBytesBase+fakeStoreBytesPerDoc*ix.docs, 10)
		primary := map[string]any{"index": name, "shard": "0", "prirep": "p", "state": state,
			"docs": strconv.FormatInt(ix.docs, 10), "store": size, "ip": "127.0.0.1", "node": "fake-elastic-0"}
		copies := []map[string]any{primary}
		for range ix.replicas {
			copies = append(copies, map[string]any{"index": name, "shard": "0", "prirep": "r", "state": "UNASSIGNED"})
		}
		for _, full := range copies {
			row := map[string]any{}
			for _, c := range columns {
				row[c] = full[c]
			}
			rows = append(rows, row)
		}
	}
	return http.StatusOK, rows
}

// closeIndices answers POST <indices>/_close: a wildcard matches open, visible indices (the
// close index API's default expand_wildcards, open); a concrete name closes the index,
// hidden or already closed.
func (s *esState) closeIndices(list string) (int, any) {
	got, missing := resolve(names(list), keys(s.indices), s.expand("open"))
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	closed := map[string]any{}
	for _, name := range got {
		s.indices[name].open = false
		closed[name] = map[string]bool{"closed": true}
	}
	return http.StatusOK, map[string]any{"acknowledged": true, "shards_acknowledged": true, "indices": closed}
}

// searchCrawlers answers a search of index with the composite aggregation "entities" of its
// crawler metadata (see SetCrawlerMetadata) that package elastic's CrawlersProgress sends, in
// the shape of Elasticsearch 7.17: buckets keyed by crawler, type and value in that order,
// each with the max of last_commit_at as epoch milliseconds with value_as_string, at most
// the composite's size of them (10 when unset) after its "after" key, and after_key, the
// key of the last, when there is one
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/search-aggregations-bucket-composite-aggregation.html).
func (s *esState) searchCrawlers(index string, body []byte) (int, any) {
	ix := s.indices[index]
	if ix == nil {
		return errAnswer(indexNotFound(index))
	}
	type key struct {
		Crawler string `json:"crawler"`
		Type    string `json:"type"`
		Value   string `json:"value"`
	}
	var q struct {
		Aggs struct {
			Entities struct {
				Composite struct {
					Size  *int `json:"size"`
					After *key `json:"after"`
				} `json:"composite"`
			} `json:"entities"`
		} `json:"aggs"`
	}
	if err := json.Unmarshal(body, &q); err != nil {
		return errAnswer(badRequest(err))
	}
	size := 10
	if n := q.Aggs.Entities.Composite.Size; n != nil {
		size = *n
	}
	less := func(a, b key) bool {
		return a.Crawler < b.Crawler || (a.Crawler == b.Crawler && (a.Type < b.Type || (a.Type == b.Type && a.Value < b.Value)))
	}
	type agg struct {
		n    int
		last time.Time
	}
	byKey := map[key]*agg{}
	var order []key
	for _, e := range ix.crawlers {
		k := key{e.Crawler, e.Type, e.Value}
		if after := q.Aggs.Entities.Composite.After; after != nil && !less(*after, k) {
			continue
		}
		a := byKey[k]
		if a == nil {
			a = &agg{last: e.LastCommitAt}
			byKey[k] = a
			order = append(order, k)
		}
		a.n++
		if e.LastCommitAt.After(a.last) {
			a.last = e.LastCommitAt
		}
	}
	sort.Slice(order, func(i, j int) bool { return less(order[i], order[j]) })
	order = order[:min(size, len(order))]
	buckets := []any{}
	for _, k := range order {
		t := byKey[k].last
		buckets = append(buckets, map[string]any{"key": k, "doc_count": byKey[k].n,
			"last_commit_at": map[string]any{"value": float64(t.UnixMilli()), "value_as_string": t.UTC().Format("2006-01-02T15:04:05.000Z")}})
	}
	entities := map[string]any{"buckets": buckets}
	if len(order) > 0 {
		entities["after_key"] = order[len(order)-1]
	}
	return searchAnswer(len(ix.crawlers), map[string]any{"entities": entities})
}

// searchAnswer is the answer of a search of size 0 on one index, matching total documents,
// with aggregations aggs: the top level of Elasticsearch 7.17's search answer (took,
// timed_out, _shards, hits; Search API) around the aggregations.
func searchAnswer(total int, aggs map[string]any) (int, any) {
	return http.StatusOK, map[string]any{
		"took": 1, "timed_out": false,
		"_shards":      map[string]int{"total": 1, "successful": 1, "skipped": 0, "failed": 0},
		"hits":         map[string]any{"total": map[string]any{"value": total, "relation": "eq"}, "max_score": nil, "hits": []any{}},
		"aggregations": aggs,
	}
}

// searchErrors answers a search of index with the aggregation of its crawler errors by
// crawler name (see SetCrawlerErrors), in the shape of Elasticsearch 7.17: per crawler the
// count, a last_day filter count and the newest error in a top_hits.
func (s *esState) searchErrors(index string) (int, any) {
	ix := s.indices[index]
	if ix == nil {
		return errAnswer(indexNotFound(index))
	}
	byName := map[string][]FakeCrawlerError{}
	for _, e := range ix.errors {
		byName[e.Crawler] = append(byName[e.Crawler], e)
	}
	names := keys(byName)
	sort.Strings(names)
	buckets := []any{}
	dayAgo := time.Now().Add(-24 * time.Hour)
	for _, name := range names {
		errs := byName[name]
		newest, lastDay := errs[0], 0
		for _, e := range errs {
			if e.CreatedAt.After(newest.CreatedAt) {
				newest = e
			}
			if !e.CreatedAt.Before(dayAgo) {
				lastDay++
			}
		}
		source := map[string]any{"error_data": map[string]any{
			"created_at": newest.CreatedAt.UTC().Format(time.RFC3339), "message": newest.Message,
			"entity_type": newest.EntityType, "entity_value": newest.EntityValue,
		}}
		buckets = append(buckets, map[string]any{
			"key": name, "doc_count": len(errs), "last_day": map[string]any{"doc_count": lastDay},
			"last": map[string]any{"hits": map[string]any{
				"total": map[string]any{"value": len(errs), "relation": "eq"}, "max_score": nil,
				"hits": []any{map[string]any{"_index": index, "_type": "_doc", "_id": newUUID(), "_score": nil, "_source": source,
					"sort": []any{newest.CreatedAt.UnixMilli()}}},
			}},
		})
	}
	return searchAnswer(len(ix.errors), map[string]any{"crawlers": map[string]any{
		"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": buckets,
	}})
}
