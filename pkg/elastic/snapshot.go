package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/elastic/go-elasticsearch/v7/esapi"
)

// RepositoryType is the type of a snapshot repository.
type RepositoryType string

// Repository types the operator registers. "fs" needs path.repo in the node settings and a
// volume mounted there; "s3" needs the repository-s3 plugin, bundled only from 8.0
// (Elasticsearch 7.17 reference, Register a snapshot repository).
const (
	RepositoryFS RepositoryType = "fs"
	RepositoryS3 RepositoryType = "s3"
)

// Repository is a snapshot repository's type and settings. It has no credential fields: in
// Elasticsearch 7.x the S3 access and secret keys are keystore entries
// (s3.client.default.access_key, s3.client.default.secret_key) read by the node, not
// repository settings.
type Repository struct {
	Type RepositoryType
	// Location is the fs repository's directory, absolute or relative to path.repo.
	Location string
	// Bucket is the s3 bucket; required for s3.
	Bucket string
	// BasePath is the s3 key prefix inside the bucket; optional.
	BasePath string
	// Endpoint, Protocol ("http" or "https") and PathStyleAccess override the s3 client's
	// settings for an S3-compatible store (MinIO, Ceph); optional. The 7.x repository-s3
	// plugin reads them from the repository settings as well as from the client settings
	// (S3ClientSettings.refine).
	Endpoint        string
	Protocol        string
	PathStyleAccess bool
	// Client is the s3 client whose keystore entries (s3.client.<client>.access_key...) hold
	// the credentials; empty means "default".
	Client string
	// ReadOnly registers the repository read-only ("readonly": "true", any type): a
	// cluster that only restores from another cluster's repository must not write to it
	// (Elasticsearch 7.17 reference, Register a snapshot repository).
	ReadOnly bool
}

// settings returns the repository's settings as Elasticsearch stores and returns them:
// every value a string.
func (r Repository) settings() (map[string]string, error) {
	switch r.Type {
	case RepositoryFS:
		if r.Location == "" {
			return nil, errors.New("fs repository without a location")
		}
		s := map[string]string{"location": r.Location}
		if r.ReadOnly {
			s["readonly"] = "true"
		}
		return s, nil
	case RepositoryS3:
		if r.Bucket == "" {
			return nil, errors.New("s3 repository without a bucket")
		}
		if r.Protocol != "" && r.Protocol != "http" && r.Protocol != "https" {
			return nil, fmt.Errorf("s3 protocol %q: want http or https", r.Protocol)
		}
		s := map[string]string{"bucket": r.Bucket}
		for k, v := range map[string]string{"base_path": r.BasePath, "endpoint": r.Endpoint, "protocol": r.Protocol, "client": r.Client} {
			if v != "" {
				s[k] = v
			}
		}
		if r.PathStyleAccess {
			s["path_style_access"] = "true"
		}
		if r.ReadOnly {
			s["readonly"] = "true"
		}
		return s, nil
	default:
		return nil, fmt.Errorf("repository type %q: want fs or s3", r.Type)
	}
}

// repositoryBody is the body of PUT _snapshot/<name> and one entry of GET _snapshot/<name>.
type repositoryBody struct {
	Type     string            `json:"type"`
	Settings map[string]string `json:"settings"`
}

