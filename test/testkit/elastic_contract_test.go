package testkit

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// exchange is one request the client sent and the answer it got.
type exchange struct {
	req    *http.Request
	status int
	body   []byte
}

// recordingTransport keeps the exchanges it carries.
type recordingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	log  []exchange
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.log = append(r.log, exchange{req: req, status: res.StatusCode, body: body})
	r.mu.Unlock()
	return res, nil
}

func (r *recordingTransport) reset() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.log
	r.log = nil
	return out
}

// fakeContractCase puts the fake Elasticsearch of Monocle "m" in namespace "ns" in the state
// a fixture describes, and sends the fixture's request as the operator does, through the
// call of package elastic that sends it.
type fakeContractCase struct {
	// setup, when not nil, sets the state; it may use the client (its requests are not
	// compared).
	setup func(f *FakeElasticsearch, c elastic.Client)
	// call sends the request; its error is not looked at (the answer is).
	call func(ctx context.Context, c elastic.Client) error
	// optional are keys the fixture documents as optional (see SameShape), each explained.
	optional []string
	// options start the fake; with them, the request is for an Elasticsearch the operator
	// does not run, the "es" of ECK in namespace "ns", as the options spare a bundled one.
	options []FakeElasticOption
}

// createOwner records an owner in a new owner index.
func createOwner(ctx context.Context, c elastic.Client) error {
	return c.CreateOwner(ctx, elastic.Owner{UID: "u", Namespace: "ns", Name: "m"})
}

// registered registers the docs' repository, my_repository.
func registered(t *testing.T) func(*FakeElasticsearch, elastic.Client) {
	return func(_ *FakeElasticsearch, c elastic.Client) {
		if err := c.EnsureRepository(t.Context(), "my_repository", elastic.Repository{Type: elastic.RepositoryFS, Location: "my_backup_location"}); err != nil {
			t.Fatal(err)
		}
	}
}

// withSnapshots registers my_repository and stores snapshots in it.
func withSnapshots(t *testing.T, snaps ...FakeSnapshot) func(*FakeElasticsearch, elastic.Client) {
	return func(f *FakeElasticsearch, c elastic.Client) {
		registered(t)(f, c)
		for _, s := range snaps {
			f.PutSnapshot("ns", "m", "my_repository", s)
		}
	}
}

// withIndices makes indices the fake's, open; those in readOnly carry the flood-stage block.
func withIndices(indices []string, readOnly ...string) func(*FakeElasticsearch, elastic.Client) {
	return func(f *FakeElasticsearch, _ elastic.Client) {
		f.SetIndices("ns", "m", indices...)
		f.with("ns", "m", func(s *esState) {
			for _, ix := range readOnly {
				s.indices[ix].readOnly = true
			}
		})
	}
}

// hidden makes index hidden, creating it open when it does not exist.
func hidden(index string) func(*FakeElasticsearch, elastic.Client) {
	return func(f *FakeElasticsearch, _ elastic.Client) { f.SetHidden("ns", "m", index) }
}

// replicas sets index.number_of_replicas of index to n.
func replicas(index string, n int) func(*FakeElasticsearch, elastic.Client) {
	return func(f *FakeElasticsearch, _ elastic.Client) { f.SetReplicas("ns", "m", index, n) }
}

// inTurn runs setups one after the other.
func inTurn(setups ...func(*FakeElasticsearch, elastic.Client)) func(*FakeElasticsearch, elastic.Client) {
	return func(f *FakeElasticsearch, c elastic.Client) {
		for _, setup := range setups {
			setup(f, c)
		}
	}
}

