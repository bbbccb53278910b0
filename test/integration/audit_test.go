package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// auditEvent is the part of a kube-apiserver audit event (audit.k8s.io/v1, Metadata level)
// the tests read.
type auditEvent struct {
	Stage     string    `json:"stage"`
	Verb      string    `json:"verb"`
	UserAgent string    `json:"userAgent"`
	Timestamp time.Time `json:"stageTimestamp"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

func (e auditEvent) String() string {
	r := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	return fmt.Sprintf("%s %s %s/%s (%d)", e.Verb, r, e.ObjectRef.Namespace, e.ObjectRef.Name, e.ResponseStatus.Code)
}

// operatorWrites returns the writes the operator (recognised by its user agent,
// "monocle-operator/...") made in namespace ns (all when empty) after since, leases excluded:
// leader election renews its lease on its own schedule.
func operatorWrites(since time.Time, ns string) ([]auditEvent, error) {
	f, err := os.Open(env.cluster.AuditLogPath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []auditEvent
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for scanner.Scan() {
		var e auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("parsing the audit log: %w", err)
		}
		if e.Stage != "ResponseComplete" || !e.Timestamp.After(since) || !isOperator(e.UserAgent) {
			continue
		}
		switch e.Verb {
		case "create", "update", "patch", "delete", "deletecollection":
		default:
			continue
		}
		if e.ObjectRef.Resource == "leases" || (ns != "" && e.ObjectRef.Namespace != ns) {
			continue
		}
		out = append(out, e)
	}
	return out, scanner.Err()
}

func isOperator(userAgent string) bool {
	return len(userAgent) >= len("monocle-operator") && userAgent[:len("monocle-operator")] == "monocle-operator"
}