// EnsureRepository registers repo under name with PUT _snapshot/<name> unless GET
// _snapshot/<name> shows it registered with the same type and settings; Elasticsearch
// answers 404 repository_missing_exception for one not registered. Settings compare as
// strings, as Elasticsearch returns them ("true", not true). The PUT also verifies the
// repository from the node (Elasticsearch 7.17 reference, Create or update snapshot
// repository API); a failed verification is a *StatusError, typically 500
// repository_verification_exception.
func (c *client) EnsureRepository(ctx context.Context, name string, repo Repository) error {
	if err := checkName("repository", name); err != nil {
		return fmt.Errorf("ensuring repository: %w", err)
	}
	want, err := repo.settings()
	if err != nil {
		return fmt.Errorf("ensuring repository %s: %w", name, err)
	}
	var got map[string]repositoryBody
	err = c.callJSON(ctx, "GET _snapshot/"+name, "_snapshot/<repository>",
		esapi.SnapshotGetRepositoryRequest{Repository: []string{name}}, &got)
	switch {
	case IsNotFound(err):
	case err != nil:
		return err
	default:
		if cur, ok := got[name]; ok && cur.Type == string(repo.Type) && maps.Equal(cur.Settings, want) {
			return nil
		}
	}
	body, err := json.Marshal(repositoryBody{Type: string(repo.Type), Settings: want})
	if err != nil {
		return fmt.Errorf("ensuring repository %s: %w", name, err)
	}
	req := esapi.SnapshotCreateRepositoryRequest{Repository: name, Body: bytes.NewReader(body)}
	_, resp, err := c.call(ctx, "PUT _snapshot/"+name, req)
	if err != nil {
		return err
	}
	return acknowledged("_snapshot/<repository>", resp)
}

// CheckRepository reports whether the repository name is registered, with GET
// _snapshot/<name>: nil when it is, an error that IsNotFound matches (404
// repository_missing_exception, elastic/elasticsearch v7.17 RepositoryMissingException) when
// it is not. It neither registers nor verifies it: it is for a repository someone else keeps.
func (c *client) CheckRepository(ctx context.Context, name string) error {
	if err := checkName("repository", name); err != nil {
		return fmt.Errorf("checking repository: %w", err)
	}
	var got map[string]repositoryBody
	err := c.callJSON(ctx, "GET _snapshot/"+name, "_snapshot/<repository>",
		esapi.SnapshotGetRepositoryRequest{Repository: []string{name}}, &got)
	if err != nil {
		return err
	}
	if _, ok := got[name]; !ok {
		return fmt.Errorf("decoding _snapshot/<repository>: no repository %s in the answer", name)
	}
	return nil
}

// snapshotBody is the body of a create snapshot or restore request (Elasticsearch 7.17
// reference, Create snapshot API, Restore snapshot API): the indices, and no cluster state,
// which belongs to the cluster rather than to Monocle.
type snapshotBody struct {
	Indices            []string `json:"indices"`
	IncludeGlobalState bool     `json:"include_global_state"`
}

// CreateSnapshot starts snapshot name of indices in repo with PUT
// _snapshot/<repo>/<name>?wait_for_completion=false, body {"indices": [...],
// "include_global_state": false}, and returns once Elasticsearch accepted it; follow it with
// Snapshot. Elasticsearch refuses a name already used in the repository, or one of a snapshot
// still running, with 400 invalid_snapshot_name_exception (IsSnapshotNameTaken).
func (c *client) CreateSnapshot(ctx context.Context, repo, name string, indices []string) error {
	return c.start(ctx, "creating snapshot", repo, name, indices, "PUT _snapshot/"+repo+"/"+name,
		"_snapshot/<repository>/<snapshot>", func(body io.Reader) request {
			return esapi.SnapshotCreateRequest{Repository: repo, Snapshot: name, Body: body, WaitForCompletion: ptr(false)}
		})
}

// IsSnapshotNameTaken reports whether err is Elasticsearch 7.17 refusing to create a
// snapshot because the repository already holds one of that name or one of that name is
// still running: 400 invalid_snapshot_name_exception with the reason "[<repo>:<name>]
// Invalid snapshot name [<name>], snapshot with the same name already exists" or "..., snapshot
// with the same name is already in-progress" (elastic/elasticsearch v7.17
// SnapshotsService.createSnapshot: ensureSnapshotNameAvailableInRepo, then
// ensureSnapshotNameNotRunning; InvalidSnapshotNameException.status is BAD_REQUEST). From 8.2
// the type is snapshot_name_already_in_use_exception, which 7.17 never sends.
func IsSnapshotNameTaken(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 400 || se.Type != "invalid_snapshot_name_exception" {
		return false
	}
	return strings.HasSuffix(se.Reason, "snapshot with the same name already exists") ||
		strings.HasSuffix(se.Reason, "snapshot with the same name is already in-progress")
}

