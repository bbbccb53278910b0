package faults

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// adoptionWritesPerMonocle bounds the seeded write count after which a process is killed,
// per Monocle of the run. A fresh process adopts one earlier Monocle in about 24 writes
// within half a second (the creates answered AlreadyExists, the updates, the status), and
// switches a Service's selector once the new pods are ready, about half a second later
// (measured on 2 vCPUs). A first kill after write 1 to 12 always lands midway; a restarted
// process resumes further on, so later kills reach the end of the adoption, or find it done.
const adoptionWritesPerMonocle = 12

// adoptionIdle is how long a process may go without a write before it is killed anyway:
// it then waits for pods, or has nothing left to do.
const adoptionIdle = time.Second

// adoptionFirstWriteTimeout is how long a restarted process may take to make its first write
// of the adoption: it syncs its caches (under a second here) and resumes.
const adoptionFirstWriteTimeout = 15 * time.Second

// earlierJobName is the update-idents Job the earlier operator ran for every Monocle under
// this one name; adoption deletes it.
const earlierJobName = "update-idents-job"

// adoptionKill is one SIGKILL of an adoption run, for the notes.
type adoptionKill struct {
	// at is the kill's time after the un-pause; after its time after the killed process's
	// first write of the adoption.
	at, after time.Duration
	// planned is the seeded write count after which the process was to be killed; writes are
	// the writes it made in the run's namespace, last the last of them.
	planned, writes int
	last            string
	// idle is set when the process stopped writing before its planned write.
	idle bool
	// midway is set when the adoption was not complete when the process died.
	midway bool
}

func (k adoptionKill) String() string {
	when := fmt.Sprintf("after write %d", k.planned)
	if k.idle {
		when = fmt.Sprintf("idle for %s before write %d", adoptionIdle, k.planned)
	}
	return fmt.Sprintf("%s (%s after its first write, %s: %d writes, last %q; %s)",
		k.at.Round(time.Millisecond), k.after.Round(time.Millisecond), when, k.writes, k.last, k.where())
}

func (k adoptionKill) where() string {
	if k.midway {
		return "mid-adoption"
	}
	return "after the adoption was complete"
}

// short is the kill for the summary: its time after the un-pause, the writes of the killed
// process and the last of them, without the namespace.
func (k adoptionKill) short(ns string) string {
	return fmt.Sprintf("%s (%d writes, last %s; %s)", k.at.Round(time.Millisecond), k.writes,
		strings.Replace(k.last, " "+ns+"/", " ", 1), k.where())
}

