package testkit

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The snapshot API of the fake: repositories, snapshots and restores, answered from the
// state of elastic_state.go as elastic_api.go describes.

// getRepositories answers GET _snapshot/<repos>: {"<repo>":{"type":..,"settings":{..}}}.
func (s *esState) getRepositories(list string) (int, any) {
	out := map[string]any{}
	got, missing := resolve(names(list), keys(s.repos), nil)
	if missing != "" {
		return errAnswer(repositoryMissing(missing))
	}
	for _, name := range got {
		r := s.repos[name]
		out[name] = map[string]any{"type": r.typ, "uuid": r.uuid, "settings": r.settings}
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
	// The repository's data, which holds its uuid, outlives a registration with other
	// settings.
	uuid := s.repos[name].uuid
	if uuid == "" {
		uuid = newUUID()
	}
	s.repos[name] = fakeRepo{uuid: uuid, typ: req.Type, settings: settings}
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
	// Elasticsearch 7.17 checks the repository data first, which holds finished snapshots
	// only, then the running ones (SnapshotsService.createSnapshot:
	// ensureSnapshotNameAvailableInRepo, ensureSnapshotNameNotRunning).
	if have, ok := s.snapshots[repo][name]; ok {
		taken := "already exists"
		if have.State == SnapshotInProgress {
			taken = "is already in-progress"
		}
		return errAnswer(&esError{http.StatusBadRequest, "invalid_snapshot_name_exception",
			"[" + repo + ":" + name + "] Invalid snapshot name [" + name + "], snapshot with the same name " + taken, nil})
	}
	list := []string(req.Indices)
	if len(list) == 0 {
		list = []string{"_all"}
	}
	indices, missing := resolve(list, keys(s.indices), s.expand("open"))
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
// globs or names: {"snapshots":[..],"total":n,"remaining":0}, sorted by start then name, as
// Elasticsearch 7.17's TransportGetSnapshotsAction does. With verbose=false each snapshot
// is the short form read from the repository data ({"snapshot", "uuid", "repository",
// "indices", "data_streams", "state"}), unreadable ones included. Otherwise an unreadable
// snapshot (FakeSnapshot.Unreadable) that is not running fails the whole answer with its
// error, or is left out with ignore_unavailable=true.
func (s *esState) getSnapshots(repo, list string, query url.Values) (int, any) {
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
	verbose := query.Get("verbose") != "false"
	ignoreUnavailable := query.Get("ignore_unavailable") == "true"
	infos := []any{}
	for _, snap := range sortedSnapshots(stored) {
		if !pick[snap.Name] && !(current && snap.State == SnapshotInProgress) {
			continue
		}
		switch {
		case !verbose:
			infos = append(infos, map[string]any{"snapshot": snap.Name, "uuid": snap.UUID, "repository": repo,
				"indices": append([]string{}, snap.Indices...), "data_streams": []string{}, "state": snap.State})
		case snap.Unreadable != "" && snap.State != SnapshotInProgress:
			if !ignoreUnavailable {
				return unreadableSnapshot(repo, snap)
			}
		default:
			infos = append(infos, s.info(repo, snap))
		}
	}
	return http.StatusOK, map[string]any{"snapshots": infos, "total": len(infos), "remaining": 0}
}

// unreadableSnapshot answers the error Elasticsearch 7.17 gives for a snapshot whose
// snap-<uuid>.dat cannot be read (elastic/elasticsearch v7.17
// BlobStoreRepository.getOneSnapshotInfo): 404 snapshot_missing_exception
// "[<repo>:<name>/<uuid>] is missing" caused by the NoSuchFileException of the blob's path, or
// 500 snapshot_exception "[<repo>:<name>/<uuid>] failed to get snapshot info<name>/<uuid>"
// (SnapshotException's message and SnapshotId.toString, no space between) caused by the
// CorruptStateException that ChecksumBlobStoreFormat wraps Lucene's checksum error in (the
// checksums here are made up). The causes are in the top-level error only, not in root_cause
// (ElasticsearchException.generateFailureXContent skips them there); a cause that is not an
// Elasticsearch exception is named by its class in snake case (getExceptionName).
func unreadableSnapshot(repo string, snap *FakeSnapshot) (int, any) {
	id := snap.Name + "/" + snap.UUID
	blob := "snap-" + snap.UUID + ".dat"
	e := &esError{http.StatusInternalServerError, "snapshot_exception", "[" + repo + ":" + id + "] failed to get snapshot info" + id, nil}
	checksum := "checksum failed (hardware problem?) : expected=1b2e9c5 actual=7f3a01d4 (resource=ChecksumBlobStoreFormat.readBlob(blob=\"" + blob + "\"))"
	cause := map[string]any{"type": "corrupt_state_exception", "reason": "org.apache.lucene.index.CorruptIndexException: " + checksum,
		"caused_by": map[string]any{"type": "corrupt_index_exception", "reason": checksum}}
	if snap.Unreadable == SnapshotBlobMissing {
		e = &esError{http.StatusNotFound, "snapshot_missing_exception", "[" + repo + ":" + id + "] is missing", nil}
		cause = map[string]any{"type": "no_such_file_exception", "reason": "/usr/share/elasticsearch/backup/" + blob}
	}
	body := e.body()
	body["error"].(map[string]any)["caused_by"] = cause
	return e.status, body
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
		f, d, st, stage := 0, 1, 0, "DONE"
		switch {
		case snap.State == SnapshotInProgress:
			d, st, stage = 0, 1, "STARTED"
		case k < failed:
			f, d, stage = 1, 0, "FAILURE"
		}
		// One shard per index, "0", with its stage (SnapshotIndexShardStage) and stats.
		shards := map[string]any{"0": map[string]any{"stage": stage, "stats": stats(1)}}
		indices[ix] = map[string]any{"shards_stats": shardsStats(1, f, d, st), "stats": stats(1), "shards": shards}
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