// start checks repo, name and indices, sends the request that newRequest builds around the
// body {"indices": [...], "include_global_state": false} and decodes its {"accepted": true}:
// the start of a snapshot or a restore. doing names the action in the errors of the checks
// ("creating snapshot"), op the call and what its API, as in callJSON.
func (c *client) start(ctx context.Context, doing, repo, name string, indices []string, op, what string,
	newRequest func(body io.Reader) request) error {
	if err := checkSnapshot(repo, name); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	if err := checkNames("index", indices); err != nil {
		return fmt.Errorf("%s %s: %w", doing, name, err)
	}
	body, _ := json.Marshal(snapshotBody{Indices: indices})
	_, resp, err := c.call(ctx, op, newRequest(bytes.NewReader(body)))
	if err != nil {
		return err
	}
	return accepted(what, resp)
}

// accepted decodes {"accepted": true}, the answer of the snapshot and restore APIs called
// with wait_for_completion=false.
func accepted(what string, body []byte) error {
	var a struct {
		Accepted *bool `json:"accepted"`
	}
	if err := decode(what, body, &a); err != nil {
		return err
	}
	if a.Accepted == nil || !*a.Accepted {
		return fmt.Errorf("decoding %s: no \"accepted\": true", what)
	}
	return nil
}

// SnapshotState is the state of a snapshot (Elasticsearch 7.17 reference, Get snapshot API).
type SnapshotState string

// Snapshot states. PARTIAL: some shards could not be stored; INCOMPATIBLE: written by a
// version this cluster cannot restore.
const (
	SnapshotInProgress   SnapshotState = "IN_PROGRESS"
	SnapshotSuccess      SnapshotState = "SUCCESS"
	SnapshotFailed       SnapshotState = "FAILED"
	SnapshotPartial      SnapshotState = "PARTIAL"
	SnapshotIncompatible SnapshotState = "INCOMPATIBLE"
)

// Snapshot describes one snapshot, from the get snapshot API.
type Snapshot struct {
	Name string
	UUID string
	// State is one of the SnapshotState constants.
	State SnapshotState
	// Start is when the snapshot started, in UTC.
	Start time.Time
	// End is when it finished, in UTC; zero while IN_PROGRESS.
	End time.Time
	// Indices are the indices it holds, sorted.
	Indices []string
	// Reason says why a FAILED or PARTIAL snapshot failed; empty otherwise.
	Reason string
	// ShardsTotal, ShardsFailed and ShardsSuccessful count its shards.
	ShardsTotal, ShardsFailed, ShardsSuccessful int
}

// snapshotInfo is one snapshot in GET _snapshot/<repo>/<names>: Elasticsearch 7.17's
// SnapshotInfo.toXContent, of which only these fields are read. Times are taken from the
// *_in_millis fields; end_time_in_millis is 0 while a snapshot runs.
type snapshotInfo struct {
	Snapshot          string   `json:"snapshot"`
	UUID              string   `json:"uuid"`
	State             string   `json:"state"`
	Reason            string   `json:"reason"`
	Indices           []string `json:"indices"`
	StartTimeInMillis int64    `json:"start_time_in_millis"`
	EndTimeInMillis   int64    `json:"end_time_in_millis"`
	Shards            struct {
		Total      int `json:"total"`
		Failed     int `json:"failed"`
		Successful int `json:"successful"`
	} `json:"shards"`
}