func fakeContractCases(t *testing.T) map[string]fakeContractCase {
	snap2 := FakeSnapshot{Name: "snapshot_2", Start: time.UnixMilli(1593093628851)}
	index1 := FakeSnapshot{Name: "snapshot_2", Indices: []string{"index_1"}, Docs: map[string]int64{"index_1": 3}}
	restoreDone := func(ctx context.Context, c elastic.Client) error {
		_, err := c.RestoreDone(ctx, []string{"my-index-000001"})
		return err
	}
	readOnly := func(ctx context.Context, c elastic.Client) error { _, err := c.ReadOnlyIndices(ctx); return err }
	ensure := func(ctx context.Context, c elastic.Client) error {
		return c.EnsureRepository(ctx, "my_repository", elastic.Repository{Type: elastic.RepositoryFS, Location: "my_backup_location"})
	}
	check := func(ctx context.Context, c elastic.Client) error { return c.CheckRepository(ctx, "my_repository") }
	readReplicas := func(ctx context.Context, c elastic.Client) error {
		_, err := c.IndexReplicas(ctx, "my-index-*")
		return err
	}
	create := func(ctx context.Context, c elastic.Client) error {
		return c.CreateSnapshot(ctx, "my_repository", "snapshot_2", []string{"index_1"})
	}
	restore := func(ctx context.Context, c elastic.Client) error {
		return c.Restore(ctx, "my_repository", "snapshot_2", []string{"index_1"})
	}
	getSnapshot := func(name string) func(context.Context, elastic.Client) error {
		return func(ctx context.Context, c elastic.Client) error {
			_, err := c.Snapshot(ctx, "my_repository", name)
			return err
		}
	}
	deleteSnapshot := func(name string) func(context.Context, elastic.Client) error {
		return func(ctx context.Context, c elastic.Client) error { return c.DeleteSnapshot(ctx, "my_repository", name) }
	}
	listSnapshots := func(ctx context.Context, c elastic.Client) error {
		_, _, err := c.Snapshots(ctx, "my_repository")
		return err
	}
	day := func(d int) time.Time { return time.Date(2024, 11, 22+d, 4, 0, 0, 0, time.UTC) }
	return map[string]fakeContractCase{
		"cluster-health": {call: func(ctx context.Context, c elastic.Client) error { _, err := c.Health(ctx); return err }},
		"cat-allocation": {call: func(ctx context.Context, c elastic.Client) error { _, err := c.DiskUsage(ctx); return err }},
		// An index without replica, as Monocle creates them: its primary is its only row.
		"cat-shards-started": {setup: withIndices([]string{"my-index-000001"}), call: restoreDone},
		// A primary and a replica: on the fake's single node the replica is UNASSIGNED rather
		// than the docs' INITIALIZING, a value of the same shape.
		"cat-shards-initializing": {setup: inTurn(withIndices([]string{"my-index-000001"}), replicas("my-index-000001", 1)), call: restoreDone},
		"settings-read-only": {
			setup: withIndices([]string{"my-index-000001", "my-index-000002"}, "my-index-000001"),
			call:  readOnly,
		},
		"settings-read-only-none": {setup: withIndices([]string{"my-index-000001"}), call: readOnly},
		// A data stream's hidden backing index and Monocle's config index, both blocked, next to
		// an index without the block.
		"settings-read-only-hidden": {
			setup: inTurn(withIndices([]string{dsIndex, "monocle.config", "monocle.changes.1.demo"}, dsIndex, "monocle.config"),
				hidden(dsIndex)),
			call: readOnly,
		},
		"settings-clear-read-only": {
			setup: withIndices([]string{"my-index-000001"}, "my-index-000001"),
			call:  func(ctx context.Context, c elastic.Client) error { return c.ClearReadOnly(ctx, "my-index-000001") },
		},
		"settings-replicas": {
			setup: inTurn(withIndices([]string{"my-index-000001", "my-index-000002"}), replicas("my-index-000001", 1)),
			call:  readReplicas,
		},
		"settings-replicas-none": {call: readReplicas},
		"settings-put-replicas": {
			setup: withIndices([]string{"my-index-000001"}),
			call:  func(ctx context.Context, c elastic.Client) error { return c.SetIndexReplicas(ctx, "my-index-*", 2) },
		},
		"cluster-settings": {call: func(ctx context.Context, c elastic.Client) error { _, err := c.Watermarks(ctx); return err }},
		"cat-indices": {
			setup: withIndices([]string{"my-index-000001", "my-index-000002"}),
			call:  func(ctx context.Context, c elastic.Client) error { _, err := c.Indices(ctx, "my-index-*"); return err },
		},
		"cat-indices-missing": {
			call: func(ctx context.Context, c elastic.Client) error {
				_, err := c.Indices(ctx, "my-index-000003")
				return err
			},
		},
		"indices-close": {
			setup: withIndices([]string{"my_index"}),
			call:  func(ctx context.Context, c elastic.Client) error { return c.CloseIndices(ctx, "my_index") },
		},
		"index-delete": {
			setup: withIndices([]string{"my-index-000001"}),
			call:  func(ctx context.Context, c elastic.Client) error { return c.DeleteIndex(ctx, "my-index-000001") },
		},
		"index-delete-missing": {
			call: func(ctx context.Context, c elastic.Client) error { return c.DeleteIndex(ctx, "my-index-000003") },
		},
		"crawlers-progress-entities": {
			setup: func(f *FakeElasticsearch, _ elastic.Client) {
				f.SetCrawlerMetadata("ns", "m", "monocle.changes.1.demo",
					FakeCrawlerEntity{Crawler: "gh", Type: "organization", Value: "change-metrics", LastCommitAt: day(1)},
					FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "change-metrics/monocle", LastCommitAt: day(4)})
			},
			call: func(ctx context.Context, c elastic.Client) error {
				_, err := c.CrawlersProgress(ctx, "monocle.changes.1.demo")
				return err
			},
		},
		"search-crawler-errors": {
			setup: func(f *FakeElasticsearch, _ elastic.Client) {
				now := time.Now().UTC()
				e := FakeCrawlerError{Crawler: "github-crawler", EntityType: "project", EntityValue: "change-metrics/monocle", Message: "Bad credentials"}
				errs := []FakeCrawlerError{e, e, e}
				errs[0].CreatedAt, errs[1].CreatedAt, errs[2].CreatedAt = now.Add(-72*time.Hour), now.Add(-48*time.Hour), now.Add(-time.Hour)
				f.SetCrawlerErrors("ns", "m", "monocle.changes.1.demo", errs...)
			},
			call: func(ctx context.Context, c elastic.Client) error {
				_, err := c.CrawlersErrors(ctx, "monocle.changes.1.demo")
				return err
			},
			// A hit has _seq_no and _primary_term only when the search asks for them
			// (seq_no_primary_term, Elasticsearch 7.17 reference, Search API), which the
			// operator's does not; the docs' top_hits example shows them.
			optional: []string{"aggregations/crawlers/buckets/*/last/hits/hits/*/_seq_no",
				"aggregations/crawlers/buckets/*/last/hits/hits/*/_primary_term"},
		},
		"repository-get":           {setup: registered(t), call: ensure},
		"repository-get-missing":   {call: ensure},
		"repository-put":           {call: ensure},
		"repository-check":         {setup: registered(t), call: check},
		"repository-check-missing": {call: check},
		"snapshot-create": {
			setup: func(f *FakeElasticsearch, c elastic.Client) { registered(t)(f, c); f.SetIndices("ns", "m", "index_1") },
			call:  create,
		},
		"snapshot-create-exists": {setup: inTurn(withSnapshots(t, snap2), withIndices([]string{"index_1"})), call: create},
		// The operator's own snapshot of that name still running.
		"snapshot-create-name-in-progress": {
			setup: inTurn(withSnapshots(t, FakeSnapshot{Name: "snapshot_2", State: SnapshotInProgress}), withIndices([]string{"index_1"})),
			call:  create,
		},
		"snapshot-get": {
			setup: withSnapshots(t, snap2), call: getSnapshot("snapshot_2"),
		},
		"snapshot-get-missing": {
			setup: withSnapshots(t, snap2), call: getSnapshot("snapshot_3"),
		},
		// One snapshot of three indices, unreadable: the names come from the repository data.
		"snapshot-list-names": {
			setup: withSnapshots(t, FakeSnapshot{Name: "snapshot_2", Indices: []string{"a", "b", "c"}, Unreadable: SnapshotCorrupt}),
			call:  listSnapshots,
		},
		// A snapshot of no index, next to an unreadable one left out.
		"snapshot-list-ignore-unavailable": {
			setup: withSnapshots(t, snap2, FakeSnapshot{Name: "snapshot_1", Unreadable: SnapshotBlobMissing}),
			call:  listSnapshots,
		},
		"snapshot-get-unreadable-corrupt": {
			setup: withSnapshots(t, FakeSnapshot{Name: "snapshot_2", Unreadable: SnapshotCorrupt}),
			call:  getSnapshot("snapshot_2"),
		},
		"snapshot-get-unreadable-missing": {
			setup: withSnapshots(t, FakeSnapshot{Name: "snapshot_2", Unreadable: SnapshotBlobMissing}),
			call:  getSnapshot("snapshot_2"),
		},
		"snapshot-status": {
			setup: withSnapshots(t, index1),
			call: func(ctx context.Context, c elastic.Client) error {
				_, err := c.SnapshotSize(ctx, "my_repository", "snapshot_2")
				return err
			},
		},
		"snapshot-delete": {
			setup: withSnapshots(t, snap2), call: deleteSnapshot("snapshot_2"),
		},
		"snapshot-delete-missing": {
			setup: withSnapshots(t, snap2), call: deleteSnapshot("snapshot_3"),
		},
		// A cluster with security on, asked without credentials.
		"security-unauthorized": {
			options: []FakeElasticOption{WithBasicAuth("elastic", "changeme")},
			call:    func(ctx context.Context, c elastic.Client) error { _, err := c.Health(ctx); return err },
		},
		"index-create": {call: createOwner},
		"index-create-exists": {
			setup: withIndices([]string{elastic.OwnerIndex}), call: createOwner,
		},
		"mapping-get": {
			setup: func(f *FakeElasticsearch, c elastic.Client) {
				if err := c.CreateOwner(t.Context(), elastic.Owner{UID: "3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f", Namespace: "team-a", Name: "monocle"}); err != nil {
					t.Fatal(err)
				}
			},
			call: func(ctx context.Context, c elastic.Client) error { _, err := c.Owner(ctx); return err },
		},
		"mapping-get-missing": {
			call: func(ctx context.Context, c elastic.Client) error { _, err := c.Owner(ctx); return err },
		},
		"mapping-put": {
			setup: withIndices([]string{elastic.OwnerIndex}),
			call: func(ctx context.Context, c elastic.Client) error {
				return c.SetOwner(ctx, elastic.Owner{UID: "u", Namespace: "ns", Name: "m"})
			},
		},
		"restore":                   {setup: withSnapshots(t, index1), call: restore},
		"restore-open-index-exists": {setup: inTurn(withSnapshots(t, index1), withIndices([]string{"index_1"})), call: restore},
		// The snapshot holds a data stream's backing index, open and hidden in the cluster.
		"restore-open-index-exists-hidden": {
			setup: inTurn(withSnapshots(t, FakeSnapshot{Name: "snapshot_2", Indices: []string{dsIndex}}), hidden(dsIndex)),
			call: func(ctx context.Context, c elastic.Client) error {
				return c.Restore(ctx, "my_repository", "snapshot_2", []string{dsIndex})
			},
		},
	}
}

