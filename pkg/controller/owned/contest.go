package owned

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// Contested fields. The operator writes back the fields it owns (the drift rule, drift.go)
// when it finds them changed. Another writer that also sets them (a policy engine adding a
// toleration to every Deployment, a GitOps tool, a mutating admission webhook) writes them
// back in turn, and the two would undo each other forever, each write of a workload's pod
// template a rollout. Contests notices that and backs off:
//
//   - Set back: a field the operator just wrote (an update that repaired drift) differs again
//     within contestWindow, in a later version of the object, and did so after the operator's
//     write before (contestSetBacks in a row): a person who edits a field twice is answered by
//     two repairs, a writer that keeps at it is contested. The managedFields, read from the API
//     server at each set-back (the informers' caches drop them), name the field managers other
//     than the operator's that own the field or a field under it.
//   - Changed at admission: the object the API server returns from the operator's own create
//     or update already differs from what it sent in an owned field. A mutating admission
//     webhook changed it, and the managedFields name the operator itself: the API server
//     counts a webhook's changes as the request's
//     (https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management).
//
// The object is then contested: Ensure leaves it as it is for a back-off that starts at
// contestInitialBackoff and doubles, up to contestMaxBackoff, each time the fields are set
// back again (client-go's flowcontrol.Backoff, per object); it records a Warning event
// FieldContested, and the controller reports the contest in Degraded. Once the back-off has
// passed, Ensure writes the object again. A drift in other fields (the Monocle changed) is
// written at once, back-off or not. The contest ends, and its back-off with it, when Ensure
// finds the object without drift and either has not written it since the last set-back (the
// other writer gave way, or the Monocle's spec now gives the same value) or wrote it at least
// contestWindow ago. It is kept in memory: after a restart the next set-back finds it again.
const (
	// contestInitialBackoff is the first back-off of a contested object.
	contestInitialBackoff = 30 * time.Second
	// contestMaxBackoff caps the back-off.
	contestMaxBackoff = time.Hour
	// contestWindow is how soon after the operator's write a write-back of the same field is
	// a set-back, and how long a rewrite must stand for the contest to end.
	contestWindow = 2 * time.Minute
	// contestSetBacks is how many set-backs in a row start a contest.
	contestSetBacks = 2
)

// Contest is an owned object whose fields another writer sets back after the operator writes
// them, or that a mutating admission webhook changes in the operator's own writes.
type Contest struct {
	// Kind and Name name the object ("Deployment", "demo-api").
	Kind, Name string
	// Fields are the contested fields' paths, "spec.template.spec.tolerations".
	Fields []string
	// Managers are the field managers of the object's managedFields that own a contested
	// field or a field under it, the operator's aside, the latest writer first; empty when
	// none does. For a change at admission, the operator's own.
	Managers []string
	// AtAdmission reports a change at admission of the operator's own write.
	AtAdmission bool
	// Backoff is how long the operator leaves the object after the last set-back; Retry is
	// when it writes it again.
	Backoff time.Duration
	Retry   time.Time

	paths []fieldPath
}

// String says which fields of which object who sets back: `Deployment demo-api:
// spec.template.spec.tolerations set back by field manager "kyverno"`.
func (c Contest) String() string {
	what := fmt.Sprintf("%s %s: %s", c.Kind, c.Name, strings.Join(c.Fields, ", "))
	quoted := make([]string, len(c.Managers))
	for i, m := range c.Managers {
		quoted[i] = fmt.Sprintf("%q", m)
	}
	switch {
	case c.AtAdmission:
		return fmt.Sprintf("%s changed at admission of the operator's write (a mutating admission webhook; managedFields name the operator, %s)",
			what, strings.Join(quoted, ", "))
	case len(c.Managers) == 1:
		return fmt.Sprintf("%s set back by field manager %s", what, quoted[0])
	case len(c.Managers) > 1:
		return fmt.Sprintf("%s set back by field managers %s", what, strings.Join(quoted, ", "))
	}
	return what + " set back by a writer that managedFields do not name"
}

// Contests tracks, per owned object, the operator's last write and the object's contest. It
// is safe for concurrent use. The zero value is not usable: see NewContests.
type Contests struct {
	clock   clock.Clock
	backoff *flowcontrol.Backoff

	mu      sync.Mutex
	objects map[objectKey]*tracked
}

// NewContests returns an empty Contests that reads the time from c.
func NewContests(c clock.Clock) *Contests {
	b := flowcontrol.NewBackOff(contestInitialBackoff, contestMaxBackoff)
	b.Clock = c
	return &Contests{clock: c, backoff: b, objects: map[objectKey]*tracked{}}
}

// objectKey names an owned object.
type objectKey struct{ kind, namespace, name string }

func (k objectKey) String() string { return k.kind + "/" + k.namespace + "/" + k.name }

