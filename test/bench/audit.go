package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// benchUserAgent is the user agent of the bench's own client; the audit reader keeps its
// writes and the operator's (testkit.OperatorUserAgent, which controller.ControllerName
// starts).
const benchUserAgent = "monocle-bench"

// newAuditLog follows the API server's audit log and keeps the completed writes of the
// operator and of the bench. The log of a 200-Monocle run holds hundreds of thousands of
// lines from the other components, so lines are filtered on the user agent before decoding.
func newAuditLog(path string) *testkit.AuditLog {
	return testkit.NewAuditLog(path, testkit.AuditLogOptions{
		UserAgents: []string{testkit.OperatorUserAgent, benchUserAgent},
		Keep:       testkit.AuditEvent.IsWrite,
	})
}

// ownedCreate reports a successful create of anything but an Event: an object the operator
// owns.
func ownedCreate(e testkit.AuditEvent) bool {
	return e.Verb == "create" && e.ResponseStatus.Code == 201 && e.ObjectRef.Resource != "events"
}

// statusWrite reports a write of a Monocle's status.
func statusWrite(e testkit.AuditEvent) bool {
	return (e.Verb == "update" || e.Verb == "patch") && e.ObjectRef.Resource == "monocles" && e.ObjectRef.Subresource == "status"
}

// operatorWritesAfter returns the operator's writes after t in the given namespaces (all when
// none), leases excluded: leader election renews its lease on its own schedule.
func (e *env) operatorWritesAfter(t time.Time, namespaces ...string) ([]testkit.AuditEvent, error) {
	in := map[string]bool{}
	for _, ns := range namespaces {
		in[ns] = true
	}
	return e.audit.Between(t, time.Time{}, func(ev testkit.AuditEvent) bool {
		return ev.FromOperator() && ev.ObjectRef.Resource != "leases" && (len(in) == 0 || in[ev.ObjectRef.Namespace])
	})
}

// writeSummary counts writes by kind for a report line: "7 create, 6 status, 8 events".
func writeSummary(events []testkit.AuditEvent) string {
	counts := map[string]int{}
	var order []string
	for _, e := range events {
		k := e.Verb + " " + e.ResourcePath()
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return strings.Join(parts, ", ")
}