// TestFakeElasticContract checks the fake Elasticsearch against Elasticsearch 7.17's
// documented answers (elastictest's fixtures): put in the state a fixture describes, it
// answers the operator's request with the fixture's status and a body of the fixture's JSON
// shape (elastictest.SameShape). A fixture without a case fails it (elastictest.RunContract).
func TestFakeElasticContract(t *testing.T) {
	elastictest.RunContract(t, fakeContractCases(t), func(t *testing.T, fx elastictest.Fixture, tc fakeContractCase) {
		f := startFake(t, tc.options...)
		base := f.Transport()
		t.Cleanup(base.CloseIdleConnections)
		rec := &recordingTransport{base: base}
		url := "http://m-elastic.ns.svc:9200"
		if tc.options != nil {
			url = "http://es-es-http.ns.svc:9200"
		}
		c, err := elastic.NewClient(elastic.Config{URL: url, Username: resources.ElasticOperatorUser, Password: bundledPassword, Transport: rec})
		if tc.options != nil {
			c, err = elastic.New(url, rec)
		}
		if err != nil {
			t.Fatal(err)
		}
		if tc.setup != nil {
			tc.setup(f, c)
		}
		rec.reset()
		_ = tc.call(t.Context(), c)
		var got *exchange
		var sent []string
		for _, e := range rec.reset() {
			sent = append(sent, e.req.Method+" "+e.req.URL.RequestURI())
			if got == nil && fx.Matches(e.req.Method, e.req.URL) == nil {
				got = &e
			}
		}
		if got == nil {
			t.Fatalf("the call sent %q, none the fixture's %s?%s", sent, fx.Request, fx.Query)
		}
		if got.status != fx.Status {
			t.Errorf("status %d, want %d; body %s", got.status, fx.Status, got.body)
		}
		if err := elastictest.SameShape([]byte(fx.Body), got.body, tc.optional...); err != nil {
			t.Errorf("the fake's answer is not of the documented shape: %v\n%s", err, got.body)
		}
	})
}
