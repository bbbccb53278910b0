package elastic_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// contractCase is how the client decodes one documented answer (a fixture of elastictest):
// the call that sends the fixture's request, and what it returns on the fixture's answer.
type contractCase struct {
	// args fill the fixture's path template, over contractArgs.
	args map[string]string
	// also are other fixtures the fake serves, for a call that sends more than one request.
	also []string
	call func(context.Context, elastic.Client) (any, error)
	// want is the call's result, compared on an error too (a call returns its zero value).
	want any
	// err is "" for no error, or the code and type of the *elastic.StatusError wanted,
	// e.g. "404 snapshot_missing_exception".
	err string
}

// contractArgs are the names the fixtures use, from the docs' examples.
var contractArgs = map[string]string{"repository": "my_repository", "snapshot": "snapshot_2", "index": "my-index-000001",
	"indices": "my-index-000001", "pattern": "my-index-*"}

func ms(n int64) time.Time { return time.UnixMilli(n).UTC() }

func day(d int) time.Time { return time.Date(2022, 1, d, 0, 0, 0, 0, time.UTC) }

// createSnapshot2 takes snapshot_2 of index_1; its result is elastic.IsSnapshotNameTaken of
// the error.
func createSnapshot2(ctx context.Context, c elastic.Client) (any, error) {
	err := c.CreateSnapshot(ctx, "my_repository", "snapshot_2", []string{"index_1"})
	return elastic.IsSnapshotNameTaken(err), err
}

// docOwner is the owner the fixture mapping-get records.
var docOwner = elastic.Owner{UID: "3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f", Namespace: "team-a", Name: "monocle"}

// refusal is what elastic.RefusedOpenIndex returns.
type refusal struct {
	index string
	ok    bool
}

// restoreSnapshot2 restores snapshot_2 of index_1; its result is the refusal the error is.
func restoreSnapshot2(ctx context.Context, c elastic.Client) (any, error) {
	err := c.Restore(ctx, "my_repository", "snapshot_2", []string{"index_1"})
	index, ok := elastic.RefusedOpenIndex(err)
	return refusal{index, ok}, err
}

func restoreDone1(ctx context.Context, c elastic.Client) (any, error) {
	return c.RestoreDone(ctx, []string{"my-index-000001"})
}

// listing is what elastic.Client.Snapshots returns.
type listing struct {
	snapshots  []elastic.Snapshot
	unreadable []string
}

func listSnapshots(ctx context.Context, c elastic.Client) (any, error) {
	snaps, unreadable, err := c.Snapshots(ctx, "my_repository")
	return listing{snaps, unreadable}, err
}

var docListing = listing{
	snapshots: []elastic.Snapshot{{Name: "snapshot_2", UUID: "vdRctLCxSketdKb54xw67g", State: elastic.SnapshotSuccess,
		Start: ms(1593093628850), End: ms(1593094752018)}},
	unreadable: []string{"neto_snap_2021.12.16"},
}

func getScheduled(ctx context.Context, c elastic.Client) (any, error) {
	return c.Snapshot(ctx, "monocle", "scheduled-20261102-0300")
}

var docRepository = elastic.Repository{Type: elastic.RepositoryFS, Location: "my_backup_location"}

