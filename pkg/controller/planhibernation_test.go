package controller

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// applyWrites returns objects with the workloads the writes update replaced by what they
// write, each given the status of its controller having acted (withReadyStatus): the pods
// of a scaled-down workload are gone, those of a scaled-up one ready.
func applyWrites(objects []runtime.Object, writes []core.Action) []runtime.Object {
	out := append([]runtime.Object(nil), objects...)
	for _, a := range writes {
		u, ok := a.(core.UpdateAction)
		if !ok {
			continue
		}
		obj := u.GetObject().DeepCopyObject()
		switch o := obj.(type) {
		case *appsv1.Deployment:
			o.Generation++
		case *appsv1.StatefulSet:
			o.Generation++
		default:
			continue
		}
		withReadyStatus(obj)
		if s, ok := obj.(*appsv1.StatefulSet); ok && ptr.Deref(s.Spec.Replicas, 1) == 0 {
			s.Status.Replicas, s.Status.ReadyReplicas, s.Status.UpdatedReplicas = 0, 0, 0
		}
		name := obj.(metav1.Object).GetName()
		for i, o := range out {
			if reflect.TypeOf(o) == reflect.TypeOf(obj) && o.(metav1.Object).GetName() == name {
				out[i] = obj
			}
		}
	}
	return out
}

// replicasWritten names the workloads the writes scale, with the replicas they write: "api=0".
func replicasWritten(writes []core.Action) []string {
	var out []string
	for _, a := range writes {
		u, ok := a.(core.UpdateAction)
		if !ok || u.GetSubresource() != "" {
			continue
		}
		switch o := u.GetObject().(type) {
		case *appsv1.Deployment:
			out = append(out, strings.TrimPrefix(o.Name, "demo-")+"="+string(rune('0'+ptr.Deref(o.Spec.Replicas, 1))))
		case *appsv1.StatefulSet:
			out = append(out, strings.TrimPrefix(o.Name, "demo-")+"="+string(rune('0'+ptr.Deref(o.Spec.Replicas, 1))))
		}
	}
	return out
}

// TestHibernateAndWake syncs a converged Monocle through a hibernation and a waking, each
// sync from the workloads the one before left with their controllers having acted: each sync
// scales one component, in the order crawler, API, Elasticsearch, then Elasticsearch, API,
// crawler; the status reports each phase, Ready is False with its reason and Degraded stays
// False; a hibernated Monocle's sync makes no write; events are Normal.
func TestHibernateAndWake(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	m.Spec.Hibernate = true
	type want struct {
		scaled []string
		phase  monoclev1alpha1.HibernationPhase
		reason string
	}
	steps := []want{
		{[]string{"crawler=0"}, monoclev1alpha1.HibernationHibernating, reasons.Hibernating},
		{[]string{"api=0"}, monoclev1alpha1.HibernationHibernating, reasons.Hibernating},
		{[]string{"elastic=0"}, monoclev1alpha1.HibernationHibernating, reasons.Hibernating},
		{nil, monoclev1alpha1.HibernationHibernated, reasons.Hibernated},
		{[]string{"elastic=1"}, monoclev1alpha1.HibernationWaking, reasons.Waking},
		{[]string{"api=1"}, monoclev1alpha1.HibernationWaking, reasons.Waking},
		{[]string{"crawler=1"}, monoclev1alpha1.HibernationWaking, reasons.Waking},
		{nil, "", reasons.AllComponentsReady},
	}
	for i, w := range steps {
		if w.phase == monoclev1alpha1.HibernationWaking && m.Spec.Hibernate {
			m.Spec.Hibernate = false
		}
		f, writes, status := resync(t, m, objects)
		if got := replicasWritten(writes); strings.Join(got, ",") != strings.Join(w.scaled, ",") {
			t.Fatalf("sync %d scaled %v, want %v (all writes %v)", i, got, w.scaled, describe(writes))
		}
		objects = applyWrites(objects, writes)
		m = status.DeepCopy()
		if got := m.Status.Hibernation; (w.phase == "") != (got == nil) || (got != nil && got.Phase != w.phase) {
			t.Fatalf("sync %d: status.hibernation %+v, want phase %q", i, got, w.phase)
		}
		ready, degraded := condition(t, m, monoclev1alpha1.ConditionReady), condition(t, m, monoclev1alpha1.ConditionDegraded)
		if ready.Reason != w.reason || degraded.Status != metav1.ConditionFalse {
			t.Errorf("sync %d: Ready %s %s, Degraded %s %s; want Ready %s and not Degraded", i, ready.Status, ready.Reason, degraded.Status, degraded.Reason, w.reason)
		}
		close(f.recorder.Events)
		for e := range f.recorder.Events {
			if strings.HasPrefix(e, "Warning") {
				t.Errorf("sync %d: event %q", i, e)
			}
		}
	}
	if c := condition(t, m, monoclev1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("awake: Ready %+v", c)
	}
	for _, c := range m.Status.Conditions {
		if c.Type == monoclev1alpha1.ConditionHibernated {
			t.Errorf("awake: the Hibernated condition stays: %+v", c)
		}
	}
}

