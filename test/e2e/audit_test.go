package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// auditEvent is the part of a kube-apiserver audit event (audit.k8s.io/v1) the tests read.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	Received  time.Time `json:"requestReceivedTimestamp"`
	Completed time.Time `json:"stageTimestamp"`
	ObjectRef struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// RequestObject is logged for Lease writes only (see auditPolicy).
	RequestObject *struct {
		Spec struct {
			HolderIdentity *string `json:"holderIdentity"`
		} `json:"spec"`
	} `json:"requestObject"`
}

func (e auditEvent) String() string {
	r := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	return fmt.Sprintf("%s %s %s %s/%s (%d) by %s", e.Received.Format("15:04:05.000000"), e.Verb, r,
		e.ObjectRef.Namespace, e.ObjectRef.Name, e.ResponseStatus.Code, e.UserAgent)
}

func (e auditEvent) isWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// isLeaseWrite reports whether e is a successful write of the leader election Lease.
func (e auditEvent) isLeaseWrite() bool {
	return e.isWrite() && e.ObjectRef.Resource == "leases" && e.ObjectRef.Namespace == operatorNamespace &&
		e.ObjectRef.Name == operatorName && e.ResponseStatus.Code/100 == 2
}

// holder is the holderIdentity a Lease write set; "" for a release.
func (e auditEvent) holder() string {
	if e.RequestObject == nil || e.RequestObject.Spec.HolderIdentity == nil {
		return ""
	}
	return *e.RequestObject.Spec.HolderIdentity
}

// operatorRequests returns the completed requests of every operator replica (user agent
// "monocle-operator/..."), in the order the API server received them.
func operatorRequests(t *testing.T) []auditEvent {
	t.Helper()
	f, err := os.Open(env.cluster.AuditLogPath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditEvent
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for scanner.Scan() {
		var e auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			t.Fatalf("parsing the audit log: %v", err)
		}
		if e.Stage == "ResponseComplete" && strings.HasPrefix(e.UserAgent, "monocle-operator/") {
			out = append(out, e)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Received.Before(out[j].Received) })
	return out
}

// checkServiceAccountOnly fails the test on any operator request that was refused (403) or
// not made as the operator's ServiceAccount, and returns how many requests it checked.
func checkServiceAccountOnly(t *testing.T, requests []auditEvent) int {
	t.Helper()
	var bad []string
	for _, e := range requests {
		switch {
		case e.ResponseStatus.Code == 403:
			bad = append(bad, "forbidden: "+e.String())
		case e.User.Username != serviceAccount:
			bad = append(bad, "made as "+e.User.Username+": "+e.String())
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d operator requests are wrong:\n%s", len(bad), len(requests), strings.Join(bad, "\n"))
	}
	return len(requests)
}

// checkSingleWriter fails the test on any write (other than to the Lease) by a replica that
// did not hold the Lease when the API server received it. Who holds the Lease at a time is
// the holderIdentity of the last Lease write completed before then; a release sets it to "".
// It returns the leaders in the order they took over.
func checkSingleWriter(t *testing.T, requests []auditEvent) []string {
	t.Helper()
	var leases []auditEvent
	for _, e := range requests {
		if e.isLeaseWrite() {
			leases = append(leases, e)
		}
	}
	sort.SliceStable(leases, func(i, j int) bool { return leases[i].Completed.Before(leases[j].Completed) })
	var leaders []string
	for _, l := range leases {
		if h := l.holder(); h != "" && (len(leaders) == 0 || leaders[len(leaders)-1] != h) {
			leaders = append(leaders, h)
		}
	}
	holderAt := func(at time.Time) string {
		h := ""
		for _, l := range leases {
			if l.Completed.After(at) {
				break
			}
			h = l.holder()
		}
		return h
	}
	var bad []string
	writes := 0
	for _, e := range requests {
		if !e.isWrite() || e.ObjectRef.Resource == "leases" {
			continue
		}
		writes++
		if h := holderAt(e.Received); e.UserAgent != "monocle-operator/"+h {
			bad = append(bad, fmt.Sprintf("%s while the Lease was held by %q", e, h))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d operator writes came from a replica that did not lead:\n%s", len(bad), writes, strings.Join(bad, "\n"))
	}
	return leaders
}