// contractCases has one case per fixture, by fixture name.
var contractCases = map[string]contractCase{
	"cluster-health": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.Health(ctx) },
		want: elastic.Health{ClusterName: "testcluster", Status: elastic.HealthYellow, NumberOfNodes: 1, NumberOfDataNodes: 1,
			ActivePrimaryShards: 1, ActiveShards: 1, UnassignedShards: 1},
	},
	// The index open (cat-indices), its primary started: done.
	"cat-shards-started": {args: map[string]string{"pattern": "my-index-000001"}, also: []string{"cat-indices"},
		call: restoreDone1, want: true},
	// A replica initializing does not hold a restore back: done.
	"cat-shards-initializing": {args: map[string]string{"pattern": "my-index-000001"}, also: []string{"cat-indices"},
		call: restoreDone1, want: true},
	"cat-allocation": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.DiskUsage(ctx) },
		want: elastic.Disk{Node: "CSUXak2", IndicesBytes: 260, UsedBytes: 50787988275, AvailableBytes: 46600395161, TotalBytes: 108125801676},
	},
	"settings-read-only": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.ReadOnlyIndices(ctx) },
		want: []string{"my-index-000001"},
	},
	"settings-read-only-none": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.ReadOnlyIndices(ctx) },
		want: []string(nil),
	},
	"settings-read-only-hidden": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.ReadOnlyIndices(ctx) },
		want: []string{".ds-ilm-history-5-2021.12.16-000001", "monocle.config"},
	},
	"settings-clear-read-only": {
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.ClearReadOnly(ctx, "my-index-000001")
		},
	},
	"settings-replicas": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.IndexReplicas(ctx, "my-index-*") },
		want: map[string]int{"my-index-000001": 1, "my-index-000002": 0},
	},
	// No index yet: none, not an error.
	"settings-replicas-none": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.IndexReplicas(ctx, "my-index-*") },
		want: map[string]int{},
	},
	"settings-put-replicas": {
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.SetIndexReplicas(ctx, "my-index-*", 2)
		},
	},
	"cluster-settings": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.Watermarks(ctx) },
		want: elastic.Watermarks{Low: elastic.Watermark{Raw: "85%", UsedPercent: 85},
			High: elastic.Watermark{Raw: "90%", UsedPercent: 90}, FloodStage: elastic.Watermark{Raw: "95%", UsedPercent: 95}},
	},
	"cat-indices": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.Indices(ctx, "my-index-*") },
		want: []elastic.Index{
			{Name: "my-index-000001", Health: elastic.HealthYellow, Status: "open", DocsCount: 1200, StoreSizeBytes: 90214},
			{Name: "my-index-000002", Health: elastic.HealthGreen, Status: "open", DocsCount: 0, StoreSizeBytes: 260},
		},
	},
	"cat-indices-missing": {
		args: map[string]string{"pattern": "my-index-000003"},
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.Indices(ctx, "my-index-000003") },
		want: []elastic.Index(nil),
		err:  "404 index_not_found_exception",
	},
	"indices-close": {
		args: map[string]string{"indices": "my_index"},
		call: func(ctx context.Context, c elastic.Client) (any, error) { return nil, c.CloseIndices(ctx, "my_index") },
	},
	"index-delete": {
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.DeleteIndex(ctx, "my-index-000001")
		},
	},
	// A missing index is already deleted.
	"index-delete-missing": {
		args: map[string]string{"index": "my-index-000003"},
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.DeleteIndex(ctx, "my-index-000003")
		},
	},
	"crawlers-progress-entities": {
		args: map[string]string{"index": "monocle.changes.1.demo"},
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return c.CrawlersProgress(ctx, "monocle.changes.1.demo")
		},
		want: []elastic.CrawlerProgress{{Crawler: "gh", Entities: []elastic.CrawlerEntity{
			{Type: "organization", Value: "change-metrics", LastCommitAt: time.Date(2024, 11, 23, 4, 0, 0, 0, time.UTC)},
			{Type: "project", Value: "change-metrics/monocle", LastCommitAt: time.Date(2024, 11, 24, 4, 0, 0, 0, time.UTC)},
		}}},
	},
	"search-crawler-errors": {
		args: map[string]string{"index": "monocle.changes.1.demo"},
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return c.CrawlersErrors(ctx, "monocle.changes.1.demo")
		},
		want: []elastic.CrawlerErrors{{Crawler: "github-crawler", Total: 3, LastDay: 1, LastTime: day(4),
			LastMessage: "Bad credentials", LastEntity: "project change-metrics/monocle"}},
	},
	// Registered as wanted: no PUT (the fake fails the test on a request it has no route for).
	"repository-get": {
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.EnsureRepository(ctx, "my_repository", docRepository)
		},
	},
	// Not registered: registered with a PUT.
	"repository-get-missing": {
		also: []string{"repository-put"},
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.EnsureRepository(ctx, "my_repository", docRepository)
		},
	},
	// Registered with other settings: registered again.
	"repository-put": {
		also: []string{"repository-get"},
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.EnsureRepository(ctx, "my_repository", elastic.Repository{Type: elastic.RepositoryFS, Location: "other"})
		},
	},
	// Checked, never registered: GET only.
	"repository-check": {
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.CheckRepository(ctx, "my_repository")
		},
	},
	"repository-check-missing": {
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.CheckRepository(ctx, "my_repository")
		},
		err: "404 repository_missing_exception",
	},
	"snapshot-create":                  {call: createSnapshot2, want: false},
	"snapshot-create-exists":           {call: createSnapshot2, want: true, err: "400 invalid_snapshot_name_exception"},
	"snapshot-create-name-in-progress": {call: createSnapshot2, want: true, err: "400 invalid_snapshot_name_exception"},
	"snapshot-get": {
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return c.Snapshot(ctx, "my_repository", "snapshot_2")
		},
		want: elastic.Snapshot{Name: "snapshot_2", UUID: "vdRctLCxSketdKb54xw67g", State: elastic.SnapshotSuccess,
			Start: ms(1593093628850), End: ms(1593094752018)},
	},
	"snapshot-get-missing": {
		args: map[string]string{"snapshot": "snapshot_3"},
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return c.Snapshot(ctx, "my_repository", "snapshot_3")
		},
		want: elastic.Snapshot{},
		err:  "404 snapshot_missing_exception",
	},
	// The names (snapshot-list-names) and the readable snapshots (snapshot-list-ignore-unavailable)
	// of the docs' examples: neto_snap_2021.12.16 is listed by name only, so unreadable.
	"snapshot-list-names":              {also: []string{"snapshot-list-ignore-unavailable"}, call: listSnapshots, want: docListing},
	"snapshot-list-ignore-unavailable": {also: []string{"snapshot-list-names"}, call: listSnapshots, want: docListing},
	"snapshot-get-unreadable-corrupt": {
		args: map[string]string{"repository": "monocle", "snapshot": "scheduled-20261102-0300"},
		call: getScheduled, want: elastic.Snapshot{}, err: "500 snapshot_exception",
	},
	"snapshot-get-unreadable-missing": {
		args: map[string]string{"repository": "monocle", "snapshot": "scheduled-20261102-0300"},
		call: getScheduled, want: elastic.Snapshot{}, err: "404 snapshot_missing_exception",
	},
	"snapshot-status": {
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return c.SnapshotSize(ctx, "my_repository", "snapshot_2")
		},
		want: int64(6024),
	},
	"snapshot-delete": {
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.DeleteSnapshot(ctx, "my_repository", "snapshot_2")
		},
	},
	// A missing snapshot is already deleted.
	"snapshot-delete-missing": {
		args: map[string]string{"snapshot": "snapshot_3"},
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			return nil, c.DeleteSnapshot(ctx, "my_repository", "snapshot_3")
		},
	},
	// A cluster with security on, asked without credentials: ErrUnauthorized.
	"security-unauthorized": {
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.Health(ctx) },
		want: elastic.Health{}, err: "401 security_exception",
	},
	"index-create": {
		args: map[string]string{"index": elastic.OwnerIndex},
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			err := c.CreateOwner(ctx, docOwner)
			return elastic.IsAlreadyExists(err), err
		},
		want: false,
	},
	// Another client created the index first: IsAlreadyExists.
	"index-create-exists": {
		args: map[string]string{"index": elastic.OwnerIndex},
		call: func(ctx context.Context, c elastic.Client) (any, error) {
			err := c.CreateOwner(ctx, docOwner)
			return elastic.IsAlreadyExists(err), err
		},
		want: true, err: "400 resource_already_exists_exception",
	},
	"mapping-get": {
		args: map[string]string{"index": elastic.OwnerIndex},
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.Owner(ctx) },
		want: docOwner,
	},
	// No record yet: ErrNotFound.
	"mapping-get-missing": {
		args: map[string]string{"index": elastic.OwnerIndex},
		call: func(ctx context.Context, c elastic.Client) (any, error) { return c.Owner(ctx) },
		want: elastic.Owner{}, err: "404 index_not_found_exception",
	},
	"mapping-put": {
		args: map[string]string{"index": elastic.OwnerIndex},
		call: func(ctx context.Context, c elastic.Client) (any, error) { return nil, c.SetOwner(ctx, docOwner) },
	},
	"restore":                   {call: restoreSnapshot2, want: refusal{}},
	"restore-open-index-exists": {call: restoreSnapshot2, want: refusal{"index_1", true}, err: "500 snapshot_restore_exception"},
	// The index a refusal names, hidden or not, is the one RefusedOpenIndex returns.
	"restore-open-index-exists-hidden": {call: restoreSnapshot2, want: refusal{".ds-ilm-history-5-2021.12.16-000001", true},
		err: "500 snapshot_restore_exception"},
}

