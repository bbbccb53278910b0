package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// holder is the holderIdentity a Lease write set, from its request body (which auditPolicy
// logs); "" for a release.
func holder(e testkit.AuditEvent) (string, error) {
	if len(e.RequestObject) == 0 {
		return "", nil
	}
	var lease struct {
		Spec struct {
			HolderIdentity *string `json:"holderIdentity"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(e.RequestObject, &lease); err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

// operatorRequests returns the completed requests of every operator replica (user agent
// "monocle-operator/..."), in the order the API server received them. The tests print them
// with StringAt(e.Received).
func operatorRequests(t *testing.T) []testkit.AuditEvent {
	t.Helper()
	out, err := testkit.ReadAuditLog(env.Cluster.AuditLogPath(), func(e testkit.AuditEvent) bool {
		return strings.HasPrefix(e.UserAgent, testkit.OperatorUserAgent+"/")
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Received.Before(out[j].Received) })
	return out
}

// checkServiceAccountOnly fails the test on any operator request that was refused (403) or
// not made as the operator's ServiceAccount, and returns how many requests it checked.
func checkServiceAccountOnly(t *testing.T, requests []testkit.AuditEvent) int {
	t.Helper()
	var bad []string
	for _, e := range requests {
		switch {
		case e.ResponseStatus.Code == 403:
			bad = append(bad, "forbidden: "+e.StringAt(e.Received))
		case e.User.Username != serviceAccount:
			bad = append(bad, "made as "+e.User.Username+": "+e.StringAt(e.Received))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d operator requests are wrong:\n%s", len(bad), len(requests), strings.Join(bad, "\n"))
	}
	return len(requests)
}

// checkSingleWriter fails the test on any write (other than to the Lease) by a replica that
// did not hold the Lease when the API server received it. Who holds the Lease at a time is
// the holderIdentity of the last Lease write completed before then; a release by the holder
// sets it to "".
// It returns the leaders in the order they took over.
func checkSingleWriter(t *testing.T, requests []testkit.AuditEvent) []string {
	t.Helper()
	var leases []testkit.AuditEvent
	for _, e := range requests {
		if e.IsLeaseWrite(operatorNamespace, operatorName) {
			leases = append(leases, e)
		}
	}
	sort.SliceStable(leases, func(i, j int) bool { return leases[i].Completed.Before(leases[j].Completed) })
	holders := make([]string, len(leases))
	for i, l := range leases {
		h, err := holder(l)
		if err != nil {
			t.Fatalf("parsing the audit log: %v", err)
		}
		// A replica deposed while it was frozen can, once it resumes, release (holder "") a
		// Lease its successor already took: client-go's ReleaseOnCancel writes with the
		// Lease it read last. That write does not make the successor stop leading (it holds
		// the Lease by its own acquisition and takes it back on its next renewal), so a
		// release by anyone but the holder in effect leaves the holder unchanged.
		if h == "" && i > 0 && l.UserAgent != "monocle-operator/"+holders[i-1] {
			h = holders[i-1]
		}
		holders[i] = h
	}
	var leaders []string
	for _, h := range holders {
		if h != "" && (len(leaders) == 0 || leaders[len(leaders)-1] != h) {
			leaders = append(leaders, h)
		}
	}
	holderAt := func(at time.Time) string {
		h := ""
		for i, l := range leases {
			if l.Completed.After(at) {
				break
			}
			h = holders[i]
		}
		return h
	}
	var bad []string
	writes := 0
	for _, e := range requests {
		if !e.IsWrite() || e.ObjectRef.Resource == "leases" {
			continue
		}
		writes++
		if h := holderAt(e.Received); e.UserAgent != "monocle-operator/"+h {
			bad = append(bad, fmt.Sprintf("%s while the Lease was held by %q", e.StringAt(e.Received), h))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d operator writes came from a replica that did not lead:\n%s", len(bad), writes, strings.Join(bad, "\n"))
	}
	return leaders
}