func (s snapshotInfo) snapshot(what string) (Snapshot, error) {
	if s.Snapshot == "" {
		return Snapshot{}, fmt.Errorf("decoding %s: a snapshot has no name", what)
	}
	switch st := SnapshotState(s.State); st {
	case SnapshotInProgress, SnapshotSuccess, SnapshotFailed, SnapshotPartial, SnapshotIncompatible:
	default:
		return Snapshot{}, fmt.Errorf("decoding %s: snapshot %s has state %q", what, s.Snapshot, s.State)
	}
	out := Snapshot{
		Name:             s.Snapshot,
		UUID:             s.UUID,
		State:            SnapshotState(s.State),
		Start:            millis(s.StartTimeInMillis),
		End:              millis(s.EndTimeInMillis),
		Indices:          append([]string(nil), s.Indices...),
		Reason:           s.Reason,
		ShardsTotal:      s.Shards.Total,
		ShardsFailed:     s.Shards.Failed,
		ShardsSuccessful: s.Shards.Successful,
	}
	sort.Strings(out.Indices)
	return out, nil
}

func millis(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// getSnapshots reads GET _snapshot/<repo>/<names>; Elasticsearch 7.16 and later answer
// {"snapshots": [...], "total": n, "remaining": n}. With ignoreUnavailable, the snapshots
// whose metadata cannot be read are left out of the answer instead of failing it.
func (c *client) getSnapshots(ctx context.Context, repo, names string, ignoreUnavailable bool) ([]Snapshot, error) {
	const what = "_snapshot/<repository>/<snapshot>"
	var resp struct {
		Snapshots *[]snapshotInfo `json:"snapshots"`
	}
	req := esapi.SnapshotGetRequest{Repository: repo, Snapshot: []string{names}}
	if ignoreUnavailable {
		req.IgnoreUnavailable = ptr(true)
	}
	if err := c.callJSON(ctx, "GET _snapshot/"+repo+"/"+names, what, req, &resp); err != nil {
		return nil, err
	}
	if resp.Snapshots == nil {
		return nil, fmt.Errorf("decoding %s: no \"snapshots\" list", what)
	}
	out := make([]Snapshot, 0, len(*resp.Snapshots))
	for _, info := range *resp.Snapshots {
		s, err := info.snapshot(what)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// snapshotNames returns the names of every snapshot of repo, unreadable ones included, from
// GET _snapshot/<repo>/_all?verbose=false. Elasticsearch 7.17 answers it from the
// repository's index-N blob (RepositoryData) and the running snapshots of the cluster state,
// without reading any snapshot's own metadata (elastic/elasticsearch v7.17
// TransportGetSnapshotsAction.loadSnapshotInfos and buildSimpleSnapshotInfos; the verbose
// parameter of https://www.elastic.co/guide/en/elasticsearch/reference/7.17/get-snapshot-api.html
// "only show the basic info found in the repository index blob"): each snapshot is
// {"snapshot", "uuid", "repository", "indices", "data_streams", "state"}, without times.
func (c *client) snapshotNames(ctx context.Context, repo string) ([]string, error) {
	const what = "_snapshot/<repository>/_all?verbose=false"
	var resp struct {
		Snapshots *[]struct {
			Snapshot string `json:"snapshot"`
		} `json:"snapshots"`
	}
	req := esapi.SnapshotGetRequest{Repository: repo, Snapshot: []string{"_all"}, Verbose: ptr(false)}
	if err := c.callJSON(ctx, "GET _snapshot/"+repo+"/_all?verbose=false", what, req, &resp); err != nil {
		return nil, err
	}
	if resp.Snapshots == nil {
		return nil, fmt.Errorf("decoding %s: no \"snapshots\" list", what)
	}
	names := make([]string, 0, len(*resp.Snapshots))
	for _, s := range *resp.Snapshots {
		if s.Snapshot == "" {
			return nil, fmt.Errorf("decoding %s: a snapshot has no name", what)
		}
		names = append(names, s.Snapshot)
	}
	return names, nil
}

// Snapshots lists the snapshots of repo: those it can read, sorted by start time then name,
// and, sorted, the names of those whose metadata (snap-<uuid>.dat) cannot be read.
//
// GET _snapshot/<repo>/_all fails whole on one unreadable snapshot, with 500
// snapshot_exception (a damaged blob) or 404 snapshot_missing_exception (a missing one)
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/get-snapshot-api.html: "Using
// _all in a request fails if any snapshots are unavailable"; elastic/elasticsearch v7.17
// BlobStoreRepository.getOneSnapshotInfo). The list is therefore read with
// ignore_unavailable=true, which skips them silently, and the unreadable ones are found as
// the names the repository data lists (snapshotNames, read first) that the list lacks. A
// snapshot deleted by someone else between the two requests shows as unreadable until the
// next listing. A repository not registered is ErrNotFound (repository_missing_exception).
func (c *client) Snapshots(ctx context.Context, repo string) ([]Snapshot, []string, error) {
	if err := checkName("repository", repo); err != nil {
		return nil, nil, fmt.Errorf("listing snapshots: %w", err)
	}
	names, err := c.snapshotNames(ctx, repo)
	if err != nil {
		return nil, nil, err
	}
	out, err := c.getSnapshots(ctx, repo, "_all", true)
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].Name < out[j].Name
	})
	read := make(map[string]bool, len(out))
	for _, s := range out {
		read[s.Name] = true
	}
	var unreadable []string
	for _, n := range names {
		if !read[n] {
			unreadable = append(unreadable, n)
		}
	}
	sort.Strings(unreadable)
	return out, unreadable, nil
}