// TestContract runs, for each documented answer of Elasticsearch 7.17 (elastictest's
// fixtures), the client's call that sends its request against a fake answering it: the
// request must be the fixture's (method, path, query) and the result the case's. A fixture
// without a case, or a case without a fixture, fails it (elastictest.RunContract).
func TestContract(t *testing.T) {
	elastictest.RunContract(t, contractCases, func(t *testing.T, f elastictest.Fixture, tc contractCase) {
		args := maps.Clone(contractArgs)
		maps.Copy(args, tc.args)
		srv := elastictest.NewServer(t)
		serveFixtures(t, srv, args, append([]string{f.Name}, tc.also...))
		got, err := tc.call(context.Background(), newClient(t, srv))
		if err := checkStatusError(err, tc.err); err != nil {
			t.Fatal(err)
		}
		if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("result %#v, want %#v", got, tc.want)
		}
		method, _, _ := strings.Cut(f.Request, " ")
		n := 0
		for _, r := range srv.RequestsTo(method, f.Path(args)) {
			if f.Matches(r.Method, &url.URL{Path: r.Path, RawQuery: r.Query.Encode()}) == nil {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d requests of the fixture's (%s?%s), want 1; sent %v", n, f.Path(args), f.Query, srv.Requests())
		}
	})
}