// tracked is what Contests keeps of an object: the Monocle that owns it, the operator's last
// write (nil: none since the contest's last set-back, or none recent), the set-backs in a row
// and its contest (nil: none).
type tracked struct {
	monocle     types.UID
	monocleName string
	wrote       *lastWrite
	setBacks    int
	contest     *Contest
}

// lastWrite is an update of the operator: when, the object's resourceVersion before and after,
// and the fields it wrote back.
type lastWrite struct {
	at       time.Time
	from, to string
	paths    []fieldPath
	// desired is a copy of the object the operator wanted then: a field that differs again
	// because the Monocle changed what it wants is no set-back.
	desired any
}

// action is what Ensure does with a drifted object.
type action int

const (
	// write: update it.
	write action = iota
	// hold: leave it, its contest's back-off runs.
	hold
	// suspect: fields the operator just wrote differ again; the managedFields tell whether
	// another writer set them back.
	suspect
)

// decide returns what Ensure does with the object key, drifted in paths from the live version
// live, and for suspect, the fields set back.
func (c *Contests) decide(key objectKey, live metav1.Object, paths []fieldPath) (action, []fieldPath) {
	if c == nil || len(paths) == 0 {
		return write, nil
	}
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.objects[key]
	if t == nil {
		return write, nil
	}
	if t.contest != nil && c.backoff.IsInBackOffSinceUpdate(key.String(), now) && subset(paths, t.contest.paths) {
		return hold, nil
	}
	w := t.wrote
	if w == nil || now.Sub(w.at) >= contestWindow {
		// Set-backs count in a row only.
		t.setBacks = 0
		return write, nil
	}
	// The cache may still hold the version the operator updated (from); a version other than
	// that and the one it wrote (to) is a later write of someone else.
	if rv := live.GetResourceVersion(); rv == w.from || rv == w.to {
		return write, nil
	}
	if back := intersect(paths, w.paths); len(back) > 0 {
		return suspect, back
	}
	return write, nil
}

// wrote notes that the operator updated the object key of m from resourceVersion from to to,
// writing back the fields paths of desired, a copy of which it keeps.
func (c *Contests) wrote(key objectKey, m *monoclev1alpha1.Monocle, from, to string, paths []fieldPath, desired any) {
	if c == nil {
		return
	}
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entry(key, m).wrote = &lastWrite{at: now, from: from, to: to, paths: paths, desired: desired}
}

// lastDesired returns the object the operator wanted at its last write of the object key, and
// false when it keeps none.
func (c *Contests) lastDesired(key objectKey) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.objects[key]; t != nil && t.wrote != nil && t.wrote.desired != nil {
		return t.wrote.desired, true
	}
	return nil, false
}

// setBack notes that managers set back the fields paths of the object key of m after the
// operator wrote them. It returns the object's contest, started or grown, and true once the
// set-backs in a row reach contestSetBacks or the object is contested already; false before.
func (c *Contests) setBack(key objectKey, m *monoclev1alpha1.Monocle, paths []fieldPath, managers []string) (Contest, bool) {
	c.mu.Lock()
	t := c.entry(key, m)
	t.setBacks++
	starts := t.contest != nil || t.setBacks >= contestSetBacks
	c.mu.Unlock()
	if !starts {
		return Contest{}, false
	}
	return c.contested(key, m, paths, managers, false), true
}

// contested starts the contest of the object key of m over the fields paths, set back by
// managers (or changed at admission), or extends the one it has: the back-off grows and the
// fields and managers join the contest's. It returns the contest.
func (c *Contests) contested(key objectKey, m *monoclev1alpha1.Monocle, paths []fieldPath, managers []string, atAdmission bool) Contest {
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.entry(key, m)
	c.backoff.Next(key.String(), now)
	d := c.backoff.Get(key.String())
	if t.contest != nil {
		paths = union(t.contest.paths, paths)
		managers = unionStrings(managers, t.contest.Managers)
	}
	fields := make([]string, len(paths))
	for i, p := range paths {
		fields[i] = p.String()
	}
	t.contest = &Contest{Kind: key.kind, Name: key.name, Fields: fields, Managers: managers, AtAdmission: atAdmission,
		Backoff: d, Retry: now.Add(d), paths: paths}
	t.wrote = nil
	return *t.contest
}

// converged notes that Ensure found the object key without drift. It ends the object's
// contest when the operator has not written it since the last set-back or its last write is
// contestWindow old, and reports whether it did; it drops what it keeps of an object with
// neither a contest nor a recent write.
func (c *Contests) converged(key objectKey) (ended bool) {
	if c == nil {
		return false
	}
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.objects[key]
	if t == nil {
		return false
	}
	if t.wrote != nil && now.Sub(t.wrote.at) < contestWindow {
		return false
	}
	delete(c.objects, key)
	c.backoff.Reset(key.String())
	return t.contest != nil
}

