package elastic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

const repositoryMissing = `{"error":{"root_cause":[{"type":"repository_missing_exception","reason":"[backups] missing"}],"type":"repository_missing_exception","reason":"[backups] missing"},"status":404}`

func TestEnsureRepository(t *testing.T) {
	fs := elastic.Repository{Type: elastic.RepositoryFS, Location: "monocle"}
	s3 := elastic.Repository{Type: elastic.RepositoryS3, Bucket: "monocle-backups", BasePath: "prod",
		Endpoint: "minio.storage.svc:9000", Protocol: "http", PathStyleAccess: true}
	const s3Settings = `{"bucket":"monocle-backups","base_path":"prod","endpoint":"minio.storage.svc:9000","protocol":"http","path_style_access":"true"}`
	tests := map[string]struct {
		repo     elastic.Repository
		get      reply
		put      *reply
		wantPut  string // the PUT body, as JSON; "" when no PUT is expected
		wantErr  string
		wantGets int
	}{
		"fs, missing: registered": {
			repo: fs, get: reply{404, repositoryMissing}, put: &reply{200, `{"acknowledged":true}`},
			wantPut: `{"type":"fs","settings":{"location":"monocle"}}`, wantGets: 1,
		},
		"fs, equal: no PUT": {
			repo: fs, get: reply{200, `{"backups":{"type":"fs","settings":{"location":"monocle"}}}`}, wantGets: 1,
		},
		"fs, other location: PUT": {
			repo: fs, get: reply{200, `{"backups":{"type":"fs","settings":{"location":"old"}}}`}, put: &reply{200, `{"acknowledged":true}`},
			wantPut: `{"type":"fs","settings":{"location":"monocle"}}`, wantGets: 1,
		},
		"fs, extra setting on the server: PUT": {
			repo: fs, get: reply{200, `{"backups":{"type":"fs","settings":{"location":"monocle","compress":"true"}}}`}, put: &reply{200, `{"acknowledged":true}`},
			wantPut: `{"type":"fs","settings":{"location":"monocle"}}`, wantGets: 1,
		},
		"s3 over fs: PUT without credentials": {
			repo: s3, get: reply{200, `{"backups":{"type":"fs","settings":{"location":"monocle"}}}`}, put: &reply{200, `{"acknowledged":true}`},
			wantPut: `{"type":"s3","settings":` + s3Settings + `}`, wantGets: 1,
		},
		"s3, equal with settings as strings: no PUT": {
			repo: s3, get: reply{200, `{"backups":{"type":"s3","settings":` + s3Settings + `}}`}, wantGets: 1,
		},
		"read-only fs with its own s3 client: settings as strings": {
			repo: elastic.Repository{Type: elastic.RepositoryFS, Location: "/backup", ReadOnly: true}, get: reply{404, repositoryMissing},
			put:     &reply{200, `{"acknowledged":true}`},
			wantPut: `{"type":"fs","settings":{"location":"/backup","readonly":"true"}}`, wantGets: 1,
		},
		"read-only s3 of client restore": {
			repo: elastic.Repository{Type: elastic.RepositoryS3, Bucket: "b", Client: "restore", ReadOnly: true}, get: reply{404, repositoryMissing},
			put:     &reply{200, `{"acknowledged":true}`},
			wantPut: `{"type":"s3","settings":{"bucket":"b","client":"restore","readonly":"true"}}`, wantGets: 1,
		},
		"verification fails": {
			repo: fs, get: reply{404, repositoryMissing},
			put:     &reply{500, `{"error":{"root_cause":[{"type":"repository_verification_exception","reason":"[backups] path  is not accessible on master node"}],"type":"repository_verification_exception","reason":"[backups] path  is not accessible on master node"},"status":500}`},
			wantPut: `{"type":"fs","settings":{"location":"monocle"}}`, wantErr: "500", wantGets: 1,
		},
		"PUT not acknowledged": {
			repo: fs, get: reply{404, repositoryMissing}, put: &reply{200, `{"acknowledged":false}`},
			wantPut: `{"type":"fs","settings":{"location":"monocle"}}`, wantErr: "not acknowledged", wantGets: 1,
		},
		"GET garbage":         {repo: fs, get: reply{200, `[`}, wantErr: "decoding _snapshot/<repository>", wantGets: 1},
		"GET error":           {repo: fs, get: reply{500, `{"error":{"type":"exception","reason":"x"},"status":500}`}, wantErr: "500", wantGets: 1},
		"fs without location": {repo: elastic.Repository{Type: elastic.RepositoryFS}, wantErr: "without a location"},
		"s3 without bucket":   {repo: elastic.Repository{Type: elastic.RepositoryS3}, wantErr: "without a bucket"},
		"s3 bad protocol":     {repo: elastic.Repository{Type: elastic.RepositoryS3, Bucket: "b", Protocol: "ftp"}, wantErr: "protocol"},
		"unknown type":        {repo: elastic.Repository{Type: "hdfs"}, wantErr: "want fs or s3"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			if tc.get.status != 0 {
				srv.Reply("GET", "/_snapshot/backups", tc.get.status, tc.get.body)
			}
			if tc.put != nil {
				srv.Reply("PUT", "/_snapshot/backups", tc.put.status, tc.put.body)
			}
			err := newClient(t, srv).EnsureRepository(context.Background(), "backups", tc.repo)
			checkErr(t, err, tc.wantErr)
			if n := len(srv.RequestsTo("GET", "/_snapshot/backups")); n != tc.wantGets {
				t.Errorf("%d GETs, want %d", n, tc.wantGets)
			}
			puts := srv.RequestsTo("PUT", "/_snapshot/backups")
			if tc.wantPut == "" {
				if len(puts) != 0 {
					t.Fatalf("PUT %s, want none", puts[0].Body)
				}
				return
			}
			if len(puts) != 1 {
				t.Fatalf("%d PUTs, want 1", len(puts))
			}
			assertJSON(t, puts[0].Body, tc.wantPut)
			for _, secret := range []string{"access_key", "secret_key", "session_token"} {
				if strings.Contains(string(puts[0].Body), secret) {
					t.Errorf("PUT body %s carries %s", puts[0].Body, secret)
				}
			}
		})
	}
}

