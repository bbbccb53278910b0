package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/elastic/go-elasticsearch/v7/esapi"
)

// Monocle's index names, from Monocle's source (src/Monocle/Backend/Index.hs, configIndex;
// tenantIndexName in src/Monocle/Env.hs): one config index, and one index per workspace
// named WorkspaceIndexPrefix + the workspace name. Each is created with 1 shard and 0
// replicas.
const (
	ConfigIndex          = "monocle.config"
	WorkspaceIndexPrefix = "monocle.changes.1."
)

// IsMonocleIndex reports whether name is one of Monocle's indices as the operator counts
// them: a name that starts with "monocle", the indices the pattern "monocle*" matches
// (ConfigIndex, and WorkspaceIndexPrefix followed by a workspace name), except OwnerIndex,
// the operator's record of the cluster's owner, which is never snapshotted nor restored.
func IsMonocleIndex(name string) bool {
	return strings.HasPrefix(name, "monocle") && name != OwnerIndex
}

// HealthStatus is a cluster or index health: green (all shards allocated), yellow (all
// primaries allocated, some replicas not; a single node with replicas stays yellow), red
// (some primary not allocated). Elasticsearch 7.17 reference, Cluster health API.
type HealthStatus string

// Health statuses.
const (
	HealthGreen  HealthStatus = "green"
	HealthYellow HealthStatus = "yellow"
	HealthRed    HealthStatus = "red"
)

func (s HealthStatus) valid() bool {
	return s == HealthGreen || s == HealthYellow || s == HealthRed
}

// Health is the answer of GET _cluster/health (Elasticsearch 7.17 reference, Cluster health
// API): shard counts are numbers of shard copies.
type Health struct {
	ClusterName string `json:"cluster_name"`
	// Status is green, yellow or red.
	Status HealthStatus `json:"status"`
	// TimedOut is true when a wait condition of the request was not met in time.
	TimedOut            bool `json:"timed_out"`
	NumberOfNodes       int  `json:"number_of_nodes"`
	NumberOfDataNodes   int  `json:"number_of_data_nodes"`
	ActivePrimaryShards int  `json:"active_primary_shards"`
	ActiveShards        int  `json:"active_shards"`
	RelocatingShards    int  `json:"relocating_shards"`
	InitializingShards  int  `json:"initializing_shards"`
	UnassignedShards    int  `json:"unassigned_shards"`
}

// Health returns the cluster health from GET _cluster/health. An answer without a green,
// yellow or red status is a decoding error.
func (c *client) Health(ctx context.Context) (Health, error) {
	_, body, err := c.call(ctx, "GET _cluster/health", esapi.ClusterHealthRequest{})
	if err != nil {
		return Health{}, err
	}
	return decodeHealth("_cluster/health", body)
}

func decodeHealth(what string, body []byte) (Health, error) {
	var h Health
	if err := decode(what, body, &h); err != nil {
		return Health{}, err
	}
	if !h.Status.valid() {
		return Health{}, fmt.Errorf("decoding %s: status %q is not green, yellow or red", what, h.Status)
	}
	return h, nil
}

