package testkit

import (
	"crypto/rand"
	"encoding/base64"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"
	"time"
)

// This file holds the state FakeElasticsearch keeps per Elasticsearch (indices, snapshot
// repositories, snapshots, restores) and the methods tests read and set it with;
// elastic_api.go answers the requests of package elastic from it.

// Snapshot states of Elasticsearch 7.17 (Get snapshot API) that FakeSnapshot.State and
// SnapshotOutcome take.
const (
	SnapshotSuccess    = "SUCCESS"
	SnapshotInProgress = "IN_PROGRESS"
	SnapshotFailed     = "FAILED"
	SnapshotPartial    = "PARTIAL"
)

// FakeIndex is an index of a fake Elasticsearch, as Indices reports it.
type FakeIndex struct {
	Name string
	// Open is false for a closed index (POST <index>/_close).
	Open bool
	// Docs is its document count (docs.count of GET _cat/indices, null there while closed).
	Docs int64
	// Hidden is true for a hidden index (SetHidden).
	Hidden bool
	// Replicas is its index.number_of_replicas.
	Replicas int
}

// FakeSnapshot is a snapshot of a fake Elasticsearch, as Snapshots reports it and
// PutSnapshot takes it.
type FakeSnapshot struct {
	Name string
	// UUID is Elasticsearch's id of the snapshot; PutSnapshot makes one up when empty.
	UUID string
	// State is SnapshotSuccess, SnapshotInProgress, SnapshotFailed or SnapshotPartial;
	// PutSnapshot reads "" as SnapshotSuccess.
	State string
	// Reason says why a FAILED or PARTIAL snapshot failed; empty otherwise.
	Reason string
	// Indices are the indices it holds, sorted.
	Indices []string
	// Start and End are when it started and finished, in UTC to the millisecond; End is
	// zero while IN_PROGRESS. PutSnapshot reads a zero Start as now and a zero End of a
	// finished snapshot as Start.
	Start, End time.Time
	// Docs are the document counts of its indices when it was taken: a restore gives each
	// restored index its count from here (0 when absent).
	Docs map[string]int64
	// Unreadable, when set, makes its metadata blob (snap-<uuid>.dat) unreadable:
	// SnapshotCorrupt or SnapshotBlobMissing. The repository data still lists it
	// (GET _snapshot/<repo>/_all?verbose=false), but a verbose GET that selects it fails
	// whole unless ignore_unavailable=true, which leaves it out, as in Elasticsearch 7.17.
	// A running snapshot is read from the cluster state, so this applies once it ended.
	Unreadable string
}

// Values of FakeSnapshot.Unreadable: a damaged blob (500 snapshot_exception) or a missing
// one (404 snapshot_missing_exception).
const (
	SnapshotCorrupt     = "corrupt"
	SnapshotBlobMissing = "missing"
)

// Sizes the fake reports, in bytes: an index's store.size in GET _cat/indices is
// fakeStoreBytesPerDoc per document plus fakeStoreBytesBase, and a snapshot's
// stats.total.size_in_bytes in GET _snapshot/<repo>/<snapshot>/_status is
// FakeSnapshotBytesPerIndex per index, over fakeSnapshotFilesPerIndex files.
const (
	fakeStoreBytesBase        = 4096
	fakeStoreBytesPerDoc      = 1024
	fakeSnapshotFilesPerIndex = 4
	// FakeSnapshotBytesPerIndex is what each index adds to the size FakeElasticsearch
	// reports for a snapshot (elastic.Client.SnapshotSize): 1 MiB.
	FakeSnapshotBytesPerIndex = 1 << 20
)

// esKey names one Elasticsearch: a bundled one by the namespace and name of its Monocle, from
// the Host "<name>-elastic.<namespace>.svc[:port]"; any other (an ECK Service
// "<name>-es-http.<namespace>.svc", an external URL's host) by host, the Host's name in lower
// case without its port and without the trailing dot of a fully qualified name (DNS resolves
// the name the same with and without it).
type esKey struct{ namespace, monocle, host string }

// keyOf returns the key of the Elasticsearch a request with Host host is for.
func keyOf(host string) esKey {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	parts := strings.Split(host, ".")
	if len(parts) == 3 && parts[2] == "svc" && strings.HasSuffix(parts[0], "-elastic") {
		if name := strings.TrimSuffix(parts[0], "-elastic"); name != "" && parts[1] != "" {
			return esKey{namespace: parts[1], monocle: name}
		}
	}
	return esKey{host: host}
}

