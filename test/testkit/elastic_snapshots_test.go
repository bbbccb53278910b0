package testkit

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sort"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestFakeElasticSnapshotNameInProgress: a second snapshot of the name of one still running
// gets Elasticsearch 7.17's 400 "is already in-progress"; once it ended, "already exists".
func TestFakeElasticSnapshotNameInProgress(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	f.SetIndices("ns", "m", "monocle.config")
	if err := c.EnsureRepository(ctx, "r", fsRepo); err != nil {
		t.Fatal(err)
	}
	f.SnapshotOutcome("ns", "m", SnapshotInProgress, "")
	if err := c.CreateSnapshot(ctx, "r", "s", []string{"monocle.config"}); err != nil {
		t.Fatal(err)
	}
	se := wantStatus(t, "the name of a running snapshot", c.CreateSnapshot(ctx, "r", "s", []string{"monocle.config"}),
		400, "invalid_snapshot_name_exception")
	if want := "[r:s] Invalid snapshot name [s], snapshot with the same name is already in-progress"; se.Reason != want {
		t.Errorf("reason %q, want %q", se.Reason, want)
	}
	f.FinishSnapshots("ns", "m")
	se = wantStatus(t, "the name of a finished snapshot", c.CreateSnapshot(ctx, "r", "s", []string{"monocle.config"}),
		400, "invalid_snapshot_name_exception")
	if want := "[r:s] Invalid snapshot name [s], snapshot with the same name already exists"; se.Reason != want {
		t.Errorf("reason %q, want %q", se.Reason, want)
	}
}

// TestFakeElasticUnreadableSnapshot: a snapshot whose metadata cannot be read fails GET
// _snapshot/<repo>/_all whole (500 snapshot_exception when damaged, 404
// snapshot_missing_exception when gone, the cause in caused_by), is left out with
// ignore_unavailable=true and is listed by verbose=false; the client reports it apart.
func TestFakeElasticUnreadableSnapshot(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	if err := c.EnsureRepository(ctx, "r", fsRepo); err != nil {
		t.Fatal(err)
	}
	f.PutSnapshot("ns", "m", "r", FakeSnapshot{Name: "good", UUID: "goodgoodgoodgoodgoodgo", Indices: []string{"monocle.config"}})
	get := func(query string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://m-elastic.ns.svc:9200/_snapshot/r/_all"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(resources.ElasticOperatorUser, bundledPassword)
		resp, err := f.Transport().RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("GET _all%s: %s: %v", query, b, err)
		}
		return resp.StatusCode, body
	}
	names := func(body map[string]any) []string {
		var out []string
		for _, s := range body["snapshots"].([]any) {
			out = append(out, s.(map[string]any)["snapshot"].(string))
		}
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		unreadable string
		status     int
		err        string
	}{
		{SnapshotCorrupt, 500, `{"root_cause":[{"type":"snapshot_exception","reason":"[r:bad/badbadbadbadbadbadbadb] failed to get snapshot infobad/badbadbadbadbadbadbadb"}],` +
			`"type":"snapshot_exception","reason":"[r:bad/badbadbadbadbadbadbadb] failed to get snapshot infobad/badbadbadbadbadbadbadb",` +
			`"caused_by":{"type":"corrupt_state_exception","reason":"org.apache.lucene.index.CorruptIndexException: checksum failed (hardware problem?) : expected=1b2e9c5 actual=7f3a01d4 (resource=ChecksumBlobStoreFormat.readBlob(blob=\"snap-badbadbadbadbadbadbadb.dat\"))",` +
			`"caused_by":{"type":"corrupt_index_exception","reason":"checksum failed (hardware problem?) : expected=1b2e9c5 actual=7f3a01d4 (resource=ChecksumBlobStoreFormat.readBlob(blob=\"snap-badbadbadbadbadbadbadb.dat\"))"}}}`},
		{SnapshotBlobMissing, 404, `{"root_cause":[{"type":"snapshot_missing_exception","reason":"[r:bad/badbadbadbadbadbadbadb] is missing"}],` +
			`"type":"snapshot_missing_exception","reason":"[r:bad/badbadbadbadbadbadbadb] is missing",` +
			`"caused_by":{"type":"no_such_file_exception","reason":"/usr/share/elasticsearch/backup/snap-badbadbadbadbadbadbadb.dat"}}`},
	} {
		t.Run(tc.unreadable, func(t *testing.T) {
			f.PutSnapshot("ns", "m", "r", FakeSnapshot{Name: "bad", UUID: "badbadbadbadbadbadbadb", Indices: []string{"monocle.config"}, Unreadable: tc.unreadable})
			status, body := get("")
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.err), &want); err != nil {
				t.Fatal(err)
			}
			if status != tc.status || body["status"] != float64(tc.status) || !reflect.DeepEqual(body["error"], want) {
				t.Errorf("GET _all: %d %v, want %d %v", status, body, tc.status, want)
			}
			if status, body := get("?ignore_unavailable=true"); status != 200 || !reflect.DeepEqual(names(body), []string{"good"}) || body["total"] != 1.0 {
				t.Errorf("GET _all?ignore_unavailable=true: %d %v, want good alone", status, body)
			}
			if status, body := get("?verbose=false"); status != 200 || !reflect.DeepEqual(names(body), []string{"bad", "good"}) {
				t.Errorf("GET _all?verbose=false: %d %v, want bad and good", status, body)
			}
			list, unreadable, err := c.Snapshots(ctx, "r")
			if err != nil || len(list) != 1 || list[0].Name != "good" || !reflect.DeepEqual(unreadable, []string{"bad"}) {
				t.Errorf("Snapshots = %+v, %v, %v; want good, unreadable bad", list, unreadable, err)
			}
		})
	}
}