// testAdoptionCrashes is scenario 7: Monocles left by the earlier operator
// (change-metrics/monocle-operator v0.0.2; testkit.EarlierFixture) are adopted while the
// operator is SIGKILLed at seeded random points. Each run creates, in a fresh namespace, one
// or two earlier Monocles, paused, with everything the earlier operator leaves (StatefulSet,
// Deployments, Services, Secret with a user token, user-edited ConfigMap, PVC, completed
// update-idents Job), waits for their pods, un-pauses them and kills the operator 2 or 3
// times. A kill comes right after a seeded number of the process's writes in the namespace
// (1 to adoptionWritesPerMonocle per Monocle), which the suite follows in the audit log, or
// once the process has not written for adoptionIdle: a delay drawn in seconds would mostly
// fall before the adoption starts or after it ends, since its writes take under half a
// second. The operator runs without leader election, as in scenario 1, so a restart resumes
// at once. Every run must end adopted (Ready, Adopted=True) with the PVC's UID,
// CRAWLERS_API_KEY, GITHUB_TOKEN and config.yaml unchanged, no PVC "data-<name>-elastic-0"
// ever created, the earlier Job gone, the Services selecting the instance, and no error loop
// afterwards; and at least one of its kills must have landed mid-adoption.
func testAdoptionCrashes(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "7. operator SIGKILLed mid-adoption of earlier-operator Monocles")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 7))
	fixture := filepath.Join(env.Root, testkit.EarlierFixture)

	// The schedule, drawn before anything runs so that it depends on the seed alone: per run,
	// the number of Monocles (two in every other run) and after how many writes each process
	// is killed.
	type runPlan struct {
		monocles  int
		killAfter []int
	}
	plans := make([]runPlan, env.size.adoptionRuns)
	for r := range plans {
		plans[r].monocles = 1 + r%2
		for range 2 + rng.IntN(2) {
			plans[r].killAfter = append(plans[r].killAfter, 1+rng.IntN(adoptionWritesPerMonocle*plans[r].monocles))
		}
	}
	for r, p := range plans {
		t.Logf("run %d: %d Monocles, kills after writes %v (seed %d)", r, p.monocles, p.killAfter, env.seed)
	}

	op := env.operators.start(t, "--leader-elect=false")
	midway, total := 0, 0
	for r, plan := range plans {
		ns := fmt.Sprintf("faults-adopt-%d", r)
		if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
			sc.Fatal(err)
		}
		var earlier []*testkit.EarlierMonocle
		for i := range plan.monocles {
			nm := fmt.Sprintf("adopt-%d-%c", r, 'a'+i)
			// The earlier operator's update-idents-job is made for the first Monocle of a
			// namespace only: it had one name for all.
			e, err := testkit.CreateEarlierOperatorMonocle(ctx, env.Kubectl, fixture, ns, nm)
			if err != nil {
				sc.Fatal(err)
			}
			earlier = append(earlier, e)
		}
		for _, e := range earlier {
			if err := testkit.WaitEarlierRolledOut(ctx, env.Kubectl, e, 2*time.Minute); err != nil {
				sc.Fatal(err)
			}
			// The operator has seen it paused (and written that), so every write it makes in
			// the namespace after the un-pause is the adoption's.
			if err := testkit.Poll(ctx, 200*time.Millisecond, 30*time.Second, e.Name+" reported paused", func(ctx context.Context) error {
				return pausedReported(ctx, e.Namespace, e.Name)
			}); err != nil {
				sc.Fatal(err)
			}
		}

		// testkit.UnpauseMonocle runs kubectl, which takes longer than the operator needs to
		// start adopting the first Monocle: un-pause them all through the client, at once.
		unpausedAt := time.Now()
		for _, e := range earlier {
			if err := unpause(ctx, e.Namespace, e.Name); err != nil {
				sc.Fatal(err)
			}
		}
		runOps := []*operator{op}
		var kills []adoptionKill
		lastRestart := unpausedAt
		for _, n := range plan.killAfter {
			// A restarted process writes within tens of milliseconds, and its kill is timed
			// on its writes: read its identity every 5 ms.
			id, err := op.identityPolling(30*time.Second, 5*time.Millisecond)
			if err != nil {
				sc.Fatal(err)
			}
			first, idle, err := awaitWrites(ctx, id, ns, unpausedAt, n)
			if err != nil {
				if adoptionState(ctx, earlier) == nil {
					// The previous process finished the adoption: nothing is left to interrupt.
					break
				}
				sc.Fatalf("run %d: %v", r, err)
			}
			if err := op.kill(); err != nil {
				sc.Fatal(err)
			}
			k := adoptionKill{at: time.Since(unpausedAt), after: time.Since(first), planned: n, idle: idle,
				midway: adoptionState(ctx, earlier) != nil}
			op = env.operators.start(t, "--leader-elect=false")
			lastRestart = time.Now()
			runOps = append(runOps, op)
			// The dead process's requests have all completed by now.
			writes, err := adoptionWrites(id, ns, unpausedAt)
			if err != nil {
				sc.Fatal(err)
			}
			k.writes = len(writes)
			if len(writes) > 0 {
				k.last = writes[len(writes)-1].String()
			}
			k.midway = k.midway && k.writes > 0
			kills = append(kills, k)
			total++
			if k.midway {
				midway++
			}
			t.Logf("run %d: kill %d at %s", r, len(kills), k)
			if !k.midway {
				break
			}
		}

		conv, err := waitConverged(ctx, crashReadyBudget, []string{ns}, func(ctx context.Context) error {
			return adoptionState(ctx, earlier)
		})
		ok := err == nil
		if err != nil {
			sc.Errorf("run %d: adopted and Ready within %s of the last restart: %v", r, crashReadyBudget, err)
		}
		converge := conv.last().Sub(lastRestart)
		for _, e := range earlier {
			if p := neverDefaultPVC(e); p != "" {
				ok = false
				sc.Errorf("run %d: %s", r, p)
			}
		}
		if !slices.ContainsFunc(kills, func(k adoptionKill) bool { return k.midway }) {
			ok = false
			sc.Errorf("run %d: no kill landed mid-adoption (kills: %s); the run tested nothing", r, killList(kills))
		}
		var before testkit.Metrics
		if err := testkit.Poll(ctx, 200*time.Millisecond, 30*time.Second, op.Name+" serves /metrics", func(ctx context.Context) error {
			before, err = op.Metrics(ctx)
			return err
		}); err != nil {
			sc.Fatal(err)
		}
		_, noLoop := checkNoErrorLoop(ctx, t, op, before, time.Now(), "adopted namespace "+ns)
		ok = ok && noLoop
		errorLines := 0
		for _, o := range runOps {
			n, _ := o.errorLines(unpausedAt)
			errorLines += n
		}
		names := make([]string, len(earlier))
		for i, e := range earlier {
			names[i] = e.Name
		}
		short := make([]string, len(kills))
		for i, k := range kills {
			short[i] = k.short(ns)
		}
		sc.note("run %d, %s (%s): killed at %s after the un-pause; adopted and Ready %s after the last restart; %d error log lines in all",
			r, ns, strings.Join(names, ", "), strings.Join(short, ", "), converge.Round(100*time.Millisecond), errorLines)
		sc.run(ok, max(converge, time.Millisecond))
	}
	sc.note("%d runs, %d SIGKILLs, %d of them mid-adoption (seed %d)", len(plans), total, midway, env.seed)

	checkInvariants(ctx, sc)
	if err := op.stop(); err != nil {
		sc.Error(err)
	}
}

