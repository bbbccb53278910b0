package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// User agents the audit reader keeps: the operator's client sets "monocle-operator"
// (controller.ControllerName), the bench's own client benchUserAgent.
const (
	operatorUserAgent = "monocle-operator"
	benchUserAgent    = "monocle-bench"
)

// auditEvent is the part of a kube-apiserver audit event (audit.k8s.io/v1, Metadata level)
// the bench reads.
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

func (e auditEvent) operator() bool { return strings.HasPrefix(e.UserAgent, operatorUserAgent) }

func (e auditEvent) write() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// ownedCreate reports a successful create of anything but an Event: an object the operator
// owns.
func (e auditEvent) ownedCreate() bool {
	return e.Verb == "create" && e.ResponseStatus.Code == 201 && e.ObjectRef.Resource != "events"
}

func (e auditEvent) statusWrite() bool {
	return (e.Verb == "update" || e.Verb == "patch") && e.ObjectRef.Resource == "monocles" && e.ObjectRef.Subresource == "status"
}

func (e auditEvent) String() string {
	r := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	return fmt.Sprintf("%s %s %s/%s (%d)", e.Verb, r, e.ObjectRef.Namespace, e.ObjectRef.Name, e.ResponseStatus.Code)
}

// auditLog follows the API server's audit log (JSON lines) and keeps the completed writes of
// the operator and of the bench. The log of a 200-Monocle run holds hundreds of thousands of
// lines from the other components, so lines are filtered on the user agent before decoding.
type auditLog struct {
	mu      sync.Mutex
	f       *os.File
	partial []byte
	events  []auditEvent
}

func openAudit(path string) (*auditLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &auditLog{f: f}, nil
}

func (a *auditLog) Close() error { return a.f.Close() }

// poll reads what was appended to the log since the last poll.
func (a *auditLog) poll() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	buf := make([]byte, 1<<20)
	for {
		n, err := a.f.Read(buf)
		if n > 0 {
			data := append(a.partial, buf[:n]...)
			last := bytes.LastIndexByte(data, '\n')
			if last < 0 {
				a.partial = data
			} else {
				a.parse(data[:last])
				a.partial = append([]byte(nil), data[last+1:]...)
			}
		}
		if err == io.EOF || n == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

var agentField = []byte(`"userAgent":"monocle-`)

func (a *auditLog) parse(lines []byte) {
	for len(lines) > 0 {
		line := lines
		if i := bytes.IndexByte(lines, '\n'); i >= 0 {
			line, lines = lines[:i], lines[i+1:]
		} else {
			lines = nil
		}
		if !bytes.Contains(line, agentField) {
			continue
		}
		var e auditEvent
		if err := json.Unmarshal(line, &e); err != nil || e.Stage != "ResponseComplete" || !e.write() {
			continue
		}
		if e.operator() || strings.HasPrefix(e.UserAgent, benchUserAgent) {
			a.events = append(a.events, e)
		}
	}
}

// select polls the log and returns the kept events after t that match keep.
func (a *auditLog) selectAfter(t time.Time, keep func(auditEvent) bool) ([]auditEvent, error) {
	if err := a.poll(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []auditEvent
	for _, e := range a.events {
		if e.Timestamp.After(t) && keep(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// operatorWritesAfter returns the operator's writes after t in the given namespaces (all when
// none), leases excluded: leader election renews its lease on its own schedule.
func (a *auditLog) operatorWritesAfter(t time.Time, namespaces ...string) ([]auditEvent, error) {
	in := map[string]bool{}
	for _, ns := range namespaces {
		in[ns] = true
	}
	return a.selectAfter(t, func(e auditEvent) bool {
		return e.operator() && e.ObjectRef.Resource != "leases" && (len(in) == 0 || in[e.ObjectRef.Namespace])
	})
}

// writeSummary counts writes by kind for a report line: "7 create, 6 status, 8 events".
func writeSummary(events []auditEvent) string {
	counts := map[string]int{}
	var order []string
	for _, e := range events {
		k := e.Verb + " " + e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			k += "/" + e.ObjectRef.Subresource
		}
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
