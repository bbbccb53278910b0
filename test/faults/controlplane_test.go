package faults

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// Bounds of the operator's behaviour while the API server or etcd is down. Its client's
// rate limiter (--kube-api-qps, 200 by default) is what would cap a spinning operator, so
// spinning shows as a request rate rather than as a burnt core.
const (
	// outageMaxSettledRate bounds the operator's REST requests per second once an outage
	// has lasted outageSettle, all clients of the process together (informers relisting,
	// lease renewals, syncs): half the client's default limit. A retry loop without backoff
	// runs at that limit. The operator's syncs stop at their first failed request and are
	// retried with a backoff of their own (from 100ms, doubling, capped at 10s); most of what
	// remains is the reflectors' relists (from 800ms, doubling) and the lease renewals.
	outageMaxSettledRate = 100.0
	// outageMaxCPU bounds the operator's CPU use once an outage has lasted outageSettle, in
	// cores: over its first second the operator still finishes the syncs under way when the
	// component went down, so, like the request rate, its CPU use is bounded once settled.
	outageMaxCPU = 0.5
	// outageSettle is when, into an outage, the settled request rate and CPU use start being
	// measured.
	outageSettle = time.Second
	// outageDowntime is how long a component stays down before it is started again.
	outageDowntime = 3 * time.Second

	// reflectorMaxDelay is the longest delay of client-go's reflectors between two attempts
	// to watch or list: their backoff (k8s.io/client-go/tools/cache/reflector.go) starts at
	// 800ms, doubles up to 30s and adds up to 100% jitter, and is reset only after two
	// minutes without a failure. Every informer, the operator's and kube-controller-manager's
	// and kwok's alike, follows it, so after a few API server restarts within two minutes
	// their watches wait up to this long.
	reflectorMaxDelay = 60 * time.Second
	// watchResumeBound bounds how long after the API server is back the operator's watches
	// have resumed: a re-watch waits one reflector delay and, when the restarted server's
	// watch cache no longer has the old resourceVersion (410 Gone), the relist waits another.
	// The suite measured up to 106s from the kill to the operator's last relist, at the third
	// restart in two minutes.
	// A clean-clone CI run then saw a Service watch resume more than 140s after the server was
	// back (a third delay after a failed attempt), so the bound allows three.
	watchResumeBound = 3 * reflectorMaxDelay
	// restartConvergeTimeout bounds the convergence after a restart: the watches of every
	// component resume within watchResumeBound, and the operator and the controllers then
	// need a few seconds. The suite measured up to 119s after the server was back; the rest
	// is headroom for a slower machine.
	restartConvergeTimeout = watchResumeBound + 2*time.Minute
	// reactionTimeout bounds how long the operator takes to act on a change it watches once
	// its watches have resumed.
	reactionTimeout = 20 * time.Second
)

