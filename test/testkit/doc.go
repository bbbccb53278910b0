// Package testkit holds what the operator's test suites (test/integration, test/e2e,
// test/faults) and its benchmark (test/bench) share to drive and observe the operator on a
// local control plane (test/localcluster):
//
//   - env.go starts a suite's environment once (StartEnv, in its TestMain): the local control
//     plane in a work directory, admin clients for it, optionally the CRD and the operator
//     binary; Close stops it and removes the work directory unless the suite failed.
//   - audit.go reads the kube-apiserver audit log (JSON lines): AuditEvent and its
//     predicates, ReadAuditLog to read the whole log at once, AuditLog to follow it.
//   - metrics.go parses the Prometheus text exposition the operator serves on /metrics and
//     sums its series by name and label.
//   - operator.go builds the operator binary and starts and watches its processes:
//     signals, exit, HTTP endpoints, CPU and memory from /proc, the end of a log.
//   - kubectl.go runs kubectl against a cluster and installs the Monocle CRD.
//   - rbac.go installs the operator's namespace and roles from deploy/ and writes a
//     kubeconfig with a token of its ServiceAccount, to run the operator under that RBAC;
//     tenant.go gives a kubectl acting as a user with only "edit" in one namespace.
//   - lease.go reads the operator's leader election Lease: LeaseHolder, WaitLeader.
//   - earlier.go creates, from the captured fixture, what the earlier operator (v0.0.2) leaves
//     for a Monocle, paused, so that a suite can hand it over to this operator.
//   - elastic.go, elastic_state.go and elastic_api.go hold FakeElasticsearch, which stands
//     for every Monocle's Elasticsearch 7.17: cluster health and disk answers per namespace,
//     and indices, snapshot repositories, snapshots and restores kept per Elasticsearch.
//   - rollout.go observes a fleet rollout from the pods (PodUIDs, PodRolls: when each
//     Monocle's new pods were made and Ready; ConcurrentRolls: which rolled at once), makes the
//     API server refuse pods by a policy (RefusePods), and reads the operator's release
//     (BinaryVersion).
//   - wait.go polls until a condition holds (Poll, and Eventually for a test), on
//     apimachinery's wait package, and holds the small steps every suite takes: NeedCluster,
//     CreateNamespace (restricted Pod Security).
//
// Nothing here holds a scenario's checks: what a suite asserts, and the predicates only one
// suite needs, stay in that suite.
package testkit