// forget drops what c keeps of the object key.
func (c *Contests) forget(key objectKey) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objects, key)
	c.backoff.Reset(key.String())
}

// entry returns the tracked object key of m, made when missing. c.mu must be held.
func (c *Contests) entry(key objectKey, m *monoclev1alpha1.Monocle) *tracked {
	t := c.objects[key]
	if t == nil {
		t = &tracked{monocle: m.UID, monocleName: m.Name}
		c.objects[key] = t
	}
	return t
}

// Of returns the contests in force of the objects of m, by kind and name: those whose
// back-off runs. Once the back-off has passed and the operator wrote the object again, its
// contest is not reported while that write stands (the object is as the Monocle says); it
// is again, with a longer back-off, if the fields are set back within contestWindow.
func (c *Contests) Of(m *monoclev1alpha1.Monocle) []Contest {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Contest
	for key, t := range c.objects {
		if t.contest != nil && t.wrote == nil && t.monocle == m.UID && key.namespace == m.Namespace {
			out = append(out, *t.contest)
		}
	}
	slices.SortFunc(out, func(a, b Contest) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name)) })
	return out
}

// NextCheck returns when a sync of m is next due for its contests, and false when it has
// none: the end of a back-off, when the operator writes the object again, or contestWindow
// after that write, when the contest can end.
func (c *Contests) NextCheck(m *monoclev1alpha1.Monocle) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Time
	for key, t := range c.objects {
		if t.contest == nil || t.monocle != m.UID || key.namespace != m.Namespace {
			continue
		}
		at := t.contest.Retry
		if t.wrote != nil {
			at = t.wrote.at.Add(contestWindow)
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, !next.IsZero()
}

// Forget drops what c keeps of the objects of the Monocle namespace/name.
func (c *Contests) Forget(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, t := range c.objects {
		if key.namespace == namespace && t.monocleName == name {
			delete(c.objects, key)
			c.backoff.Reset(key.String())
		}
	}
}

// fieldOwners returns the field managers of obj's managedFields, self aside, that own a field
// of paths or a field under one, the latest writer first. An entry whose fieldsV1 does not
// decode is skipped.
func fieldOwners(obj metav1.Object, paths []fieldPath, self string) []string {
	type owner struct {
		name string
		at   time.Time
	}
	var owners []owner
	for _, e := range obj.GetManagedFields() {
		if e.Manager == self || e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			continue
		}
		if !slices.ContainsFunc(paths, func(p fieldPath) bool { return ownsAtOrUnder(set, p) }) {
			continue
		}
		o := owner{name: e.Manager}
		if e.Time != nil {
			o.at = e.Time.Time
		}
		owners = append(owners, o)
	}
	slices.SortStableFunc(owners, func(a, b owner) int { return b.at.Compare(a.at) })
	var out []string
	for _, o := range owners {
		if !slices.Contains(out, o.name) {
			out = append(out, o.name)
		}
	}
	return out
}

// ownsAtOrUnder reports whether set (a field manager's fields) holds the field at p or a field
// under it. A map key and a field name are both a field name in managedFields.
func ownsAtOrUnder(set *fieldpath.Set, p fieldPath) bool {
	if len(p) == 0 {
		return !set.Empty()
	}
	for _, name := range p[:len(p)-1] {
		set = set.WithPrefix(fieldpath.PathElement{FieldName: &name})
	}
	last := fieldpath.PathElement{FieldName: &p[len(p)-1]}
	return set.Members.Has(last) || !set.WithPrefix(last).Empty()
}

func pathKey(p fieldPath) string { return strings.Join(p, "\x00") }

// subset reports whether every path of a is in b.
func subset(a, b []fieldPath) bool {
	return !slices.ContainsFunc(a, func(p fieldPath) bool {
		return !slices.ContainsFunc(b, func(q fieldPath) bool { return pathKey(p) == pathKey(q) })
	})
}

// intersect returns the paths of a that are in b.
func intersect(a, b []fieldPath) []fieldPath {
	var out []fieldPath
	for _, p := range a {
		if slices.ContainsFunc(b, func(q fieldPath) bool { return pathKey(p) == pathKey(q) }) {
			out = append(out, p)
		}
	}
	return out
}

// without returns the paths of a that are not in b.
func without(a, b []fieldPath) []fieldPath {
	var out []fieldPath
	for _, p := range a {
		if !slices.ContainsFunc(b, func(q fieldPath) bool { return pathKey(p) == pathKey(q) }) {
			out = append(out, p)
		}
	}
	return out
}

// union returns the paths of a, then those of b not in a.
func union(a, b []fieldPath) []fieldPath {
	out := slices.Clone(a)
	for _, p := range b {
		if !slices.ContainsFunc(out, func(q fieldPath) bool { return pathKey(p) == pathKey(q) }) {
			out = append(out, p)
		}
	}
	return out
}

// unionStrings returns a, then the strings of b not in a.
func unionStrings(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