// testControlPlaneRestarts is scenario 3: right after Monocles are created and edited (so
// their watch events may be in flight and their syncs under way), kube-apiserver or etcd is
// SIGKILLed and started again with the same flags and data. The operator, leader-elected with
// the default lease timings, must neither exit nor spin: its request rate and CPU use during
// the outage are bounded, its failed syncs show in monocle_operator_syncs_total and its failed
// requests in rest_client_requests_total; once the component is back every create and edit
// is reconciled, and its watches resume: after an API server restart a Monocle edited and an
// owned Service deleted are acted on within reactionTimeout of the later of convergence and
// watchResumeBound after the server was back.
func testControlPlaneRestarts(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "3. kube-apiserver and etcd restarts")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 3))
	ns := "faults-restart"
	if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
		sc.Fatal(err)
	}
	op := env.operators.start(t)
	if _, err := waitLeader(ctx, 60*time.Second, []*operator{op}); err != nil {
		sc.Fatal(err)
	}
	// The rounds start once the operator has worked through its first syncs of the Monocles
	// earlier scenarios left (a core for a few seconds with a hundred of them), so that what
	// it does during an outage is what the outage interrupts.
	if err := waitQueueIdle(ctx, op, time.Minute); err != nil {
		sc.Fatal(err)
	}
	before, err := op.Metrics(ctx)
	if err != nil {
		sc.Fatal(err)
	}

	var live []string
	seq := 0
	peakRate := 0.0
	for r := range 2 * env.size.restarts {
		component := localcluster.ComponentAPIServer
		if r%2 == 1 {
			component = localcluster.ComponentEtcd
		}
		var created []string
		for range env.size.restartMonocles {
			seq++
			nm := fmt.Sprintf("restart-%02d", seq)
			if err := createMonocle(ctx, ns, nm); err != nil {
				sc.Fatal(err)
			}
			created = append(created, nm)
		}
		variant := r + 1
		var edited []string
		for _, i := range rng.Perm(len(live))[:min(2, len(live))] {
			if err := editMonocle(ctx, ns, live[i], func(m *monoclev1alpha1.Monocle) { m.Spec.Config = configFor(variant) }); err != nil {
				sc.Fatal(err)
			}
			edited = append(edited, live[i])
		}
		live = append(live, created...)
		// Strike mid-reconcile: as soon as the operator has written the first object of the
		// first Monocle created (its keys' Secret, the first thing a sync writes), so the
		// syncs of the new Monocles are under way.
		if err := testkit.Poll(ctx, 200*time.Millisecond, 30*time.Second, "the operator reconciles "+created[0], func(ctx context.Context) error {
			_, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, created[0]+"-api-keys", metav1.GetOptions{})
			return err
		}); err != nil {
			sc.Fatal(err)
		}

		m0, err := op.Metrics(ctx)
		if err != nil {
			sc.Fatal(err)
		}
		cpu0, _ := op.CPUSeconds()
		kwokCtx, stopKwokRetries := context.WithCancel(ctx)
		t.Cleanup(stopKwokRetries)
		kwokTouches := make(chan int, 1)
		go func() { kwokTouches <- retryKwokStages(kwokCtx, ns) }()
		down := time.Now()
		if err := env.Cluster.Kill(component); err != nil {
			sc.Fatal(err)
		}
		time.Sleep(outageSettle)
		mSettled, err := op.Metrics(ctx)
		if err != nil {
			sc.Fatal(err)
		}
		settledFrom := time.Now()
		cpuSettled, _ := op.CPUSeconds()
		time.Sleep(outageDowntime - outageSettle)
		mDown, err := op.Metrics(ctx)
		if err != nil {
			sc.Fatal(err)
		}
		cpuDown, _ := op.CPUSeconds()
		settledFor := time.Since(settledFrom).Seconds()
		settledRate := (mDown.Sum("rest_client_requests_total") - mSettled.Sum("rest_client_requests_total")) / settledFor
		settledCPU := (cpuDown - cpuSettled) / settledFor
		if err := env.Cluster.StartComponent(ctx, component); err != nil {
			sc.Fatal(err)
		}
		outage := time.Since(down)
		cpu1, _ := op.CPUSeconds()
		m1, err := op.Metrics(ctx)
		if err != nil {
			sc.Errorf("scraping metrics after the outage: %v", err)
		}
		requests := m1.Sum("rest_client_requests_total") - m0.Sum("rest_client_requests_total")
		failed := m1.Sum("rest_client_requests_total", `code="<error>"`) - m0.Sum("rest_client_requests_total", `code="<error>"`) +
			m1.Sum("rest_client_requests_total", `code="5`) - m0.Sum("rest_client_requests_total", `code="5`)
		rate := requests / outage.Seconds()
		cpu := (cpu1 - cpu0) / outage.Seconds()
		// Failed syncs (see failedSyncs), each requeued with backoff.
		// workqueue_retries_total also counts the operator's deliberate AddAfter delays, so
		// it is printed, not bounded.
		retries := failedSyncs(m1) - failedSyncs(m0)
		// The backoffs of a failed key start at 5ms (the workqueue's) or 100ms (the
		// unavailable backoff) and double: a key fails at most about log2(outage/5ms)+1
		// times during the outage. Twice that leaves room for the syncs
		// that informer events start while the API server comes back; a retry loop without
		// backoff would make thousands.
		maxRetries := 2 * float64(len(created)+len(edited)) * (math.Ceil(math.Log2(float64(outage/(5*time.Millisecond)))) + 1)

		back := time.Now()
		conv, err := waitConverged(ctx, restartConvergeTimeout, []string{ns}, func(ctx context.Context) error {
			for _, nm := range edited {
				if err := configApplied(ctx, ns, nm, variant, true); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			sc.Errorf("%s restart %d: %v%s", component, r/2+1, err, testBedState(ctx))
		}
		ok := err == nil && op.Alive()
		resumed := ""
		if component == localcluster.ComponentAPIServer && err == nil {
			// The watches have resumed by watchResumeBound after the server was back, or by
			// now if that is later.
			resumedBy := back.Add(watchResumeBound)
			if now := time.Now(); now.After(resumedBy) {
				resumedBy = now
			}
			took, err := checkWatchesResume(ctx, ns, live[0], live[len(live)-1], 1000+r, resumedBy.Add(reactionTimeout))
			if err != nil {
				ok = false
				sc.Errorf("%s restart %d: the operator's watches did not resume: %v", component, r/2+1, err)
			}
			resumed = fmt.Sprintf("; acted on an edit and a deletion %s after the server was back", took.Sub(back).Round(time.Millisecond))
		}
		stopKwokRetries()
		resumed += fmt.Sprintf("; %d pods touched for kwok", <-kwokTouches)
		if !op.Alive() {
			sc.Errorf("the operator exited during the %s outage", component)
		}
		if settledRate > outageMaxSettledRate {
			ok = false
			sc.Errorf("%s outage: %s into it the operator still sent %.1f requests/s, more than %.0f: it spins",
				component, outageSettle, settledRate, outageMaxSettledRate)
		}
		if component == localcluster.ComponentAPIServer && failed == 0 {
			ok = false
			sc.Errorf("%s outage: no failed request shows in rest_client_requests_total", component)
		}
		if retries > maxRetries {
			ok = false
			sc.Errorf("%s outage: %.0f failed syncs for %d Monocles in flight, more than exponential backoff allows (%.0f)", component, retries, len(created)+len(edited), maxRetries)
		}
		if settledCPU > outageMaxCPU {
			ok = false
			sc.Errorf("%s outage: %s into it the operator still used %.2f cores, more than %.2f: it spins",
				component, outageSettle, settledCPU, outageMaxCPU)
		}
		t.Logf("%s down %s: %d created and %d edited just before; the operator sent %.0f requests (%.0f failed, %.1f/s over the outage, %.1f/s after %s), had %.0f failed syncs and used %.2f cores (%.2f after %s); converged %s after the kill%s",
			component, outage.Round(time.Millisecond), len(created), len(edited), requests, failed, rate, settledRate, outageSettle, retries, cpu, settledCPU, outageSettle, conv.last().Sub(down).Round(time.Millisecond), resumed)
		peakRate = max(peakRate, rate)
		sc.run(ok, conv.last().Sub(down))
	}

	after, err := op.Metrics(ctx)
	if err != nil {
		sc.Fatal(err)
	}
	delta := func(name string, labels ...string) float64 {
		return after.Sum(name, labels...) - before.Sum(name, labels...)
	}
	sc.note("API server outages: up to %.0f requests/s over an outage, mostly informer relists and lease renewals (a sync stops at its first failed request)", peakRate)
	sc.note("operator stayed up; over the scenario workqueue_retries_total +%.0f, monocle_operator_syncs_total{result=error} +%.0f, {result=unavailable} +%.0f, rest_client_requests_total{code=<error>} +%.0f, 5xx +%.0f, all requests +%.0f",
		delta("workqueue_retries_total", `name="monocle"`), delta("monocle_operator_syncs_total", `result="error"`), delta("monocle_operator_syncs_total", `result="unavailable"`),
		delta("rest_client_requests_total", `code="<error>"`), delta("rest_client_requests_total", `code="5`), delta("rest_client_requests_total"))

	if n, line := mostRequeues(op.LogPath); n > 0 {
		sc.note("most failed syncs of one key in a row: %d (the queue's backoff is capped at a minute), the last: %s", n, truncateText(line, 300))
	} else {
		sc.note("no key's sync failed twice in a row (apart from unavailable-server and stale-cache retries, which have their own backoffs)")
	}

	checkInvariants(ctx, sc)
	if err := op.stop(); err != nil {
		sc.Error(err)
	}
}