// bundled reports whether k is a bundled Elasticsearch's.
func (k esKey) bundled() bool { return k.monocle != "" }

// esState is the state of one fake Elasticsearch.
type esState struct {
	indices map[string]*fakeIndex
	// repos are the registered repositories, by name.
	repos map[string]fakeRepo
	// snapshots are by repository name, then snapshot name. They are kept apart from repos
	// as a repository's storage (a directory, a bucket) outlives its registration: a test
	// can seed snapshots before the operator registers the repository.
	snapshots map[string]map[string]*FakeSnapshot
	// restores counts the accepted restores by repository and snapshot name.
	restores map[[2]string]int
	// outcome and outcomeReason are the state and reason of new snapshots; "" is SUCCESS.
	outcome, outcomeReason string
	// verifyFailure, when not empty, is the reason repository verification fails with.
	verifyFailure string
	// hold makes restores accepted while it is set stay in progress until it is cleared.
	hold bool
}

type fakeIndex struct {
	uuid string
	open bool
	docs int64
	// hidden is index.hidden: a wildcard matches the index only when asked to (esState.expand).
	hidden bool
	// replicas is index.number_of_replicas: 0, as Monocle creates its indices, unless set
	// (SetReplicas, PUT <indices>/_settings). The fake is a single node, which leaves every
	// replica unassigned.
	replicas int
	// crawlers are the crawler metadata documents of the index (SetCrawlerMetadata); errors
	// its crawler error documents (SetCrawlerErrors).
	crawlers []FakeCrawlerEntity
	errors   []FakeCrawlerError
	// recovering is set on an index restored while restores were held.
	recovering bool
	// readOnly is set while the index has the flood-stage block, index.blocks.read_only_allow_delete.
	readOnly bool
	// meta is the _meta of the index's mapping (PUT <index>, PUT <index>/_mapping); nil
	// without one.
	meta map[string]any
}

type fakeRepo struct {
	// uuid is the repository's id, which Elasticsearch keeps in the repository's data.
	uuid     string
	typ      string
	settings map[string]string
}

// state returns the state of Elasticsearch k, creating it. f.mu must be held.
func (f *FakeElasticsearch) state(k esKey) *esState {
	s := f.states[k]
	if s == nil {
		s = &esState{
			indices:   map[string]*fakeIndex{},
			repos:     map[string]fakeRepo{},
			snapshots: map[string]map[string]*FakeSnapshot{},
			restores:  map[[2]string]int{},
		}
		f.states[k] = s
	}
	return s
}

// with runs fn on the state of the Elasticsearch of Monocle monocle in namespace, under the
// fake's lock.
func (f *FakeElasticsearch) with(namespace, monocle string, fn func(s *esState)) {
	f.bundled(namespace, monocle).with(fn)
}

// FakeCluster is one Elasticsearch of a FakeElasticsearch, for tests of a Monocle on a
// cluster it does not run: Cluster returns it by host. Its methods are those of
// FakeElasticsearch that take a Monocle's namespace and name, for that cluster.
type FakeCluster struct {
	f   *FakeElasticsearch
	key esKey
}

// Cluster returns the Elasticsearch the fake serves for requests to host (a host name; a port
// is ignored): an ECK Elasticsearch's Service "<name>-es-http.<namespace>.svc", an external
// URL's host, or "<name>-elastic.<namespace>.svc", the bundled Elasticsearch of Monocle name.
func (f *FakeElasticsearch) Cluster(host string) FakeCluster {
	return FakeCluster{f: f, key: keyOf(host)}
}

// bundled returns the bundled Elasticsearch of Monocle monocle in namespace.
func (f *FakeElasticsearch) bundled(namespace, monocle string) FakeCluster {
	return FakeCluster{f: f, key: esKey{namespace: namespace, monocle: monocle}}
}

// with runs fn on the state of c, under the fake's lock.
func (c FakeCluster) with(fn func(s *esState)) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	fn(c.f.state(c.key))
}

// index returns the index name, created open with no document when it does not exist.
func (s *esState) index(name string) *fakeIndex {
	ix := s.indices[name]
	if ix == nil {
		ix = &fakeIndex{uuid: newUUID(), open: true}
		s.indices[name] = ix
	}
	return ix
}