// assertJSON fails unless got and want are the same JSON value.
func assertJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("body %q is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q is not JSON: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("body %s, want %s", got, want)
	}
}

func TestCreateSnapshot(t *testing.T) {
	testWrites(t, "PUT", "/_snapshot/backups/monocle-2024.01.02", map[string]callCase[struct{}]{
		"accepted": {reply: reply{200, `{"accepted":true}`}},
		"name taken": {
			reply:   reply{400, `{"error":{"root_cause":[{"type":"invalid_snapshot_name_exception","reason":"[backups:monocle-2024.01.02] Invalid snapshot name [monocle-2024.01.02], snapshot with the same name already exists"}],"type":"invalid_snapshot_name_exception","reason":"[backups:monocle-2024.01.02] Invalid snapshot name [monocle-2024.01.02], snapshot with the same name already exists"},"status":400}`},
			wantErr: "400",
		},
		"garbage":      {reply: reply{200, `accepted`}, wantErr: "decoding _snapshot/<repository>/<snapshot>"},
		"not accepted": {reply: reply{200, `{"snapshot":{}}`}, wantErr: `no "accepted": true`},
		"missing repo": {reply: reply{404, repositoryMissing}, wantErr: "404"},
	}, func(c elastic.Client, ctx context.Context) error {
		return c.CreateSnapshot(ctx, "backups", "monocle-2024.01.02", []string{"monocle.config", "monocle.changes.1.demo"})
	}, checkStartRequest)
}

// checkStartRequest checks the request that starts a snapshot or a restore of Monocle's two
// indices: it does not wait for completion, and names the indices without the global state.
func checkStartRequest(t *testing.T, r elastictest.Request) {
	t.Helper()
	if got := r.Query.Get("wait_for_completion"); got != "false" {
		t.Errorf("wait_for_completion=%q, want false", got)
	}
	assertJSON(t, r.Body, `{"indices":["monocle.config","monocle.changes.1.demo"],"include_global_state":false}`)
}