// RestoreDone reports whether a restore of indices has finished: every index exists, is open
// and has each of its primary shards active. It sends two requests:
//
//   - GET _cat/indices/<indices>?format=json&bytes=b&expand_wildcards=all (Indices): a
//     missing index is a 404 there, "not done" rather than an error; an index still closed
//     ("status":"close") is not restored yet, as a restore opens each index it restores when
//     it starts (Elasticsearch 7.17 reference, Restore snapshot API: an existing index must
//     be closed and the restore opens it), so a closed index is a restore that has not
//     started or was refused.
//   - once all are open, GET _cat/shards/<indices>?format=json&h=index,shard,prirep,state
//     (Elasticsearch 7.17 reference, cat shards API,
//     https://www.elastic.co/guide/en/elasticsearch/reference/7.17/cat-shards.html): each
//     primary ("prirep":"p") must be STARTED or RELOCATING, the two states of an active shard
//     (elastic/elasticsearch ShardRouting.active); INITIALIZING or UNASSIGNED is a restore
//     still recovering. An index without a primary row is not done.
//
// The cluster health cannot tell: Elasticsearch 7.x reports a primary restored from a
// snapshot, unassigned or initializing, as yellow rather than red
// (elastic/elasticsearch ClusterShardHealth.getInactivePrimaryHealth), the yellow of an index
// whose replica a single node never assigns; and since 7.2 a closed index keeps its shards
// started, so shard states alone cannot tell a closed index from a restored one either.
func (c *client) RestoreDone(ctx context.Context, indices []string) (bool, error) {
	if err := checkNames("index", indices); err != nil {
		return false, fmt.Errorf("restore progress: %w", err)
	}
	list := strings.Join(indices, ",")
	rows, err := c.Indices(ctx, list)
	if IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	open := map[string]bool{}
	for _, r := range rows {
		open[r.Name] = r.Status == "open"
	}
	for _, ix := range indices {
		if !open[ix] {
			return false, nil
		}
	}
	const what = "_cat/shards"
	var shards []struct {
		Index  catString `json:"index"`
		PriRep catString `json:"prirep"`
		State  catString `json:"state"`
	}
	req := esapi.CatShardsRequest{Index: indices, Format: "json", H: []string{"index", "shard", "prirep", "state"}}
	if err := c.callJSON(ctx, "GET _cat/shards/"+list, what, req, &shards); err != nil {
		if IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	if shards == nil {
		return false, fmt.Errorf("decoding %s: not a list", what)
	}
	active := map[string]bool{}
	for _, s := range shards {
		if s.Index.s == "" {
			return false, fmt.Errorf("decoding %s: a row has no index name", what)
		}
		if s.PriRep.s != "p" {
			continue
		}
		started := s.State.s == "STARTED" || s.State.s == "RELOCATING"
		if was, seen := active[s.Index.s]; seen {
			started = started && was
		}
		active[s.Index.s] = started
	}
	for _, ix := range indices {
		if !active[ix] {
			return false, nil
		}
	}
	return true, nil
}

// Disk is the disk of one data node, in bytes, from GET _cat/allocation (Elasticsearch 7.17
// reference, cat allocation API).
type Disk struct {
	// Node is the node's name.
	Node string
	// IndicesBytes is what the node's shards take (disk.indices).
	IndicesBytes int64
	// UsedBytes, AvailableBytes and TotalBytes describe the filesystem of the node's data
	// path(s), Elasticsearch's files and others' alike (disk.used, disk.avail, disk.total).
	UsedBytes      int64
	AvailableBytes int64
	TotalBytes     int64
}

// PercentUsed is UsedBytes/TotalBytes as a percentage, 0 when TotalBytes is 0. It is what
// a percentage watermark is compared with.
func (d Disk) PercentUsed() float64 {
	if d.TotalBytes <= 0 {
		return 0
	}
	return 100 * float64(d.UsedBytes) / float64(d.TotalBytes)
}

// catString is a cell of a cat API JSON answer: Elasticsearch renders every cell as a string
// or null (RestTable.renderValue). A bare number is accepted too.
type catString struct {
	s     string
	valid bool
}

func (v *catString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = catString{}
		return nil
	}
	if len(b) > 0 && b[0] != '"' {
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		*v = catString{s: n.String(), valid: true}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*v = catString{s: s, valid: true}
	return nil
}

// int64 parses the cell as a whole number; a null cell is 0.
func (v catString) int64(what, column string) (int64, error) {
	if !v.valid {
		return 0, nil
	}
	n, err := strconv.ParseInt(v.s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("decoding %s: %s %q is not a whole number", what, column, v.s)
	}
	return n, nil
}

// DiskUsage returns the disk of the data node with the highest used percentage, the one the
// watermarks catch first (Monocle runs one node). It reads GET
// _cat/allocation?format=json&bytes=b rather than _nodes/stats/fs because only the former
// gives disk.indices next to the filesystem figures, and its figures are the ones the disk
// allocation decider uses. The UNASSIGNED row _cat/allocation adds for unassigned shards has
// no disk and is skipped; an answer with no node is a decoding error.
func (c *client) DiskUsage(ctx context.Context) (Disk, error) {
	const what = "_cat/allocation"
	var rows []struct {
		Node    catString `json:"node"`
		Indices catString `json:"disk.indices"`
		Used    catString `json:"disk.used"`
		Avail   catString `json:"disk.avail"`
		Total   catString `json:"disk.total"`
	}
	req := esapi.CatAllocationRequest{Format: "json", Bytes: "b"}
	if err := c.callJSON(ctx, "GET _cat/allocation", what, req, &rows); err != nil {
		return Disk{}, err
	}
	var fullest *Disk
	for _, r := range rows {
		if !r.Total.valid {
			continue
		}
		d := Disk{Node: r.Node.s}
		var err error
		for _, f := range []struct {
			dst    *int64
			cell   catString
			column string
		}{
			{&d.IndicesBytes, r.Indices, "disk.indices"},
			{&d.UsedBytes, r.Used, "disk.used"},
			{&d.AvailableBytes, r.Avail, "disk.avail"},
			{&d.TotalBytes, r.Total, "disk.total"},
		} {
			if *f.dst, err = f.cell.int64(what, f.column); err != nil {
				return Disk{}, err
			}
		}
		if fullest == nil || d.PercentUsed() > fullest.PercentUsed() {
			fullest = &d
		}
	}
	if fullest == nil {
		return Disk{}, fmt.Errorf("decoding %s: no data node with disk figures", what)
	}
	return *fullest, nil
}

// readOnlySetting is the block Elasticsearch 7.17 puts on every index of a node past the
// flood-stage watermark; it releases it by itself once usage falls below the high watermark
// (Elasticsearch 7.17 reference, Disk-based shard allocation settings).
const readOnlySetting = "index.blocks.read_only_allow_delete"

// ReadOnlyIndices returns, sorted, the indices whose index.blocks.read_only_allow_delete is
// true, hidden and closed ones included, from GET
// _all/_settings/index.blocks.read_only_allow_delete?expand_wildcards=all&flat_settings=true
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/indices-get-settings.html).
// Without expand_wildcards, the REST layer resolves _all with IndicesOptions.strictExpandOpen
// (elastic/elasticsearch v7.17 RestGetSettingsAction.prepareRequest, whatever the page says
// of the default), that is to the visible open indices only, and a block on a hidden index
// (.kibana_*, a data stream's .ds-*) goes unseen; expand_wildcards=all expands to "open and
// closed indices, including hidden indices". Indices without the setting are left out of the
// answer (GetSettingsResponse.toXContent), so a cluster without a block answers {}.
func (c *client) ReadOnlyIndices(ctx context.Context) ([]string, error) {
	const what = "_all/_settings"
	var byIndex map[string]struct {
		Settings map[string]json.RawMessage `json:"settings"`
	}
	req := esapi.IndicesGetSettingsRequest{
		Index:           []string{"_all"},
		Name:            []string{readOnlySetting},
		ExpandWildcards: "all",
		FlatSettings:    ptr(true),
	}
	if err := c.callJSON(ctx, "GET _all/_settings/"+readOnlySetting, what, req, &byIndex); err != nil {
		return nil, err
	}
	if byIndex == nil {
		return nil, fmt.Errorf("decoding %s: not an object of indices", what)
	}
	var blocked []string
	for index, s := range byIndex {
		raw, ok := s.Settings[readOnlySetting]
		if !ok {
			continue
		}
		// Settings come back as strings ("true"); a JSON boolean is accepted as well.
		var text string
		if json.Unmarshal(raw, &text) != nil {
			text = string(raw)
		}
		on, err := strconv.ParseBool(text)
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %s of %s is %s", what, readOnlySetting, index, raw)
		}
		if on {
			blocked = append(blocked, index)
		}
	}
	sort.Strings(blocked)
	return blocked, nil
}