// Snapshot describes snapshot name of repo, from GET _snapshot/<repo>/<name>. A missing
// snapshot is a *StatusError with Code 404 and Type "snapshot_missing_exception", which
// errors.Is(err, ErrNotFound) matches.
func (c *client) Snapshot(ctx context.Context, repo, name string) (Snapshot, error) {
	if err := checkSnapshot(repo, name); err != nil {
		return Snapshot{}, fmt.Errorf("getting snapshot: %w", err)
	}
	list, err := c.getSnapshots(ctx, repo, name, false)
	if err != nil {
		return Snapshot{}, err
	}
	for _, s := range list {
		if s.Name == name {
			return s, nil
		}
	}
	return Snapshot{}, fmt.Errorf("GET _snapshot/%s/%s: answer does not list the snapshot: %w", repo, name,
		&StatusError{Code: 404, Type: "snapshot_missing_exception", Reason: "[" + repo + ":" + name + "] is missing"})
}

// SnapshotSize returns the bytes of the files snapshot name references in repo, shared
// with earlier snapshots included (stats.total.size_in_bytes of GET
// _snapshot/<repo>/<name>/_status; Elasticsearch 7.17 reference, Get snapshot status API).
// The status API reads the repository, so it is slow on a large one: call it once per
// finished snapshot, not on every sync.
func (c *client) SnapshotSize(ctx context.Context, repo, name string) (int64, error) {
	const what = "_snapshot/<repository>/<snapshot>/_status"
	if err := checkSnapshot(repo, name); err != nil {
		return 0, fmt.Errorf("snapshot size: %w", err)
	}
	var resp struct {
		Snapshots []struct {
			Snapshot string `json:"snapshot"`
			Stats    struct {
				Total struct {
					SizeInBytes *int64 `json:"size_in_bytes"`
				} `json:"total"`
			} `json:"stats"`
		} `json:"snapshots"`
	}
	req := esapi.SnapshotStatusRequest{Repository: repo, Snapshot: []string{name}}
	if err := c.callJSON(ctx, "GET _snapshot/"+repo+"/"+name+"/_status", what, req, &resp); err != nil {
		return 0, err
	}
	for _, s := range resp.Snapshots {
		if s.Snapshot != name {
			continue
		}
		if s.Stats.Total.SizeInBytes == nil {
			return 0, fmt.Errorf("decoding %s: no stats.total.size_in_bytes", what)
		}
		return *s.Stats.Total.SizeInBytes, nil
	}
	return 0, fmt.Errorf("decoding %s: snapshot %s not in the answer", what, name)
}

