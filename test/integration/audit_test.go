package integration

import (
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// operatorWrites returns the writes the operator (recognised by its user agent,
// "monocle-operator/...") made in namespace ns (all when empty) after since, leases excluded:
// leader election renews its lease on its own schedule.
func operatorWrites(since time.Time, ns string) ([]testkit.AuditEvent, error) {
	return testkit.ReadAuditLog(env.Cluster.AuditLogPath(), func(e testkit.AuditEvent) bool {
		return e.Completed.After(since) && e.FromOperator() && e.IsWrite() &&
			e.ObjectRef.Resource != "leases" && (ns == "" || e.ObjectRef.Namespace == ns)
	})
}
