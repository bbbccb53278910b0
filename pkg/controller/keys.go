package controller

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// keyring is what ensureKeys settled: the generated keys the Secrets are to hold.
type keyring struct {
	keys map[string][]byte
	// missing names the keys generated in this sync, and hadKeys says whether m had keys
	// before (which a generated key then replaced: a KeyGenerated warning).
	missing []string
	hadKeys bool
	// fresh says the keys were generated without asking the API server, because the cache
	// holds neither Secret of a new Monocle (never synced, not being adopted): the keys' backup Secret
	// was then created (never updated), and the Secret "<name>-api" must be created too.
	// Either create meeting an existing Secret falls back to the API server's keys
	// (ensureLiveKeys), so no existing key is ever replaced.
	fresh bool
}

// ensureKeys settles m's generated keys and writes their copy, the Secret "<name>-api-keys";
// ensureAPISecret then writes the Secret "<name>-api" (not when the copy could not be
// written: the keyring is then empty). A key keeps the valid value
// (resources.ValidKey) the Secret holds, whoever last wrote it (a user, or the earlier
// operator, whose CRAWLERS_API_KEY has 24 characters), so editing "<name>-api" rotates a key;
// a key removed from "<name>-api" comes back with its value from the copy, and the other way
// round. Only a key both have lost, as the API server says (the cache alone is not trusted for
// that), is generated anew with crypto/rand, with a Warning event when the Monocle had keys
// before (its pods' logins and crawler keys change). adopting says "<name>-api" is the
// earlier operator's, being adopted in this sync.
//
// The copy is the first write of a sync, alone (see syncHandler). A Monocle whose Secrets the
// cache does not hold, and which has never been synced nor is being adopted, gets new keys at
// once, and the copy is created with them: a create cannot replace anything, so the API server
// need not be asked first, and a new Monocle's keys cost one request. Otherwise the keys come
// from the cache, or from the API server when the cache lacks some (ensureLiveKeys).
func (c *Controller) ensureKeys(ctx context.Context, m *monoclev1alpha1.Monocle, adopting bool) (keyring, error) {
	primary, backup, err := keySecrets(m, controlledReader(m, " from the cache", func(name string) (*corev1.Secret, error) {
		return c.secrets.Get(m.Namespace, name)
	}))
	if err != nil {
		return keyring{}, err
	}
	keys, missing := keysFrom(primary, backup)
	if len(missing) == 0 {
		if _, err := c.secrets.Ensure(ctx, c.recorder, m, resources.NewKeysBackupSecret(m, keys)); err != nil {
			return keyring{}, err
		}
		return keyring{keys: keys}, nil
	}
	if primary != nil || backup != nil || adopting || m.Status.ObservedGeneration > 0 {
		return c.ensureLiveKeys(ctx, m, adopting)
	}
	k := keyring{keys: keys, missing: missing, fresh: true}
	if err := generateKeys(c.random, k.keys, missing); err != nil {
		return keyring{}, err
	}
	created, err := c.secrets.Create(ctx, resources.NewKeysBackupSecret(m, k.keys))
	switch {
	case err == nil:
		c.secrets.NoteCreated(ctx, c.recorder, m, created)
		return k, nil
	case apierrors.IsAlreadyExists(err):
		return c.ensureLiveKeys(ctx, m, adopting)
	default:
		return keyring{}, fmt.Errorf("creating Secret %s: %w", resources.KeysBackupName(m), err)
	}
}

// ensureLiveKeys settles m's keys from the Secrets the API server holds (the cache may be
// behind it: after a restart an informer can lag for minutes), generates only the keys
// neither holds, and writes the backup Secret.
func (c *Controller) ensureLiveKeys(ctx context.Context, m *monoclev1alpha1.Monocle, adopting bool) (keyring, error) {
	primary, backup, err := keySecrets(m, controlledReader(m, "", func(name string) (*corev1.Secret, error) {
		return c.secrets.Read(ctx, m.Namespace, name)
	}))
	if err != nil {
		return keyring{}, err
	}
	keys, missing := keysFrom(primary, backup)
	if err := generateKeys(c.random, keys, missing); err != nil {
		return keyring{}, err
	}
	// The earlier operator's Secret lacks MONOCLE_JWK_GEN_KEY: generating it while adopting
	// is no loss.
	if _, err := c.secrets.Ensure(ctx, c.recorder, m, resources.NewKeysBackupSecret(m, keys)); err != nil {
		return keyring{}, err
	}
	return keyring{keys: keys, missing: missing, hadKeys: !adopting && (primary != nil || backup != nil || m.Status.ObservedGeneration > 0)}, nil
}

