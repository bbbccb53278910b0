package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Audit lines as kube-apiserver writes them (trimmed to the fields read).
const (
	opCreate     = `{"kind":"Event","stage":"ResponseComplete","verb":"create","userAgent":"monocle-operator/op-a","user":{"username":"system:serviceaccount:monocle-operator:monocle-operator"},"requestReceivedTimestamp":"2026-01-01T00:00:00.900000Z","stageTimestamp":"2026-01-01T00:00:01.000000Z","objectRef":{"resource":"secrets","namespace":"a","name":"m-api"},"responseStatus":{"code":201}}`
	opStatus     = `{"kind":"Event","stage":"ResponseComplete","verb":"update","userAgent":"monocle-operator/op-a","requestReceivedTimestamp":"2026-01-01T00:00:01.900000Z","stageTimestamp":"2026-01-01T00:00:02.000000Z","objectRef":{"resource":"monocles","subresource":"status","namespace":"a","name":"m"},"responseStatus":{"code":200}}`
	opList       = `{"kind":"Event","stage":"ResponseComplete","verb":"list","userAgent":"monocle-operator/op-a","stageTimestamp":"2026-01-01T00:00:03.000000Z","objectRef":{"resource":"secrets"},"responseStatus":{"code":200}}`
	kcmCreate    = `{"kind":"Event","stage":"ResponseComplete","verb":"create","userAgent":"kube-controller-manager/v1.36.3","stageTimestamp":"2026-01-01T00:00:04.000000Z","objectRef":{"resource":"pods","namespace":"a"},"responseStatus":{"code":201}}`
	leaseRenew   = `{"kind":"Event","stage":"ResponseComplete","verb":"update","userAgent":"monocle-operator/op-a","stageTimestamp":"2026-01-01T00:00:05.000000Z","objectRef":{"resource":"leases","namespace":"default","name":"monocle-operator"},"responseStatus":{"code":200},"requestObject":{"spec":{"holderIdentity":"op-a"}}}`
	leaseRefused = `{"kind":"Event","stage":"ResponseComplete","verb":"update","userAgent":"monocle-operator/op-b","stageTimestamp":"2026-01-01T00:00:06.000000Z","objectRef":{"resource":"leases","namespace":"default","name":"monocle-operator"},"responseStatus":{"code":409}}`
	testPatch    = `{"kind":"Event","stage":"ResponseComplete","verb":"patch","userAgent":"monocle-faults","stageTimestamp":"2026-01-01T00:00:07.000000Z","objectRef":{"resource":"deployments","namespace":"a","name":"m-api"},"responseStatus":{"code":200}}`
	// The RequestReceived stage of a request: never returned.
	opReceived = `{"kind":"Event","stage":"RequestReceived","verb":"create","userAgent":"monocle-operator/op-a","stageTimestamp":"2026-01-01T00:00:00.950000Z","objectRef":{"resource":"configmaps","namespace":"a","name":"m-config"}}`
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func writeLog(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func appendLog(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// describe lists events as "verb resource-path" for comparisons.
func describe(events []AuditEvent) string {
	var out []string
	for _, e := range events {
		out = append(out, e.Verb+" "+e.ResourcePath())
	}
	return strings.Join(out, ", ")
}

func TestAuditEventPredicates(t *testing.T) {
	all, err := ReadAuditLog(writeLog(t, opCreate, opStatus, opList, kcmCreate, leaseRenew, leaseRefused, testPatch), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 7 {
		t.Fatalf("read %d events, want 7: %v", len(all), all)
	}
	create, status, list, kcm, renew, refused, patch := all[0], all[1], all[2], all[3], all[4], all[5], all[6]
	for name, tc := range map[string]struct {
		got, want bool
	}{
		"a create is a write":               {create.IsWrite(), true},
		"a patch is a write":                {patch.IsWrite(), true},
		"a list is no write":                {list.IsWrite(), false},
		"a refused update is still a write": {refused.IsWrite(), true},
		"the operator's create":             {create.FromOperator(), true},
		"kube-controller-manager's create":  {kcm.FromOperator(), false},
		"the suite's patch":                 {patch.FromOperator(), false},
		"201 succeeded":                     {create.Succeeded(), true},
		"409 failed":                        {refused.Succeeded(), false},
		"no response status failed":         {AuditEvent{}.Succeeded(), false},
		"a lease renewal":                   {renew.IsLeaseWrite("default", "monocle-operator"), true},
		"another lease's name":              {renew.IsLeaseWrite("default", "other"), false},
		"another lease's namespace":         {renew.IsLeaseWrite("kube-system", "monocle-operator"), false},
		"a refused lease update":            {refused.IsLeaseWrite("default", "monocle-operator"), false},
		"a status write is no lease write":  {status.IsLeaseWrite("a", "m"), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", name, tc.got, tc.want)
		}
	}
	if got := create.Identity(); got != "op-a" {
		t.Errorf("Identity() = %q, want op-a", got)
	}
	if got := patch.Identity(); got != "" {
		t.Errorf("Identity() of a user agent without / = %q, want \"\"", got)
	}
	if got := create.User.Username; got != "system:serviceaccount:monocle-operator:monocle-operator" {
		t.Errorf("User.Username = %q", got)
	}
	if !create.Received.Equal(at(t, "2026-01-01T00:00:00.9Z")) || !create.Completed.Equal(at(t, "2026-01-01T00:00:01Z")) {
		t.Errorf("Received, Completed = %s, %s", create.Received, create.Completed)
	}
	if got, want := status.String(), "update monocles/status a/m (200)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := status.StringAt(status.Completed), "00:00:02.000000 update monocles/status a/m (200) by monocle-operator/op-a"; got != want {
		t.Errorf("StringAt() = %q, want %q", got, want)
	}
	if got, want := list.String(), "list secrets / (200)"; got != want {
		t.Errorf("String() of a collection = %q, want %q", got, want)
	}
	if string(renew.RequestObject) != `{"spec":{"holderIdentity":"op-a"}}` || create.RequestObject != nil {
		t.Errorf("RequestObject = %q and %q, want the lease's body and nil", renew.RequestObject, create.RequestObject)
	}
}

func TestReadAuditLog(t *testing.T) {
	path := writeLog(t, opReceived, opCreate, kcmCreate, opStatus, leaseRenew)
	got, err := ReadAuditLog(path, AuditEvent.FromOperator)
	if err != nil {
		t.Fatal(err)
	}
	if want := "create secrets, update monocles/status, update leases"; describe(got) != want {
		t.Errorf("operator events = %q, want %q (RequestReceived and other agents dropped)", describe(got), want)
	}

	_, err = ReadAuditLog(writeLog(t, opCreate, `{"kind":"Event","stage":`), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "parsing the audit log: ") {
		t.Errorf("a cut line: err = %v, want a parse error", err)
	}
	if _, err := ReadAuditLog(filepath.Join(t.TempDir(), "missing.log"), nil); !os.IsNotExist(err) {
		t.Errorf("a missing log: err = %v, want not-exist", err)
	}
}

func TestAuditLogFollows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a := NewAuditLog(path, AuditLogOptions{UserAgents: []string{OperatorUserAgent, "monocle-faults"}})
	defer a.Close()
	if err := a.Refresh(); !os.IsNotExist(err) {
		t.Fatalf("Refresh before the log exists: %v, want not-exist", err)
	}

	// The last line arrives in two writes, as the API server may flush it.
	whole := strings.Join([]string{opReceived, opCreate, kcmCreate, opList}, "\n") + "\n"
	cut := len(whole) - 40
	appendLog(t, path, whole[:cut])
	got, err := a.Between(time.Time{}, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if describe(got) != "create secrets" {
		t.Errorf("before the rest of the line: %q, want the create only", describe(got))
	}
	appendLog(t, path, whole[cut:])
	// A killed API server left half a line; the next one continued it.
	appendLog(t, path, opStatus[:60]+testPatch+"\n")
	// A line the filter lets through that does not decode, and one it skips undecoded.
	appendLog(t, path, `{"kind":"Event","userAgent":"monocle-operator/x", broken`+"\n"+`not json at all`+"\n")
	got, err = a.Between(time.Time{}, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "create secrets, list secrets, patch deployments"; describe(got) != want {
		t.Errorf("after the rest: %q, want %q", describe(got), want)
	}
	if a.Corrupt() != 1 {
		t.Errorf("Corrupt() = %d, want 1", a.Corrupt())
	}

	// Rotation: the API server renames the log and starts a new one; what it wrote to the
	// old file before the rename is read too.
	appendLog(t, path, leaseRenew+"\n")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendLog(t, path, leaseRefused+"\n")
	got, err = a.Between(at(t, "2026-01-01T00:00:04Z"), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "patch deployments, update leases, update leases"; describe(got) != want {
		t.Errorf("across a rotation: %q, want %q", describe(got), want)
	}

	// (from, to]: from excluded, to included; keep selects.
	got, err = a.Between(at(t, "2026-01-01T00:00:01Z"), at(t, "2026-01-01T00:00:05Z"), AuditEvent.FromOperator)
	if err != nil {
		t.Fatal(err)
	}
	if want := "list secrets, update leases"; describe(got) != want {
		t.Errorf("operator events in (1s, 5s]: %q, want %q", describe(got), want)
	}
}

func TestAuditLogOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		lines []string
		opts  AuditLogOptions
		want  string
	}{
		// Completed out of order: Between returns the log's order, sorting is the caller's.
		"log order": {[]string{opStatus, opCreate}, AuditLogOptions{}, "update monocles/status, create secrets"},
		// No user agent filter; Keep drops the reads.
		"keep writes": {[]string{opCreate, opList, kcmCreate, testPatch}, AuditLogOptions{Keep: AuditEvent.IsWrite}, "create secrets, create pods, patch deployments"},
		"one agent":   {[]string{opCreate, kcmCreate, testPatch}, AuditLogOptions{UserAgents: []string{"kube-controller-manager"}}, "create pods"},
	} {
		t.Run(name, func(t *testing.T) {
			a := NewAuditLog(writeLog(t, tc.lines...), tc.opts)
			defer a.Close()
			got, err := a.Between(time.Time{}, time.Time{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if describe(got) != tc.want {
				t.Errorf("got %q, want %q", describe(got), tc.want)
			}
		})
	}
}

// TestAuditEventDeniedByAuthorizer: a 403 is the authorizer's refusal only when its decision
// annotation says "forbid"; admission's 403 (a create in a namespace being terminated) comes
// after the authorizer allowed the request.
func TestAuditEventDeniedByAuthorizer(t *testing.T) {
	const (
		rbacDenied  = `{"kind":"Event","stage":"ResponseComplete","verb":"delete","userAgent":"monocle-operator/op-a","stageTimestamp":"2026-01-01T00:00:01.000000Z","objectRef":{"resource":"secrets","namespace":"a","name":"m-elastic-proxy"},"responseStatus":{"code":403},"annotations":{"authorization.k8s.io/decision":"forbid","authorization.k8s.io/reason":""}}`
		terminating = `{"kind":"Event","stage":"ResponseComplete","verb":"create","userAgent":"monocle-operator/op-a","stageTimestamp":"2026-01-01T00:00:02.000000Z","objectRef":{"resource":"events","namespace":"a"},"responseStatus":{"code":403},"annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding \"monocle-operator\""}}`
	)
	events, err := ReadAuditLog(writeLog(t, rbacDenied, terminating, opCreate), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 {
		t.Fatalf("read %d events, want 3", len(events))
	}
	for i, want := range []bool{true, false, false} {
		if got := events[i].DeniedByAuthorizer(); got != want {
			t.Errorf("%s: DeniedByAuthorizer() = %v, want %v (annotations %v)", events[i], got, want, events[i].Annotations)
		}
	}
}
