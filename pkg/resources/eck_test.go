package resources

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestReadECK: an ECK Elasticsearch serves HTTPS unless its self-signed certificate is
// disabled with no certificate of the user's, and its phase and health are read as they are.
func TestReadECK(t *testing.T) {
	eck := func(tls map[string]any, status map[string]any) *unstructured.Unstructured {
		o := map[string]any{"spec": map[string]any{}}
		if tls != nil {
			o["spec"] = map[string]any{"http": map[string]any{"tls": tls}}
		}
		if status != nil {
			o["status"] = status
		}
		return &unstructured.Unstructured{Object: o}
	}
	disabled := map[string]any{"selfSignedCertificate": map[string]any{"disabled": true}}
	custom := map[string]any{"selfSignedCertificate": map[string]any{"disabled": true},
		"certificate": map[string]any{"secretName": "mine"}}
	for name, tc := range map[string]struct {
		eck  *unstructured.Unstructured
		want ECKElasticsearch
	}{
		"the default: HTTPS, no status yet": {eck(nil, nil), ECKElasticsearch{TLS: true}},
		"self-signed certificate disabled": {eck(disabled, map[string]any{"phase": "Ready", "health": "green"}),
			ECKElasticsearch{Phase: "Ready", Health: "green"}},
		"the user's certificate": {eck(custom, map[string]any{"phase": "ApplyingChanges", "health": "yellow"}),
			ECKElasticsearch{TLS: true, Phase: "ApplyingChanges", Health: "yellow"}},
	} {
		if got := ReadECK(tc.eck); got != tc.want {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
		if got := ReadECK(tc.eck).Ready(); got != (tc.want.Phase == ECKReadyPhase) {
			t.Errorf("%s: Ready() = %v", name, got)
		}
	}
}