func TestSnapshotArgumentsChecked(t *testing.T) {
	srv := elastictest.NewServer(t) // no routes: any request fails the test
	c := newClient(t, srv)
	ctx := context.Background()
	checks := map[string]error{
		"create, no indices":   c.CreateSnapshot(ctx, "backups", "s", nil),
		"create, empty name":   c.CreateSnapshot(ctx, "backups", "", []string{"a"}),
		"restore, bad index":   c.Restore(ctx, "backups", "s", []string{"a,b"}),
		"delete, reserved":     c.DeleteSnapshot(ctx, "backups", "_all"),
		"repository, slash":    c.EnsureRepository(ctx, "a/b", elastic.Repository{Type: elastic.RepositoryFS, Location: "x"}),
		"restore done, none":   func() error { _, err := c.RestoreDone(ctx, nil); return err }(),
		"snapshots, empty":     func() error { _, _, err := c.Snapshots(ctx, ""); return err }(),
		"size, question mark":  func() error { _, err := c.SnapshotSize(ctx, "backups", "a?b"); return err }(),
		"snapshot, whitespace": func() error { _, err := c.Snapshot(ctx, "backups", "a b"); return err }(),
	}
	for name, err := range checks {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// snapshotsBody is GET _snapshot/backups/_all from Elasticsearch 7.17 (Get snapshot API;
// GetSnapshotsResponse and SnapshotInfo): listed newest first to check the sort, one
// running, one partial.
const snapshotsBody = `{
  "snapshots": [
    {
      "snapshot": "monocle-2024.01.03", "uuid": "kV3sWq4bQk2m1nJ7rT9yXw", "repository": "backups",
      "version_id": 7171099, "version": "7.17.10",
      "indices": ["monocle.config", "monocle.changes.1.demo"], "data_streams": [],
      "include_global_state": false, "state": "IN_PROGRESS",
      "start_time": "2024-01-03T03:00:00.250Z", "start_time_in_millis": 1704250800250,
      "end_time": "1970-01-01T00:00:00.000Z", "end_time_in_millis": 0, "duration_in_millis": 0,
      "failures": [], "shards": {"total": 0, "failed": 0, "successful": 0}, "feature_states": []
    },
    {
      "snapshot": "monocle-2024.01.02", "uuid": "dKb54xw67gvdRctLCxSket", "repository": "backups",
      "version_id": 7171099, "version": "7.17.10",
      "indices": ["monocle.config", "monocle.changes.1.demo"], "data_streams": [],
      "include_global_state": false, "state": "PARTIAL",
      "reason": "Indices don't have primary shards [monocle.changes.1.demo]",
      "start_time": "2024-01-02T03:00:00.123Z", "start_time_in_millis": 1704164400123,
      "end_time": "2024-01-02T03:00:02.456Z", "end_time_in_millis": 1704164402456, "duration_in_millis": 2333,
      "failures": [{"index": "monocle.changes.1.demo", "index_uuid": "v2oQY1i5Q0y3k7n0d2cY8w", "shard_id": 0,
        "reason": "primary shard is not allocated", "status": "INTERNAL_SERVER_ERROR"}],
      "shards": {"total": 2, "failed": 1, "successful": 1}, "feature_states": []
    },
    {
      "snapshot": "monocle-2024.01.01", "uuid": "vdRctLCxSketdKb54xw67g", "repository": "backups",
      "version_id": 7171099, "version": "7.17.10",
      "indices": ["monocle.config", "monocle.changes.1.demo"], "data_streams": [],
      "include_global_state": false, "state": "SUCCESS",
      "start_time": "2024-01-01T03:00:00.000Z", "start_time_in_millis": 1704078000000,
      "end_time": "2024-01-01T03:00:01.500Z", "end_time_in_millis": 1704078001500, "duration_in_millis": 1500,
      "failures": [], "shards": {"total": 2, "failed": 0, "successful": 2}, "feature_states": []
    }
  ],
  "total": 3,
  "remaining": 0
}`

var (
	snapSuccess = elastic.Snapshot{Name: "monocle-2024.01.01", UUID: "vdRctLCxSketdKb54xw67g", State: elastic.SnapshotSuccess,
		Start: time.Date(2024, 1, 1, 3, 0, 0, 0, time.UTC), End: time.Date(2024, 1, 1, 3, 0, 1, 500e6, time.UTC),
		Indices: []string{"monocle.changes.1.demo", "monocle.config"}, ShardsTotal: 2, ShardsSuccessful: 2}
	snapPartial = elastic.Snapshot{Name: "monocle-2024.01.02", UUID: "dKb54xw67gvdRctLCxSket", State: elastic.SnapshotPartial,
		Start: time.Date(2024, 1, 2, 3, 0, 0, 123e6, time.UTC), End: time.Date(2024, 1, 2, 3, 0, 2, 456e6, time.UTC),
		Indices: []string{"monocle.changes.1.demo", "monocle.config"},
		Reason:  "Indices don't have primary shards [monocle.changes.1.demo]", ShardsTotal: 2, ShardsFailed: 1, ShardsSuccessful: 1}
	snapRunning = elastic.Snapshot{Name: "monocle-2024.01.03", UUID: "kV3sWq4bQk2m1nJ7rT9yXw", State: elastic.SnapshotInProgress,
		Start: time.Date(2024, 1, 3, 3, 0, 0, 250e6, time.UTC), Indices: []string{"monocle.changes.1.demo", "monocle.config"}}
)

// snapshotNames is GET _snapshot/backups/_all?verbose=false from Elasticsearch 7.17 for the
// snapshots of snapshotsBody and, first, monocle-2023.12.31, whose metadata blob cannot be
// read: the short form built from the repository data (TransportGetSnapshotsAction
// buildSimpleSnapshotInfos; SnapshotInfo without times), which lists it all the same.
const snapshotNames = `{"snapshots":[
  {"snapshot":"monocle-2023.12.31","uuid":"pReOiBzOR0q8y_lGXJcdng","repository":"backups","indices":["monocle.changes.1.demo","monocle.config"],"data_streams":[],"state":"SUCCESS"},
  {"snapshot":"monocle-2024.01.01","uuid":"vdRctLCxSketdKb54xw67g","repository":"backups","indices":["monocle.changes.1.demo","monocle.config"],"data_streams":[],"state":"SUCCESS"},
  {"snapshot":"monocle-2024.01.02","uuid":"dKb54xw67gvdRctLCxSket","repository":"backups","indices":["monocle.changes.1.demo","monocle.config"],"data_streams":[],"state":"PARTIAL"},
  {"snapshot":"monocle-2024.01.03","uuid":"kV3sWq4bQk2m1nJ7rT9yXw","repository":"backups","indices":["monocle.changes.1.demo","monocle.config"],"data_streams":[],"state":"IN_PROGRESS"}
],"total":4,"remaining":0}`

// TestSnapshots: the listing reads the names from the repository data (verbose=false), then
// the snapshots with ignore_unavailable=true, and reports the names the second lacks as
// unreadable instead of failing on them.
func TestSnapshots(t *testing.T) {
	readable := strings.Replace(strings.Replace(snapshotNames, `"total":4`, `"total":3`, 1),
		snapshotNames[strings.Index(snapshotNames, `  {"snapshot":"monocle-2023.12.31"`):strings.Index(snapshotNames, `  {"snapshot":"monocle-2024.01.01"`)], "", 1)
	const empty = `{"snapshots":[],"total":0,"remaining":0}`
	tests := map[string]struct {
		names, list    reply
		want           []elastic.Snapshot
		wantUnreadable []string
		wantErr        string
		wantRequests   int
	}{
		"sorted by start time": {names: reply{200, readable}, list: reply{200, snapshotsBody},
			want: []elastic.Snapshot{snapSuccess, snapPartial, snapRunning}, wantRequests: 2},
		"one unreadable, left out of the list": {names: reply{200, snapshotNames}, list: reply{200, snapshotsBody},
			want: []elastic.Snapshot{snapSuccess, snapPartial, snapRunning}, wantUnreadable: []string{"monocle-2023.12.31"}, wantRequests: 2},
		"empty repository":   {names: reply{200, empty}, list: reply{200, empty}, want: []elastic.Snapshot{}, wantRequests: 2},
		"missing repository": {names: reply{404, repositoryMissing}, wantErr: "404", wantRequests: 1},
		"no names list":      {names: reply{200, `{"total":0}`}, wantErr: `decoding _snapshot/<repository>/_all?verbose=false: no "snapshots" list`, wantRequests: 1},
		"nameless name":      {names: reply{200, `{"snapshots":[{"state":"SUCCESS"}]}`}, wantErr: "no name", wantRequests: 1},
		"list fails":         {names: reply{200, empty}, list: reply{500, `{"error":{"type":"exception","reason":"x"},"status":500}`}, wantErr: "500", wantRequests: 2},
		"no snapshots list":  {names: reply{200, empty}, list: reply{200, `{"total":0}`}, wantErr: `decoding _snapshot/<repository>/<snapshot>: no "snapshots" list`, wantRequests: 2},
		"unknown state":      {names: reply{200, empty}, list: reply{200, `{"snapshots":[{"snapshot":"a","state":"DONE"}]}`}, wantErr: `state "DONE"`, wantRequests: 2},
		"nameless snapshot":  {names: reply{200, empty}, list: reply{200, `{"snapshots":[{"state":"SUCCESS"}]}`}, wantErr: "no name", wantRequests: 2},
		"garbage":            {names: reply{200, empty}, list: reply{200, `{"snapshots":{}}`}, wantErr: "decoding _snapshot/<repository>/<snapshot>", wantRequests: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			srv.Handle("GET", "/_snapshot/backups/_all", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("verbose") == "false" {
					elastictest.JSON(tc.names.status, tc.names.body).ServeHTTP(w, r)
					return
				}
				elastictest.JSON(tc.list.status, tc.list.body).ServeHTTP(w, r)
			}))
			got, unreadable, err := newClient(t, srv).Snapshots(context.Background(), "backups")
			checkErr(t, err, tc.wantErr)
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(unreadable, tc.wantUnreadable) {
				t.Errorf("Snapshots = %+v, unreadable %v; want %+v, %v", got, unreadable, tc.want, tc.wantUnreadable)
			}
			reqs := srv.Requests()
			if len(reqs) != tc.wantRequests {
				t.Fatalf("%d requests, want %d", len(reqs), tc.wantRequests)
			}
			if q := reqs[0].Query; q.Get("verbose") != "false" {
				t.Errorf("first request's query %v, want verbose=false", q)
			}
			if len(reqs) > 1 {
				if q := reqs[1].Query; q.Get("ignore_unavailable") != "true" || q.Has("verbose") {
					t.Errorf("second request's query %v, want ignore_unavailable=true, verbose by default", q)
				}
			}
		})
	}
}

