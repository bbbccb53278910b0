package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// OperatorUserAgent starts the user agent of every client of the operator:
// cmd/monocle-operator sets "monocle-operator/<leader election identity>".
const OperatorUserAgent = "monocle-operator"

// stageResponseComplete is the audit stage that carries the response status; the readers
// return events of this stage only.
const stageResponseComplete = "ResponseComplete"

// AuditEvent is the part of a kube-apiserver audit event (audit.k8s.io/v1 Event, one JSON
// object per line of the log) that the suites read.
type AuditEvent struct {
	// Stage is the audit stage; "ResponseComplete" for every event the readers return.
	Stage string `json:"stage"`
	// Verb is the lower-case API verb: "get", "list", "watch", "create", "update", "patch",
	// "delete" or "deletecollection".
	Verb string `json:"verb"`
	// UserAgent is the client's User-Agent header, e.g. "monocle-operator/<identity>".
	UserAgent string `json:"userAgent"`
	// User is the authenticated user, e.g. "system:serviceaccount:<namespace>:<name>".
	User struct {
		Username string `json:"username"` // the authenticated user name
	} `json:"user"`
	// Received is when the API server received the request (requestReceivedTimestamp).
	Received time.Time `json:"requestReceivedTimestamp"`
	// Completed is when the API server completed the response (the stageTimestamp of the
	// ResponseComplete stage).
	Completed time.Time `json:"stageTimestamp"`
	// ObjectRef is what the request addressed.
	ObjectRef struct {
		Resource    string `json:"resource"`    // plural, lower-case: "deployments"
		Subresource string `json:"subresource"` // "status", "scale", or empty
		Namespace   string `json:"namespace"`   // empty for a cluster-scoped resource
		Name        string `json:"name"`        // empty for a collection (list, create)
	} `json:"objectRef"`
	// ResponseStatus holds the HTTP status code of the response: 201 for a create, 409 for a
	// conflict, and so on.
	ResponseStatus struct {
		Code int `json:"code"` // the HTTP status code; 0 if the API server logged none
	} `json:"responseStatus"`
	// Annotations are the audit annotations of the request, such as the authorizer's
	// "authorization.k8s.io/decision" ("allow" or "forbid") and "authorization.k8s.io/reason";
	// logged at every level.
	Annotations map[string]string `json:"annotations"`
	// RequestObject is the request body, logged only by a policy rule at level Request or
	// above; nil at level Metadata, which test/localcluster's default policy uses. Decode it
	// with encoding/json.
	RequestObject json.RawMessage `json:"requestObject,omitempty"`
}

// IsWrite reports whether the request may change an object: its verb is create, update,
// patch, delete or deletecollection. A refused write is a write too.
func (e AuditEvent) IsWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// FromOperator reports whether the operator made the request: its user agent starts with
// OperatorUserAgent.
func (e AuditEvent) FromOperator() bool {
	return strings.HasPrefix(e.UserAgent, OperatorUserAgent)
}

// Succeeded reports a 2xx response.
func (e AuditEvent) Succeeded() bool {
	return e.ResponseStatus.Code/100 == 2
}

// AuthorizationDecisionAnnotation is the audit annotation in which the API server's
// authorization filter records its decision on a request: "allow" or "forbid"
// (k8s.io/apiserver/pkg/endpoints/filters/authorization.go).
const AuthorizationDecisionAnnotation = "authorization.k8s.io/decision"

// DeniedByAuthorizer reports a request the authorizer (RBAC, on the local control plane) refused:
// its decision annotation is "forbid". A 403 from admission, such as a create in a namespace
// being terminated, is not one.
func (e AuditEvent) DeniedByAuthorizer() bool {
	return e.Annotations[AuthorizationDecisionAnnotation] == "forbid"
}

// IsLeaseWrite reports a successful write of the Lease namespace/name, the lock of the
// operator's leader election.
func (e AuditEvent) IsLeaseWrite(namespace, name string) bool {
	return e.IsWrite() && e.ObjectRef.Resource == "leases" && e.ObjectRef.Namespace == namespace &&
		e.ObjectRef.Name == name && e.Succeeded()
}

// Identity is the part of the user agent after its first "/": for the operator
// ("monocle-operator/<identity>") its leader election identity. It is "" when the user
// agent has no "/".
func (e AuditEvent) Identity() string {
	_, id, _ := strings.Cut(e.UserAgent, "/")
	return id
}