// SetIndices makes indices the indices of the Elasticsearch of Monocle monocle in
// namespace, replacing those it had: each open, with no document.
func (f *FakeElasticsearch) SetIndices(namespace, monocle string, indices ...string) {
	f.bundled(namespace, monocle).SetIndices(indices...)
}

// SetIndices is FakeElasticsearch.SetIndices for c.
func (c FakeCluster) SetIndices(indices ...string) {
	c.with(func(s *esState) {
		s.indices = map[string]*fakeIndex{}
		for _, name := range indices {
			s.index(name)
		}
	})
}

// SetDocs sets the document count of an index of the Elasticsearch of Monocle monocle in
// namespace, creating the index, open, when it does not exist.
func (f *FakeElasticsearch) SetDocs(namespace, monocle, index string, docs int64) {
	f.bundled(namespace, monocle).SetDocs(index, docs)
}

// SetDocs is FakeElasticsearch.SetDocs for c.
func (c FakeCluster) SetDocs(index string, docs int64) {
	c.with(func(s *esState) { s.index(index).docs = docs })
}

// SetHidden makes an index of the Elasticsearch of Monocle monocle in namespace hidden
// (index.hidden: true), creating it, open, when it does not exist: as in Elasticsearch 7.17,
// a wildcard then matches it only with expand_wildcards hidden or all, or when the pattern
// starts with a dot, while its name still reaches it. Data streams' backing indices
// (.ds-<data-stream>-<yyyy.MM.dd>-<generation>) are hidden indices, such as the
// .ds-ilm-history-5-* of the ilm-history-5 data stream that Elasticsearch 7.17 creates by
// itself.
func (f *FakeElasticsearch) SetHidden(namespace, monocle, index string) {
	f.bundled(namespace, monocle).SetHidden(index)
}

// SetHidden is FakeElasticsearch.SetHidden for c.
func (c FakeCluster) SetHidden(index string) {
	c.with(func(s *esState) { s.index(index).hidden = true })
}

// SetReplicas sets index.number_of_replicas of an index of the Elasticsearch of Monocle
// monocle in namespace, creating the index, open, when it does not exist, as an index
// created or changed by someone else than Monocle, which creates its indices with 0.
func (f *FakeElasticsearch) SetReplicas(namespace, monocle, index string, n int) {
	f.with(namespace, monocle, func(s *esState) {
		s.index(index).replicas = n
	})
}

// FakeCrawlerEntity is one crawler metadata document of a workspace index, as Monocle 1.11.2
// keeps them: {"crawler_metadata": {"crawler_name", "crawler_type", "crawler_type_value",
// "last_commit_at"}} (src/Monocle/Backend/Documents.hs, ECrawlerMetadataObject).
type FakeCrawlerEntity struct {
	Crawler, Type, Value string
	LastCommitAt         time.Time
}

// SetCrawlerMetadata replaces the crawler metadata documents of an index of the Elasticsearch
// of Monocle monocle in namespace, creating the index, open, when it does not exist. A search
// of the index (other than one for errors) gets them in the composite aggregation "entities"
// package elastic's CrawlersProgress reads, by crawler, type and value, page by page.
func (f *FakeElasticsearch) SetCrawlerMetadata(namespace, monocle, index string, entities ...FakeCrawlerEntity) {
	f.bundled(namespace, monocle).SetCrawlerMetadata(index, entities...)
}

// SetCrawlerMetadata is FakeElasticsearch.SetCrawlerMetadata for c.
func (c FakeCluster) SetCrawlerMetadata(index string, entities ...FakeCrawlerEntity) {
	c.with(func(s *esState) {
		s.index(index).crawlers = append([]FakeCrawlerEntity(nil), entities...)
	})
}

// FakeCrawlerError is one crawler error document of a workspace index, as Monocle 1.11.2
// stores them: {"error_data": {"crawler_name", "created_at", "entity_type", "entity_value",
// "message", "body"}} (src/Monocle/Backend/Documents.hs, EError).
type FakeCrawlerError struct {
	Crawler, EntityType, EntityValue, Message string
	CreatedAt                                 time.Time
}