// TestIsSnapshotNameTaken: both of Elasticsearch 7.17's refusals of a snapshot name in use,
// the completed one and the running one, and nothing else.
func TestIsSnapshotNameTaken(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"already exists": {&elastic.StatusError{Code: 400, Type: "invalid_snapshot_name_exception",
			Reason: "[monocle:scheduled-20261125-0300] Invalid snapshot name [scheduled-20261125-0300], snapshot with the same name already exists"}, true},
		"already in progress": {&elastic.StatusError{Code: 400, Type: "invalid_snapshot_name_exception",
			Reason: "[monocle:scheduled-20261125-0300] Invalid snapshot name [scheduled-20261125-0300], snapshot with the same name is already in-progress"}, true},
		"wrapped": {fmt.Errorf("PUT _snapshot/monocle/s: %w", &elastic.StatusError{Code: 400, Type: "invalid_snapshot_name_exception",
			Reason: "[monocle:s] Invalid snapshot name [s], snapshot with the same name is already in-progress"}), true},
		"a bad name": {&elastic.StatusError{Code: 400, Type: "invalid_snapshot_name_exception",
			Reason: "[monocle:S] Invalid snapshot name [S], must be lowercase"}, false},
		"8.2's type": {&elastic.StatusError{Code: 400, Type: "snapshot_name_already_in_use_exception",
			Reason: "[monocle:s] Invalid snapshot name [s], snapshot with the same name already exists"}, false},
		"concurrent": {&elastic.StatusError{Code: 503, Type: "concurrent_snapshot_execution_exception", Reason: "[monocle:s] a snapshot is already running"}, false},
		"nil":        {nil, false},
	} {
		if got := elastic.IsSnapshotNameTaken(tc.err); got != tc.want {
			t.Errorf("%s: IsSnapshotNameTaken(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
}

func TestSnapshot(t *testing.T) {
	one := strings.Replace(snapshotsBody, `"total": 3`, `"total": 1`, 1)
	one = one[:strings.Index(one, `    {
      "snapshot": "monocle-2024.01.02"`)] + one[strings.Index(one, `    {
      "snapshot": "monocle-2024.01.01"`):]
	tests := map[string]struct {
		name    string
		reply   reply
		want    elastic.Snapshot
		wantErr string
		missing bool
	}{
		"found": {name: "monocle-2024.01.01", reply: reply{200, one}, want: snapSuccess},
		"missing": {
			name:    "nope",
			reply:   reply{404, `{"error":{"root_cause":[{"type":"snapshot_missing_exception","reason":"[backups:nope] is missing"}],"type":"snapshot_missing_exception","reason":"[backups:nope] is missing"},"status":404}`},
			missing: true, wantErr: "snapshot_missing_exception",
		},
		"not in the answer": {name: "nope", reply: reply{200, `{"snapshots":[],"total":0,"remaining":0}`}, missing: true, wantErr: "does not list"},
		"garbage":           {name: "nope", reply: reply{200, `}`}, wantErr: "decoding"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, c := serve(t, "GET", "/_snapshot/backups/"+tc.name, tc.reply)
			got, err := c.Snapshot(context.Background(), "backups", tc.name)
			checkErr(t, err, tc.wantErr)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Snapshot = %+v, want %+v", got, tc.want)
			}
			if got := errors.Is(err, elastic.ErrNotFound); got != tc.missing {
				t.Errorf("errors.Is(%v, ErrNotFound) = %v, want %v", err, got, tc.missing)
			}
			var se *elastic.StatusError
			if tc.missing && (!errors.As(err, &se) || se.Type != "snapshot_missing_exception") {
				t.Errorf("error %v is no *StatusError of type snapshot_missing_exception", err)
			}
		})
	}
}

