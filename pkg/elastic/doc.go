// Package elastic is the operator's only client for the Elasticsearch 7.17 that backs a
// Monocle (its bundled node, or a cluster it does not run, reached with basic-auth
// credentials and over TLS trusting a CA of its own: Config, NewTransportWithCA): cluster
// health, disk usage against the disk watermarks, the read-only blocks
// Elasticsearch puts on indices when the disk fills, the snapshot API (repositories,
// snapshots, restores), and the record of which Monocle owns a cluster's Monocle indices
// (OwnerIndex).
//
// The controller depends on the Client interface, never on the HTTP details: New builds
// one on the official client (github.com/elastic/go-elasticsearch/v7, its esapi request
// types) with an injectable transport, and the elastictest sub-package is a programmable
// fake Elasticsearch for tests.
//
// The controller never blocks on Elasticsearch. Every call carries a deadline (the
// caller's, or DefaultTimeout when the context has none), and callers put what they learn in
// the Monocle status and conditions: an unreachable Elasticsearch is a condition, not a
// failed sync. Long work (taking a snapshot, restoring one) is started here without waiting
// (wait_for_completion=false) and observed on later syncs with Snapshot, Snapshots and
// RestoreDone.
//
// The default transport (NewTransport) connects to no loopback, link-local or unspecified
// address (CheckAddress), checked on the address dialed after name resolution: the cluster's
// URL comes from a Monocle, and the operator's pod must not be made to reach its own
// loopback or the cloud's instance metadata. A refusal matches ErrAddressRefused.
//
// Errors say which call failed and wrap their cause with %w. An HTTP error status is a
// *StatusError (errors.As) carrying the code and Elasticsearch's error type and reason;
// errors.Is(err, ErrNotFound) holds for a 404, errors.Is(err, ErrUnauthorized) for a 401
// (credentials missing or refused). An error status quotes Elasticsearch's own error type and
// reason, and never the body of an answer that is not Elasticsearch's. No error quotes the credentials: they travel in the
// request's Authorization header only, never in a URL. A success status whose body is not the JSON
// the call expects is an error too ("decoding _cluster/health: ..."), never a zero value.
package elastic