// ClearReadOnly sets index.blocks.read_only_allow_delete to null on the indices with PUT
// <indices>/_settings {"index.blocks.read_only_allow_delete": null} (Elasticsearch 7.17
// reference, Update index settings API). Without indices it does nothing. Clearing the block
// while the disk is still past the flood stage only lets Elasticsearch set it again.
func (c *client) ClearReadOnly(ctx context.Context, indices ...string) error {
	if len(indices) == 0 {
		return nil
	}
	if err := checkNames("index", indices); err != nil {
		return fmt.Errorf("clearing read-only: %w", err)
	}
	body := []byte(`{"` + readOnlySetting + `":null}`)
	req := esapi.IndicesPutSettingsRequest{Index: indices, Body: bytes.NewReader(body)}
	_, resp, err := c.call(ctx, "PUT "+strings.Join(indices, ",")+"/_settings", req)
	if err != nil {
		return err
	}
	return acknowledged("<indices>/_settings", resp)
}

// Index is one row of GET _cat/indices (Elasticsearch 7.17 reference, cat indices API).
type Index struct {
	Name string
	// Health is green, yellow or red; empty when Elasticsearch reports none.
	Health HealthStatus
	// Status is "open" or "close".
	Status string
	// DocsCount is the number of documents, nested ones included; 0 for a closed index.
	DocsCount int64
	// StoreSizeBytes is the size of all its shard copies on disk; 0 for a closed index.
	StoreSizeBytes int64
}