// snapshotStatus is GET _snapshot/backups/monocle-2024.01.01/_status from Elasticsearch 7.17
// (Get snapshot status API), without the per-index detail.
const snapshotStatus = `{
  "snapshots": [{
    "snapshot": "monocle-2024.01.01", "repository": "backups", "uuid": "vdRctLCxSketdKb54xw67g",
    "state": "SUCCESS", "include_global_state": false,
    "shards_stats": {"initializing": 0, "started": 0, "finalizing": 0, "done": 2, "failed": 0, "total": 2},
    "stats": {
      "incremental": {"file_count": 3, "size_in_bytes": 5969},
      "total": {"file_count": 27, "size_in_bytes": 3150848},
      "start_time_in_millis": 1704078000000, "time_in_millis": 1500
    },
    "indices": {}
  }]
}`

func TestSnapshotSize(t *testing.T) {
	testReads(t, "GET", "/_snapshot/backups/monocle-2024.01.01/_status", map[string]callCase[int64]{
		"total size":   {reply: reply{200, snapshotStatus}, want: 3150848},
		"no total":     {reply: reply{200, `{"snapshots":[{"snapshot":"monocle-2024.01.01","stats":{}}]}`}, wantErr: "no stats.total.size_in_bytes"},
		"other":        {reply: reply{200, `{"snapshots":[]}`}, wantErr: "not in the answer"},
		"garbage":      {reply: reply{200, `{"snapshots":"x"}`}, wantErr: "decoding _snapshot/<repository>/<snapshot>/_status"},
		"missing":      {reply: reply{404, `{"error":{"type":"snapshot_missing_exception","reason":"[backups:monocle-2024.01.01] is missing"},"status":404}`}, wantErr: "404"},
		"error status": {reply: reply{500, `{"error":{"type":"exception","reason":"x"},"status":500}`}, wantErr: "500"},
	}, func(c elastic.Client, ctx context.Context) (int64, error) {
		return c.SnapshotSize(ctx, "backups", "monocle-2024.01.01")
	}, nil)
}

