package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/elastic/go-elasticsearch/v7/esapi"
)

// replicasSetting is the number of replica copies of each shard of an index; Elasticsearch
// stores it in every index's settings, 1 when the index was created without it (Monocle
// creates its indices with 0).
const replicasSetting = "index.number_of_replicas"

// IndexReplicas returns index.number_of_replicas of each index pattern matches, hidden and
// closed ones included, by index name, from GET
// <pattern>/_settings/index.number_of_replicas?expand_wildcards=all&flat_settings=true
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/indices-get-settings.html).
// Without expand_wildcards the REST layer expands a wildcard to the visible open indices only
// (elastic/elasticsearch v7.17 RestGetSettingsAction.prepareRequest, IndicesOptions
// strictExpandOpen), and a closed index, such as one a restore has closed, would be missed.
// A wildcard matching nothing gives an empty map (strictExpandOpen allows no indices); the
// values come back as strings ("1").
func (c *client) IndexReplicas(ctx context.Context, pattern string) (map[string]int, error) {
	const what = "<pattern>/_settings"
	if err := checkPattern(pattern); err != nil {
		return nil, fmt.Errorf("reading replicas: %w", err)
	}
	var byIndex map[string]struct {
		Settings map[string]json.RawMessage `json:"settings"`
	}
	req := esapi.IndicesGetSettingsRequest{
		Index:           []string{pattern},
		Name:            []string{replicasSetting},
		ExpandWildcards: "all",
		FlatSettings:    ptr(true),
	}
	if err := c.callJSON(ctx, "GET "+pattern+"/_settings/"+replicasSetting, what, req, &byIndex); err != nil {
		return nil, err
	}
	if byIndex == nil {
		return nil, fmt.Errorf("decoding %s: not an object of indices", what)
	}
	out := make(map[string]int, len(byIndex))
	for index, s := range byIndex {
		raw, ok := s.Settings[replicasSetting]
		if !ok {
			return nil, fmt.Errorf("decoding %s: index %s has no %s", what, index, replicasSetting)
		}
		// A string ("1"), as Elasticsearch returns settings; a JSON number is accepted as well.
		var text string
		if json.Unmarshal(raw, &text) != nil {
			text = string(raw)
		}
		n, err := strconv.Atoi(text)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("decoding %s: %s of %s is %s", what, replicasSetting, index, raw)
		}
		out[index] = n
	}
	return out, nil
}

// SetIndexReplicas sets index.number_of_replicas to n on every index pattern matches, hidden
// and closed ones included, with PUT <pattern>/_settings?expand_wildcards=all
// {"index":{"number_of_replicas":n}}
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/indices-update-settings.html).
// A closed index takes it too: since 7.2 closed indices are replicated and the update
// applies to open and closed indices alike (elastic/elasticsearch v7.17
// MetadataUpdateSettingsService.updateSettings; the refusal of 6.x, "Can't update
// [index.number_of_replicas] on closed indices", is gone). Elasticsearch accepts more
// replicas than the cluster has nodes for, and leaves those unassigned (yellow): the caller
// checks the data nodes first. An index under the flood-stage block refuses it
// (cluster_block_exception).
func (c *client) SetIndexReplicas(ctx context.Context, pattern string, n int) error {
	if err := checkPattern(pattern); err != nil {
		return fmt.Errorf("setting replicas: %w", err)
	}
	if n < 0 {
		return fmt.Errorf("setting replicas: %d is negative", n)
	}
	body := []byte(`{"index":{"number_of_replicas":` + strconv.Itoa(n) + `}}`)
	req := esapi.IndicesPutSettingsRequest{Index: []string{pattern}, ExpandWildcards: "all", Body: bytes.NewReader(body)}
	_, resp, err := c.call(ctx, "PUT "+pattern+"/_settings", req)
	if err != nil {
		return err
	}
	return acknowledged("<pattern>/_settings", resp)
}

// checkPattern refuses an index pattern that is empty or has a character that cannot be put
// in a URL path segment as is (esapi writes it unescaped).
func checkPattern(pattern string) error {
	if pattern == "" || strings.ContainsAny(pattern, "/?#% \t\n") {
		return fmt.Errorf("index pattern %q is empty or has a character not allowed in a URL path", pattern)
	}
	return nil
}