// Indices lists the indices matching pattern, sorted by name, from GET
// _cat/indices/<pattern>?format=json&bytes=b&expand_wildcards=all. The pattern comes from
// the caller, e.g. "monocle.*" (see ConfigIndex and WorkspaceIndexPrefix), or is a
// comma-separated list of names; a pattern matching nothing gives an empty list, a concrete
// name that does not exist gives ErrNotFound. expand_wildcards=all makes a wildcard match
// hidden indices too (index.hidden, such as the .ds-* backing indices of data streams),
// which the cat indices API leaves out by default (Elasticsearch 7.17 reference, cat indices
// API, expand_wildcards; hidden indices are matched by a wildcard only with "hidden" or
// "all", unless the pattern starts with a dot).
func (c *client) Indices(ctx context.Context, pattern string) ([]Index, error) {
	const what = "_cat/indices"
	if err := checkPattern(pattern); err != nil {
		return nil, fmt.Errorf("listing indices: %w", err)
	}
	var rows []struct {
		Index     catString `json:"index"`
		Health    catString `json:"health"`
		Status    catString `json:"status"`
		DocsCount catString `json:"docs.count"`
		StoreSize catString `json:"store.size"`
	}
	req := esapi.CatIndicesRequest{Index: []string{pattern}, Format: "json", Bytes: "b", ExpandWildcards: "all"}
	if err := c.callJSON(ctx, "GET _cat/indices/"+pattern, what, req, &rows); err != nil {
		return nil, err
	}
	if rows == nil {
		return nil, fmt.Errorf("decoding %s: not a list", what)
	}
	out := make([]Index, 0, len(rows))
	for _, r := range rows {
		if r.Index.s == "" {
			return nil, fmt.Errorf("decoding %s: a row has no index name", what)
		}
		ix := Index{Name: r.Index.s, Health: HealthStatus(r.Health.s), Status: r.Status.s}
		var err error
		if ix.DocsCount, err = r.DocsCount.int64(what, "docs.count"); err != nil {
			return nil, err
		}
		if ix.StoreSizeBytes, err = r.StoreSize.int64(what, "store.size"); err != nil {
			return nil, err
		}
		out = append(out, ix)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// CloseIndices closes the indices with POST <indices>/_close (Elasticsearch 7.17 reference,
// Close index API): a snapshot restores over an existing index only when it is closed, and
// the restore reopens it. A missing index is ErrNotFound.
func (c *client) CloseIndices(ctx context.Context, indices ...string) error {
	if err := checkNames("index", indices); err != nil {
		return fmt.Errorf("closing indices: %w", err)
	}
	req := esapi.IndicesCloseRequest{Index: indices}
	_, body, err := c.call(ctx, "POST "+strings.Join(indices, ",")+"/_close", req)
	if err != nil {
		return err
	}
	return acknowledged("<indices>/_close", body)
}

// DeleteIndex deletes index with DELETE <index> (Elasticsearch 7.17 reference, Delete index
// API). A missing index is already gone and not an error. The name must be a concrete index:
// a wildcard or _all is refused before any request.
func (c *client) DeleteIndex(ctx context.Context, index string) error {
	if err := checkName("index", index); err != nil {
		return fmt.Errorf("deleting index: %w", err)
	}
	req := esapi.IndicesDeleteRequest{Index: []string{index}}
	_, body, err := c.call(ctx, "DELETE "+index, req)
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return acknowledged("<index>", body)
}
