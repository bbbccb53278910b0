package faults

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// tracker watches, for the whole suite, what must never be lost: the Elasticsearch PVCs
// (by UID), the generated keys and the bundled Elasticsearch users' passwords of every
// Monocle (by owner UID) and the update-idents Jobs (by owner UID and config hash). It records a violation the moment one happens, so a
// flap that is repaired before the end of a scenario is still caught.
type tracker struct {
	mu sync.Mutex
	// pvcs maps namespace/name to the UID first seen.
	pvcs map[string]types.UID
	// deletedNamespaces are the namespaces the suite deleted: their PVCs may go.
	deletedNamespaces map[string]bool
	// keys maps a Monocle UID to the generated keys first seen in its Secrets.
	keys map[types.UID]map[string]string
	// regenerate holds the Monocles whose keys the suite expects to be generated anew once
	// (both Secrets deleted).
	regenerate map[types.UID]bool
	// users maps a Monocle UID to the passwords first seen in its Secret
	// "<name>-elastic-users", by user.
	users map[types.UID]map[string]string
	// jobs maps "<owner UID>/<config hash>" to the UIDs of the update-idents Jobs created
	// for it.
	jobs       map[string]map[types.UID]string
	violations []string
}

func startTracker(ctx context.Context) (*tracker, error) {
	tr := &tracker{
		pvcs: map[string]types.UID{}, deletedNamespaces: map[string]bool{},
		keys: map[types.UID]map[string]string{}, regenerate: map[types.UID]bool{},
		users: map[types.UID]map[string]string{},
		jobs:  map[string]map[types.UID]string{},
	}
	all := informers.NewSharedInformerFactory(env.Kube, 0)
	managed := informers.NewSharedInformerFactoryWithOptions(env.Kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = resources.ManagedByLabel + "=" + resources.ManagedByValue
	}))
	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandlerFuncs
	}{
		{all.Core().V1().PersistentVolumeClaims().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { tr.pvc(obj, false) },
			UpdateFunc: func(_, obj any) { tr.pvc(obj, false) },
			DeleteFunc: func(obj any) { tr.pvc(obj, true) },
		}},
		{managed.Core().V1().Secrets().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    tr.secret,
			UpdateFunc: func(_, obj any) { tr.secret(obj) },
		}},
		{managed.Batch().V1().Jobs().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    tr.job,
			UpdateFunc: func(_, obj any) { tr.job(obj) },
		}},
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			return nil, err
		}
	}
	all.Start(ctx.Done())
	managed.Start(ctx.Done())
	all.WaitForCacheSync(ctx.Done())
	managed.WaitForCacheSync(ctx.Done())
	return tr, nil
}

func (tr *tracker) violate(format string, args ...any) {
	tr.violations = append(tr.violations, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
}

func (tr *tracker) pvc(obj any, deleted bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	p, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	key := p.Namespace + "/" + p.Name
	first, seen := tr.pvcs[key]
	switch {
	case !seen:
		tr.pvcs[key] = p.UID
	case first != p.UID && !tr.deletedNamespaces[p.Namespace]:
		tr.violate("PVC %s was replaced: UID %s, first %s", key, p.UID, first)
	}
	if (deleted || p.DeletionTimestamp != nil) && !tr.deletedNamespaces[p.Namespace] {
		tr.violate("PVC %s (UID %s) is being deleted", key, p.UID)
	}
}

func (tr *tracker) secret(obj any) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return
	}
	owner := metav1.GetControllerOf(s)
	if owner == nil || owner.Kind != "Monocle" {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if s.Name == owner.Name+"-elastic-users" {
		tr.elasticUsers(owner.UID, s)
		return
	}
	known := tr.keys[owner.UID]
	if known == nil {
		known = map[string]string{}
		tr.keys[owner.UID] = known
	}
	for _, k := range resources.GeneratedKeys {
		v := s.Data[k]
		if !resources.ValidKey(k, v) {
			// Removed or truncated by the suite: the operator is to restore it.
			continue
		}
		first, ok := known[k]
		switch {
		case !ok:
			known[k] = string(v)
		case first != string(v) && tr.regenerate[owner.UID]:
			known[k] = string(v)
		case first != string(v):
			tr.violate("%s of Monocle %s changed in Secret %s/%s", k, owner.Name, s.Namespace, s.Name)
			known[k] = string(v)
		}
	}
}

// elasticUsers records the passwords of s, the Secret "<name>-elastic-users" of the Monocle
// uid: each is generated once and kept, unless the suite deleted the Secret
// (expectUsersGenerated).
func (tr *tracker) elasticUsers(uid types.UID, s *corev1.Secret) {
	known := tr.users[uid]
	if known == nil {
		known = map[string]string{}
		tr.users[uid] = known
	}
	for _, u := range resources.ElasticUsers {
		v := string(s.Data[u])
		first, ok := known[u]
		switch {
		case v == "":
		case !ok:
			known[u] = v
		case first != v:
			tr.violate("the password of Elasticsearch user %s changed in Secret %s/%s", u, s.Namespace, s.Name)
			known[u] = v
		}
	}
}

