package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/elastic/go-elasticsearch/v7/esapi"
)

// OwnerIndex is the index that records which Monocle owns a cluster's Monocle indices: its
// mapping's _meta holds the owner (Owner). The name starts with "monocle", so that a user
// granted the index privileges of "monocle*" (the least a Monocle needs) can create and read
// it, but it matches none of the names Monocle uses (ConfigIndex, WorkspaceIndexPrefix+name:
// both start with "monocle."), and IsMonocleIndex leaves it out: the operator neither
// snapshots nor restores it. It holds no document.
const OwnerIndex = "monocle-operator.owner"

// Owner is the Monocle recorded as the owner of a cluster's Monocle indices, in the _meta of
// OwnerIndex's mapping (Elasticsearch 7.17 reference, _meta field: "custom meta data
// associated with the mapping", not used by Elasticsearch, updatable with the update
// mapping API).
type Owner struct {
	// UID is the Monocle's metadata.uid.
	UID string `json:"uid"`
	// Namespace and Name are the Monocle's.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// ownerIndexBody is the body that creates OwnerIndex: one shard, no replica (indexReplicas
// sets its replicas as those of Monocle's indices, the pattern monocle* matching it), and the
// owner in the mapping's _meta, so that creating the index and recording the owner are one
// atomic step.
type ownerIndexBody struct {
	Settings map[string]int `json:"settings"`
	Mappings ownerMapping   `json:"mappings"`
}

type ownerMapping struct {
	Meta Owner `json:"_meta"`
}

// CreateOwner creates OwnerIndex with o in its mapping's _meta, with PUT
// monocle-operator.owner (Elasticsearch 7.17 reference, Create index API). Creating an index
// is atomic: of two clients creating it at once, one gets 400
// resource_already_exists_exception (IsAlreadyExists), whatever the owner it holds.
func (c *client) CreateOwner(ctx context.Context, o Owner) error {
	if o.UID == "" {
		return errors.New("recording the owner: no UID")
	}
	body, _ := json.Marshal(ownerIndexBody{
		Settings: map[string]int{"number_of_shards": 1, "number_of_replicas": 0},
		Mappings: ownerMapping{Meta: o},
	})
	req := esapi.IndicesCreateRequest{Index: OwnerIndex, Body: bytes.NewReader(body)}
	_, resp, err := c.call(ctx, "PUT "+OwnerIndex, req)
	if err != nil {
		return err
	}
	return acknowledged("<index>", resp)
}

// IsAlreadyExists reports whether err is Elasticsearch 7.17 refusing to create an index
// that exists: 400 resource_already_exists_exception (elastic/elasticsearch v7.17
// MetadataCreateIndexService.validateIndexName, ResourceAlreadyExistsException).
func IsAlreadyExists(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == 400 && se.Type == "resource_already_exists_exception"
}

// Owner reads the owner recorded in OwnerIndex's mapping with GET
// monocle-operator.owner/_mapping (Elasticsearch 7.17 reference, Get mapping API): the
// answer is {"monocle-operator.owner":{"mappings":{"_meta":{...}}}}. A missing index is
// ErrNotFound; an index without _meta, or with fields of other types, gives the zero Owner
// or the fields it has as strings.
func (c *client) Owner(ctx context.Context) (Owner, error) {
	const what = "<index>/_mapping"
	var answer map[string]struct {
		Mappings struct {
			Meta map[string]any `json:"_meta"`
		} `json:"mappings"`
	}
	req := esapi.IndicesGetMappingRequest{Index: []string{OwnerIndex}}
	if err := c.callJSON(ctx, "GET "+OwnerIndex+"/_mapping", what, req, &answer); err != nil {
		return Owner{}, err
	}
	got, ok := answer[OwnerIndex]
	if !ok {
		return Owner{}, fmt.Errorf("decoding %s: no mapping of %s", what, OwnerIndex)
	}
	field := func(k string) string {
		s, _ := got.Mappings.Meta[k].(string)
		return s
	}
	return Owner{UID: field("uid"), Namespace: field("namespace"), Name: field("name")}, nil
}

// SetOwner replaces the owner recorded in OwnerIndex's mapping with o, with PUT
// monocle-operator.owner/_mapping and the body {"_meta": o} (Elasticsearch 7.17 reference,
// Update mapping API; _meta field: updating it replaces it). Unlike CreateOwner it is not a
// compare-and-set: whoever calls it last wins, so a caller reads the owner again after.
func (c *client) SetOwner(ctx context.Context, o Owner) error {
	if o.UID == "" {
		return errors.New("recording the owner: no UID")
	}
	body, _ := json.Marshal(ownerMapping{Meta: o})
	req := esapi.IndicesPutMappingRequest{Index: []string{OwnerIndex}, Body: bytes.NewReader(body)}
	_, resp, err := c.call(ctx, "PUT "+OwnerIndex+"/_mapping", req)
	if err != nil {
		return err
	}
	return acknowledged("<index>/_mapping", resp)
}
