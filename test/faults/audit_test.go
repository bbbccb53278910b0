package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// operatorUserAgent starts the user agent of every operator process:
// "monocle-operator/<identity>" (cmd/monocle-operator sets it).
const operatorUserAgent = "monocle-operator"

// auditEvent is the part of a kube-apiserver audit event (audit.k8s.io/v1, Metadata level)
// the suite reads.
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
	return fmt.Sprintf("%s %s %s %s/%s (%d) by %s", e.Timestamp.Format("15:04:05.000000"), e.Verb, r,
		e.ObjectRef.Namespace, e.ObjectRef.Name, e.ResponseStatus.Code, e.UserAgent)
}

func (e auditEvent) operator() bool { return strings.HasPrefix(e.UserAgent, operatorUserAgent) }

// identity is the leader election identity in an operator's user agent.
func (e auditEvent) identity() string {
	_, id, _ := strings.Cut(e.UserAgent, "/")
	return id
}

func (e auditEvent) write() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// leaseWrite reports a successful write of the operator's leader election Lease.
func (e auditEvent) leaseWrite() bool {
	return e.ObjectRef.Resource == "leases" && e.ObjectRef.Namespace == "default" &&
		e.ObjectRef.Name == "monocle-operator" && e.write() && e.ResponseStatus.Code < 300
}

// counted reports a request that counts as the operator's API call: neither its leader
// election Lease nor an Event, which follow their own schedules.
func (e auditEvent) counted() bool {
	return e.operator() && e.ObjectRef.Resource != "leases" && e.ObjectRef.Resource != "events"
}

// auditLog follows the API server's audit log (JSON lines) and keeps the completed requests
// of the operator and of the suite. Lines are filtered on the user agent before decoding:
// the log also holds every request of the other components. It follows the file across API
// server restarts (which append) and rotations (kube-apiserver rotates at 100 MB even with
// --audit-log-maxsize=0, lumberjack's default).
type auditLog struct {
	path string

	mu      sync.Mutex
	f       *os.File
	partial []byte
	events  []auditEvent
	corrupt int
}

func newAuditLog(path string) *auditLog { return &auditLog{path: path} }

var (
	uaOperator = []byte(`"userAgent":"` + operatorUserAgent)
	uaTest     = []byte(`"userAgent":"` + testUserAgent)
	eventStart = []byte(`{"kind":"Event"`)
)

// refresh reads what was appended since the last call.
func (a *auditLog) refresh() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		f, err := os.Open(a.path)
		if err != nil {
			return err
		}
		a.f = f
	}
	if err := a.readAll(); err != nil {
		return err
	}
	// A rotation renamed the file we read: finish it, then go on with the new one.
	cur, err1 := a.f.Stat()
	now, err2 := os.Stat(a.path)
	if err1 == nil && err2 == nil && !os.SameFile(cur, now) {
		if err := a.readAll(); err != nil {
			return err
		}
		a.f.Close()
		f, err := os.Open(a.path)
		if err != nil {
			return err
		}
		a.f, a.partial = f, nil
		return a.readAll()
	}
	return nil
}

func (a *auditLog) readAll() error {
	buf := make([]byte, 1<<20)
	for {
		n, err := a.f.Read(buf)
		if n > 0 {
			data := append(a.partial, buf[:n]...)
			last := bytes.LastIndexByte(data, '\n')
			if last < 0 {
				a.partial = data
			} else {
				for _, line := range bytes.Split(data[:last], []byte{'\n'}) {
					a.parse(line)
				}
				a.partial = append([]byte(nil), data[last+1:]...)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (a *auditLog) parse(line []byte) {
	if !bytes.Contains(line, uaOperator) && !bytes.Contains(line, uaTest) {
		return
	}
	// A killed API server may leave half a line, which the next one continues: decode from
	// the last event start.
	if i := bytes.LastIndex(line, eventStart); i > 0 {
		line = line[i:]
	}
	var e auditEvent
	if err := json.Unmarshal(line, &e); err != nil {
		a.corrupt++
		return
	}
	if e.Stage != "ResponseComplete" {
		return
	}
	a.events = append(a.events, e)
}

// between returns the kept events completed in (from, to] that keep returns true for.
func (a *auditLog) between(from, to time.Time, keep func(auditEvent) bool) ([]auditEvent, error) {
	if err := a.refresh(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []auditEvent
	for _, e := range a.events {
		if e.Timestamp.After(from) && !e.Timestamp.After(to) && keep(e) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Timestamp.Before(out[j].Timestamp) })
	return out, nil
}

// operatorWrites are the operator's counted writes in (from, to].
func operatorWrites(from, to time.Time) ([]auditEvent, error) {
	return env.audit.between(from, to, func(e auditEvent) bool { return e.counted() && e.write() })
}

// callCount is the operator's counted API calls in (from, to], and how many were writes.
func callCount(from, to time.Time) (calls, writes int, err error) {
	events, err := env.audit.between(from, to, auditEvent.counted)
	for _, e := range events {
		if e.write() {
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
	events, err := env.audit.between(from, to, func(e auditEvent) bool { return e.operator() })
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
		if !e.leaseWrite() {
			continue
		}
		id := e.identity()
		lastLease[id] = e.Timestamp
		if byID[id] == nil {
			// A replica's first Lease write is its acquisition.
			t := &tenure{id: id, start: e.Timestamp}
			ts = append(ts, t)
			byID[id] = t
		}
	}
	writesBy := map[string]int{}
	for _, e := range events {
		if e.counted() && e.write() {
			writesBy[e.identity()]++
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
		if !e.counted() || !e.write() {
			continue
		}
		id := e.identity()
		t := byID[id]
		switch {
		case t == nil:
			violations = append(violations, "write by a replica that never held the lease: "+e.String())
		case e.Timestamp.Before(t.start) || e.Timestamp.After(t.end):
			violations = append(violations, fmt.Sprintf("write outside its writer's tenure (%s → %s): %s",
				t.start.Format("15:04:05.000000"), t.end.Format("15:04:05.000000"), e))
		}
		if lastWriter != "" && lastWriter != id && byID[lastWriter] != nil && byID[id] != nil && byID[lastWriter].start.After(byID[id].start) {
			violations = append(violations, "writes of two replicas interleave: "+e.String())
		}
		lastWriter = id
	}
	return violations, tenures, nil
}
