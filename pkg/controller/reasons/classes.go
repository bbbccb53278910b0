package reasons

// The classes of the per-concern reasons: which make the Monocle Degraded, which are worth a
// Warning event, and which Ready takes from hibernation. docs/status.md lists the same sets
// (the Degraded row of its conditions' table, and the Warning rows of its events' table);
// classes_test.go checks that they agree.

// blocking are the reasons of per-concern conditions that need the user.
var blocking = map[string]bool{
	InvalidConfig:                   true,
	SecretNotFound:                  true,
	TokenMissing:                    true,
	ConfigMapNotFound:               true,
	ConfigMapKeyMissing:             true,
	StorageChangeRefused:            true,
	ElasticsearchVersionUnsupported: true,
	ElasticsearchDowngrade:          true,
	HeapAboveLimit:                  true,
	IndexReplicasTooHigh:            true,
	SecretKeyMissing:                true,
	ElasticsearchNotFound:           true,
	ElasticsearchInUse:              true,
	ElasticsearchAddressRefused:     true,
	// The refusals of a cross-namespace elasticsearchRef.
	ReferenceNotGranted:              true,
	CrossNamespaceReferencesDisabled: true,
	CredentialsRequired:              true,
}

// Blocking reports whether a per-concern condition that is False with reason needs the user:
// it makes the Monocle Degraded, with that reason, and records a Warning event when the
// condition turns to it.
func Blocking(reason string) bool { return blocking[reason] }

// alwaysWarns are the reasons worth a Warning event whatever their condition's status: what
// Elasticsearch turned into (red, a volume almost full, read-only indices) and an OIDC login
// that cannot work.
var alwaysWarns = map[string]bool{Red: true, VolumeAlmostFull: true, IndicesReadOnly: true, OIDCNeedsHTTPS: true}

// Warns reports whether a per-concern condition taking reason, with status False when isFalse,
// is worth a Warning event with that reason: the user must act (Blocking), an API the
// Monocle needs is not served, Elasticsearch turned red or its volume is almost full.
func Warns(reason string, isFalse bool) bool {
	return alwaysWarns[reason] || (isFalse && (blocking[reason] || reason == APINotServed))
}

// Hibernation reports whether reason is one the Ready condition takes from status.hibernation:
// Ready turning False with it is no failure, and records no NotReady warning (the hibernation
// phases have their own events).
func Hibernation(reason string) bool {
	return reason == Hibernating || reason == Hibernated || reason == Waking
}