// waitQueueIdle waits until timeout for op's Monocle workqueue to hold no key and sync none,
// twice in a row half a second apart (workqueue_depth and workqueue_unfinished_work_seconds
// of k8s.io/component-base's workqueue metrics).
func waitQueueIdle(ctx context.Context, op *operator, timeout time.Duration) error {
	idle := 0
	return testkit.Poll(ctx, 500*time.Millisecond, timeout, op.Name+"'s workqueue idle", func(ctx context.Context) error {
		m, err := op.Metrics(ctx)
		if err != nil {
			return err
		}
		depth, unfinished := m.Sum("workqueue_depth", `name="monocle"`), m.Sum("workqueue_unfinished_work_seconds", `name="monocle"`)
		if depth > 0 || unfinished > 0 {
			idle = 0
			return fmt.Errorf("%.0f keys queued, %.1fs of syncs under way", depth, unfinished)
		}
		if idle++; idle < 2 {
			return errors.New("idle once")
		}
		return nil
	})
}

// checkWatchesResume proves that the operator's Monocle and Service watches deliver events
// again: it edits the config of the Monocle edited and deletes the API Service of the Monocle
// deleted (they may be the same), and waits until deadline for the operator to apply the
// config variant and recreate the Service. It returns when both were done.
func checkWatchesResume(ctx context.Context, ns, edited, deleted string, variant int, deadline time.Time) (time.Time, error) {
	if err := editMonocle(ctx, ns, edited, func(m *monoclev1alpha1.Monocle) { m.Spec.Config = configFor(variant) }); err != nil {
		return time.Time{}, err
	}
	svc, err := env.Kube.CoreV1().Services(ns).Get(ctx, deleted+"-api", metav1.GetOptions{})
	if err != nil {
		return time.Time{}, err
	}
	if err := env.Kube.CoreV1().Services(ns).Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
		return time.Time{}, err
	}
	err = testkit.Poll(ctx, 200*time.Millisecond, time.Until(deadline), "the operator applies the edit of "+edited+" and recreates Service "+svc.Name, func(ctx context.Context) error {
		if err := configApplied(ctx, ns, edited, variant, false); err != nil {
			return err
		}
		again, err := env.Kube.CoreV1().Services(ns).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if again.UID == svc.UID {
			return fmt.Errorf("service %s not deleted yet", svc.Name)
		}
		return nil
	})
	return time.Now(), err
}

// failedSyncs is the operator's failed syncs so far: monocle_operator_syncs_total with
// result error or unavailable.
func failedSyncs(m testkit.Metrics) float64 {
	return m.Sum("monocle_operator_syncs_total", `result="error"`) + m.Sum("monocle_operator_syncs_total", `result="unavailable"`)
}

// requeuesPattern finds the retries count of the operator's "Error syncing Monocle" log lines.
var requeuesPattern = regexp.MustCompile(`"retries":(\d+)`)

// mostRequeues returns the highest retries count of the operator's "Error syncing Monocle"
// lines in the log at path, and that line; 0 when there is none or the log cannot be read.
func mostRequeues(path string) (int, string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, ""
	}
	most, line := 0, ""
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(l, "Error syncing Monocle") {
			continue
		}
		if m := requeuesPattern.FindStringSubmatch(l); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > most {
				most, line = n, l
			}
		}
	}
	return most, line
}