// generateKeys sets each key of missing in keys to a new value read from random.
func generateKeys(random io.Reader, keys map[string][]byte, missing []string) error {
	for _, name := range missing {
		v, err := resources.NewKey(random)
		if err != nil {
			return fmt.Errorf("generating %s: %w", name, err)
		}
		keys[name] = []byte(v)
	}
	return nil
}

// ensureAPISecret keeps the Secret "<name>-api" holding k's keys, and records a KeyGenerated
// warning when keys m had before were generated anew. For fresh keys it creates the Secret;
// should one exist after all, the keys are settled again from the API server first.
func (c *Controller) ensureAPISecret(ctx context.Context, m *monoclev1alpha1.Monocle, k keyring, adopting bool) (*corev1.Secret, error) {
	if k.fresh {
		created, err := c.secrets.Create(ctx, resources.NewAPISecret(m, k.keys))
		if err == nil {
			c.secrets.NoteCreated(ctx, c.recorder, m, created)
			return created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating Secret %s: %w", resources.SecretName(m), err)
		}
		if k, err = c.ensureLiveKeys(ctx, m, adopting); err != nil {
			return nil, err
		}
	}
	secret, err := c.secrets.Ensure(ctx, c.recorder, m, resources.NewAPISecret(m, k.keys))
	if err == nil && len(k.missing) > 0 && k.hadKeys {
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.KeyGenerated,
			"Secrets %s and %s had lost %s; generated new values (API logins are reset)",
			resources.SecretName(m), resources.KeysBackupName(m), strings.Join(k.missing, ", "))
	}
	return secret, err
}

// controlledReader reads Secrets with get and returns the one m controls, or nil for one
// that is missing or that m does not control; its errors say "reading Secret <name><where>".
func controlledReader(m *monoclev1alpha1.Monocle, where string, get func(name string) (*corev1.Secret, error)) func(name string) (*corev1.Secret, error) {
	return func(name string) (*corev1.Secret, error) {
		s, err := get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Secret %s%s: %w", name, where, err)
		}
		return controlledSecret(s, err, m), nil
	}
}

// controlledSecret is s when the read that returned s and err found it and m controls it,
// else nil.
func controlledSecret(s *corev1.Secret, err error, m *monoclev1alpha1.Monocle) *corev1.Secret {
	if err != nil || s == nil || !owned.IsControlledBy(s, m) {
		return nil
	}
	return s
}

// keySecrets reads m's Secret and its keys' backup Secret with read, which returns nil for a
// Secret that is missing or that m does not control.
func keySecrets(m *monoclev1alpha1.Monocle, read func(name string) (*corev1.Secret, error)) (primary, backup *corev1.Secret, err error) {
	if primary, err = read(resources.SecretName(m)); err != nil {
		return nil, nil, err
	}
	if backup, err = read(resources.KeysBackupName(m)); err != nil {
		return nil, nil, err
	}
	return primary, backup, nil
}

// keysFrom takes each generated key from primary, else from backup (either may be nil), and
// returns them with the names of the keys neither holds a valid value for.
func keysFrom(primary, backup *corev1.Secret) (keys map[string][]byte, missing []string) {
	keys = make(map[string][]byte, len(resources.GeneratedKeys))
	for _, k := range resources.GeneratedKeys {
		switch {
		case primary != nil && resources.ValidKey(k, primary.Data[k]):
			keys[k] = primary.Data[k]
		case backup != nil && resources.ValidKey(k, backup.Data[k]):
			keys[k] = backup.Data[k]
		default:
			missing = append(missing, k)
		}
	}
	return keys, missing
}
