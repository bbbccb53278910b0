package testkit

import (
	"cmp"
	"encoding/json"
	"net/http"
)

// The settings APIs of the fake: the flood-stage block of indices and the disk watermarks,
// answered as elastic_api.go describes.

// readOnlySetting is the index setting Elasticsearch 7.17 sets on the indices of a node past
// the flood-stage disk watermark.
const readOnlySetting = "index.blocks.read_only_allow_delete"

// clusterSettings answers GET _cluster/settings?include_defaults=true&flat_settings=true:
// nothing set, and among the defaults Elasticsearch 7.17's disk allocation settings
// (Cluster-level shard allocation and routing settings, Disk-based shard allocation).
func clusterSettings() (int, any) {
	return http.StatusOK, map[string]any{"persistent": map[string]string{}, "transient": map[string]string{},
		"defaults": map[string]string{
			"cluster.routing.allocation.disk.threshold_enabled":                         "true",
			"cluster.routing.allocation.disk.watermark.low":                             "85%",
			"cluster.routing.allocation.disk.watermark.high":                            "90%",
			"cluster.routing.allocation.disk.watermark.flood_stage":                     "95%",
			"cluster.routing.allocation.disk.watermark.flood_stage.frozen":              "95%",
			"cluster.routing.allocation.disk.watermark.flood_stage.frozen.max_headroom": "20GB",
		}}
}

// getSettings answers GET <indices>/_settings/<name>?flat_settings=true[&expand_wildcards=..]
// for the flood-stage block: {"<index>": {"settings": {"index.blocks.read_only_allow_delete":
// "true"}}} for each index of list that has it; indices without it are left out
// (GetSettingsResponse.toXContent). Wildcards and _all expand as expandWildcards says (see
// esState.expand), visible open indices only when it is empty: elastic/elasticsearch v7.17
// RestGetSettingsAction.prepareRequest reads expand_wildcards over the default
// IndicesOptions.strictExpandOpen (IndicesOptions.fromRequest), and "all" is "open and closed
// indices, including hidden indices"
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/indices-get-settings.html).
func (s *esState) getSettings(list, name, expandWildcards string) (int, any) {
	got, missing := resolve(names(list), keys(s.indices), s.expand(cmp.Or(expandWildcards, "open")))
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	out := map[string]any{}
	for _, ix := range got {
		if s.indices[ix].readOnly && matches(name, readOnlySetting) {
			out[ix] = map[string]any{"settings": map[string]string{readOnlySetting: "true"}}
		}
	}
	return http.StatusOK, out
}

// putSettings answers PUT <indices>/_settings: {"index.blocks.read_only_allow_delete": null}
// lifts the block; other settings are accepted and ignored.
func (s *esState) putSettings(list string, body []byte) (int, any) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return errAnswer(badRequest(err))
	}
	got, missing := resolve(names(list), keys(s.indices), nil)
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	if v, ok := req[readOnlySetting]; ok {
		for _, ix := range got {
			s.indices[ix].readOnly = string(v) == "true" || string(v) == `"true"`
		}
	}
	return http.StatusOK, map[string]any{"acknowledged": true}
}