// serveFixtures routes the requests of the fixtures named names on srv, their path templates
// filled from args: each request gets the answer of the fixture it matches (method, path and
// query), so that fixtures of one path with different queries can be served together; a
// request that matches none fails t and gets a 400.
func serveFixtures(t *testing.T, srv *elastictest.Server, args map[string]string, names []string) {
	byRoute := map[[2]string][]elastictest.Fixture{}
	for _, name := range names {
		g := elastictest.MustFixture(name)
		method, _, _ := strings.Cut(g.Request, " ")
		route := [2]string{method, g.Path(args)}
		byRoute[route] = append(byRoute[route], g)
	}
	for route, fixtures := range byRoute {
		srv.Handle(route[0], route[1], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for _, g := range fixtures {
				if g.Matches(r.Method, r.URL) == nil {
					elastictest.JSON(g.Status, g.Body).ServeHTTP(w, r)
					return
				}
			}
			t.Errorf("%s %s matches no fixture served", r.Method, r.URL)
			elastictest.Error(http.StatusBadRequest, "illegal_argument_exception", "no fixture").ServeHTTP(w, r)
		}))
	}
}

// checkStatusError returns why err is not what want ("" or "<code> <type>") describes.
func checkStatusError(err error, want string) error {
	if want == "" {
		if err != nil {
			return fmt.Errorf("unexpected error: %w", err)
		}
		return nil
	}
	var se *elastic.StatusError
	if !errors.As(err, &se) || fmt.Sprintf("%d %s", se.Code, se.Type) != want {
		return fmt.Errorf("error %v, want a *StatusError %s", err, want)
	}
	if se.Code == 404 && !elastic.IsNotFound(err) {
		return fmt.Errorf("a 404 that IsNotFound does not match: %v", err)
	}
	if (se.Code == 401) != errors.Is(err, elastic.ErrUnauthorized) {
		return fmt.Errorf("errors.Is(err, ErrUnauthorized) is %t for %v", !(se.Code == 401), err)
	}
	return nil
}