func TestDeleteSnapshot(t *testing.T) {
	testWrites(t, "DELETE", "/_snapshot/backups/old", map[string]callCase[struct{}]{
		"deleted":          {reply: reply{200, `{"acknowledged":true}`}},
		"already gone":     {reply: reply{404, `{"error":{"root_cause":[{"type":"snapshot_missing_exception","reason":"[backups:old] is missing"}],"type":"snapshot_missing_exception","reason":"[backups:old] is missing"},"status":404}`}},
		"repository gone":  {reply: reply{404, repositoryMissing}},
		"not acknowledged": {reply: reply{200, `{"acknowledged":false}`}, wantErr: "not acknowledged"},
		"garbage":          {reply: reply{200, `<html>`}, wantErr: "decoding"},
		"error status": {
			reply:   reply{400, `{"error":{"type":"concurrent_snapshot_execution_exception","reason":"[backups:old] cannot delete snapshot during a restore in progress"},"status":400}`},
			wantErr: "400",
		},
	}, func(c elastic.Client, ctx context.Context) error {
		return c.DeleteSnapshot(ctx, "backups", "old")
	}, nil)
}

func TestRestore(t *testing.T) {
	testWrites(t, "POST", "/_snapshot/backups/monocle-2024.01.01/_restore", map[string]callCase[struct{}]{
		"accepted": {reply: reply{200, `{"accepted":true}`}},
		"open index in the way": {
			reply:   reply{500, `{"error":{"root_cause":[{"type":"snapshot_restore_exception","reason":"[backups:monocle-2024.01.01/vdRctLCxSketdKb54xw67g] cannot restore index [monocle.config] because an open index with same name already exists in the cluster. Either close or delete the existing index or restore the index under a different name by providing a rename pattern and replacement name"}],"type":"snapshot_restore_exception","reason":"[backups:monocle-2024.01.01/vdRctLCxSketdKb54xw67g] cannot restore index [monocle.config] because an open index with same name already exists in the cluster. Either close or delete the existing index or restore the index under a different name by providing a rename pattern and replacement name"},"status":500}`},
			wantErr: "500",
		},
		"missing snapshot": {reply: reply{404, `{"error":{"type":"snapshot_missing_exception","reason":"[backups:monocle-2024.01.01] is missing"},"status":404}`}, wantErr: "404"},
		"garbage":          {reply: reply{200, `{`}, wantErr: "decoding _snapshot/<repository>/<snapshot>/_restore"},
		"not accepted":     {reply: reply{200, `{"accepted":false}`}, wantErr: `no "accepted": true`},
	}, func(c elastic.Client, ctx context.Context) error {
		return c.Restore(ctx, "backups", "monocle-2024.01.01", []string{"monocle.config", "monocle.changes.1.demo"})
	}, checkStartRequest)
}