// hibernated returns a converged Monocle hibernated to the end, and its objects.
func hibernated(t *testing.T, m *monoclev1alpha1.Monocle, userSecrets ...*corev1.Secret) (*monoclev1alpha1.Monocle, []runtime.Object) {
	t.Helper()
	m, objects := converged(t, m, userSecrets...)
	m.Spec.Hibernate = true
	for range 5 {
		_, writes, status := resync(t, m, objects, userSecrets...)
		objects, m = applyWrites(objects, writes), status.DeepCopy()
		if h := m.Status.Hibernation; h != nil && h.Phase == monoclev1alpha1.HibernationHibernated {
			if c := condition(t, m, monoclev1alpha1.ConditionHibernated); c.Status != metav1.ConditionTrue || c.Reason != reasons.Hibernated {
				t.Fatalf("Hibernated condition %+v", c)
			}
			return m, objects
		}
	}
	t.Fatalf("not hibernated after 5 syncs: %+v", m.Status.Hibernation)
	return nil, nil
}

// TestHibernatedMonocleHoldsChanges: while hibernated, an image change, a restore and a
// config change start nothing (no Deployment rolled, no Job), and their conditions say they
// wait for the Monocle to wake; a PVC, Secrets and ConfigMap are never deleted.
func TestHibernatedMonocleHoldsChanges(t *testing.T) {
	tokens := newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"})
	m, objects := hibernated(t, withTokens(newMonocle("demo")), tokens)
	_, writes, _ := resync(t, m, objects, tokens)
	expectActions(t, writes)

	m.Spec.Image = "quay.io/change-metrics/monocle:1.11.3"
	m.Spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: "nightly"}
	m.Spec.Config = strings.Replace(githubConfig, "2024-01-01", "2023-01-01", 1)
	f, writes, status := resync(t, m, objects, tokens)
	for _, a := range writes {
		switch a.GetResource().Resource {
		case "configmaps":
			// The new config is written; the pods that would read it are not started.
		case "deployments":
			d := a.(core.UpdateAction).GetObject().(*appsv1.Deployment)
			if ptr.Deref(d.Spec.Replicas, 1) != 0 || d.Spec.Template.Spec.Containers[0].Image == m.Spec.Image {
				t.Errorf("hibernated: %s written with %d replicas and image %s", d.Name, ptr.Deref(d.Spec.Replicas, 1), d.Spec.Template.Spec.Containers[0].Image)
			}
		default:
			t.Errorf("hibernated: %s", describe([]core.Action{a}))
		}
	}
	for _, a := range f.kubeclient.Actions() {
		if a.GetVerb() == "delete" || a.GetResource().Resource == "jobs" && a.GetVerb() == "create" {
			t.Errorf("hibernated: %s", describe([]core.Action{a}))
		}
	}
	if status.Status.Upgrade != nil || status.Status.Restore != nil || status.Status.Hibernation.Phase != monoclev1alpha1.HibernationHibernated {
		t.Errorf("status.upgrade %+v, status.restore %+v, status.hibernation %+v; want neither started, still hibernated",
			status.Status.Upgrade, status.Status.Restore, status.Status.Hibernation)
	}
	for _, typ := range []string{monoclev1alpha1.ConditionUpgraded, monoclev1alpha1.ConditionRestored} {
		if c := condition(t, status, typ); c.Reason != reasons.WaitingForWake {
			t.Errorf("%s = %+v, want WaitingForWake", typ, c)
		}
	}
	if c := condition(t, status, monoclev1alpha1.ConditionReady); c.Reason != reasons.Hibernated {
		t.Errorf("Ready = %+v, want Hibernated", c)
	}
}

