package resources

import (
	"encoding/base64"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// Keys of the generated Secret, read by Monocle from the environment.
const (
	// CrawlersAPIKeyKey is the key the crawler presents to the API; both processes die
	// without it.
	CrawlersAPIKeyKey = "CRAWLERS_API_KEY"
	// JWKGenKeyKey signs the API's JWTs; Monocle replaces a value shorter than 64 characters
	// with a random key per process, which breaks logins on restart and across replicas.
	JWKGenKeyKey = "MONOCLE_JWK_GEN_KEY"
)

// GeneratedKeys are the Secret keys the operator generates once and never regenerates.
var GeneratedKeys = []string{CrawlersAPIKeyKey, JWKGenKeyKey}

// KeyLength is the length in characters of a generated key; Monocle needs at least 64 for
// MONOCLE_JWK_GEN_KEY.
const KeyLength = 64

// minKeyLength is the shortest value of each generated key that is kept rather than
// generated anew. Any CRAWLERS_API_KEY works: Monocle compares the crawler's key with the
// API's (the earlier operator made 24-character keys). A MONOCLE_JWK_GEN_KEY shorter than 64
// characters is ignored by Monocle 1.11.2, which signs with a random key per process instead
// (src/Monocle/Api/Jwt.hs, `doGenJwk`), so logins break on every restart.
var minKeyLength = map[string]int{CrawlersAPIKeyKey: 1, JWKGenKeyKey: KeyLength}

// NewKey reads 48 bytes from rand (crypto/rand.Reader in production) and returns them as 64
// URL-safe base64 characters. It fails only if rand fails.
func NewKey(rand io.Reader) (string, error) {
	b := make([]byte, KeyLength*3/4)
	if _, err := io.ReadFull(rand, b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ValidKey reports whether the value v of the generated key named key (one of GeneratedKeys)
// can be kept: any non-empty CRAWLERS_API_KEY, a MONOCLE_JWK_GEN_KEY of at least KeyLength
// characters.
func ValidKey(key string, v []byte) bool {
	min, ok := minKeyLength[key]
	return ok && len(v) >= min
}

// NewAPISecret builds the Secret "<name>-api" holding the generated keys. keys maps each of
// GeneratedKeys to its value. The API and the crawler load every key of this Secret with
// envFrom, as under the earlier operator, whose users add their tokens to it; the operator
// owns only the generated keys and keeps the others.
func NewAPISecret(m *monoclev1alpha1.Monocle, keys map[string][]byte) *corev1.Secret {
	data := make(map[string][]byte, len(GeneratedKeys))
	for _, k := range GeneratedKeys {
		data[k] = keys[k]
	}
	return &corev1.Secret{
		ObjectMeta: objectMeta(m, SecretName(m), ComponentAPI),
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// KeysBackupName is the name of the Secret holding a copy of the generated keys:
// "<name>-api-keys". No pod reads it.
func KeysBackupName(m *monoclev1alpha1.Monocle) string { return APIName(m) + "-keys" }

// NewKeysBackupSecret builds the Secret "<name>-api-keys", a copy of the generated keys from
// which the operator restores a key removed from "<name>-api" with its original value.
func NewKeysBackupSecret(m *monoclev1alpha1.Monocle, keys map[string][]byte) *corev1.Secret {
	s := NewAPISecret(m, keys)
	s.Name = KeysBackupName(m)
	return s
}

// NewConfigMap builds the ConfigMap "<name>-api" holding config.yaml: spec.config, or, when
// spec.config is unset, DefaultConfig for a ConfigMap that does not exist yet (it is then the
// user's, and never overwritten).
func NewConfigMap(m *monoclev1alpha1.Monocle, config string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: objectMeta(m, ConfigMapName(m), ComponentAPI),
		Data:       map[string]string{ConfigKey: config},
	}
}

// ConfigHash is the hash of a config.yaml content, stamped on pod templates.
func ConfigHash(config string) string { return Hash(config) }

// SecretHash is the hash of the Secret data that pods load, stamped on pod templates so that
// a changed value rolls them: every key of the Secret "<name>-api" (the generated keys and
// those the user added), then the DataHash of the Secret spec.secretRef names ("" for none).
func SecretHash(apiSecret map[string][]byte, userSecretHash string) string {
	return Hash([]any{apiSecret, userSecretHash})
}

// DataHash is the hash of a whole Secret's data.
func DataHash(data map[string][]byte) string { return Hash(data) }
