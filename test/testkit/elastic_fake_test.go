package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// countingTransport counts the requests it carries by "METHOD path".
type countingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen map[string]int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.seen[r.Method+" "+r.URL.Path]++
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

func (c *countingTransport) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[op]
}

// fakeClient returns a client of package elastic for the Elasticsearch of Monocle monocle in
// namespace, its requests sent to f whatever their host, as the operator's are with
// --operand-dial-address.
func fakeClient(t *testing.T, f *FakeElasticsearch, namespace, monocle string) (elastic.Client, *countingTransport) {
	t.Helper()
	base := f.Transport()
	t.Cleanup(base.CloseIdleConnections)
	tr := &countingTransport{base: base, seen: map[string]int{}}
	c, err := elastic.NewClient(elastic.Config{URL: "http://" + monocle + "-elastic." + namespace + ".svc:9200",
		Username: resources.ElasticOperatorUser, Password: bundledPassword, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}

func startFake(t *testing.T, options ...FakeElasticOption) *FakeElasticsearch {
	f := StartFakeElasticsearch(options...)
	t.Cleanup(f.Close)
	return f
}

// wantStatus fails the test unless err is a *elastic.StatusError of code and typ.
func wantStatus(t *testing.T, what string, err error, code int, typ string) *elastic.StatusError {
	t.Helper()
	var se *elastic.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("%s: error %v, want a *elastic.StatusError %d %s", what, err, code, typ)
	}
	if se.Code != code || se.Type != typ {
		t.Fatalf("%s: error %d %s (%s), want %d %s", what, se.Code, se.Type, se.Reason, code, typ)
	}
	return se
}

var fsRepo = elastic.Repository{Type: elastic.RepositoryFS, Location: "/backups"}

func TestFakeElasticRepositoryAndSnapshots(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, tr := fakeClient(t, f, "ns", "m")
	f.SetIndices("ns", "m", "monocle.config", "monocle.changes.1.ws")

	if _, _, err := c.Snapshots(ctx, "backups"); !elastic.IsNotFound(err) {
		t.Fatalf("listing snapshots of an unregistered repository: %v, want not found", err)
	}
	wantStatus(t, "snapshot into an unregistered repository",
		c.CreateSnapshot(ctx, "backups", "s0", []string{"monocle.config"}), 404, "repository_missing_exception")

	for range 2 {
		if err := c.EnsureRepository(ctx, "backups", fsRepo); err != nil {
			t.Fatal(err)
		}
	}
	if n := tr.count("PUT /_snapshot/backups"); n != 1 {
		t.Errorf("EnsureRepository twice sent %d PUTs, want 1 (the second GET shows it registered as is)", n)
	}
	if n := tr.count("GET /_snapshot/backups"); n != 2 {
		t.Errorf("EnsureRepository twice sent %d GETs, want 2", n)
	}
	typ, settings, ok := f.Repository("ns", "m", "backups")
	if !ok || typ != "fs" || len(settings) != 1 || settings["location"] != "/backups" {
		t.Errorf("Repository = %q %v %v, want fs {location: /backups} true", typ, settings, ok)
	}
	// Other settings register again.
	if err := c.EnsureRepository(ctx, "backups", elastic.Repository{Type: elastic.RepositoryFS, Location: "/other"}); err != nil {
		t.Fatal(err)
	}
	if _, settings, _ := f.Repository("ns", "m", "backups"); settings["location"] != "/other" {
		t.Errorf("after registering /other, location = %q", settings["location"])
	}

	before := time.Now().UTC().Truncate(time.Millisecond)
	if err := c.CreateSnapshot(ctx, "backups", "s1", []string{"monocle.changes.1.ws", "monocle.config"}); err != nil {
		t.Fatal(err)
	}
	err := c.CreateSnapshot(ctx, "backups", "s1", []string{"monocle.config"})
	se := wantStatus(t, "a second snapshot s1", err, 400, "invalid_snapshot_name_exception")
	if !strings.Contains(se.Reason, "[backups:s1] Invalid snapshot name [s1], snapshot with the same name already exists") {
		t.Errorf("duplicate name reason %q", se.Reason)
	}
	err = c.CreateSnapshot(ctx, "backups", "s2", []string{"monocle.config", "nope"})
	if se := wantStatus(t, "a snapshot of a missing index", err, 404, "index_not_found_exception"); se.Reason != "no such index [nope]" {
		t.Errorf("missing index reason %q", se.Reason)
	}
	if err := c.CreateSnapshot(ctx, "backups", "s2", []string{"monocle.config"}); err != nil {
		t.Fatal(err)
	}

	s1, err := c.Snapshot(ctx, "backups", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if s1.Name != "s1" || s1.State != elastic.SnapshotSuccess || len(s1.UUID) != 22 ||
		strings.Join(s1.Indices, ",") != "monocle.changes.1.ws,monocle.config" ||
		s1.ShardsTotal != 2 || s1.ShardsSuccessful != 2 || s1.ShardsFailed != 0 || s1.Reason != "" {
		t.Errorf("snapshot s1 = %+v", s1)
	}
	if s1.Start.Before(before) || s1.End.Before(s1.Start) || time.Since(s1.End) > time.Minute {
		t.Errorf("snapshot s1 ran from %v to %v, want both after %v", s1.Start, s1.End, before)
	}
	list, unreadable, err := c.Snapshots(ctx, "backups")
	if err != nil {
		t.Fatal(err)
	}
	if len(unreadable) != 0 {
		t.Errorf("unreadable snapshots %v, want none", unreadable)
	}
	if len(list) != 2 || list[0].Name != "s1" || list[1].Name != "s2" {
		t.Errorf("snapshots = %+v, want s1 then s2", list)
	}
	if got := f.Snapshots("ns", "m", "backups"); len(got) != 2 || got[0].Name != "s1" || got[0].UUID != s1.UUID {
		t.Errorf("Snapshots = %+v", got)
	}
	if size, err := c.SnapshotSize(ctx, "backups", "s1"); err != nil || size != 2*FakeSnapshotBytesPerIndex {
		t.Errorf("size of s1 = %d, %v; want %d", size, err, 2*FakeSnapshotBytesPerIndex)
	}
	if size, err := c.SnapshotSize(ctx, "backups", "s2"); err != nil || size != FakeSnapshotBytesPerIndex {
		t.Errorf("size of s2 = %d, %v; want %d", size, err, FakeSnapshotBytesPerIndex)
	}

	if err := c.DeleteSnapshot(ctx, "backups", "s1"); err != nil {
		t.Fatal(err)
	}
	_, err = c.Snapshot(ctx, "backups", "s1")
	if se := wantStatus(t, "a deleted snapshot", err, 404, "snapshot_missing_exception"); se.Reason != "[backups:s1] is missing" {
		t.Errorf("missing snapshot reason %q", se.Reason)
	}
	_, err = c.SnapshotSize(ctx, "backups", "s1")
	wantStatus(t, "the size of a deleted snapshot", err, 404, "snapshot_missing_exception")
	if err := c.DeleteSnapshot(ctx, "backups", "s1"); err != nil {
		t.Errorf("deleting a deleted snapshot: %v (the client takes the 404 as done)", err)
	}
	if n := tr.count("DELETE /_snapshot/backups/s1"); n != 2 {
		t.Errorf("sent %d DELETEs, want 2", n)
	}
	if list, _, _ := c.Snapshots(ctx, "backups"); len(list) != 1 || list[0].Name != "s2" {
		t.Errorf("snapshots after deleting s1 = %+v, want s2", list)
	}
}

func TestFakeElasticSnapshotOutcomes(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	f.SetIndices("ns", "m", "a", "b")
	if err := c.EnsureRepository(ctx, "r", fsRepo); err != nil {
		t.Fatal(err)
	}

	f.SnapshotOutcome("ns", "m", SnapshotInProgress, "")
	if err := c.CreateSnapshot(ctx, "r", "running", []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	s, err := c.Snapshot(ctx, "r", "running")
	if err != nil {
		t.Fatal(err)
	}
	if s.State != elastic.SnapshotInProgress || !s.End.IsZero() || s.Start.IsZero() || s.ShardsSuccessful != 0 {
		t.Errorf("running snapshot = %+v, want IN_PROGRESS without an end", s)
	}
	// Elasticsearch 7.17 restores only what the repository holds: not a running snapshot.
	f.SetIndices("ns", "m")
	se := wantStatus(t, "restoring a running snapshot", c.Restore(ctx, "r", "running", []string{"a"}), 500, "snapshot_restore_exception")
	if se.Reason != "[r:running] snapshot does not exist" {
		t.Errorf("reason %q", se.Reason)
	}
	f.SetIndices("ns", "m", "a", "b")
	f.FinishSnapshots("ns", "m")
	if s, err = c.Snapshot(ctx, "r", "running"); err != nil || s.State != elastic.SnapshotSuccess || s.End.IsZero() || s.ShardsSuccessful != 2 {
		t.Errorf("finished snapshot = %+v, %v; want SUCCESS with an end", s, err)
	}

	f.SnapshotOutcome("ns", "m", SnapshotFailed, "disk full")
	if err := c.CreateSnapshot(ctx, "r", "failed", []string{"a", "b"}); err != nil {
		t.Fatalf("a snapshot that fails is still accepted: %v", err)
	}
	if s, err = c.Snapshot(ctx, "r", "failed"); err != nil || s.State != elastic.SnapshotFailed || s.Reason != "disk full" ||
		s.ShardsFailed != 2 || s.ShardsSuccessful != 0 {
		t.Errorf("failed snapshot = %+v, %v", s, err)
	}
	f.SnapshotOutcome("ns", "m", SnapshotPartial, "one shard lost")
	if err := c.CreateSnapshot(ctx, "r", "partial", []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if s, err = c.Snapshot(ctx, "r", "partial"); err != nil || s.State != elastic.SnapshotPartial || s.ShardsFailed != 1 || s.ShardsSuccessful != 1 {
		t.Errorf("partial snapshot = %+v, %v", s, err)
	}
	f.SnapshotOutcome("ns", "m", "", "")
	if err := c.CreateSnapshot(ctx, "r", "ok", []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if s, err = c.Snapshot(ctx, "r", "ok"); err != nil || s.State != elastic.SnapshotSuccess || s.Reason != "" {
		t.Errorf("snapshot after clearing the outcome = %+v, %v", s, err)
	}
	f.SetIndices("ns", "m")
	se = wantStatus(t, "restoring a failed snapshot", c.Restore(ctx, "r", "failed", []string{"a"}), 500, "snapshot_restore_exception")
	if !strings.Contains(se.Reason, "unsupported snapshot state [FAILED]") {
		t.Errorf("reason %q", se.Reason)
	}
}

func TestFakeElasticRestore(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	f.SetIndices("ns", "m", "monocle.config", "monocle.changes.1.ws")
	f.SetDocs("ns", "m", "monocle.changes.1.ws", 5)
	if err := c.EnsureRepository(ctx, "r", fsRepo); err != nil {
		t.Fatal(err)
	}
	indices := []string{"monocle.config", "monocle.changes.1.ws"}
	if err := c.CreateSnapshot(ctx, "r", "s", indices); err != nil {
		t.Fatal(err)
	}
	f.SetDocs("ns", "m", "monocle.changes.1.ws", 9)

	se := wantStatus(t, "restoring over open indices", c.Restore(ctx, "r", "s", indices), 500, "snapshot_restore_exception")
	if !strings.Contains(se.Reason, "cannot restore index [monocle.changes.1.ws] because an open index with same name already exists in the cluster") {
		t.Errorf("reason %q", se.Reason)
	}
	if n := f.Restores("ns", "m", "r", "s"); n != 0 {
		t.Errorf("Restores after a refused restore = %d", n)
	}
	wantStatus(t, "restoring a missing snapshot", c.Restore(ctx, "r", "nope", indices), 500, "snapshot_restore_exception")
	wantStatus(t, "restoring an index the snapshot lacks", c.Restore(ctx, "r", "s", []string{"other"}), 404, "index_not_found_exception")
	wantStatus(t, "closing a missing index", c.CloseIndices(ctx, "monocle.config", "nope"), 404, "index_not_found_exception")

	if err := c.CloseIndices(ctx, indices...); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Indices(ctx, "monocle.*")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Name != "monocle.changes.1.ws" || rows[0].Status != "close" || rows[0].DocsCount != 0 || rows[1].Status != "close" {
		t.Errorf("indices after closing = %+v", rows)
	}
	if err := c.CloseIndices(ctx, "monocle.config"); err != nil {
		t.Errorf("closing a closed index: %v", err)
	}

	f.HoldRestores("ns", "m", true)
	if err := c.Restore(ctx, "r", "s", indices); err != nil {
		t.Fatal(err)
	}
	if n := f.Restores("ns", "m", "r", "s"); n != 1 {
		t.Errorf("Restores = %d, want 1", n)
	}
	if done, err := c.RestoreDone(ctx, indices); err != nil || done {
		t.Errorf("RestoreDone while held = %v, %v; want false", done, err)
	}
	f.HoldRestores("ns", "m", false)
	if done, err := c.RestoreDone(ctx, indices); err != nil || !done {
		t.Errorf("RestoreDone once released = %v, %v; want true", done, err)
	}
	if done, err := c.RestoreDone(ctx, []string{"monocle.config", "monocle.changes.1.gone"}); err != nil || done {
		t.Errorf("RestoreDone with a missing index = %v, %v; want false without error (404 from _cat/indices)", done, err)
	}
	rows, err = c.Indices(ctx, "monocle.changes.*")
	if err != nil {
		t.Fatal(err)
	}
	// Without replicas, as Monocle creates its indices, the restored index is green.
	if len(rows) != 1 || rows[0].Status != "open" || rows[0].DocsCount != 5 || rows[0].Health != elastic.HealthGreen || rows[0].StoreSizeBytes <= 0 {
		t.Errorf("restored index = %+v, want open with the 5 documents of the snapshot", rows)
	}
	idx := f.Indices("ns", "m")
	if len(idx) != 2 || !idx[0].Open || idx[0].Docs != 5 || !idx[1].Open {
		t.Errorf("Indices = %+v", idx)
	}

	// Restoring into a cluster without the indices creates them.
	f.SetIndices("ns", "m")
	if err := c.Restore(ctx, "r", "s", []string{"monocle.config"}); err != nil {
		t.Fatal(err)
	}
	if n := f.Restores("ns", "m", "r", "s"); n != 2 {
		t.Errorf("Restores = %d, want 2", n)
	}
	if idx := f.Indices("ns", "m"); len(idx) != 1 || idx[0].Name != "monocle.config" || !idx[0].Open {
		t.Errorf("Indices after restoring into an empty cluster = %+v", idx)
	}
}

func TestFakeElasticIndices(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	f.SetIndices("ns", "m", "monocle.config", "other")
	f.SetDocs("ns", "m", "monocle.config", 3)
	rows, err := c.Indices(ctx, "monocle.*")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Name != "monocle.config" || rows[0].DocsCount != 3 || rows[0].Status != "open" {
		t.Errorf("monocle.* = %+v", rows)
	}
	if rows, err := c.Indices(ctx, "nothing.*"); err != nil || len(rows) != 0 {
		t.Errorf("a pattern matching nothing = %+v, %v; want an empty list", rows, err)
	}
	_, err = c.Indices(ctx, "monocle.missing")
	wantStatus(t, "a missing concrete index", err, 404, "index_not_found_exception")
	if rows, err := c.Indices(ctx, "other,monocle.config"); err != nil || len(rows) != 2 {
		t.Errorf("two names = %+v, %v", rows, err)
	}
}

func TestFakeElasticSeparateElasticsearches(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	a, _ := fakeClient(t, f, "ns1", "m")
	b, _ := fakeClient(t, f, "ns2", "m")
	other, _ := fakeClient(t, f, "ns1", "n")
	f.SetIndices("ns1", "m", "monocle.config")
	f.SetIndices("ns2", "m", "monocle.config")

	// Another Monocle's snapshot, in a bucket ns2/m registers later.
	f.PutSnapshot("ns2", "m", "shared", FakeSnapshot{Name: "theirs", Indices: []string{"monocle.config"}})

	if err := a.EnsureRepository(ctx, "shared", fsRepo); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateSnapshot(ctx, "shared", "mine", []string{"monocle.config"}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := f.Repository("ns2", "m", "shared"); ok {
		t.Error("a repository registered in ns1/m shows in ns2/m")
	}
	if _, _, err := b.Snapshots(ctx, "shared"); !elastic.IsNotFound(err) {
		t.Errorf("ns2/m lists an unregistered repository: %v", err)
	}
	if _, _, err := other.Snapshots(ctx, "shared"); !elastic.IsNotFound(err) {
		t.Errorf("ns1/n lists ns1/m's repository: %v", err)
	}
	if err := b.EnsureRepository(ctx, "shared", fsRepo); err != nil {
		t.Fatal(err)
	}
	list, _, err := b.Snapshots(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "theirs" || list[0].State != elastic.SnapshotSuccess {
		t.Errorf("ns2/m snapshots = %+v, want only the seeded one", list)
	}
	if list, _, err := a.Snapshots(ctx, "shared"); err != nil || len(list) != 1 || list[0].Name != "mine" {
		t.Errorf("ns1/m snapshots = %+v, %v; want only its own", list, err)
	}

	if err := a.CloseIndices(ctx, "monocle.config"); err != nil {
		t.Fatal(err)
	}
	if idx := f.Indices("ns2", "m"); len(idx) != 1 || !idx[0].Open {
		t.Errorf("closing in ns1/m changed ns2/m: %+v", idx)
	}
	if _, err := other.Indices(ctx, "monocle.config"); !elastic.IsNotFound(err) {
		t.Errorf("ns1/n has ns1/m's index: %v", err)
	}
	if err := a.Restore(ctx, "shared", "mine", []string{"monocle.config"}); err != nil {
		t.Fatal(err)
	}
	if f.Restores("ns1", "m", "shared", "mine") != 1 || f.Restores("ns2", "m", "shared", "mine") != 0 {
		t.Error("a restore in ns1/m counted elsewhere")
	}
}

func TestFakeElasticRepositoryVerification(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	good, _ := fakeClient(t, f, "ns", "n")
	f.FailRepositoryVerification("ns", "m", "[backups] store location [/backups] is not accessible on the node")

	err := c.EnsureRepository(ctx, "backups", fsRepo)
	se := wantStatus(t, "registering with a failing verification", err, 500, "repository_verification_exception")
	if !strings.Contains(se.Reason, "is not accessible") {
		t.Errorf("reason %q", se.Reason)
	}
	if err := good.EnsureRepository(ctx, "backups", fsRepo); err != nil {
		t.Errorf("another Elasticsearch's registration failed too: %v", err)
	}
	// Elasticsearch registers, then verifies: the repository stays.
	if _, _, ok := f.Repository("ns", "m", "backups"); !ok {
		t.Error("the repository is not registered after a failed verification")
	}
	f.FailRepositoryVerification("ns", "m", "")
	if err := c.EnsureRepository(ctx, "backups", elastic.Repository{Type: elastic.RepositoryFS, Location: "/elsewhere"}); err != nil {
		t.Errorf("registering once verification works: %v", err)
	}
}

func TestFakeElasticKeepsHealthAnswers(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	f.Answer("ns", ElasticAnswer{Health: ElasticRed, Allocation: Allocation90})
	h, err := c.Health(ctx)
	if err != nil || h.Status != elastic.HealthRed {
		t.Errorf("Health = %+v, %v; want the red answer set", h, err)
	}
	d, err := c.DiskUsage(ctx)
	if err != nil || d.PercentUsed() != 90 {
		t.Errorf("DiskUsage = %+v, %v; want 90%%", d, err)
	}
	other, _ := fakeClient(t, f, "ns2", "m")
	if h, err := other.Health(ctx); err != nil || h.Status != elastic.HealthYellow {
		t.Errorf("Health elsewhere = %+v, %v; want yellow", h, err)
	}
}

// rawGet sends GET path to f for the Elasticsearch of Monocle m in namespace ns and returns
// the status and the decoded body.
func rawGet(t *testing.T, f *FakeElasticsearch, ns, m, path string) (int, any) {
	t.Helper()
	return rawRequest(t, f, ns, m, http.MethodGet, path, "")
}

// rawRequest is rawGet for any method, with a JSON body when body is not "".
func rawRequest(t *testing.T, f *FakeElasticsearch, ns, m, method, path, body string) (int, any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.server.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = m + "-elastic." + ns + ".svc:9200"
	req.SetBasicAuth(resources.ElasticOperatorUser, bundledPassword)
	res, err := f.server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("X-Elastic-Product") != "Elasticsearch" {
		t.Errorf("%s %s: no X-Elastic-Product header", method, path)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, b)
	}
	return res.StatusCode, v
}

func TestFakeElasticRawAnswers(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	f.SetIndices("ns", "m", "a", "b")
	if err := c.EnsureRepository(ctx, "r", fsRepo); err != nil {
		t.Fatal(err)
	}
	f.SnapshotOutcome("ns", "m", SnapshotInProgress, "")
	if err := c.CreateSnapshot(ctx, "r", "s", []string{"a"}); err != nil {
		t.Fatal(err)
	}
	f.SetReplicas("ns", "m", "b", 1)
	if err := c.CloseIndices(ctx, "b"); err != nil {
		t.Fatal(err)
	}

	// The flood-stage block of _all: the visible open indices by default, as many as
	// expand_wildcards asks for otherwise.
	f.SetHidden("ns", "m", ".ds-h")
	f.with("ns", "m", func(s *esState) {
		for _, ix := range s.indices {
			ix.readOnly = true
		}
	})
	for query, want := range map[string][]string{
		"flat_settings=true":                              {"a"},
		"expand_wildcards=all&flat_settings=true":         {".ds-h", "a", "b"},
		"expand_wildcards=open,hidden&flat_settings=true": {".ds-h", "a"},
		"expand_wildcards=closed&flat_settings=true":      {"b"},
	} {
		code, body := rawGet(t, f, "ns", "m", "/_all/_settings/index.blocks.read_only_allow_delete?"+query)
		got, _ := body.(map[string]any)
		if code != 200 || !slices.Equal(slices.Sorted(maps.Keys(got)), want) {
			t.Errorf("read-only blocks with %s = %d %v, want %v", query, code, body, want)
		}
	}

	// A closed index: health and shards (its replica unassigned: yellow), null counts and sizes.
	code, body := rawGet(t, f, "ns", "m", "/_cat/indices/b?format=json&bytes=b")
	rows, _ := body.([]any)
	if code != 200 || len(rows) != 1 {
		t.Fatalf("_cat/indices/b = %d %v", code, body)
	}
	row := rows[0].(map[string]any)
	if row["status"] != "close" || row["health"] != "yellow" || row["pri"] != "1" {
		t.Errorf("closed row = %v", row)
	}
	for _, col := range []string{"docs.count", "docs.deleted", "store.size", "pri.store.size"} {
		if v, ok := row[col]; !ok || v != nil {
			t.Errorf("closed row %s = %v, want null", col, v)
		}
	}

	// A running snapshot: the epoch as its end.
	code, body = rawGet(t, f, "ns", "m", "/_snapshot/r/_all")
	snaps, _ := body.(map[string]any)["snapshots"].([]any)
	if code != 200 || len(snaps) != 1 {
		t.Fatalf("_snapshot/r/_all = %d %v", code, body)
	}
	s := snaps[0].(map[string]any)
	if s["state"] != "IN_PROGRESS" || s["end_time"] != "1970-01-01T00:00:00.000Z" || s["end_time_in_millis"] != 0.0 ||
		s["version"] != "7.17.26" || s["include_global_state"] != false || s["repository"] != "r" {
		t.Errorf("running snapshot = %v", s)
	}
	if _, ok := s["reason"]; ok {
		t.Errorf("running snapshot has a reason: %v", s)
	}

	// Errors: Elasticsearch's shape.
	code, body = rawGet(t, f, "ns", "m", "/_snapshot/nope")
	e, _ := body.(map[string]any)["error"].(map[string]any)
	causes, _ := e["root_cause"].([]any)
	if code != 404 || e["type"] != "repository_missing_exception" || e["reason"] != "[nope] missing" || len(causes) != 1 ||
		body.(map[string]any)["status"] != 404.0 {
		t.Errorf("missing repository = %d %v", code, body)
	}
}

func TestFakeElasticCrawlerProgress(t *testing.T) {
	f := startFake(t)
	c, _ := fakeClient(t, f, "ns", "m")
	day := func(d int) time.Time { return time.Date(2026, 11, d, 3, 0, 0, 0, time.UTC) }
	f.SetCrawlerMetadata("ns", "m", "monocle.changes.1.demo",
		FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "a/b", LastCommitAt: day(20)},
		FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "a/c", LastCommitAt: day(24)},
		FakeCrawlerEntity{Crawler: "gerrit", Type: "project", Value: "x", LastCommitAt: day(1)})
	got, err := c.CrawlersProgress(context.Background(), "monocle.changes.1.demo")
	if err != nil {
		t.Fatal(err)
	}
	want := []elastic.CrawlerProgress{
		{Crawler: "gerrit", Entities: []elastic.CrawlerEntity{{Type: "project", Value: "x", LastCommitAt: day(1)}}},
		{Crawler: "gh", Entities: []elastic.CrawlerEntity{{Type: "project", Value: "a/b", LastCommitAt: day(20)}, {Type: "project", Value: "a/c", LastCommitAt: day(24)}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CrawlersProgress = %+v, want %+v", got, want)
	}
	// Pages: at most size buckets after the after key, and after_key only with buckets.
	for _, tc := range []struct {
		after     string
		wantKeys  []string
		wantAfter bool
	}{
		{"", []string{"gerrit/project/x", "gh/project/a/b"}, true},
		{`"after":{"crawler":"gh","type":"project","value":"a/b"},`, []string{"gh/project/a/c"}, true},
		{`"after":{"crawler":"gh","type":"project","value":"a/c"},`, nil, false},
	} {
		body := `{"size":0,"aggs":{"entities":{"composite":{"size":2,` + tc.after + `"sources":[]}}}}`
		code, answer := rawRequest(t, f, "ns", "m", http.MethodPost, "/monocle.changes.1.demo/_search", body)
		agg := answer.(map[string]any)["aggregations"].(map[string]any)["entities"].(map[string]any)
		var keys []string
		for _, b := range agg["buckets"].([]any) {
			k := b.(map[string]any)["key"].(map[string]any)
			keys = append(keys, k["crawler"].(string)+"/"+k["type"].(string)+"/"+k["value"].(string))
		}
		if _, hasAfter := agg["after_key"]; code != 200 || !reflect.DeepEqual(keys, tc.wantKeys) || hasAfter != tc.wantAfter {
			t.Errorf("after %q: %d, keys %v, after_key %v; want %v, after_key %v", tc.after, code, keys, agg["after_key"], tc.wantKeys, tc.wantAfter)
		}
	}
	if _, err := c.CrawlersProgress(context.Background(), "monocle.changes.1.other"); !elastic.IsNotFound(err) {
		t.Errorf("missing index: %v, want ErrNotFound", err)
	}
}

func TestFakeElasticCrawlerErrors(t *testing.T) {
	f := startFake(t)
	c, _ := fakeClient(t, f, "ns", "m")
	now := time.Now().UTC().Truncate(time.Second)
	f.SetCrawlerErrors("ns", "m", "monocle.changes.1.demo",
		FakeCrawlerError{Crawler: "gh", EntityType: "project", EntityValue: "a/b", Message: "old", CreatedAt: now.Add(-48 * time.Hour)},
		FakeCrawlerError{Crawler: "gh", EntityType: "project", EntityValue: "a/c", Message: "Bad credentials", CreatedAt: now.Add(-time.Hour)})
	got, err := c.CrawlersErrors(context.Background(), "monocle.changes.1.demo")
	if err != nil {
		t.Fatal(err)
	}
	want := []elastic.CrawlerErrors{{Crawler: "gh", Total: 2, LastDay: 1, LastTime: now.Add(-time.Hour), LastMessage: "Bad credentials", LastEntity: "project a/c"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CrawlersErrors = %+v, want %+v", got, want)
	}
	// The crawler metadata search still answers progress.
	if p, err := c.CrawlersProgress(context.Background(), "monocle.changes.1.demo"); err != nil || len(p) != 0 {
		t.Errorf("CrawlersProgress = %v, %v; want none", p, err)
	}
}

// TestFakeElasticCountsRequestsByHost: Received counts what the fake got for each host,
// whatever the case of the host and its port.
func TestFakeElasticCountsRequestsByHost(t *testing.T) {
	f := startFake(t)
	c, _ := fakeClient(t, f, "ns", "m")
	for range 2 {
		if _, err := c.Health(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for host, want := range map[string]int{"m-elastic.ns.svc": 2, "M-Elastic.NS.svc": 2, "other-elastic.ns.svc": 0, "vm": 0} {
		if got := f.Received(host); got != want {
			t.Errorf("Received(%s) = %d, want %d", host, got, want)
		}
	}
}

// bundledPassword is a password of the operator's user for a bundled node: the fake asks for
// the user and some password.
const bundledPassword = "operator-password"
