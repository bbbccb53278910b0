package testkit

import (
	"encoding/json"
	"net/http"
)

// This file answers the requests of package elastic's owner record (elastic.OwnerIndex): the
// creation of an index with a mapping's _meta, and the reading and update of that _meta, in
// the shapes of Elasticsearch 7.17 (Create index, Get mapping and Update mapping APIs).

// indexExists is Elasticsearch's refusal to create an index that exists.
func indexExists(name string, ix *fakeIndex) *esError {
	return &esError{http.StatusBadRequest, "resource_already_exists_exception",
		"index [" + name + "/" + ix.uuid + "] already exists", map[string]string{"index_uuid": ix.uuid, "index": name}}
}

// createIndex answers PUT <name> with a body {"settings":{..},"mappings":{"_meta":{..}}}:
// the index is created, open, with the replicas of settings.number_of_replicas, unless it
// exists.
func (s *esState) createIndex(name string, body []byte) (int, any) {
	var req struct {
		Settings struct {
			Replicas *int `json:"number_of_replicas"`
		} `json:"settings"`
		Mappings struct {
			Meta map[string]any `json:"_meta"`
		} `json:"mappings"`
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			return errAnswer(badRequest(err))
		}
	}
	if ix := s.indices[name]; ix != nil {
		return errAnswer(indexExists(name, ix))
	}
	ix := s.index(name)
	ix.meta = req.Mappings.Meta
	if req.Settings.Replicas != nil {
		ix.replicas = *req.Settings.Replicas
	}
	return http.StatusOK, map[string]any{"acknowledged": true, "shards_acknowledged": true, "index": name}
}

// getMapping answers GET <name>/_mapping for one concrete index: {"<name>":{"mappings":{..}}},
// with its _meta when it has one.
func (s *esState) getMapping(name string) (int, any) {
	ix := s.indices[name]
	if ix == nil {
		return errAnswer(indexNotFound(name))
	}
	mappings := map[string]any{}
	if ix.meta != nil {
		mappings["_meta"] = ix.meta
	}
	return http.StatusOK, map[string]any{name: map[string]any{"mappings": mappings}}
}

// putMapping answers PUT <name>/_mapping with a body {"_meta":{..}}, which replaces the
// index's _meta.
func (s *esState) putMapping(name string, body []byte) (int, any) {
	var req struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return errAnswer(badRequest(err))
	}
	ix := s.indices[name]
	if ix == nil {
		return errAnswer(indexNotFound(name))
	}
	if req.Meta != nil {
		ix.meta = req.Meta
	}
	return http.StatusOK, map[string]any{"acknowledged": true}
}

// Meta returns the _meta of index's mapping in c, and whether the index exists.
func (c FakeCluster) Meta(index string) (meta map[string]string, ok bool) {
	c.with(func(s *esState) {
		ix := s.indices[index]
		if ix == nil {
			return
		}
		ok, meta = true, map[string]string{}
		for k, v := range ix.meta {
			if str, isStr := v.(string); isStr {
				meta[k] = str
			}
		}
	})
	return meta, ok
}

// SetMeta creates index in c when it does not exist and sets the _meta of its mapping.
func (c FakeCluster) SetMeta(index string, meta map[string]string) {
	c.with(func(s *esState) {
		ix := s.index(index)
		ix.meta = map[string]any{}
		for k, v := range meta {
			ix.meta[k] = v
		}
	})
}