// ResourcePath is the resource, followed by "/" and the subresource if there is one:
// "secrets", "monocles/status".
func (e AuditEvent) ResourcePath() string {
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

// String describes the request as "<verb> <resource path> <namespace>/<name> (<code>)", e.g.
// "update monocles/status ns/m (200)".
func (e AuditEvent) String() string {
	return fmt.Sprintf("%s %s %s/%s (%d)", e.Verb, e.ResourcePath(), e.ObjectRef.Namespace, e.ObjectRef.Name, e.ResponseStatus.Code)
}

// StringAt describes the request as String does between the time at (as 15:04:05.000000,
// in at's location) and " by <user agent>": "10:00:01.000000 update monocles/status ns/m
// (200) by monocle-operator/a". Pass Received or Completed, whichever the events are
// ordered by.
func (e AuditEvent) StringAt(at time.Time) string {
	return fmt.Sprintf("%s %s by %s", at.Format("15:04:05.000000"), e, e.UserAgent)
}

// ReadAuditLog reads the whole audit log at path (JSON lines) and returns, in log order, its
// ResponseComplete events for which keep returns true (every one when keep is nil). A line
// that does not decode fails the read with an error starting "parsing the audit log: "; so
// does a line longer than 16 MiB. Use it for a log that is not being rotated; AuditLog
// follows one that may be.
func ReadAuditLog(path string, keep func(AuditEvent) bool) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEvent
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for scanner.Scan() {
		var e AuditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("parsing the audit log: %w", err)
		}
		if e.Stage == stageResponseComplete && (keep == nil || keep(e)) {
			out = append(out, e)
		}
	}
	return out, scanner.Err()
}

// AuditLogOptions selects the events an AuditLog keeps.
type AuditLogOptions struct {
	// UserAgents are the user agent prefixes whose events are kept, e.g. OperatorUserAgent
	// and the suite's own. A line is decoded only if it holds `"userAgent":"<prefix>`: the
	// log also holds every request of the other components. Empty keeps every user agent.
	UserAgents []string
	// Keep, when set, also selects among the decoded events, e.g. AuditEvent.IsWrite to keep
	// less in memory on a long run.
	Keep func(AuditEvent) bool
}

// AuditLog follows the API server's audit log (JSON lines) and keeps, in log order, the
// ResponseComplete events its options select. Each Refresh reads what was appended since the
// last one. It follows the file across API server restarts, which append, and rotations
// (kube-apiserver rotates at 100 MB even with --audit-log-maxsize=0, lumberjack's default):
// it finishes the renamed file, then reads the new one. A killed API server may leave half a
// line that the next one continues; such a line is decoded from its last event start, and a
// line that still does not decode is skipped and counted (Corrupt). An AuditLog is safe for
// concurrent use.
type AuditLog struct {
	path    string
	needles [][]byte
	agents  []string
	keep    func(AuditEvent) bool

	mu      sync.Mutex
	f       *os.File
	buf     []byte
	partial []byte
	events  []AuditEvent
	corrupt int
}

// eventStart starts every line the API server's JSON audit backend writes.
var eventStart = []byte(`{"kind":"Event"`)

// NewAuditLog returns an AuditLog of the file at path, which it opens at the first Refresh.
func NewAuditLog(path string, opts AuditLogOptions) *AuditLog {
	a := &AuditLog{path: path, agents: opts.UserAgents, keep: opts.Keep}
	for _, ua := range opts.UserAgents {
		a.needles = append(a.needles, []byte(`"userAgent":"`+ua))
	}
	return a
}

// Refresh reads what was appended to the log since the last call; the first call opens the
// file and reads it from the start. It returns the errors of opening and reading the file.
func (a *AuditLog) Refresh() error {
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

// readAll reads a.f to its end, parsing every complete line and keeping the rest for the
// next read.
func (a *AuditLog) readAll() error {
	if a.buf == nil {
		a.buf = make([]byte, 1<<20)
	}
	for {
		n, err := a.f.Read(a.buf)
		if n > 0 {
			data := append(a.partial, a.buf[:n]...)
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
		if err == io.EOF || (err == nil && n == 0) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parse keeps the event of one line if the options select it.
func (a *AuditLog) parse(line []byte) {
	if len(a.needles) > 0 && !containsAny(line, a.needles) {
		return
	}
	if i := bytes.LastIndex(line, eventStart); i > 0 {
		line = line[i:]
	}
	var e AuditEvent
	if err := json.Unmarshal(line, &e); err != nil {
		a.corrupt++
		return
	}
	if e.Stage != stageResponseComplete || !a.agentKept(e.UserAgent) || (a.keep != nil && !a.keep(e)) {
		return
	}
	a.events = append(a.events, e)
}

func (a *AuditLog) agentKept(userAgent string) bool {
	if len(a.agents) == 0 {
		return true
	}
	for _, prefix := range a.agents {
		if strings.HasPrefix(userAgent, prefix) {
			return true
		}
	}
	return false
}

func containsAny(line []byte, needles [][]byte) bool {
	for _, n := range needles {
		if bytes.Contains(line, n) {
			return true
		}
	}
	return false
}

// Between refreshes the log, then returns, in log order, the kept events completed in
// (from, to] for which keep returns true (every one when keep is nil). A zero to means no
// upper bound. Its error is Refresh's.
func (a *AuditLog) Between(from, to time.Time, keep func(AuditEvent) bool) ([]AuditEvent, error) {
	if err := a.Refresh(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []AuditEvent
	for _, e := range a.events {
		if e.Completed.After(from) && (to.IsZero() || !e.Completed.After(to)) && (keep == nil || keep(e)) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Corrupt is how many lines the user agent filter let through but that did not decode,
// since the AuditLog was made.
func (a *AuditLog) Corrupt() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.corrupt
}

// Close closes the file. The AuditLog must not be used afterwards: a Refresh would read the
// file again from its start.
func (a *AuditLog) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f, a.partial = nil, nil
	return err
}
