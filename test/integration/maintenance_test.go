package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestMaintenanceRequests runs spec.maintenance on the real control plane (kwok completes the
// Job's pod): a WipeCrawlerData request stops the crawler, runs its Job once, reports it, and
// the crawler comes back; a request naming an unknown crawler fails at once; a
// SetCrawlerCommitDate request runs after it.
func TestMaintenanceRequests(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns := "maintenance"
	startDay2(t, ns)

	patchMonocle(t, ns, `{"spec":{"maintenance":[
		{"name":"recrawl","operation":"WipeCrawlerData","workspace":"demo","crawler":"gh"},
		{"name":"typo","operation":"WipeCrawlerData","workspace":"demo","crawler":"gitlab"},
		{"name":"rewind","operation":"SetCrawlerCommitDate","workspace":"demo","crawler":"gh","commitDate":"2023-06-01"}]}}`)
	testkit.Eventually(t, 250*time.Millisecond, 2*time.Minute, "every request finished", func() error {
		st := getMonocle(t, ns, "m").Status.Maintenance
		if len(st) != 3 {
			return fmt.Errorf("status.maintenance = %+v", st)
		}
		for i, want := range []monoclev1alpha1.JobPhase{monoclev1alpha1.JobSucceeded, monoclev1alpha1.JobFailed, monoclev1alpha1.JobSucceeded} {
			if st[i].Phase != want {
				return fmt.Errorf("request %s is %s (%s), want %s", st[i].Request, st[i].Phase, st[i].Message, want)
			}
		}
		return nil
	})
	for _, name := range []string{"m-maintenance-recrawl", "m-maintenance-rewind"} {
		if _, err := env.Kube.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("Job %s: %v", name, err)
		}
	}
	testkit.Eventually(t, 250*time.Millisecond, time.Minute, "the crawler runs again", func() error {
		d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-crawler", metav1.GetOptions{})
		if err != nil || ptr.Deref(d.Spec.Replicas, 1) != 1 || d.Status.ReadyReplicas != 1 {
			return fmt.Errorf("crawler %v", err)
		}
		return nil
	})
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/m")
	events := env.Kubectl.Must(t, "get", "events", "-n", ns, "--field-selector", "reason=MaintenanceFailed", "-o", "jsonpath={.items[*].message}")
	if want := "workspace demo has no crawler gitlab"; !strings.Contains(events, want) {
		t.Errorf("no MaintenanceFailed event saying %q: %s", want, events)
	}
}