// pausedReported returns nil once Monocle ns/name reports condition Paused True.
func pausedReported(ctx context.Context, ns, name string) error {
	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionPaused); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("condition Paused is %+v", c)
	}
	return nil
}

// unpause removes the paused annotation from Monocle ns/name.
func unpause(ctx context.Context, ns, name string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, monoclev1alpha1.PausedAnnotation)
	_, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("unpausing Monocle %s/%s: %w", ns, name, err)
	}
	return nil
}

// adoptionWrites are the counted writes in namespace ns, completed after since, of the
// operator process with leader election identity id, in log order.
func adoptionWrites(id, ns string, since time.Time) ([]testkit.AuditEvent, error) {
	return env.audit.Between(since, time.Time{}, func(e testkit.AuditEvent) bool {
		return e.Identity() == id && e.ObjectRef.Namespace == ns && counted(e) && e.IsWrite()
	})
}

// awaitWrites follows the audit log until the operator process with identity id has made n
// writes in namespace ns after since, or has made at least one and then none for
// adoptionIdle (idle), and returns when its first write completed. It fails when the
// process makes no write within adoptionFirstWriteTimeout.
func awaitWrites(ctx context.Context, id, ns string, since time.Time, n int) (first time.Time, idle bool, err error) {
	start := time.Now()
	// No overall timeout: once the process writes, it either reaches n writes or goes idle.
	err = wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		writes, err := adoptionWrites(id, ns, since)
		switch {
		case err != nil:
			return false, err
		case len(writes) >= n:
			first = writes[0].Completed
			return true, nil
		case len(writes) > 0 && time.Since(writes[len(writes)-1].Completed) > adoptionIdle:
			first, idle = writes[0].Completed, true
			return true, nil
		case len(writes) == 0 && time.Since(start) > adoptionFirstWriteTimeout:
			return false, fmt.Errorf("operator %s made no write in %s within %s", id, ns, adoptionFirstWriteTimeout)
		}
		return false, nil
	})
	return first, idle, err
}

