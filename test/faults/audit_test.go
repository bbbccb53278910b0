package faults

import (
	"fmt"
	"sort"
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// newAuditLog follows the API server's audit log and keeps the completed requests of the
// operator and of the suite (testUserAgent).
func newAuditLog(path string) *testkit.AuditLog {
	return testkit.NewAuditLog(path, testkit.AuditLogOptions{UserAgents: []string{testkit.OperatorUserAgent, testUserAgent}})
}

// auditBetween returns the kept requests completed in (from, to] that keep returns true
// for, in the order they completed.
func auditBetween(from, to time.Time, keep func(testkit.AuditEvent) bool) ([]testkit.AuditEvent, error) {
	events, err := env.audit.Between(from, to, keep)
	sort.SliceStable(events, func(i, j int) bool { return events[i].Completed.Before(events[j].Completed) })
	return events, err
}

// describe is how the suite prints a request: with the time it completed and its user agent.
func describe(e testkit.AuditEvent) string { return e.StringAt(e.Completed) }

// leaseWrite reports a successful write of the operator's leader election Lease.
func leaseWrite(e testkit.AuditEvent) bool { return e.IsLeaseWrite("default", "monocle-operator") }

// counted reports a request that counts as the operator's API call: neither its leader
// election Lease nor an Event, which follow their own schedules.
func counted(e testkit.AuditEvent) bool {
	return e.FromOperator() && e.ObjectRef.Resource != "leases" && e.ObjectRef.Resource != "events"
}

// operatorWrites are the operator's counted writes in (from, to].
func operatorWrites(from, to time.Time) ([]testkit.AuditEvent, error) {
	return auditBetween(from, to, func(e testkit.AuditEvent) bool { return counted(e) && e.IsWrite() })
}

// callCount is the operator's counted API calls in (from, to], and how many were writes.
func callCount(from, to time.Time) (calls, writes int, err error) {
	events, err := auditBetween(from, to, counted)
	for _, e := range events {
		if e.IsWrite() {
			writes++
		}
	}
	return len(events), writes, err
}

// tenureViolations checks the writes of operator replicas in (from, to] against the
// leader election Lease as the audit log shows it: a replica holds the lease from its first
// successful Lease write until another replica's first successful Lease write after it, or,
// for a replica that released the lease on SIGTERM (released), until its own last Lease
// write. Every counted write must fall in its writer's tenure, and no two replicas' writes
// may interleave. It returns the violations and the tenures, for the log.
func tenureViolations(from, to time.Time, released map[string]bool) (violations []string, tenures []string, err error) {
	events, err := auditBetween(from, to, testkit.AuditEvent.FromOperator)
	if err != nil {
		return nil, nil, err
	}
	type tenure struct {
		id         string
		start, end time.Time
	}
	var ts []*tenure
	byID := map[string]*tenure{}
	lastLease := map[string]time.Time{}
	for _, e := range events {
		if !leaseWrite(e) {
			continue
		}
		id := e.Identity()
		lastLease[id] = e.Completed
		if byID[id] == nil {
			// A replica's first Lease write is its acquisition.
			t := &tenure{id: id, start: e.Completed}
			ts = append(ts, t)
			byID[id] = t
		}
	}
	writesBy := map[string]int{}
	for _, e := range events {
		if counted(e) && e.IsWrite() {
			writesBy[e.Identity()]++
		}
	}
	for i, t := range ts {
		t.end = to
		if i+1 < len(ts) {
			t.end = ts[i+1].start
		}
		if released[t.id] && lastLease[t.id].Before(t.end) {
			t.end = lastLease[t.id]
		}
		tenures = append(tenures, fmt.Sprintf("%s: %s → %s, %d writes", t.id, t.start.Format("15:04:05.000"), t.end.Format("15:04:05.000"), writesBy[t.id]))
	}
	lastWriter := ""
	for _, e := range events {
		if !counted(e) || !e.IsWrite() {
			continue
		}
		id := e.Identity()
		t := byID[id]
		switch {
		case t == nil:
			violations = append(violations, "write by a replica that never held the lease: "+describe(e))
		case e.Completed.Before(t.start) || e.Completed.After(t.end):
			violations = append(violations, fmt.Sprintf("write outside its writer's tenure (%s → %s): %s",
				t.start.Format("15:04:05.000000"), t.end.Format("15:04:05.000000"), describe(e)))
		}
		if lastWriter != "" && lastWriter != id && byID[lastWriter] != nil && byID[id] != nil && byID[lastWriter].start.After(byID[id].start) {
			violations = append(violations, "writes of two replicas interleave: "+describe(e))
		}
		lastWriter = id
	}
	return violations, tenures, nil
}
