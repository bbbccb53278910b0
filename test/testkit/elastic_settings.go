package testkit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The settings APIs of the fake: the flood-stage block and the replicas of indices, and the
// disk watermarks, answered as elastic_api.go describes.

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

// Index settings the fake keeps: the flood-stage block, and the number of replicas, which
// every index has (elastic/elasticsearch v7.17 MetadataCreateIndexService sets it on
// creation).
const (
	readOnlySetting = "index.blocks.read_only_allow_delete"
	replicasSetting = "index.number_of_replicas"
)

// getSettings answers GET <indices>/_settings/<name>?flat_settings=true[&expand_wildcards=..]
// for the flood-stage block and the number of replicas: {"<index>": {"settings":
// {"index.blocks.read_only_allow_delete": "true", "index.number_of_replicas": "0"}}}, keeping
// the settings name matches, every value a string; an index left without a setting is left
// out (GetSettingsResponse.toXContent). Wildcards and _all expand as expandWildcards says
// (see esState.expand), visible open indices only when it is empty: elastic/elasticsearch
// v7.17 RestGetSettingsAction.prepareRequest reads expand_wildcards over the default
// IndicesOptions.strictExpandOpen (IndicesOptions.fromRequest), and "all" is "open and closed
// indices, including hidden indices"
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/indices-get-settings.html).
// A wildcard matching nothing gives {} (strictExpandOpen allows no indices).
func (s *esState) getSettings(list, name, expandWildcards string) (int, any) {
	got, missing := resolve(names(list), keys(s.indices), s.expand(cmp.Or(expandWildcards, "open")))
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	out := map[string]any{}
	for _, ix := range got {
		all := map[string]string{replicasSetting: strconv.Itoa(s.indices[ix].replicas)}
		if s.indices[ix].readOnly {
			all[readOnlySetting] = "true"
		}
		settings := map[string]string{}
		for k, v := range all {
			if matches(name, k) {
				settings[k] = v
			}
		}
		if len(settings) > 0 {
			out[ix] = map[string]any{"settings": settings}
		}
	}
	return http.StatusOK, out
}

// putSettings answers PUT <indices>/_settings[?expand_wildcards=..], its settings flat
// ({"index.number_of_replicas": 1}) or nested ({"index": {"number_of_replicas": 1}}), as
// Elasticsearch reads both: {"index.blocks.read_only_allow_delete": null} lifts the block,
// index.number_of_replicas sets the replicas of open and closed indices alike (replicated
// closed indices, 7.2); other settings are accepted and ignored. A wildcard expands to open
// indices unless expand_wildcards says otherwise (the update index settings API's default,
// https://www.elastic.co/guide/en/elasticsearch/reference/7.17/indices-update-settings.html),
// and one that matches no index is 404 (allow_no_indices defaults to false there).
func (s *esState) putSettings(list, expandWildcards string, body []byte) (int, any) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return errAnswer(badRequest(err))
	}
	flat := map[string]any{}
	flatten("", req, flat)
	got, missing := resolve(names(list), keys(s.indices), s.expand(cmp.Or(expandWildcards, "open")))
	if missing == "" && len(got) == 0 {
		missing = list
	}
	if missing != "" {
		return errAnswer(indexNotFound(missing))
	}
	replicas := -1
	if v, ok := flat[replicasSetting]; ok {
		n, err := strconv.Atoi(strings.Trim(fmt.Sprint(v), `"`))
		if err != nil || n < 0 {
			return errAnswer(&esError{http.StatusBadRequest, "illegal_argument_exception",
				fmt.Sprintf("Failed to parse value [%v] for setting [%s] must be >= 0", v, replicasSetting), nil})
		}
		replicas = n
	}
	for _, ix := range got {
		if v, ok := flat[readOnlySetting]; ok {
			s.indices[ix].readOnly = v == true || v == "true"
		}
		if replicas >= 0 {
			s.indices[ix].replicas = replicas
		}
	}
	return http.StatusOK, map[string]any{"acknowledged": true}
}

// flatten writes the settings of m into out under dotted keys prefixed with prefix.
func flatten(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			flatten(prefix+k+".", sub, out)
			continue
		}
		out[prefix+k] = v
	}
}