// expectUsersGenerated forgets the users' passwords of a Monocle whose Secret
// "<name>-elastic-users" the suite deletes: the next ones seen are generated anew.
func (tr *tracker) expectUsersGenerated(uid types.UID) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	delete(tr.users, uid)
}

// usersOf returns the users' passwords first seen for the Monocle uid.
func (tr *tracker) usersOf(uid types.UID) map[string]string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return maps.Clone(tr.users[uid])
}

// expectRegeneration allows the generated keys of a Monocle to change once, when the suite
// has deleted both Secrets that hold them; keysRegenerated ends it.
func (tr *tracker) expectRegeneration(uid types.UID) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.regenerate[uid] = true
	delete(tr.keys, uid)
}

func (tr *tracker) keysRegenerated(uid types.UID) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	delete(tr.regenerate, uid)
}

func (tr *tracker) keysOf(uid types.UID) map[string]string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return maps.Clone(tr.keys[uid])
}

func (tr *tracker) job(obj any) {
	j, ok := obj.(*batchv1.Job)
	if !ok || j.Labels[resources.ComponentLabel] != resources.ComponentUpdateIdents {
		return
	}
	owner := metav1.GetControllerOf(j)
	if owner == nil {
		return
	}
	key := string(owner.UID) + "/" + j.Spec.Template.Annotations[resources.ConfigHashAnnotation]
	tr.mu.Lock()
	defer tr.mu.Unlock()
	uids := tr.jobs[key]
	if uids == nil {
		uids = map[types.UID]string{}
		tr.jobs[key] = uids
	}
	if _, ok := uids[j.UID]; ok {
		return
	}
	uids[j.UID] = j.Namespace + "/" + j.Name
	if len(uids) > 1 {
		var names []string
		for _, n := range uids {
			names = append(names, n)
		}
		sort.Strings(names)
		tr.violate("%d update-idents Jobs for the same config of Monocle %s: %s", len(uids), owner.Name, strings.Join(names, ", "))
	}
}

// namespaceDeleted exempts the PVCs of a namespace the suite deletes.
func (tr *tracker) namespaceDeleted(ns string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.deletedNamespaces[ns] = true
}

func (tr *tracker) isNamespaceDeleted(ns string) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.deletedNamespaces[ns]
}

// takeViolations returns the violations recorded so far and forgets them.
func (tr *tracker) takeViolations() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	v := tr.violations
	tr.violations = nil
	return v
}

// checkPVCs compares every PVC ever seen, outside deleted namespaces, with the API server.
func (tr *tracker) checkPVCs(ctx context.Context) []string {
	tr.mu.Lock()
	want := map[string]types.UID{}
	for k, uid := range tr.pvcs {
		ns, _, _ := strings.Cut(k, "/")
		if !tr.deletedNamespaces[ns] {
			want[k] = uid
		}
	}
	tr.mu.Unlock()
	var problems []string
	for k, uid := range want {
		ns, name, _ := strings.Cut(k, "/")
		p, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			problems = append(problems, fmt.Sprintf("PVC %s (UID %s) is gone", k, uid))
		case err != nil:
			problems = append(problems, fmt.Sprintf("PVC %s: %v", k, err))
		case p.UID != uid:
			problems = append(problems, fmt.Sprintf("PVC %s has UID %s, first %s", k, p.UID, uid))
		}
	}
	sort.Strings(problems)
	return problems
}

// pvcCount is the number of PVCs tracked outside deleted namespaces.
func (tr *tracker) pvcCount() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for k := range tr.pvcs {
		ns, _, _ := strings.Cut(k, "/")
		if !tr.deletedNamespaces[ns] {
			n++
		}
	}
	return n
}

// checkKeys compares the generated keys in both Secrets of every live Monocle, and the
// passwords of its bundled Elasticsearch's users, with the values first seen.
func (tr *tracker) checkKeys(ctx context.Context) []string {
	list, err := env.Monocles.MonocleV1alpha1().Monocles("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, m := range list.Items {
		if m.DeletionTimestamp != nil {
			continue
		}
		want := tr.keysOf(m.UID)
		if len(want) != len(resources.GeneratedKeys) {
			problems = append(problems, fmt.Sprintf("Monocle %s/%s: the suite never saw its generated keys", m.Namespace, m.Name))
			continue
		}
		for _, name := range []string{m.Name + "-api", m.Name + "-api-keys"} {
			s, err := env.Kube.CoreV1().Secrets(m.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				problems = append(problems, fmt.Sprintf("Secret %s/%s: %v", m.Namespace, name, err))
				continue
			}
			for k, v := range want {
				if !bytes.Equal(s.Data[k], []byte(v)) {
					problems = append(problems, fmt.Sprintf("Secret %s/%s: %s differs from its first value", m.Namespace, name, k))
				}
			}
		}
		users, err := env.Kube.CoreV1().Secrets(m.Namespace).Get(ctx, m.Name+"-elastic-users", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for u, v := range tr.usersOf(m.UID) {
			if string(users.Data[u]) != v {
				problems = append(problems, fmt.Sprintf("Secret %s/%s: the password of %s differs from its first value", m.Namespace, users.Name, u))
			}
		}
	}
	return problems
}
