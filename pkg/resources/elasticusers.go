package resources

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// The users of the bundled Elasticsearch, which runs with Elasticsearch 7.17's security on.
// Their passwords are generated once and kept in the Secret "<name>-elastic-users"
// (NewElasticUsersSecret), beside the file realm's files the node learns them from
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/file-realm.html), as ECK
// defines its own internal users. The file realm needs no request to the node to create a
// user, so a node that restarts, or a Secret restored from a backup, has its users at once.
const (
	// ElasticSuperuser is Elasticsearch's built-in superuser, whose password is the
	// keystore's bootstrap.password until one is set through the security API (which the
	// operator never does): the password of ElasticSuperuser in "<name>-elastic-users", for
	// the administrator's own use.
	ElasticSuperuser = "elastic"
	// ElasticMonocleUser is the user of Monocle's API and janitor Jobs, through the proxy
	// sidecar, with the role ElasticMonocleRole.
	ElasticMonocleUser = "monocle"
	// ElasticOperatorUser is the user of the operator's reads, snapshots and restores, with
	// the role ElasticOperatorRole.
	ElasticOperatorUser = "monocle-operator"
	// ElasticProbeUser is the user of the node's readiness probe, with the role
	// ElasticProbeRole, as ECK's elastic-internal-probe.
	ElasticProbeUser = "monocle-probe"
)

// ElasticUsers are the users whose passwords the Secret "<name>-elastic-users" holds, each
// under the user's name.
var ElasticUsers = []string{ElasticSuperuser, ElasticMonocleUser, ElasticOperatorUser, ElasticProbeUser}

// ElasticRealmUsers are the users the file realm defines, with their roles; ElasticSuperuser
// is the built-in one.
var ElasticRealmUsers = map[string]string{
	ElasticMonocleUser:  ElasticMonocleRole,
	ElasticOperatorUser: ElasticOperatorRole,
	ElasticProbeUser:    ElasticProbeRole,
}

// The roles of roles.yml
// (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/defining-roles.html and
// security-privileges.html).
const (
	// ElasticMonocleRole is Monocle's: on its indices (monocle.config and
	// monocle.changes.1.<workspace>, which Monocle 1.11.2 creates, maps, writes, searches,
	// scrolls, refreshes and deletes by query: src/Monocle/Backend/Index.hs, Queries.hs,
	// Janitor.hs), with no cluster privilege: it makes no cluster request. "monocle.*" leaves
	// out the operator's owner record (monocle-operator.owner).
	ElasticMonocleRole = "monocle"
	// ElasticOperatorRole is the operator's: the cluster's health, disk use and settings
	// (monitor), snapshots (create_snapshot; registering a repository, deleting and restoring
	// a snapshot need their own actions, which Elasticsearch 7.17 has no named privilege for
	// but manage), and Monocle's indices and the owner record (read-only blocks, replicas,
	// closing before a restore, deleting a removed workspace's index).
	ElasticOperatorRole = "monocle_operator"
	// ElasticProbeRole reads the cluster's health.
	ElasticProbeRole = "monocle_probe"
)

// elasticRoles is roles.yml.
const elasticRoles = `# The roles of Monocle's bundled Elasticsearch, written by monocle-operator.
` + ElasticMonocleRole + `:
  indices:
    - names: ["monocle.*"]
      privileges: ["read", "write", "create_index", "view_index_metadata", "maintenance", "indices:admin/mapping/put", "indices:admin/settings/update"]
` + ElasticOperatorRole + `:
  cluster: ["monitor", "create_snapshot", "cluster:admin/repository/put", "cluster:admin/snapshot/delete", "cluster:admin/snapshot/restore"]
  indices:
    - names: ["monocle*"]
      privileges: ["manage", "read"]
` + ElasticProbeRole + `:
  cluster: ["monitor"]
`

// File names of the file realm, in the node's configuration directory.
const (
	// ElasticRealmUsersFile holds "<user>:<bcrypt hash>" lines.
	ElasticRealmUsersFile = "users"
	// ElasticRealmRolesFile holds "<role>:<user>[,<user>…]" lines.
	ElasticRealmRolesFile = "users_roles"
	// ElasticRolesFile holds the roles' definitions.
	ElasticRolesFile = "roles.yml"
)

// ElasticUsersSecretName is the name of the Secret of the bundled Elasticsearch users'
// passwords: "<name>-elastic-users".
func ElasticUsersSecretName(m *monoclev1alpha1.Monocle) string { return ElasticName(m) + "-users" }

// NewElasticUsersSecret builds the Secret "<name>-elastic-users": the password of each of
// ElasticUsers (passwords), and the file realm's files: users (each of ElasticRealmUsers with
// its hash in hashes, a bcrypt hash of its password), users_roles and roles.yml. The operator
// generates each password once and never regenerates one the Secret holds: a user who edits
// one rotates it. The hashes are made by the controller, which keeps one that still matches
// its password, so that the Secret only changes with a password. The node mounts the elastic
// user's password and the realm's files only.
func NewElasticUsersSecret(m *monoclev1alpha1.Monocle, passwords map[string][]byte, hashes map[string]string) *corev1.Secret {
	data := make(map[string][]byte, len(ElasticUsers)+3)
	for _, u := range ElasticUsers {
		data[u] = passwords[u]
	}
	users := make([]string, 0, len(ElasticRealmUsers))
	for u := range ElasticRealmUsers {
		users = append(users, u)
	}
	slices.Sort(users)
	var passwd, roles strings.Builder
	for _, u := range users {
		fmt.Fprintf(&passwd, "%s:%s\n", u, hashes[u])
		fmt.Fprintf(&roles, "%s:%s\n", ElasticRealmUsers[u], u)
	}
	data[ElasticRealmUsersFile] = []byte(passwd.String())
	data[ElasticRealmRolesFile] = []byte(roles.String())
	data[ElasticRolesFile] = []byte(elasticRoles)
	return &corev1.Secret{
		ObjectMeta: objectMeta(m, ElasticUsersSecretName(m), ComponentElastic),
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// ElasticRealmFiles are the keys of the Secret "<name>-elastic-users" that are files of the
// file realm, which the node's init container copies into its configuration directory.
var ElasticRealmFiles = []string{ElasticRealmUsersFile, ElasticRealmRolesFile, ElasticRolesFile}
