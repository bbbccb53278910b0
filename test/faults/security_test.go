package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// previousReleaseNode is the path, relative to the repository root, of the bundled node's
// StatefulSet as the release before security builds it.
const previousReleaseNode = "test/testdata/previous-release/elastic-statefulset.yaml"

// securityStages are where in the switch of a node to security scenario 11 kills the
// operator: once a Monocle reaches each (securityReached).
var securityStages = []string{"users Secret generated", "node's StatefulSet secured", "node's pod restarted with security"}

// securityIndices are the indices the fake Elasticsearch holds for each Monocle of scenario
// 11, which the switch must keep.
var securityIndices = []string{"monocle.changes.1.demo", "monocle.config"}

// testSecuritySwitchCrashes is scenario 11: the switch of bundled nodes of the release before
// security, interrupted by operator SIGKILLs, keeps every volume and index and generates the
// users' passwords once. env.size.securityMonocles Monocles, one per namespace, are created
// and Ready; with the operator stopped, each node is put back as that release left it (its
// pod template from previousReleaseNode, no users Secret). The operator is started again and
// killed (and started again at once) when one of them reaches each of one or two seeded
// stages (securityStages). Each Monocle must end Ready with status authentication Enabled, a
// secured node on the PVC of the same UID, the same indices, the users' passwords first
// generated (the suite's tracker sees every version of the Secret), the operator reading as
// its user with that password, and its other Secrets and ConfigMap of the same UIDs.
func testSecuritySwitchCrashes(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "11. operator SIGKILLed mid-switch of nodes to security")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 11))
	stages := rng.Perm(len(securityStages))[:1+rng.IntN(2)]
	slices.Sort(stages)
	t.Logf("kills at stages %v (seed %d)", stages, env.seed)
	previous, err := previousReleaseTemplate()
	if err != nil {
		sc.Fatal(err)
	}

	const name = "sec"
	opArgs := []string{"--leader-elect=false", "--elasticsearch-read-interval=2s"}
	op := env.operators.start(t, opArgs...)
	var namespaces []string
	for i := range env.size.securityMonocles {
		ns := fmt.Sprintf("faults-security-%d", i)
		namespaces = append(namespaces, ns)
		if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
			sc.Fatal(err)
		}
		env.Elastic.SetIndices(ns, name, securityIndices...)
		if err := createMonocle(ctx, ns, name); err != nil {
			sc.Fatal(err)
		}
	}
	if _, err := waitConverged(ctx, crashReadyBudget, namespaces, nil); err != nil {
		sc.Fatalf("the Monocles to switch are not Ready: %v%s", err, testBedState(ctx))
	}
	if err := op.stop(); err != nil {
		sc.Fatal(err)
	}
	kept, pvcs, err := keptForSwitch(ctx, namespaces, name)
	if err != nil {
		sc.Fatal(err)
	}
	for _, ns := range namespaces {
		if err := putPreviousRelease(ctx, ns, name, previous); err != nil {
			sc.Fatal(err)
		}
	}
	if err := testkit.Poll(ctx, 250*time.Millisecond, 2*time.Minute, "nodes of the previous release running", func(ctx context.Context) error {
		for _, ns := range namespaces {
			s, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, name+"-elastic", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if resources.ElasticSecured(&s.Spec.Template.Spec) || !day2.StatefulSetRolledOut(s) || s.Status.ReadyReplicas != 1 {
				return fmt.Errorf("%s: the node of the previous release is not rolled out and ready", ns)
			}
		}
		return nil
	}); err != nil {
		sc.Fatalf("%v%s", err, testBedState(ctx))
	}

	start := time.Now()
	op = env.operators.start(t, opArgs...)
	var landed []string
	for _, stage := range stages {
		var at string
		if err := testkit.Poll(ctx, 10*time.Millisecond, 2*time.Minute, securityStages[stage], func(ctx context.Context) error {
			var err error
			at, err = securityReached(ctx, namespaces, name, stage)
			return err
		}); err != nil {
			sc.Fatalf("%v%s", err, testBedState(ctx))
		}
		if err := op.kill(); err != nil {
			sc.Fatal(err)
		}
		landed = append(landed, at)
		op = env.operators.start(t, opArgs...)
	}
	restarted := time.Now()
	conv, err := waitConverged(ctx, crashReadyBudget, namespaces, func(ctx context.Context) error {
		return allSecured(ctx, namespaces, name)
	})
	ok := err == nil
	if err != nil {
		sc.Errorf("secured and Ready within %s of the last restart: %v%s", crashReadyBudget, err, testBedState(ctx))
	}
	for _, ns := range namespaces {
		if err := switchedIntact(ctx, ns, name, pvcs[ns], kept[ns]); err != nil {
			ok = false
			sc.Errorf("%s: %v", ns, err)
		}
	}
	done := conv.last()
	converge := done.Sub(restarted)
	sc.note("%d nodes of the previous release switched to security: killed at %s; secured and Ready %s after the last restart, %s after the operator's start",
		len(namespaces), strings.Join(landed, "; "), converge.Round(100*time.Millisecond), done.Sub(start).Round(100*time.Millisecond))
	sc.run(ok, max(converge, time.Millisecond))
	checkInvariants(ctx, sc)
	if err := op.stop(); err != nil {
		sc.Error(err)
	}
}

// previousReleaseTemplate reads previousReleaseNode: the StatefulSet of the release before
// security.
func previousReleaseTemplate() (*appsv1.StatefulSet, error) {
	data, err := os.ReadFile(filepath.Join(env.Root, previousReleaseNode))
	if err != nil {
		return nil, err
	}
	var s appsv1.StatefulSet
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", previousReleaseNode, err)
	}
	if resources.ElasticSecured(&s.Spec.Template.Spec) {
		return nil, fmt.Errorf("%s runs with security on", previousReleaseNode)
	}
	return &s, nil
}