// DeleteSnapshot deletes snapshot name from repo with DELETE _snapshot/<repo>/<name>. A
// 404 (snapshot_missing_exception, or repository_missing_exception) means it is already
// gone and is not an error. Elasticsearch 7.17 can delete a running snapshot, which aborts
// it.
func (c *client) DeleteSnapshot(ctx context.Context, repo, name string) error {
	if err := checkSnapshot(repo, name); err != nil {
		return fmt.Errorf("deleting snapshot: %w", err)
	}
	req := esapi.SnapshotDeleteRequest{Repository: repo, Snapshot: name}
	_, body, err := c.call(ctx, "DELETE _snapshot/"+repo+"/"+name, req)
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return acknowledged("_snapshot/<repository>/<snapshot>", body)
}

// Restore starts restoring indices from snapshot name of repo with POST
// _snapshot/<repo>/<name>/_restore?wait_for_completion=false, body {"indices": [...],
// "include_global_state": false}, and returns once Elasticsearch accepted it; follow it with
// RestoreDone. Indices are concrete names: a concrete name restores that index only, never a
// data stream or its hidden backing indices, which a wildcard such as "*" brings along
// (elastic/elasticsearch RestoreService.startRestore: requested names are matched against
// the snapshot's data streams first, whose backing indices are then added). Each index must
// not exist or be closed (CloseIndices): Elasticsearch refuses the whole restore over an
// open index with 500 snapshot_restore_exception (see RefusedOpenIndex). A snapshot written
// by a newer Elasticsearch cannot be restored.
func (c *client) Restore(ctx context.Context, repo, name string, indices []string) error {
	return c.start(ctx, "restoring snapshot", repo, name, indices, "POST _snapshot/"+repo+"/"+name+"/_restore",
		"_snapshot/<repository>/<snapshot>/_restore", func(body io.Reader) request {
			return esapi.SnapshotRestoreRequest{Repository: repo, Snapshot: name, Body: body, WaitForCompletion: ptr(false)}
		})
}

func checkSnapshot(repo, name string) error {
	if err := checkName("repository", repo); err != nil {
		return err
	}
	return checkName("snapshot", name)
}

// refusedOpenPrefix and refusedOpenSuffix enclose the index name in the reason Elasticsearch
// 7.17 refuses a restore over an open index with: "[<repo>:<snapshot>/<uuid>] cannot restore
// index [<index>] because an open index with same name already exists in the cluster. Either
// close or delete the existing index or restore the index under a different name by providing
// a rename pattern and replacement name" (elastic/elasticsearch RestoreService,
// RestoreSnapshotStateTask.validateExistingClosedIndex; the [<repo>:<snapshot>/<uuid>] prefix
// is SnapshotException's).
const (
	refusedOpenPrefix = "cannot restore index ["
	refusedOpenSuffix = "] because an open index with same name already exists"
)

// RefusedOpenIndex returns the index a restore was refused for because an open index of that
// name exists, and true, when err is that refusal: 500 snapshot_restore_exception whose
// reason names the index (see refusedOpenPrefix). Elasticsearch stops at the first such index,
// so the refusal names one index whatever the others are. For any other error it returns ""
// and false.
func RefusedOpenIndex(err error) (string, bool) {
	var se *StatusError
	if !errors.As(err, &se) || se.Type != "snapshot_restore_exception" {
		return "", false
	}
	_, rest, ok := strings.Cut(se.Reason, refusedOpenPrefix)
	if !ok {
		return "", false
	}
	index, _, ok := strings.Cut(rest, refusedOpenSuffix)
	if !ok || index == "" {
		return "", false
	}
	return index, true
}
