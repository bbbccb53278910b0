package testkit

import (
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
//	POST           /<indices>/_close
//	GET            /_cluster/health/<indices>
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
			handle = func(s *esState) (int, any) { return s.getSnapshots(seg[1], seg[2]) }
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
		handle = func(s *esState) (int, any) { return s.catIndices(pattern) }
	case seg[0] == "_cluster" && len(seg) == 3 && seg[1] == "health":
		allowed = []string{http.MethodGet}
		handle = func(s *esState) (int, any) { return s.indicesHealth(seg[2]) }
	case len(seg) == 1 && seg[0] != "" && !strings.HasPrefix(seg[0], "_") && r.Method == http.MethodDelete:
		allowed = []string{http.MethodDelete}
		handle = func(s *esState) (int, any) {
			if s.indices[seg[0]] == nil {
				return errAnswer(indexNotFound(seg[0]))
			}
			delete(s.indices, seg[0])
			return http.StatusOK, map[string]any{"acknowledged": true}
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
			return s.searchCrawlers(seg[0])
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
// expands wildcards to open indices only in some APIs). A concrete name that all lacks is
// returned as missing.
func resolve(list []string, all []string, expand func(string) bool) (out []string, missing string) {
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
			if matches(n, name) && (expand == nil || expand(name)) {
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

// isOpen reports whether index name is open.
func (s *esState) isOpen(name string) bool { return s.indices[name] != nil && s.indices[name].open }

// getRepositories answers GET _snapshot/<repos>: {"<repo>":{"type":..,"settings":{..}}}.
func (s *esState) getRepositories(list string) (int, any) {
	out := map[string]any{}
	got, missing := resolve(names(list), keys(s.repos), nil)
	if missing != "" {
		return errAnswer(repositoryMissing(missing))
	}
	for _, name := range got {
		r := s.repos[name]
		out[name] = map[string]any{"type": r.typ, "settings": r.settings}
	}
	return http.StatusOK, out
}

// putRepository answers PUT _snapshot/<repo> {"type":..,"settings":{..}}: it registers the
// repository, then verifies it, as Elasticsearch 7.17 does, so that a failed verification
// leaves it registered.
func (s *esState) putRepository(name string, body []byte) (int, any) {
	var req struct {
		Type     string         `json:"type"`
		Settings map[string]any `json:"settings"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return errAnswer(badRequest(err))
	}
	if req.Type == "" {
		return errAnswer(&esError{http.StatusBadRequest, "action_request_validation_exception", "Validation Failed: 1: type is missing;", nil})
	}
	if req.Type != "fs" && req.Type != "s3" {
		return errAnswer(&esError{http.StatusInternalServerError, "repository_exception",
			"[" + name + "] repository type [" + req.Type + "] does not exist", nil})
	}
	// Elasticsearch keeps setting values as strings.
	settings := map[string]string{}
	for k, v := range req.Settings {
		switch v := v.(type) {
		case string:
			settings[k] = v
		case nil:
		default:
			b, _ := json.Marshal(v)
			settings[k] = string(b)
		}
	}
	if req.Type == "fs" && settings["location"] == "" {
		return errAnswer(&esError{http.StatusInternalServerError, "repository_exception", "[" + name + "] missing location", nil})
	}
	if req.Type == "s3" && settings["bucket"] == "" {
		return errAnswer(&esError{http.StatusInternalServerError, "repository_exception",
			"[" + name + "] No bucket defined for s3 repository", nil})
	}
	s.repos[name] = fakeRepo{typ: req.Type, settings: settings}
	if s.verifyFailure != "" {
		return errAnswer(&esError{http.StatusInternalServerError, "repository_verification_exception", s.verifyFailure, nil})
	}
	return http.StatusOK, map[string]any{"acknowledged": true}
}

// snapshotBody is the body of the create snapshot and restore requests.
type snapshotBody struct {
	Indices            indexList `json:"indices"`
	IncludeGlobalState bool      `json:"include_global_state"`
}

// indexList is a list of index names, given in JSON as a list or a comma-separated string.
type indexList []string

func (l *indexList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = names(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*l = list
	return nil
}

func decodeSnapshotBody(body []byte) (snapshotBody, error) {
	var req snapshotBody
	if len(strings.TrimSpace(string(body))) == 0 {
		return req, nil
	}
	err := json.Unmarshal(body, &req)
	return req, err
}

// createSnapshot answers PUT _snapshot/<repo>/<name> {"indices":[..]}: the snapshot is
// stored with the outcome the test set, and the answer is {"accepted":true}. Indices left
// out mean every open index; wildcards expand to open indices only (Elasticsearch 7.x).
func (s *esState) createSnapshot(repo, name string, body []byte) (int, any) {
	req, err := decodeSnapshotBody(body)
	if err != nil {
		return errAnswer(badRequest(err))
	}
	if _, ok := s.repos[repo]; !ok {
		return errAnswer(repositoryMissing(repo))
	}
	if _, ok := s.snapshots[repo][name]; ok {
		return errAnswer(&esError{http.StatusBadRequest, "invalid_snapshot_name_exception",
			"[" + repo + ":" + name + "] Invalid snapshot name [" + name + "], snapshot with the same name already exists", nil})
	}
	list := []string(req.Indices)
	if len(list) == 0 {
		list = []string{"_all"}
	}
	indices, missing := resolve(list, keys(s.indices), s.isOpen)
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	start := fakeNow()
	snap := &FakeSnapshot{Name: name, UUID: newUUID(), State: SnapshotSuccess, Indices: indices, Start: start, End: start,
		Docs: map[string]int64{}}
	for _, ix := range indices {
		snap.Docs[ix] = s.indices[ix].docs
	}
	switch s.outcome {
	case "", SnapshotSuccess:
	case SnapshotInProgress:
		snap.State, snap.End = SnapshotInProgress, time.Time{}
	default:
		snap.State, snap.Reason = s.outcome, s.outcomeReason
	}
	s.repoSnapshots(repo)[name] = snap
	return http.StatusOK, map[string]any{"accepted": true}
}

// shardCounts returns the shard counts of a snapshot, one shard per index: a FAILED snapshot
// failed them all, a PARTIAL one failed one, a running one has none done yet.
func shardCounts(snap *FakeSnapshot) (total, failed, successful int) {
	total = len(snap.Indices)
	switch snap.State {
	case SnapshotFailed:
		failed = total
	case SnapshotPartial:
		failed = min(1, total)
	case SnapshotInProgress:
		return total, 0, 0
	}
	return total, failed, total - failed
}

// millisTime renders t as Elasticsearch 7.17 renders snapshot times (strict_date_optional_time
// in UTC); the zero time is the epoch.
func millisTime(t time.Time) (string, int64) {
	ms := int64(0)
	if !t.IsZero() {
		ms = t.UnixMilli()
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"), ms
}

// snapshotInfo is one snapshot of GET _snapshot/<repo>/<names>, in the order of
// Elasticsearch 7.17's SnapshotInfo.
type snapshotInfo struct {
	Snapshot           string           `json:"snapshot"`
	UUID               string           `json:"uuid"`
	Repository         string           `json:"repository"`
	VersionID          int              `json:"version_id"`
	Version            string           `json:"version"`
	Indices            []string         `json:"indices"`
	DataStreams        []string         `json:"data_streams"`
	IncludeGlobalState bool             `json:"include_global_state"`
	State              string           `json:"state"`
	Reason             string           `json:"reason,omitempty"`
	StartTime          string           `json:"start_time"`
	StartTimeInMillis  int64            `json:"start_time_in_millis"`
	EndTime            string           `json:"end_time"`
	EndTimeInMillis    int64            `json:"end_time_in_millis"`
	DurationInMillis   int64            `json:"duration_in_millis"`
	Failures           []map[string]any `json:"failures"`
	Shards             struct {
		Total      int `json:"total"`
		Failed     int `json:"failed"`
		Successful int `json:"successful"`
	} `json:"shards"`
	FeatureStates []any `json:"feature_states"`
}

func (s *esState) info(repo string, snap *FakeSnapshot) snapshotInfo {
	i := snapshotInfo{
		Snapshot: snap.Name, UUID: snap.UUID, Repository: repo, VersionID: fakeVersionID, Version: fakeVersion,
		Indices: append([]string{}, snap.Indices...), DataStreams: []string{}, State: snap.State,
		Failures: []map[string]any{}, FeatureStates: []any{},
	}
	if snap.State == SnapshotFailed || snap.State == SnapshotPartial {
		i.Reason = snap.Reason
	}
	i.StartTime, i.StartTimeInMillis = millisTime(snap.Start)
	i.EndTime, i.EndTimeInMillis = millisTime(snap.End)
	if i.EndTimeInMillis > 0 {
		i.DurationInMillis = max(0, i.EndTimeInMillis-i.StartTimeInMillis)
	}
	i.Shards.Total, i.Shards.Failed, i.Shards.Successful = shardCounts(snap)
	for k := 0; k < i.Shards.Failed; k++ {
		i.Failures = append(i.Failures, map[string]any{
			"index": snap.Indices[k], "index_uuid": snap.Indices[k], "shard_id": 0,
			"reason": snap.Reason, "node_id": "fake-node", "status": "INTERNAL_SERVER_ERROR",
		})
	}
	return i
}

// getSnapshots answers GET _snapshot/<repo>/<names>, names being "_all", "_current",
// globs or names: {"snapshots":[..],"total":n,"remaining":0}, sorted by start then name.
func (s *esState) getSnapshots(repo, list string) (int, any) {
	if _, ok := s.repos[repo]; !ok {
		return errAnswer(repositoryMissing(repo))
	}
	stored := s.snapshots[repo]
	var want []string
	current := false
	for _, n := range names(list) {
		if n == "_current" {
			current = true
		} else {
			want = append(want, n)
		}
	}
	got, missing := resolve(want, keys(stored), nil)
	if missing != "" {
		return errAnswer(snapshotMissing(repo, missing))
	}
	pick := map[string]bool{}
	for _, n := range got {
		pick[n] = true
	}
	infos := []snapshotInfo{}
	for _, snap := range sortedSnapshots(stored) {
		if pick[snap.Name] || (current && snap.State == SnapshotInProgress) {
			infos = append(infos, s.info(repo, snap))
		}
	}
	return http.StatusOK, map[string]any{"snapshots": infos, "total": len(infos), "remaining": 0}
}

// lookup returns snapshot name of repo, or the error Elasticsearch answers.
func (s *esState) lookup(repo, name string) (*FakeSnapshot, *esError) {
	if _, ok := s.repos[repo]; !ok {
		return nil, repositoryMissing(repo)
	}
	snap := s.snapshots[repo][name]
	if snap == nil {
		return nil, snapshotMissing(repo, name)
	}
	return snap, nil
}

// snapshotStatus answers GET _snapshot/<repo>/<name>/_status, sizes as
// FakeSnapshotBytesPerIndex says.
func (s *esState) snapshotStatus(repo, name string) (int, any) {
	snap, e := s.lookup(repo, name)
	if e != nil {
		return errAnswer(e)
	}
	total, failed, done := shardCounts(snap)
	started := 0
	if snap.State == SnapshotInProgress {
		started = total
	}
	shardsStats := func(total, failed, done, started int) map[string]int {
		return map[string]int{"initializing": 0, "started": started, "finalizing": 0, "done": done, "failed": failed, "total": total}
	}
	_, startMillis := millisTime(snap.Start)
	_, endMillis := millisTime(snap.End)
	elapsed := int64(0)
	if endMillis > 0 {
		elapsed = max(0, endMillis-startMillis)
	}
	stats := func(indices int) map[string]any {
		files := map[string]int64{"file_count": int64(indices * fakeSnapshotFilesPerIndex), "size_in_bytes": int64(indices) * FakeSnapshotBytesPerIndex}
		return map[string]any{"incremental": files, "total": files, "start_time_in_millis": startMillis, "time_in_millis": elapsed}
	}
	indices := map[string]any{}
	for k, ix := range snap.Indices {
		f, d, st := 0, 1, 0
		switch {
		case snap.State == SnapshotInProgress:
			d, st = 0, 1
		case k < failed:
			f, d = 1, 0
		}
		indices[ix] = map[string]any{"shards_stats": shardsStats(1, f, d, st), "stats": stats(1)}
	}
	return http.StatusOK, map[string]any{"snapshots": []any{map[string]any{
		"snapshot":             snap.Name,
		"repository":           repo,
		"uuid":                 snap.UUID,
		"state":                snap.State,
		"include_global_state": false,
		"shards_stats":         shardsStats(total, failed, done, started),
		"stats":                stats(len(snap.Indices)),
		"indices":              indices,
	}}}
}

// deleteSnapshot answers DELETE _snapshot/<repo>/<name>; a running snapshot is aborted,
// that is deleted as well.
func (s *esState) deleteSnapshot(repo, name string) (int, any) {
	if _, e := s.lookup(repo, name); e != nil {
		return errAnswer(e)
	}
	delete(s.snapshots[repo], name)
	return http.StatusOK, map[string]any{"acknowledged": true}
}

// restore answers POST _snapshot/<repo>/<name>/_restore {"indices":[..]}, checking what
// Elasticsearch 7.17's RestoreService checks, in its order: the repository is registered
// (404 repository_missing_exception); the snapshot is in the repository, which a running one
// is not yet (500 snapshot_restore_exception "snapshot does not exist", not a 404); it is
// restorable, which a FAILED one is not (500 snapshot_restore_exception); each index named
// is in the snapshot (404 index_not_found_exception); and none is open in the cluster (500
// snapshot_restore_exception). Then each index is open, with the snapshot's document count,
// and in progress while restores are held.
func (s *esState) restore(repo, name string, body []byte) (int, any) {
	req, err := decodeSnapshotBody(body)
	if err != nil {
		return errAnswer(badRequest(err))
	}
	if _, ok := s.repos[repo]; !ok {
		return errAnswer(repositoryMissing(repo))
	}
	snap := s.snapshots[repo][name]
	if snap == nil || snap.State == SnapshotInProgress {
		return errAnswer(&esError{http.StatusInternalServerError, "snapshot_restore_exception",
			"[" + repo + ":" + name + "] snapshot does not exist", nil})
	}
	id := "[" + repo + ":" + name + "/" + snap.UUID + "]"
	if snap.State == SnapshotFailed {
		return errAnswer(&esError{http.StatusInternalServerError, "snapshot_restore_exception",
			id + " unsupported snapshot state [" + snap.State + "]", nil})
	}
	list := []string(req.Indices)
	if len(list) == 0 {
		list = []string{"_all"}
	}
	indices, missing := resolve(list, snap.Indices, nil)
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	for _, ix := range indices {
		if cur := s.indices[ix]; cur != nil && cur.open {
			return errAnswer(&esError{http.StatusInternalServerError, "snapshot_restore_exception",
				id + " cannot restore index [" + ix + "] because an open index with same name already exists in the cluster. " +
					"Either close or delete the existing index or restore the index under a different name by providing a " +
					"rename pattern and replacement name", nil})
		}
	}
	for _, ix := range indices {
		cur := s.indices[ix]
		if cur == nil {
			cur = &fakeIndex{uuid: newUUID()}
			s.indices[ix] = cur
		}
		cur.open, cur.docs, cur.recovering = true, snap.Docs[ix], s.hold
	}
	s.restores[[2]string{repo, name}]++
	return http.StatusOK, map[string]any{"accepted": true}
}

// catIndices answers GET _cat/indices/<pattern>?format=json&bytes=b. Each index has one
// primary and one replica, so a single node shows it yellow. As in Elasticsearch 7.17, where
// a closed index keeps its shards allocated (replicated closed indices, 7.2), a closed index
// has its health and shard counts but null document counts and sizes.
func (s *esState) catIndices(pattern string) (int, any) {
	got, missing := resolve(names(pattern), keys(s.indices), nil)
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	rows := []map[string]any{}
	for _, name := range got {
		ix := s.indices[name]
		health := "yellow"
		if ix.recovering {
			health = "red"
		}
		row := map[string]any{
			"health": health, "status": "open", "index": name, "uuid": ix.uuid, "pri": "1", "rep": "1",
			"docs.count": nil, "docs.deleted": nil, "store.size": nil, "pri.store.size": nil,
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

// closeIndices answers POST <indices>/_close.
func (s *esState) closeIndices(list string) (int, any) {
	got, missing := resolve(names(list), keys(s.indices), s.isOpen)
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

// fakeHealth is the body of GET _cluster/health/<indices> (Elasticsearch 7.17).
type fakeHealth struct {
	ClusterName                 string  `json:"cluster_name"`
	Status                      string  `json:"status"`
	TimedOut                    bool    `json:"timed_out"`
	NumberOfNodes               int     `json:"number_of_nodes"`
	NumberOfDataNodes           int     `json:"number_of_data_nodes"`
	ActivePrimaryShards         int     `json:"active_primary_shards"`
	ActiveShards                int     `json:"active_shards"`
	RelocatingShards            int     `json:"relocating_shards"`
	InitializingShards          int     `json:"initializing_shards"`
	UnassignedShards            int     `json:"unassigned_shards"`
	DelayedUnassignedShards     int     `json:"delayed_unassigned_shards"`
	NumberOfPendingTasks        int     `json:"number_of_pending_tasks"`
	NumberOfInFlightFetch       int     `json:"number_of_in_flight_fetch"`
	TaskMaxWaitingInQueueMillis int     `json:"task_max_waiting_in_queue_millis"`
	ActiveShardsPercentAsNumber float64 `json:"active_shards_percent_as_number"`
}

// indicesHealth answers GET _cluster/health/<indices>?timeout=..: with an index missing,
// 408 with timed_out true and status red, as Elasticsearch 7.17 answers once the timeout
// passes; else 200, yellow (each index's replica unassigned on a single node), or red with
// an initializing primary per index whose restore is held. A closed index counts as its
// open self: since 7.2 its shards stay allocated.
func (s *esState) indicesHealth(list string) (int, any) {
	h := fakeHealth{ClusterName: "docker-cluster", NumberOfNodes: 1, NumberOfDataNodes: 1}
	got, missing := resolve(names(list), keys(s.indices), nil)
	if missing != "" {
		h.Status, h.TimedOut = "red", true
		return http.StatusRequestTimeout, h
	}
	h.Status = "green"
	for _, name := range got {
		h.UnassignedShards++
		if s.indices[name].recovering {
			h.InitializingShards++
			h.Status = "red"
			continue
		}
		h.ActivePrimaryShards++
		h.ActiveShards++
		if h.Status == "green" {
			h.Status = "yellow"
		}
	}
	if total := h.ActiveShards + h.InitializingShards + h.UnassignedShards; total > 0 {
		h.ActiveShardsPercentAsNumber = 100 * float64(h.ActiveShards) / float64(total)
	} else {
		h.ActiveShardsPercentAsNumber = 100
	}
	return http.StatusOK, h
}

// searchCrawlers answers a search of index with the aggregation of its crawler metadata by
// crawler name (see SetCrawlerMetadata), in the shape of Elasticsearch 7.17: min and max of
// a date field as epoch milliseconds with value_as_string.
func (s *esState) searchCrawlers(index string) (int, any) {
	ix := s.indices[index]
	if ix == nil {
		return errAnswer(indexNotFound(index))
	}
	type agg struct {
		n              int
		oldest, newest time.Time
	}
	byName := map[string]*agg{}
	for _, e := range ix.crawlers {
		a := byName[e.Crawler]
		if a == nil {
			a = &agg{oldest: e.LastCommitAt, newest: e.LastCommitAt}
			byName[e.Crawler] = a
		}
		a.n++
		if e.LastCommitAt.Before(a.oldest) {
			a.oldest = e.LastCommitAt
		}
		if e.LastCommitAt.After(a.newest) {
			a.newest = e.LastCommitAt
		}
	}
	date := func(t time.Time) map[string]any {
		return map[string]any{"value": float64(t.UnixMilli()), "value_as_string": t.UTC().Format("2006-01-02T15:04:05.000Z")}
	}
	buckets := []any{}
	names := keys(byName)
	sort.Strings(names)
	for _, name := range names {
		a := byName[name]
		buckets = append(buckets, map[string]any{"key": name, "doc_count": a.n, "oldest": date(a.oldest), "newest": date(a.newest)})
	}
	return http.StatusOK, map[string]any{
		"took": 1, "timed_out": false,
		"hits": map[string]any{"total": map[string]any{"value": len(ix.crawlers), "relation": "eq"}, "max_score": nil, "hits": []any{}},
		"aggregations": map[string]any{"crawlers": map[string]any{
			"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": buckets,
		}},
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
	return http.StatusOK, map[string]any{
		"took": 1, "timed_out": false,
		"hits":         map[string]any{"total": map[string]any{"value": len(ix.errors), "relation": "eq"}, "max_score": nil, "hits": []any{}},
		"aggregations": map[string]any{"crawlers": map[string]any{"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": buckets}},
	}
}