// adoptionState returns nil once every earlier Monocle of earlier is adopted as an adoption
// must end, or an error naming the first thing that is not: condition Adopted True; the PVC
// with its first UID, labelled with the instance; CRAWLERS_API_KEY and the user's
// GITHUB_TOKEN unchanged in Secret "<name>-api", MONOCLE_JWK_GEN_KEY added; config.yaml
// unchanged; the earlier update-idents Job gone; the Services selecting the instance.
// Readiness is waitConverged's.
func adoptionState(ctx context.Context, earlier []*testkit.EarlierMonocle) error {
	for _, e := range earlier {
		if err := adopted(ctx, e); err != nil {
			return fmt.Errorf("%s/%s: %w", e.Namespace, e.Name, err)
		}
	}
	return nil
}

func adopted(ctx context.Context, e *testkit.EarlierMonocle) error {
	m, err := env.Monocles.MonocleV1alpha1().Monocles(e.Namespace).Get(ctx, e.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionAdopted); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("condition Adopted is %+v", c)
	}
	pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(e.Namespace).Get(ctx, e.PVCName, metav1.GetOptions{})
	switch {
	case err != nil:
		return fmt.Errorf("PVC %s: %w", e.PVCName, err)
	case string(pvc.UID) != e.PVCUID:
		return fmt.Errorf("PVC %s has UID %s, was %s", e.PVCName, pvc.UID, e.PVCUID)
	case pvc.DeletionTimestamp != nil:
		return fmt.Errorf("PVC %s is being deleted", e.PVCName)
	case pvc.Labels[resources.InstanceLabel] != e.Name:
		return fmt.Errorf("PVC %s has labels %v", e.PVCName, pvc.Labels)
	}
	s, err := env.Kube.CoreV1().Secrets(e.Namespace).Get(ctx, e.Name+"-api", metav1.GetOptions{})
	if err != nil {
		return err
	}
	for k, v := range e.SecretData {
		if !bytes.Equal(s.Data[k], v) {
			return fmt.Errorf("Secret %s-api: %s changed (%d bytes, was %d)", e.Name, k, len(s.Data[k]), len(v))
		}
	}
	if !resources.ValidKey(resources.JWKGenKeyKey, s.Data[resources.JWKGenKeyKey]) {
		return fmt.Errorf("Secret %s-api has no valid %s", e.Name, resources.JWKGenKeyKey)
	}
	cm, err := env.Kube.CoreV1().ConfigMaps(e.Namespace).Get(ctx, e.Name+"-api", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cm.Data[resources.ConfigKey] != e.Config {
		return fmt.Errorf("ConfigMap %s-api: config.yaml changed:\n%s", e.Name, cm.Data[resources.ConfigKey])
	}
	if _, err := env.Kube.BatchV1().Jobs(e.Namespace).Get(ctx, earlierJobName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("Job %s is still there (%v)", earlierJobName, err)
	}
	for _, svc := range []string{e.Name + "-api", e.Name + "-elastic"} {
		s, err := env.Kube.CoreV1().Services(e.Namespace).Get(ctx, svc, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.Spec.Selector[resources.InstanceLabel] != e.Name {
			return fmt.Errorf("Service %s selects %v", svc, s.Spec.Selector)
		}
	}
	return nil
}

// neverDefaultPVC returns a problem when the suite's PVC tracker ever saw the claim
// "data-<name>-elastic-0" that a Monocle of this operator's own would get: an adopted
// Elasticsearch must keep the earlier operator's claim.
func neverDefaultPVC(e *testkit.EarlierMonocle) string {
	key := e.Namespace + "/data-" + e.Name + "-elastic-0"
	env.track.mu.Lock()
	uid, seen := env.track.pvcs[key]
	env.track.mu.Unlock()
	if seen {
		return fmt.Sprintf("PVC %s (UID %s) was created for an adopted Monocle, whose data is in %s", key, uid, e.PVCName)
	}
	return ""
}

func killList(kills []adoptionKill) string {
	if len(kills) == 0 {
		return "none"
	}
	parts := make([]string, len(kills))
	for i, k := range kills {
		parts[i] = k.String()
	}
	return strings.Join(parts, ", ")
}
