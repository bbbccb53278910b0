package controller

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/lru"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// The lengths of a password of "<name>-elastic-users" that is kept rather than generated
// anew: Elasticsearch 7.17 refuses a file realm or bootstrap password shorter than 6
// characters (the security reference's "Setting passwords"), and bcrypt, which the file realm
// hashes with, reads 72 bytes at most.
const (
	minElasticPassword = 6
	maxElasticPassword = 72
)

// elasticUsers is what ensureElasticUsers settled of the bundled Elasticsearch's users.
type elasticUsers struct {
	// secret is the Secret "<name>-elastic-users", as built: each of resources.ElasticUsers'
	// password and the file realm's files.
	secret *corev1.Secret
	// rejected are the users whose password the Secret held, too short or too long, and
	// which were generated anew.
	rejected []string
}

// ensureElasticUsers keeps the Secret "<name>-elastic-users" of the bundled Elasticsearch's
// users: their passwords, and the file realm the node reads them from. A password the Secret
// holds is kept, whoever wrote it, so editing one rotates it; only a missing one, or one too
// short or too long for the file realm, is generated with crypto/rand (the latter with an
// ElasticPasswordRejected warning). When the cache lacks the Secret, it is created, which
// cannot replace one the cache has not seen: that create fails, and the passwords are then
// settled from the API server's copy. A user's hash in the realm is kept
// while it matches the password (bcrypt hashes are salted: a new hash on every sync would
// restart the node).
func (c *Controller) ensureElasticUsers(ctx context.Context, m *monoclev1alpha1.Monocle) (elasticUsers, error) {
	name := resources.ElasticUsersSecretName(m)
	cached, err := c.secrets.Get(m.Namespace, name)
	current := controlledSecret(cached, err, m)
	if err != nil {
		u, err := c.elasticUsersFrom(m, nil)
		if err != nil {
			return elasticUsers{}, err
		}
		created, err := c.secrets.Create(ctx, u.secret)
		switch {
		case err == nil:
			c.secrets.NoteCreated(ctx, c.recorder, m, created)
			return u, nil
		case !apierrors.IsAlreadyExists(err):
			return elasticUsers{}, fmt.Errorf("creating Secret %s: %w", name, err)
		}
		current, err = controlledReader(m, "", func(name string) (*corev1.Secret, error) {
			return c.secrets.Read(ctx, m.Namespace, name)
		})(name)
		if err != nil {
			return elasticUsers{}, err
		}
	}
	u, err := c.elasticUsersFrom(m, current)
	if err != nil {
		return elasticUsers{}, err
	}
	if _, err := c.secrets.Ensure(ctx, c.recorder, m, u.secret); err != nil {
		return elasticUsers{}, err
	}
	if len(u.rejected) > 0 {
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.ElasticPasswordRejected,
			"Secret %s: the password of %s was not %d to %d bytes long, which Elasticsearch's file realm takes; generated a new one",
			name, strings.Join(u.rejected, ", "), minElasticPassword, maxElasticPassword)
	}
	return u, nil
}

// elasticUsersFrom builds the Secret "<name>-elastic-users" from current, the one m has (nil:
// none): its passwords kept, the missing ones generated, and the realm's hashes.
func (c *Controller) elasticUsersFrom(m *monoclev1alpha1.Monocle, current *corev1.Secret) (elasticUsers, error) {
	passwords := map[string][]byte{}
	var missing []string
	var was []byte
	if current != nil {
		was = current.Data[resources.ElasticRealmUsersFile]
	}
	var rejected []string
	for _, user := range resources.ElasticUsers {
		var pw []byte
		if current != nil {
			pw = current.Data[user]
		}
		switch {
		case len(pw) >= minElasticPassword && len(pw) <= maxElasticPassword:
			passwords[user] = pw
		case len(pw) > 0:
			rejected = append(rejected, user)
			fallthrough
		default:
			missing = append(missing, user)
		}
	}
	if err := generateKeys(c.random, passwords, missing); err != nil {
		return elasticUsers{}, err
	}
	hashes, err := c.realmMatches.realmHashes(was, passwords)
	if err != nil {
		return elasticUsers{}, err
	}
	return elasticUsers{secret: resources.NewElasticUsersSecret(m, passwords, hashes), rejected: rejected}, nil
}

// realmHashCost is the bcrypt cost of the realm's hashes: the lowest, 4, which Elasticsearch
// 7.17's file realm accepts (its Hasher takes costs 4 to 14). A higher cost guards a hash
// whose password is unknown; these sit beside their passwords, in the same Secret, and the
// passwords are random, so a higher cost would only slow every new Monocle's sync (cost 10
// takes about 60 ms a hash).
const realmHashCost = bcrypt.MinCost

// realmMatchesSize bounds realmMatches: a few users of each of a thousand Monocles. Past it,
// the least recently matched pairs are checked with bcrypt again.
const realmMatchesSize = 4096

// realmMatches remembers which realm hashes match which passwords, so that a sync, which
// checks each user's hash against its password, runs bcrypt only for a pair it has not seen
// match: even at the lowest cost, bcrypt was half of the CPU a sync of an unchanged bundled
// Monocle used. Its keys are a hash and the SHA-256 of a password; it is safe for concurrent
// use (k8s.io/utils/lru).
type realmMatches struct {
	lru *lru.Cache
	// compare is bcrypt.CompareHashAndPassword, which tests count.
	compare func(hash, password []byte) error
}

// newRealmMatches returns an empty realmMatches of realmMatchesSize pairs.
func newRealmMatches() *realmMatches {
	return &realmMatches{lru: lru.New(realmMatchesSize), compare: bcrypt.CompareHashAndPassword}
}

// matches reports whether bcrypt hash h is of password pw.
func (r *realmMatches) matches(h string, pw []byte) bool {
	sum := sha256.Sum256(pw)
	key := h + "\x00" + string(sum[:])
	if _, ok := r.lru.Get(key); ok {
		return true
	}
	if r.compare([]byte(h), pw) != nil {
		return false
	}
	r.lru.Add(key, struct{}{})
	return true
}

// realmHashes returns the bcrypt hash of each of resources.ElasticRealmUsers' password:
// the one the file realm's users file was holds when it matches the password, a new one
// otherwise.
func (r *realmMatches) realmHashes(was []byte, passwords map[string][]byte) (map[string]string, error) {
	old := realmUsers(was)
	hashes := map[string]string{}
	for user := range resources.ElasticRealmUsers {
		pw := passwords[user]
		if h := old[user]; h != "" && r.matches(h, pw) {
			hashes[user] = h
			continue
		}
		h, err := bcrypt.GenerateFromPassword(bytes.Clone(pw), realmHashCost)
		if err != nil {
			return nil, fmt.Errorf("hashing the password of Elasticsearch user %s: %w", user, err)
		}
		hashes[user] = string(h)
	}
	return hashes, nil
}

// realmUsers parses a file realm's users file: each user's hash.
func realmUsers(file []byte) map[string]string {
	hashes := map[string]string{}
	for _, line := range strings.Split(string(file), "\n") {
		if user, hash, ok := strings.Cut(line, ":"); ok {
			hashes[user] = hash
		}
	}
	return hashes
}