// putPreviousRelease puts the bundled node of Monocle name of ns back as the release before
// security left it: the pod template and spec hash of previous (with the live template's
// labels, which name the Monocle), no users Secret, which the suite's tracker is told to see
// generated anew, and a status without authentication, which that release did not report.
func putPreviousRelease(ctx context.Context, ns, name string, previous *appsv1.StatefulSet) error {
	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if c := m.Status.ElasticsearchCluster; c != nil {
		c.Authentication = ""
		if m, err = env.Monocles.MonocleV1alpha1().Monocles(ns).UpdateStatus(ctx, m, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	env.track.expectUsersGenerated(m.UID)
	err = env.Kube.CoreV1().Secrets(ns).Delete(ctx, resources.ElasticUsersSecretName(m), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, resources.ElasticName(m), metav1.GetOptions{})
		if err != nil {
			return err
		}
		template := previous.Spec.Template.DeepCopy()
		template.Labels = s.Spec.Template.Labels
		s.Spec.Template = *template
		s.Annotations[resources.SpecHashAnnotation] = previous.Annotations[resources.SpecHashAnnotation]
		_, err = env.Kube.AppsV1().StatefulSets(ns).Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

// securityReached returns where the first Monocle name of namespaces that has reached
// securityStages[stage] stands, or an error while none has.
func securityReached(ctx context.Context, namespaces []string, name string, stage int) (string, error) {
	for _, ns := range namespaces {
		if _, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, name+"-elastic-users", metav1.GetOptions{}); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return "", err
		}
		s, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, name+"-elastic", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		secured := resources.ElasticSecured(&s.Spec.Template.Spec)
		at := fmt.Sprintf("%s users generated, node secured %t, restarted %t", ns, secured, day2.StatefulSetRolledOut(s))
		switch {
		case stage == 0,
			stage == 1 && secured,
			stage == 2 && secured && day2.StatefulSetRolledOut(s):
			return at, nil
		}
	}
	return "", fmt.Errorf("no Monocle at the stage yet")
}

// allSecured returns nil once status.elasticsearchCluster.authentication of every Monocle
// name of namespaces is Enabled.
func allSecured(ctx context.Context, namespaces []string, name string) error {
	return everyMonocle(ctx, namespaces, name, func(m *monoclev1alpha1.Monocle) error {
		if c := m.Status.ElasticsearchCluster; c == nil || c.Authentication != monoclev1alpha1.ElasticsearchAuthenticationEnabled {
			return fmt.Errorf("status.elasticsearchCluster %+v", c)
		}
		return nil
	})
}

// keptForSwitch returns, for Monocle name of each of namespaces, what a switch to security
// must keep: the UIDs of its other Secrets and ConfigMap (keptUIDs) and its data PVC's UID,
// by namespace; switchedIntact checks them.
func keptForSwitch(ctx context.Context, namespaces []string, name string) (kept, pvcs map[string]string, err error) {
	kept, pvcs = map[string]string{}, map[string]string{}
	for _, ns := range namespaces {
		if kept[ns], err = keptUIDs(ctx, ns, name); err != nil {
			return nil, nil, err
		}
		pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-"+name+"-elastic-0", metav1.GetOptions{})
		if err != nil {
			return nil, nil, err
		}
		pvcs[ns] = string(pvc.UID)
	}
	return kept, pvcs, nil
}

// switchedIntact returns an error naming what of Monocle name of ns the switch did not keep:
// a secured node on the PVC of UID pvcUID, the fake's indices, the passwords the tracker saw
// first in the users Secret (the operator's the one it reads with), and the UIDs of the other
// Secrets and the ConfigMap (kept, as keptUIDs gives them).
func switchedIntact(ctx context.Context, ns, name, pvcUID, kept string) error {
	var problems []string
	s, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, name+"-elastic", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !resources.ElasticSecured(&s.Spec.Template.Spec) {
		problems = append(problems, "the node runs without security")
	}
	pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-"+name+"-elastic-0", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if string(pvc.UID) != pvcUID || pvc.DeletionTimestamp != nil {
		problems = append(problems, fmt.Sprintf("PVC %s has UID %s (was %s), deleting %t", pvc.Name, pvc.UID, pvcUID, pvc.DeletionTimestamp != nil))
	}
	var indices []string
	for _, i := range env.Elastic.Indices(ns, name) {
		indices = append(indices, i.Name)
	}
	slices.Sort(indices)
	if !slices.Equal(indices, securityIndices) {
		problems = append(problems, fmt.Sprintf("indices %v, want %v", indices, securityIndices))
	}
	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	users, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, name+"-elastic-users", metav1.GetOptions{})
	if err != nil {
		return err
	}
	first := env.track.usersOf(m.UID)
	for _, u := range resources.ElasticUsers {
		if v := string(users.Data[u]); v == "" || v != first[u] {
			problems = append(problems, fmt.Sprintf("the password of %s is not the first generated", u))
		}
	}
	// The fake records the password of the last read, which may be one from before the switch
	// until the next read (every --elasticsearch-read-interval).
	if err := testkit.Poll(ctx, 250*time.Millisecond, 30*time.Second, "the operator reading as its user", func(context.Context) error {
		if env.Elastic.BundledPassword(ns, name) != string(users.Data[resources.ElasticOperatorUser]) {
			return fmt.Errorf("the operator reads the node with another password than its user's")
		}
		return nil
	}); err != nil {
		problems = append(problems, err.Error())
	}
	if uids, err := keptUIDs(ctx, ns, name); err != nil || uids != kept {
		problems = append(problems, fmt.Sprintf("Secrets and ConfigMap %s (%v), were %s", uids, err, kept))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}