// SetCrawlerErrors replaces the crawler error documents of an index of the Elasticsearch of
// Monocle monocle in namespace, creating the index, open, when it does not exist. A search of
// the index whose body names error_data gets their aggregation by crawler name (package
// elastic's CrawlersErrors).
func (f *FakeElasticsearch) SetCrawlerErrors(namespace, monocle, index string, errs ...FakeCrawlerError) {
	f.with(namespace, monocle, func(s *esState) {
		s.index(index).errors = append([]FakeCrawlerError(nil), errs...)
	})
}

// Indices returns the indices of the Elasticsearch of Monocle monocle in namespace, sorted
// by name.
func (f *FakeElasticsearch) Indices(namespace, monocle string) []FakeIndex {
	return f.bundled(namespace, monocle).Indices()
}

// Indices is FakeElasticsearch.Indices for c.
func (c FakeCluster) Indices() []FakeIndex {
	var out []FakeIndex
	c.with(func(s *esState) {
		for name, ix := range s.indices {
			out = append(out, FakeIndex{Name: name, Open: ix.open, Docs: ix.docs, Hidden: ix.hidden, Replicas: ix.replicas})
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Repository returns the type ("fs", "s3") and settings of the snapshot repository name
// registered in the Elasticsearch of Monocle monocle in namespace (PUT _snapshot/<name>),
// and whether it is registered. Settings are strings, as Elasticsearch returns them.
func (f *FakeElasticsearch) Repository(namespace, monocle, name string) (typ string, settings map[string]string, ok bool) {
	return f.bundled(namespace, monocle).Repository(name)
}

// Repository is FakeElasticsearch.Repository for c.
func (c FakeCluster) Repository(name string) (typ string, settings map[string]string, ok bool) {
	c.with(func(s *esState) {
		var r fakeRepo
		if r, ok = s.repos[name]; ok {
			typ, settings = r.typ, maps.Clone(r.settings)
		}
	})
	return typ, settings, ok
}

// Snapshots returns the snapshots stored under repository name repo in the Elasticsearch of
// Monocle monocle in namespace, sorted by start then name, whether the repository is
// registered or not (see PutSnapshot).
func (f *FakeElasticsearch) Snapshots(namespace, monocle, repo string) []FakeSnapshot {
	return f.bundled(namespace, monocle).Snapshots(repo)
}

// Snapshots is FakeElasticsearch.Snapshots for c.
func (c FakeCluster) Snapshots(repo string) []FakeSnapshot {
	var out []FakeSnapshot
	c.with(func(s *esState) {
		for _, snap := range sortedSnapshots(s.snapshots[repo]) {
			out = append(out, cloneSnapshot(*snap))
		}
	})
	return out
}

// PutSnapshot stores snapshot snap under repository name repo in the Elasticsearch of
// Monocle monocle in namespace, replacing one of the same name, as if another Elasticsearch
// (another Monocle) had written it to a repository both share, such as an S3 bucket. The
// repository need not be registered: the snapshot is kept under the repository's name and
// shows through the snapshot APIs once the operator registers a repository of that name,
// whatever its settings. Fields left zero are filled as FakeSnapshot says.
func (f *FakeElasticsearch) PutSnapshot(namespace, monocle, repo string, snap FakeSnapshot) {
	f.bundled(namespace, monocle).PutSnapshot(repo, snap)
}

// PutSnapshot is FakeElasticsearch.PutSnapshot for c.
func (c FakeCluster) PutSnapshot(repo string, snap FakeSnapshot) {
	snap = cloneSnapshot(snap)
	if snap.UUID == "" {
		snap.UUID = newUUID()
	}
	if snap.State == "" {
		snap.State = SnapshotSuccess
	}
	if snap.Start.IsZero() {
		snap.Start = fakeNow()
	}
	snap.Start = snap.Start.UTC().Truncate(time.Millisecond)
	switch {
	case snap.State == SnapshotInProgress:
		snap.End = time.Time{}
	case snap.End.IsZero():
		snap.End = snap.Start
	default:
		snap.End = snap.End.UTC().Truncate(time.Millisecond)
	}
	sort.Strings(snap.Indices)
	c.with(func(s *esState) {
		s.repoSnapshots(repo)[snap.Name] = &snap
	})
}

// Restores returns how many restores of snapshot snapshot of repository repo the
// Elasticsearch of Monocle monocle in namespace accepted (POST
// _snapshot/<repo>/<snapshot>/_restore answered {"accepted":true}).
func (f *FakeElasticsearch) Restores(namespace, monocle, repo, snapshot string) int {
	return f.bundled(namespace, monocle).Restores(repo, snapshot)
}

// Restores is FakeElasticsearch.Restores for c.
func (c FakeCluster) Restores(repo, snapshot string) int {
	var n int
	c.with(func(s *esState) { n = s.restores[[2]string{repo, snapshot}] })
	return n
}

// SnapshotOutcome sets the state, and the reason, that snapshots the Elasticsearch of
// Monocle monocle in namespace creates from now on get: SnapshotInProgress (until
// FinishSnapshots), SnapshotFailed or SnapshotPartial with reason (a FAILED snapshot has
// all its shards failed, a PARTIAL one a single shard), or "" (the default) for
// SnapshotSuccess.
// The create snapshot call is accepted in every case, as Elasticsearch accepts a snapshot
// with wait_for_completion=false before it fails.
func (f *FakeElasticsearch) SnapshotOutcome(namespace, monocle, state, reason string) {
	f.with(namespace, monocle, func(s *esState) { s.outcome, s.outcomeReason = state, reason })
}

// FinishSnapshots makes the IN_PROGRESS snapshots of the Elasticsearch of Monocle monocle in
// namespace, in every repository, SUCCESS, ending now.
func (f *FakeElasticsearch) FinishSnapshots(namespace, monocle string) {
	end := fakeNow()
	f.with(namespace, monocle, func(s *esState) {
		for _, byName := range s.snapshots {
			for _, snap := range byName {
				if snap.State == SnapshotInProgress {
					snap.State, snap.End = SnapshotSuccess, end
				}
			}
		}
	})
}

// FailRepositoryVerification makes every repository registration (PUT _snapshot/<repo>) of
// the Elasticsearch of Monocle monocle in namespace fail its verification with reason, as
// when the node cannot write to the location or bucket: the answer is 500
// repository_verification_exception. As in Elasticsearch 7.17, which verifies a repository
// after registering it, the repository stays registered with the settings sent (GET
// _snapshot/<repo> shows it). An empty reason ends the failures.
func (f *FakeElasticsearch) FailRepositoryVerification(namespace, monocle, reason string) {
	f.with(namespace, monocle, func(s *esState) { s.verifyFailure = reason })
}

// HoldRestores, with hold true, keeps the restores the Elasticsearch of Monocle monocle in
// namespace accepts from then on in progress: their indices' primaries stay INITIALIZING in
// GET _cat/shards (elastic.Client.RestoreDone false). With hold false, every held restore finishes and later
// ones finish at once.
func (f *FakeElasticsearch) HoldRestores(namespace, monocle string, hold bool) {
	f.bundled(namespace, monocle).HoldRestores(hold)
}

// HoldRestores is FakeElasticsearch.HoldRestores for c.
func (c FakeCluster) HoldRestores(hold bool) {
	c.with(func(s *esState) {
		s.hold = hold
		if !hold {
			for _, ix := range s.indices {
				ix.recovering = false
			}
		}
	})
}

// repoSnapshots returns the snapshots stored under repository name repo, creating the map.
func (s *esState) repoSnapshots(repo string) map[string]*FakeSnapshot {
	m := s.snapshots[repo]
	if m == nil {
		m = map[string]*FakeSnapshot{}
		s.snapshots[repo] = m
	}
	return m
}

// sortedSnapshots returns the snapshots of m sorted by start then name, as Elasticsearch
// 7.17 lists them by default (sort=start_time).
func sortedSnapshots(m map[string]*FakeSnapshot) []*FakeSnapshot {
	out := make([]*FakeSnapshot, 0, len(m))
	for _, snap := range m {
		out = append(out, snap)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func cloneSnapshot(s FakeSnapshot) FakeSnapshot {
	s.Indices = slices.Clone(s.Indices)
	s.Docs = maps.Clone(s.Docs)
	return s
}

// fakeNow is the time the fake stamps snapshots with: UTC, to the millisecond, as Elasticsearch
// reports times in milliseconds.
func fakeNow() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// newUUID returns a random id shaped as Elasticsearch's (22 URL-safe base64 characters).
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