// refusedBody is Elasticsearch's answer to a restore over an open index, as a 7.16.0 node sent
// it (RestoreService.validateExistingClosedIndex), the index here a data stream's hidden
// backing index.
const refusedBody = `{"error":{"root_cause":[{"type":"snapshot_restore_exception","reason":"[netology_backup:neto_snap_2021.12.16/pReOiBzOR0q8y_lGXJcdng] cannot restore index [.ds-ilm-history-5-2021.12.16-000001] because an open index with same name already exists in the cluster. Either close or delete the existing index or restore the index under a different name by providing a rename pattern and replacement name"}],"type":"snapshot_restore_exception","reason":"[netology_backup:neto_snap_2021.12.16/pReOiBzOR0q8y_lGXJcdng] cannot restore index [.ds-ilm-history-5-2021.12.16-000001] because an open index with same name already exists in the cluster. Either close or delete the existing index or restore the index under a different name by providing a rename pattern and replacement name"},"status":500}`

func TestRefusedOpenIndex(t *testing.T) {
	tests := map[string]struct {
		reply reply
		index string
		ok    bool
	}{
		"open index in the way":   {reply: reply{500, refusedBody}, index: ".ds-ilm-history-5-2021.12.16-000001", ok: true},
		"snapshot does not exist": {reply: reply{500, `{"error":{"type":"snapshot_restore_exception","reason":"[netology_backup:nope] snapshot does not exist"},"status":500}`}},
		"another type, same text": {reply: reply{500, strings.ReplaceAll(refusedBody, "snapshot_restore_exception", "exception")}},
		"no index name":           {reply: reply{500, strings.ReplaceAll(refusedBody, ".ds-ilm-history-5-2021.12.16-000001", "")}},
		"index missing":           {reply: reply{404, `{"error":{"type":"index_not_found_exception","reason":"no such index [x]"},"status":404}`}},
		"accepted":                {reply: reply{200, `{"accepted":true}`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, c := serve(t, "POST", "/_snapshot/netology_backup/neto_snap_2021.12.16/_restore", tc.reply)
			err := c.Restore(context.Background(), "netology_backup", "neto_snap_2021.12.16", []string{"monocle.config"})
			index, ok := elastic.RefusedOpenIndex(err)
			if index != tc.index || ok != tc.ok {
				t.Errorf("RefusedOpenIndex(%v) = %q, %v; want %q, %v", err, index, ok, tc.index, tc.ok)
			}
		})
	}
	if index, ok := elastic.RefusedOpenIndex(errors.New("cannot restore index [x] because an open index with same name already exists")); ok {
		t.Errorf("RefusedOpenIndex of an error that is not Elasticsearch's = %q, true", index)
	}
}