// TestHibernationDeferredByRestore: spec.hibernate set while a restore runs is not acted on:
// Elasticsearch keeps running, status.hibernation stays unset, and the Hibernated condition
// and a Normal event say why.
func TestHibernationDeferredByRestore(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	m.Spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: "nightly"}
	m.Status.Restore = &monoclev1alpha1.RestoreStatus{Snapshot: "nightly", Phase: monoclev1alpha1.RestoreRestoring}
	m.Spec.Hibernate = true
	f, writes, status := resync(t, m, objects)
	for _, a := range writes {
		if a.GetResource().Resource == "statefulsets" {
			t.Errorf("deferred: %s", describe([]core.Action{a}))
		}
	}
	if status.Status.Hibernation != nil {
		t.Errorf("status.hibernation %+v, want none", status.Status.Hibernation)
	}
	c := condition(t, status, monoclev1alpha1.ConditionHibernated)
	if c.Status != metav1.ConditionFalse || c.Reason != reasons.HibernationDeferred || !strings.Contains(c.Message, "restore of snapshot nightly") {
		t.Errorf("Hibernated = %+v", c)
	}
	if r := condition(t, status, monoclev1alpha1.ConditionReady); r.Reason != reasons.Restoring {
		t.Errorf("Ready = %+v, want the restore's reason", r)
	}
	close(f.recorder.Events)
	var events []string
	for e := range f.recorder.Events {
		events = append(events, e)
	}
	if !strings.Contains(strings.Join(events, "\n"), "Normal "+reasons.HibernationDeferred) {
		t.Errorf("events %q, want a Normal %s", events, reasons.HibernationDeferred)
	}
}

// TestElasticsearchWaitsForRunningJobs: a Job of the Monocle still running keeps
// Elasticsearch up once the API has no pod; it stops when the Job has finished.
func TestElasticsearchWaitsForRunningJobs(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	m.Spec.Hibernate = true
	for range 2 {
		_, writes, status := resync(t, m, objects)
		objects, m = applyWrites(objects, writes), status.DeepCopy()
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "demo-janitor-x", Namespace: m.Namespace,
		Labels:          resources.Labels(m, resources.ComponentUpdateIdents),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(m, monoclev1alpha1.SchemeGroupVersion.WithKind("Monocle"))}}}
	_, writes, status := resync(t, m, append(objects, job))
	if got := replicasWritten(writes); len(got) != 0 || !strings.Contains(status.Status.Hibernation.Message, "Jobs") {
		t.Errorf("with a Job running: scaled %v, message %q; want nothing, waiting for the Jobs", got, status.Status.Hibernation.Message)
	}
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: "True"}}
	if _, writes, _ = resync(t, m, append(objects, job)); strings.Join(replicasWritten(writes), ",") != "elastic=0" {
		t.Errorf("with the Job finished: scaled %v, want elastic=0", replicasWritten(writes))
	}
}

