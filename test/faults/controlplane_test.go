package faults

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/localcluster"
)

// Bounds of the operator's behaviour while the API server or etcd is down. Its client's
// rate limiter (--kube-api-qps, 200 by default) is what would cap a spinning operator, so
// spinning shows as a request rate rather than as a burnt core.
const (
	// outageMaxSettledRate bounds the operator's REST requests per second once an outage
	// has lasted outageSettle, all clients of the process together (informers relisting,
	// lease renewals, syncs): half the client's default limit. A retry loop without backoff
	// runs at that limit; with the workqueue's per-key backoff (from 5ms, doubling) and the
	// reflectors' (from 800ms) each of the few Monocles in flight here retries about once a
	// second by then, with a request per step of its sync (about 7).
	outageMaxSettledRate = 100.0
	// outageMaxCPU bounds the operator's CPU use during an outage, in cores.
	outageMaxCPU = 0.5
	// outageSettle is when, into an outage, the settled request rate starts being measured.
	outageSettle = time.Second
	// outageDowntime is how long a component stays down before it is started again.
	outageDowntime = 3 * time.Second
)

// testControlPlaneRestarts is scenario 3: right after Monocles are created and edited (so
// their watch events may be in flight and their syncs under way), kube-apiserver or etcd is
// SIGKILLed and started again with the same flags and data. The operator, leader-elected with
// the default lease timings, must neither exit nor spin: its request rate and CPU use during
// the outage are bounded, its failed syncs show in monocle_operator_syncs_total and its failed
// requests in rest_client_requests_total; once the component is back its watches resume
// and every create and edit is reconciled.
func testControlPlaneRestarts(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "3. kube-apiserver and etcd restarts")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 3))
	ns := "faults-restart"
	if err := createNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	op := env.operators.start(t)
	if _, err := waitLeader(ctx, 60*time.Second, []*operator{op}); err != nil {
		t.Fatal(err)
	}
	before, err := op.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
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
				t.Fatal(err)
			}
			created = append(created, nm)
		}
		variant := r + 1
		var edited []string
		for _, i := range rng.Perm(len(live))[:min(2, len(live))] {
			if err := editMonocle(ctx, ns, live[i], func(m *monoclev1alpha1.Monocle) { m.Spec.Config = configFor(variant) }); err != nil {
				t.Fatal(err)
			}
			edited = append(edited, live[i])
		}
		live = append(live, created...)
		// Strike mid-reconcile: as soon as the operator has written the first object of the
		// first Monocle created (its keys' Secret, the first thing a sync writes), so the
		// syncs of the new Monocles are under way.
		if err := waitFor(ctx, 30*time.Second, "the operator reconciles "+created[0], func(ctx context.Context) error {
			_, err := env.kube.CoreV1().Secrets(ns).Get(ctx, created[0]+"-api-keys", metav1.GetOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}

		m0, err := op.Metrics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cpu0, _ := op.CPUSeconds()
		down := time.Now()
		if err := env.cluster.Kill(component); err != nil {
			t.Fatal(err)
		}
		time.Sleep(outageSettle)
		mSettled, err := op.Metrics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		settledFrom := time.Now()
		time.Sleep(outageDowntime - outageSettle)
		mDown, err := op.Metrics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		settledRate := (mDown.Sum("rest_client_requests_total") - mSettled.Sum("rest_client_requests_total")) / time.Since(settledFrom).Seconds()
		if err := env.cluster.StartComponent(ctx, component); err != nil {
			t.Fatal(err)
		}
		outage := time.Since(down)
		cpu1, _ := op.CPUSeconds()
		m1, err := op.Metrics(ctx)
		if err != nil {
			t.Errorf("scraping metrics after the outage: %v", err)
		}
		requests := m1.Sum("rest_client_requests_total") - m0.Sum("rest_client_requests_total")
		failed := m1.Sum("rest_client_requests_total", `code="<error>"`) - m0.Sum("rest_client_requests_total", `code="<error>"`) +
			m1.Sum("rest_client_requests_total", `code="5`) - m0.Sum("rest_client_requests_total", `code="5`)
		rate := requests / outage.Seconds()
		cpu := (cpu1 - cpu0) / outage.Seconds()
		// Failed syncs, each requeued with backoff. workqueue_retries_total also counts the
		// operator's deliberate AddAfter delays, so it is printed, not bounded.
		retries := m1.Sum("monocle_operator_syncs_total", `result="error"`) - m0.Sum("monocle_operator_syncs_total", `result="error"`)
		// The workqueue's per-key backoff starts at 5ms and doubles: a key fails about
		// log2(outage/5ms)+1 times during the outage. Twice that leaves room for the syncs
		// that informer events start while the API server comes back; a retry loop without
		// backoff would make thousands.
		maxRetries := 2 * float64(len(created)+len(edited)) * (math.Ceil(math.Log2(float64(outage/(5*time.Millisecond)))) + 1)

		conv, err := waitConverged(ctx, 2*time.Minute, []string{ns}, func(ctx context.Context) error {
			for _, nm := range edited {
				if err := configApplied(ctx, ns, nm, variant, true); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s restart %d: %v", component, r/2+1, err)
		}
		ok := err == nil && op.Alive()
		if !op.Alive() {
			t.Errorf("the operator exited during the %s outage", component)
		}
		if settledRate > outageMaxSettledRate {
			ok = false
			t.Errorf("%s outage: %s into it the operator still sent %.1f requests/s, more than %.0f: it spins",
				component, outageSettle, settledRate, outageMaxSettledRate)
		}
		if component == localcluster.ComponentAPIServer && failed == 0 {
			ok = false
			t.Errorf("%s outage: no failed request shows in rest_client_requests_total", component)
		}
		if retries > maxRetries {
			ok = false
			t.Errorf("%s outage: %.0f failed syncs for %d Monocles in flight, more than exponential backoff allows (%.0f)", component, retries, len(created)+len(edited), maxRetries)
		}
		if cpu > outageMaxCPU {
			ok = false
			t.Errorf("%s outage: the operator used %.2f cores, more than %.2f: it spins", component, cpu, outageMaxCPU)
		}
		t.Logf("%s down %s: %d created and %d edited just before; the operator sent %.0f requests (%.0f failed, %.1f/s over the outage, %.1f/s after %s), had %.0f failed syncs and used %.2f cores; converged %s after the kill",
			component, outage.Round(time.Millisecond), len(created), len(edited), requests, failed, rate, settledRate, outageSettle, retries, cpu, conv.last().Sub(down).Round(time.Millisecond))
		peakRate = max(peakRate, rate)
		sc.run(ok, conv.last().Sub(down))
	}

	after, err := op.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	delta := func(name string, labels ...string) float64 {
		return after.Sum(name, labels...) - before.Sum(name, labels...)
	}
	sc.note("API server outages: up to %.0f requests/s over an outage, mostly in its first second (each failed sync is retried with every step's request)", peakRate)
	sc.note("operator stayed up; over the scenario workqueue_retries_total +%.0f, monocle_operator_syncs_total{result=error} +%.0f, rest_client_requests_total{code=<error>} +%.0f, 5xx +%.0f, all requests +%.0f",
		delta("workqueue_retries_total", `name="monocle"`), delta("monocle_operator_syncs_total", `result="error"`),
		delta("rest_client_requests_total", `code="<error>"`), delta("rest_client_requests_total", `code="5`), delta("rest_client_requests_total"))

	checkInvariants(ctx, t)
	if err := op.stop(); err != nil {
		t.Error(err)
	}
}