// TestHibernationReadsNothing: a hibernating Monocle's sync sends no request to
// Elasticsearch or the API, whose earlier health stands while their pods run.
func TestHibernationReadsNothing(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, srv := readingFixture(t, time.Hour)
	read := syncThroughFirstRead(ctx, t, f, cache.MetaObjectToName(m))
	before := len(srv.Requests())
	read.Spec.Hibernate = true
	g := newFixture(t)
	g.monocles, g.kubeobjects = []*monoclev1alpha1.Monocle{read}, f.kubeobjects
	g.operands = operand.Options{Interval: time.Millisecond, Timeout: 10 * time.Second, DialAddress: dialAddress(srv)}
	g.newController()
	if err := g.controller.syncHandler(ctx, cache.MetaObjectToName(read)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if got := srv.Requests()[before:]; len(got) != 0 {
		t.Errorf("a hibernating Monocle's sync sent %d requests: %+v", len(got), got)
	}
	status := writes(g.client.Actions())[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	if c := condition(t, status, monoclev1alpha1.ConditionElasticsearchHealthy); c.Reason != reasons.Yellow {
		t.Errorf("ElasticsearchHealthy = %+v, want the earlier read's Yellow", c)
	}
}

// readingSync syncs m, its workloads being objects, with a controller that reads
// Elasticsearch from es. With followRead, the sync is to start a read, whose end puts m's key
// in the queue, and a second sync follows with what the read found. It returns the writes of
// the syncs to the kube client, and m as the last sync wrote its status (as it was when none
// did).
func readingSync(ctx context.Context, t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object, es *testkit.FakeElasticsearch, followRead bool) ([]core.Action, *monoclev1alpha1.Monocle) {
	t.Helper()
	f := newFixture(t)
	f.monocles, f.kubeobjects = []*monoclev1alpha1.Monocle{m}, objects
	tr := es.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	f.operands = operand.Options{Interval: time.Hour, Timeout: 10 * time.Second, Transport: tr}
	c := f.newController()
	key := cache.MetaObjectToName(m)
	if err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	statusWrites := 0
	if followRead {
		// A sync that starts no read would leave the queue empty for good.
		timer := time.AfterFunc(10*time.Second, c.queue.ShutDown)
		item, shutdown := c.queue.Get()
		timer.Stop()
		if shutdown || item != key {
			t.Fatalf("queue gave %v (shut down after 10s: %v), want %v once a read of Elasticsearch ended; the sync wrote %v",
				item, shutdown, key, describe(writes(f.kubeclient.Actions())))
		}
		c.queue.Done(item)
		statusWrites = len(writes(f.client.Actions()))
		if err := c.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	status := m
	if w := writes(f.client.Actions()); len(w) > statusWrites {
		status = w[len(w)-1].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	}
	return writes(f.kubeclient.Actions()), status
}

// TestElasticsearchWaitsForRunningSnapshot: a snapshot running once the API has no pod keeps
// Elasticsearch up, the hibernation's message naming it; meanwhile the operand lists the
// repository, taking no snapshot (not even one the annotation asks for), and Elasticsearch
// stops once a read found the snapshot ended.
func TestElasticsearchWaitsForRunningSnapshot(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	const running = "scheduled-20261224-0300"
	m := newMonocle("demo")
	m.Spec.Backup = &monoclev1alpha1.BackupSpec{}
	m, objects := converged(t, m)
	m.Spec.Hibernate = true
	// The crawler, then the API, scaled to zero: neither has a pod left.
	for range 2 {
		_, writes, status := resync(t, m, objects)
		objects, m = applyWrites(objects, writes), status.DeepCopy()
	}
	es := testkit.StartFakeElasticsearch()
	t.Cleanup(es.Close)
	es.SetIndices(m.Namespace, m.Name, "monocle.config", "monocle.changes.1.demo")
	es.PutSnapshot(m.Namespace, m.Name, resources.BackupRepositoryName, testkit.FakeSnapshot{Name: running,
		State: testkit.SnapshotInProgress, Indices: []string{"monocle.changes.1.demo", "monocle.config"}})
	// The last read before the hibernation found the snapshot running; an on-demand snapshot
	// asked for since then is not taken while the Monocle hibernates.
	m.Status.Backup.Running = running
	m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "now"}

	kube, status := readingSync(ctx, t, m, objects, es, true)
	if got := replicasWritten(kube); len(got) != 0 {
		t.Errorf("with snapshot %s running: scaled %v, want nothing", running, got)
	}
	if h := status.Status.Hibernation; h == nil || h.Phase != monoclev1alpha1.HibernationHibernating ||
		!strings.Contains(h.Message, "Waiting for snapshot "+running+" to finish before stopping Elasticsearch") {
		t.Errorf("status.hibernation %+v, want Hibernating, waiting for snapshot %s", h, running)
	}
	if c := condition(t, status, monoclev1alpha1.ConditionHibernated); !strings.Contains(c.Message, "snapshot "+running) {
		t.Errorf("Hibernated = %+v, want it to name snapshot %s", c, running)
	}
	if b := status.Status.Backup; b == nil || b.Running != running {
		t.Errorf("status.backup %+v, want %s running", b, running)
	}

	es.FinishSnapshots(m.Namespace, m.Name)
	_, status = readingSync(ctx, t, status, objects, es, true)
	if b := status.Status.Backup; b == nil || b.Running != "" || b.LastSuccessful == nil || b.LastSuccessful.Name != running {
		t.Errorf("status.backup %+v, want %s ended, successful, nothing running", b, running)
	}
	kube, status = readingSync(ctx, t, status, objects, es, false)
	if got := strings.Join(replicasWritten(kube), ","); got != "elastic=0" {
		t.Errorf("with the snapshot ended: scaled %v, want elastic=0", got)
	}
	if snaps := es.Snapshots(m.Namespace, m.Name, resources.BackupRepositoryName); len(snaps) != 1 || snaps[0].Name != running {
		t.Errorf("the repository holds %+v, want only %s: no snapshot taken while hibernating", snaps, running)
	}
	if status.Status.Backup.LastRequest != "" {
		t.Errorf("status.backup.lastRequest = %q, want the annotation not served while hibernating", status.Status.Backup.LastRequest)
	}
}
